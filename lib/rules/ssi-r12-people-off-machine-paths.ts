import { PlatformRule, RuleFinding } from './platform-rule';
import { machinePaths, machinePathsReached } from '../constructs/machine-path';
import { ValidationProblem } from '../model/validation-problem';

/**
 * SSI-R12: a person never reads a machine's credential by accident. Every rule of a people role's
 * policy is compared, as the store matches ACL paths, with every store API path of every CI secret
 * and every application's paths (either KV version, as SSI-R5 and SSI-R6 do); an overlap is refused
 * unless the grant that made the rule names why (`machinePathReason`). A rule added any other way
 * (a people role given as a CI secret's reader) has no reason and is refused.
 */
export const SSI_R12: PlatformRule = {
  id: 'SSI-R12',
  description:
    "A people (OIDC) role's policy reaches no CI secret and no application's paths, as store API paths on either KV version, unless the grant names why (machinePathReason).",
  spec: '§5.6',
  check: (d) => {
    const machine = machinePaths(d);
    const findings: RuleFinding[] = [];
    for (const role of d.peopleRoles) {
      for (const rule of role.policy.rules) {
        const reason = role.machinePathReason(rule.path);
        if (reason !== undefined && reason.trim() !== '') continue;
        const reached = machinePathsReached(machine, rule.path);
        if (reached.length === 0) continue;
        const shown = reached.slice(0, 3).map((m) => m.what).join(', ');
        const more = reached.length > 3 ? ` and ${reached.length - 3} more` : '';
        findings.push({
          constructPath: role.node.path,
          problem: new ValidationProblem(
            `policy.rules["${rule.path}"]`,
            rule.capabilities,
            `reaches ${shown}${more}: people never read a CI or application credential by accident; narrow the path, or grant it with a machinePathReason that says why`,
            'SSI-R12',
          ),
        });
      }
    }
    return findings;
  },
};
