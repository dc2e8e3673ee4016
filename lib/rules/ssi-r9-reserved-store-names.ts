import { PlatformRule, RuleFinding } from './platform-rule';
import { isReservedMountPath, isReservedPolicyName, reservedMountProblem, reservedPolicyNameProblem } from '../model/reserved-store-names';

/**
 * SSI-R9: the store's own names are not the platform's. A role named `default` replaces the policy
 * every token carries (and the stack can never delete it); an AppRole method mounted at `token`
 * deletes the roles of the mount it replaces; `sys`, `identity`, `cubbyhole` are the store's own.
 */
export const SSI_R9: PlatformRule = {
  id: 'SSI-R9',
  description:
    'No role or policy is named after a built-in policy of the store (default, response-wrapping, root), no auth method is mounted at a path the store reserves for them (cubbyhole, identity, token), and no KV engine at one it reserves for secrets engines (audit, auth, cubbyhole, identity, sys).',
  check: (d) => {
    const findings: RuleFinding[] = [];
    for (const r of [...d.jwtRoles, ...d.applications, ...d.peopleRoles]) {
      if (isReservedPolicyName(r.roleName)) findings.push({ constructPath: r.node.path, problem: reservedPolicyNameProblem(r.roleName) });
    }
    for (const m of [...d.jwtAuths, ...d.appRoleAuths, ...d.oidcAuths]) {
      if (typeof m.path === 'string' && isReservedMountPath(m.path, 'auth')) {
        findings.push({ constructPath: m.node.path, problem: reservedMountProblem('path', m.path, 'auth') });
      }
    }
    for (const s of d.stacks) {
      const mount = s.settings.kvMount.path;
      if (typeof mount === 'string' && isReservedMountPath(mount, 'secrets')) {
        findings.push({ constructPath: s.node.path, problem: reservedMountProblem('settings.kvMount.path', mount, 'secrets') });
      }
    }
    return findings;
  },
};
