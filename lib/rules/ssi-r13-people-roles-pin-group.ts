import { PlatformRule, RuleFinding } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/**
 * SSI-R13: the identity provider knows more people than the platform's groups. A people role whose
 * group binding is empty, blank or a wildcard would let any of them log in; an OIDC method without
 * any role is a login nobody declared who may use.
 */
export const SSI_R13: PlatformRule = {
  id: 'SSI-R13',
  description:
    'Every people (OIDC) role binds its groups claim to at least one exact group (no empty list, no blank value, no "*" anywhere in a value), and every OIDC method has at least one role.',
  spec: '§5.6',
  check: (d) => {
    const findings: RuleFinding[] = [];
    for (const role of d.peopleRoles) {
      if (role.groups.length === 0) {
        findings.push({
          constructPath: role.node.path,
          problem: new ValidationProblem('groups', [], 'must name at least one group: without one, everybody the identity provider knows can log in', 'SSI-R13'),
        });
      }
      for (const group of role.groups.filter((g) => g.trim() === '' || g.includes('*'))) {
        findings.push({
          constructPath: role.node.path,
          problem: new ValidationProblem('groups', group, 'must be an exact group name: a blank or "*" value does not pin who logs in', 'SSI-R13'),
        });
      }
    }
    for (const auth of d.oidcAuths) {
      if (!d.peopleRoles.some((r) => r.auth === auth)) {
        findings.push({
          constructPath: auth.node.path,
          problem: new ValidationProblem('roles', [], 'an OIDC method needs at least one group role: declare the groups that may log in', 'SSI-R13'),
        });
      }
    }
    return findings;
  },
};
