import { IConstruct } from 'constructs';
import { PlatformRule, RuleFinding } from './platform-rule';
import { SecretStoreStack } from '../constructs/secret-store-stack';
import { isReservedMountPath, isReservedPolicyName, reservedMountProblem, reservedPolicyNameProblem } from '../model/reserved-store-names';

/**
 * SSI-R9: the store's own names are not the platform's. A role named `default` replaces the policy
 * every token carries (and the stack can never delete it); an AppRole method mounted at `token`
 * deletes the roles of the mount it replaces; `sys`, `identity`, `cubbyhole` are the store's own.
 */
export const SSI_R9: PlatformRule = {
  id: 'SSI-R9',
  description:
    'No role or policy is named after a built-in policy of the store (default, response-wrapping, root), no auth method is mounted at a path the store reserves for them (token; on OpenBao, or when settings.store is not given, also cubbyhole and identity), and no KV engine at one it reserves for secrets engines (audit, auth, cubbyhole, identity, sys).',
  check: (d) => {
    const findings: RuleFinding[] = [];
    for (const r of [...d.jwtRoles, ...d.applications, ...d.peopleRoles]) {
      if (isReservedPolicyName(r.roleName)) findings.push({ constructPath: r.node.path, problem: reservedPolicyNameProblem(r.roleName) });
    }
    // The target store's reserved names when settings.store is given, either store's otherwise.
    const storeOf = (c: IConstruct) => {
      const settings = SecretStoreStack.of(c).settings;
      return settings.storeGiven ? settings.store.kind : undefined;
    };
    for (const m of [...d.jwtAuths, ...d.appRoleAuths, ...d.oidcAuths]) {
      const store = storeOf(m);
      if (typeof m.path === 'string' && isReservedMountPath(m.path, 'auth', store)) {
        findings.push({ constructPath: m.node.path, problem: reservedMountProblem('path', m.path, 'auth', store) });
      }
    }
    for (const s of d.stacks) {
      const mount = s.settings.kvMount.path;
      const store = s.settings.storeGiven ? s.settings.store.kind : undefined;
      if (typeof mount === 'string' && isReservedMountPath(mount, 'secrets', store)) {
        findings.push({ constructPath: s.node.path, problem: reservedMountProblem('settings.kvMount.path', mount, 'secrets', store) });
      }
    }
    return findings;
  },
};
