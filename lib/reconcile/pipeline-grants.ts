import { pipelineGrantConstructId, pipelineGrantPolicyName } from '../model/pipeline-grant-name';
import { compareStrings } from '../private/compare-strings';
import { SynthStack } from '../sources/synth-output';
import { locateStoreObject } from './declared-object';

/** One configuration pipeline role's grant in one stack, as a synthesized output declares it. */
export interface DeclaredPipelineGrant {
  /** The stack that declares it (`app-roles-02`). */
  readonly stack: string;
  /** Its resource address there (`vault_policy.secretstore-iac-grant-pipeline-apply`). */
  readonly address: string;
  /** Its store path (`sys/policies/acl/secretstore-iac-pipeline-app-roles-02`). */
  readonly storePath: string;
  /** The pipeline role it grants to (`secretstore-iac-pipeline`). */
  readonly role: string;
}

/** The construct path cdktf recorded for a resource block (`//.metadata.path`). */
function constructPath(block: Readonly<Record<string, unknown>>): string | undefined {
  const p = (block['//'] as { metadata?: { path?: unknown } } | undefined)?.metadata?.path;
  return typeof p === 'string' ? p : undefined;
}

/**
 * The configuration pipeline roles' grants a synthesized output declares, recognised from what its
 * synthesis recorded, never by name alone: a `vault_policy` of stack S is the grant of role R there when
 * - its construct path (cdktf's `//.metadata.path`) is `S/<the grant's construct id for R>`
 *   (`app-roles-02/secretstore-iac-grant-pipeline-apply`): the library's grant construct, a child
 *   of the stack;
 * - R is a JWT role the output declares in another stack, whose construct is the one that id names
 *   (`ci-access/pipeline-apply/role`), and its name is `<R's role name>-S`
 *   (`secretstore-iac-pipeline-app-roles-02`);
 * - R's `token_policies` attach it by that name.
 * A policy of yours named like a grant (another construct path), or one no pipeline role attaches, is
 * not a grant.
 * @param only the stacks to look in (by default every stack of the output)
 * @returns the grants, sorted by stack, then address
 */
export function declaredPipelineGrants(stacks: readonly SynthStack[], only?: (stack: string) => boolean): DeclaredPipelineGrant[] {
  const roles = stacks.flatMap((s) =>
    Object.values(s.resources.vault_jwt_auth_backend_role ?? {}).flatMap((block) => {
      const segments = constructPath(block)?.split('/') ?? [];
      const name = block.role_name;
      const attached = Array.isArray(block.token_policies) ? block.token_policies.filter((n): n is string => typeof n === 'string') : [];
      return typeof name === 'string' && segments.length >= 3 ? [{ stack: s.name, constructId: segments[segments.length - 2], name, attached }] : [];
    }),
  );
  const out: DeclaredPipelineGrant[] = [];
  for (const stack of stacks.filter((s) => only === undefined || only(s.name))) {
    for (const [id, block] of Object.entries(stack.resources.vault_policy ?? {})) {
      const name = block.name;
      if (typeof name !== 'string' || name.includes('${')) continue;
      const role = roles.find(
        (r) =>
          r.stack !== stack.name &&
          constructPath(block) === `${stack.name}/${pipelineGrantConstructId(r.constructId)}` &&
          name === pipelineGrantPolicyName(r.name, stack.name) &&
          r.attached.includes(name),
      );
      const located = locateStoreObject('vault_policy', { name });
      if (role && located) out.push({ stack: stack.name, address: `vault_policy.${id}`, storePath: located.storePath, role: role.name });
    }
  }
  return out.sort((a, b) => compareStrings(a.stack, b.stack) || compareStrings(a.address, b.address));
}
