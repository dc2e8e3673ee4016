import { aclPathsOverlap } from '../model/acl-path-overlap';
import { KvPath } from '../model/kv-path';
import { MachinePathKind } from '../model/machine-path-kind';
import { PlatformDeclarations } from './platform-declarations';

/** A path CI or an application reads: what SSI-R12 keeps people off unless a reason is given. */
export interface MachinePath {
  /** What it is. */
  readonly kind: MachinePathKind;
  /** Whose it is: the account (`svc-orchestrator`), the CI secret's logical path, the application's role name. */
  readonly owner: string;
  /** The path (one secret, or an application's subtree). */
  readonly path: KvPath;
  /** Construct path of the declaration. */
  readonly declaredAt: string;
  /** How findings name it: `CI secret registry/svc-orchestrator (ci-access/svc-orchestrator)`. */
  readonly what: string;
}

/** Every machine path a construct tree declares: registry accounts, CI secrets, applications' paths. */
export function machinePaths(d: PlatformDeclarations): MachinePath[] {
  return [
    ...d.accounts.map((a): MachinePath => ({
      kind: 'ci-registry-credential',
      owner: a.accountName,
      path: a.secret.path,
      declaredAt: a.node.path,
      what: `CI secret ${a.secret.path.logical} (${a.node.path})`,
    })),
    ...d.ciSecrets.map((s): MachinePath => ({
      kind: 'ci-secret',
      owner: s.secret.path.logical,
      path: s.secret.path,
      declaredAt: s.node.path,
      what: `CI secret ${s.secret.path.logical} (${s.node.path})`,
    })),
    ...d.applications.map((a): MachinePath => ({
      kind: 'application-secret',
      owner: a.roleName,
      path: a.readablePath,
      declaredAt: a.node.path,
      what: `application ${a.roleName}'s ${a.readablePath.policyPath} (${a.node.path})`,
    })),
  ];
}

/**
 * The machine paths an ACL rule path reaches: compared, as the store matches ACL paths, with every
 * store API path of each (either KV version), as SSI-R12 compares them.
 */
export function machinePathsReached(machine: readonly MachinePath[], rulePath: string): MachinePath[] {
  return machine.filter((m) => m.path.apiPaths.some((api) => aclPathsOverlap(rulePath, api)));
}
