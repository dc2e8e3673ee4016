import { constructPathOf, duplicateFindings } from './duplicate-findings';
import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/** SSI-R1: two roles of one auth method with the same name would overwrite each other in the store. */
export const SSI_R1: PlatformRule = {
  id: 'SSI-R1',
  description: 'Role names are unique within an auth method.',
  check: (d) => [
    ...duplicateFindings(
      d.jwtRoles,
      (r) => r.identityName,
      constructPathOf,
      (r, first) => new ValidationProblem('roleName', r.roleName, `is already declared by ${first.node.path}`, 'SSI-R1'),
    ),
    ...duplicateFindings(
      d.applications,
      (a) => a.identityName,
      constructPathOf,
      (a, first) => new ValidationProblem('roleName', a.roleName, `is already declared by ${first.node.path}`, 'SSI-R1'),
    ),
    ...duplicateFindings(
      d.peopleRoles,
      (r) => r.identityName,
      constructPathOf,
      (r, first) => new ValidationProblem('roleName', r.roleName, `is already declared by ${first.node.path}`, 'SSI-R1'),
    ),
  ],
};
