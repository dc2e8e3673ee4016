import { PlatformRule, RuleFinding } from './platform-rule';
import { CiJwtRole } from '../constructs/ci-jwt-role';
import { SecretStoreStack } from '../constructs/secret-store-stack';
import { ValidationProblem } from '../model/validation-problem';

/** Claims that name a group or project by numeric ID. */
const ID_CLAIMS = ['namespace_id', 'project_id'];
/** Claims that name a group or project by path. */
const PATH_CLAIMS = ['namespace_path', 'project_path'];

/**
 * True when the claim's values pin the organisation: IDs are exact digits; paths are the
 * organisation or below it, with `*` only as a whole last segment. In glob mode the store's `*`
 * matches any characters, `/` included: `acme*` matches `acme-evil`, while `acme/*` stays in `acme/`.
 */
function pinsOrganisation(role: CiJwtRole, organisation: string, claim: string): boolean {
  const values = role.boundClaims[claim];
  if (values.length === 0) return false;
  if (ID_CLAIMS.includes(claim)) return values.every((v) => /^[0-9]+$/.test(v));
  if (!PATH_CLAIMS.includes(claim)) return false;
  const glob = role.boundClaimsType === 'glob';
  return values.every((v) => {
    const exact = glob && v.endsWith('/*') ? v.slice(0, -2) : v;
    if (glob && exact.includes('*')) return false;
    return exact === organisation || exact.startsWith(`${organisation}/`);
  });
}

/**
 * SSI-R10: "never empty" is not enough for bound claims: `namespace_path: '*'` lets a job of any
 * group of the CI instance log in. At least one claim must pin the organisation exactly.
 */
export const SSI_R10: PlatformRule = {
  id: 'SSI-R10',
  description:
    'A CI role\'s bound claims pin the organisation: namespace_id or project_id bound to exact IDs, or namespace_path or project_path bound inside {org}/ with "*" only as a whole last segment; no claim value is only "*".',
  spec: '§5.1',
  check: (d) => {
    const findings: RuleFinding[] = [];
    for (const role of d.jwtRoles) {
      const organisation = SecretStoreStack.of(role).settings.organisation;
      const names = Object.keys(role.boundClaims);
      if (role.boundClaimsType === 'glob') {
        for (const name of names.filter((n) => role.boundClaims[n].some((v) => /^\*+$/.test(v)))) {
          findings.push({
            constructPath: role.node.path,
            problem: new ValidationProblem(
              `boundClaims.${name}`,
              role.boundClaims[name],
              'a value of only "*" matches every job of the CI instance: bind an exact value',
              'SSI-R10',
            ),
          });
        }
      }
      if (names.length > 0 && !names.some((n) => pinsOrganisation(role, organisation, n))) {
        findings.push({
          constructPath: role.node.path,
          problem: new ValidationProblem(
            'boundClaims',
            role.boundClaims,
            `must pin the organisation: bind namespace_id or project_id to exact IDs, or namespace_path or project_path to "${organisation}", "${organisation}/<path>" or "<exact path>/*" only; a glob such as "*" or "${organisation}*" also matches other groups (${organisation}-evil), whose jobs could then log in`,
            'SSI-R10',
          ),
        });
      }
    }
    return findings;
  },
};
