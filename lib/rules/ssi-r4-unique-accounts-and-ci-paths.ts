import { constructPathOf, duplicateFindings } from './duplicate-findings';
import { PlatformRule } from './platform-rule';
import { storeOnlyOverlapNote } from './store-path-overlap';
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
    // Pairwise on store API paths: one secret declared on a mount with two versions, or through a
    // mount path inside another, is still one secret.
    ...d.ciSecrets.flatMap((s, i) => {
      const first = d.ciSecrets.slice(0, i).find((t) => t.secret.path.overlaps(s.secret.path));
      return first === undefined
        ? []
        : [
            {
              constructPath: s.node.path,
              problem: new ValidationProblem(
                'path',
                s.secret.path.logical,
                `is already declared by ${first.node.path}${storeOnlyOverlapNote(s.secret.path, first.secret.path)}`,
                'SSI-R4',
              ),
            },
          ];
    }),
    ...d.ciSecrets.flatMap((s) =>
      d.accounts
        .filter((a) => a.secret.path.overlaps(s.secret.path))
        .map((a) => ({
          constructPath: s.node.path,
          problem: new ValidationProblem('path', s.secret.path.logical, `is the credentials path of ${a.accountName}${storeOnlyOverlapNote(s.secret.path, a.secret.path)}`, 'SSI-R4'),
        })),
    ),
  ],
};
