import { PlatformRule, RuleFinding } from './platform-rule';
import { findingField } from './store-name-collisions';
import { withOverrideClause } from './override-clause';
import { declaredName } from '../catalogue/store-object-kind';
import { StoreKind } from '../model/store-target';
import { storePolicyName } from '../model/store-policy-name';
import {
  DEFAULT_PIPELINE_ROLE_NAMES,
  pipelineGrantRoleOf,
  reservedPipelineGrantNameProblem,
  reservedPipelineRoleNameProblem,
  isReservedMountPath,
  isReservedPolicyName,
  READER_POLICY_NAME,
  reservedMountProblem,
  reservedPolicyNameProblem,
  reservedReaderPolicyNameProblem,
} from '../model/reserved-store-names';

/**
 * SSI-R9: the store's own names are not the platform's. A policy named `default` replaces the
 * policy every token carries (and the stack can never delete it); an AppRole method mounted at
 * `token` deletes the roles of the mount it replaces; `sys`, `identity`, `cubbyhole` are the
 * store's own. The documented hand-made reader policy's name belongs to the reader's construct, and
 * the names of the configuration pipeline roles' grants (`<role name>-<stack>`, for any stack name: a
 * change may retire or add stacks) to the grants: an application `secretstore-iac-plan` of
 * environment `app-roles-02` was the plan role's grant of a retiring shard, and `moves` took the one
 * for a move into the other.
 * Derived from the catalogue: every policy and auth mount any construct or provider resource
 * synthesizes is checked, its name compared as the store compares it.
 */
export const SSI_R9: PlatformRule = {
  id: 'SSI-R9',
  description:
    `No policy is named after a built-in policy of the store (default, response-wrapping, root) or, unless it is the LiveStoreReaderPolicy, after the documented reader policy (${READER_POLICY_NAME}), or, unless it is that role's own, after a configuration pipeline role, or, unless it is a configuration pipeline role's grant, in the name space of those grants (\`<role name>-<any stack name>\`), for the role names the configuration declares and the defaults ${DEFAULT_PIPELINE_ROLE_NAMES.join(', ')}, names compared as the store compares them; no auth method is mounted at a path the store reserves for them (token; on OpenBao, or when settings.store is not given, also cubbyhole and identity), and no KV engine at one it reserves for secrets engines (audit, auth, cubbyhole, identity, sys). Every construct, provider resource and stack counts.`,
  check: (d) => {
    const findings: RuleFinding[] = [];
    // The target store's reserved names when the stack's settings.store is given, either store's
    // otherwise (a stack a user adds has no platform settings).
    const storeOf = new Map<string, StoreKind | undefined>(d.stacks.map((s) => [s.node.id, s.settings.storeGiven ? s.settings.store.kind : undefined]));
    const readerKey = READER_POLICY_NAME;
    const grantPaths = new Set(d.pipelineGrants.map((g) => g.node.path));
    const roleKeys = [...new Set([...DEFAULT_PIPELINE_ROLE_NAMES, ...d.pipelineRoles.map((r) => r.roleName)].map(storePolicyName))];
    for (const o of d.storeObjects.objects) {
      const { field, value } = declaredName(o.kind, o.written);
      if (o.kind.kind === 'policy') {
        if (isReservedPolicyName(o.name.key)) {
          findings.push({ constructPath: o.constructPath, problem: withOverrideClause(reservedPolicyNameProblem(findingField(field), value, o.name.key), o) });
        } else if (o.name.key === readerKey && !d.readerPolicies.some((r) => o.constructPath.startsWith(`${r.node.path}/`))) {
          findings.push({ constructPath: o.constructPath, problem: withOverrideClause(reservedReaderPolicyNameProblem(findingField(field), value, o.name.key), o) });
        } else if (roleKeys.includes(o.name.key)) {
          if (!d.pipelineRoles.some((r) => o.constructPath.startsWith(`${r.node.path}/`))) {
            findings.push({ constructPath: o.constructPath, problem: withOverrideClause(reservedPipelineRoleNameProblem(findingField(field), value, o.name.key), o) });
          }
        } else if (!grantPaths.has(o.constructPath)) {
          const role = pipelineGrantRoleOf(o.name.key, roleKeys);
          if (role !== undefined) findings.push({ constructPath: o.constructPath, problem: withOverrideClause(reservedPipelineGrantNameProblem(findingField(field), value, o.name.key, role), o) });
        }
      } else if (o.kind.kind === 'auth-mount' || o.kind.kind === 'jwt-auth-mount') {
        const store = storeOf.get(o.stack);
        if (isReservedMountPath(o.name.key, 'auth', store)) {
          findings.push({ constructPath: o.constructPath, problem: withOverrideClause(reservedMountProblem(findingField(field), String(value ?? o.name.key), 'auth', store), o) });
        }
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
