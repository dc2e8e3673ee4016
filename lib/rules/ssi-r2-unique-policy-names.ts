import { constructPathOf, duplicateFindings } from './duplicate-findings';
import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/** SSI-R2: policies live in one namespace of the store, whatever stack or auth method declares them. */
export const SSI_R2: PlatformRule = {
  id: 'SSI-R2',
  description: 'Policy names are unique in the store.',
  check: (d) =>
    duplicateFindings(
      [...d.jwtRoles, ...d.applications, ...d.peopleRoles],
      (i) => i.policy.name,
      constructPathOf,
      (i, first) =>
        new ValidationProblem('policy', i.policy.name, `policy name is already used by ${first.node.path}`, 'SSI-R2'),
    ),
};
