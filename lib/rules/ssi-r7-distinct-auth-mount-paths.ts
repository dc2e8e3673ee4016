import { constructPathOf, duplicateFindings } from './duplicate-findings';
import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/** SSI-R7: the store mounts one auth method per path, whatever its type. */
export const SSI_R7: PlatformRule = {
  id: 'SSI-R7',
  description: 'Auth methods have distinct mount paths.',
  check: (d) =>
    duplicateFindings(
      [...d.jwtAuths, ...d.appRoleAuths, ...d.oidcAuths],
      (m) => m.path,
      constructPathOf,
      (m, first) => new ValidationProblem('path', m.path, `auth mount path is already used by ${first.node.path}`, 'SSI-R7'),
    ),
};
