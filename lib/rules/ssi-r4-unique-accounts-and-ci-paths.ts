import { CiSecret } from '../constructs/ci-secret';
import { constructPathOf, duplicateFindings } from './duplicate-findings';
import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/**
 * SSI-R4: an account name or a CI secret path declared twice would be one secret with two owners;
 * a CI secret may not sit on an account's credentials path either.
 */
export const SSI_R4: PlatformRule = {
  id: 'SSI-R4',
  description: 'Account names and CI secret paths are unique.',
  check: (d) => [
    ...duplicateFindings(
      d.accounts,
      (a) => a.accountName,
      constructPathOf,
      (a, first) => new ValidationProblem('name', a.accountName, `is already declared by ${first.node.path}`, 'SSI-R4'),
    ),
    ...duplicateFindings(
      d.ciSecretDeclarations.filter((x) => x.construct instanceof CiSecret),
      (x) => x.secret.path.policyPath,
      (x) => x.construct.node.path,
      (x, first) =>
        new ValidationProblem('path', x.secret.path.logical, `is already declared by ${first.construct.node.path}`, 'SSI-R4'),
    ),
    ...d.ciSecrets.flatMap((s) =>
      d.accounts
        .filter((a) => a.secret.path.overlaps(s.secret.path))
        .map((a) => ({
          constructPath: s.node.path,
          problem: new ValidationProblem('path', s.secret.path.logical, `is the credentials path of ${a.accountName}`, 'SSI-R4'),
        })),
    ),
  ],
};
