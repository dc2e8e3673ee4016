import { constructPathOf, duplicateFindings } from './duplicate-findings';
import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/** SSI-R3: the spec creates a registry account per permission scope, not per consumer. */
export const SSI_R3: PlatformRule = {
  id: 'SSI-R3',
  description: 'A registry service account exists only for a distinct permission scope.',
  spec: '§2.1',
  check: (d) =>
    duplicateFindings(
      d.accounts,
      (a) => a.scope.key,
      constructPathOf,
      (a, first) =>
        new ValidationProblem(
          'permissions',
          a.scope.permissions,
          `same permission scope as ${first.accountName} (${first.node.path}): a new account is created only for a distinct scope`,
          'SSI-R3',
        ),
    ),
};
