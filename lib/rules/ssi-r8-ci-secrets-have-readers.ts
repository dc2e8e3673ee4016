import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/** SSI-R8: a secret whose consumers nobody may read fails every job that logs in for it. */
export const SSI_R8: PlatformRule = {
  id: 'SSI-R8',
  description: 'A secret declared with CI consumers is readable by some identity.',
  check: (d) =>
    d.ciSecretDeclarations
      .filter(({ secret }) => secret.consumers.length > 0 && secret.grants.length === 0)
      .map(({ construct, secret }) => ({
        constructPath: construct.node.path,
        problem: new ValidationProblem(
          'readers',
          [],
          `nobody is granted read, yet consumers ${secret.consumers.join(', ')} need it: add readers (e.g. the registry-ci role) or drop the consumers`,
          'SSI-R8',
        ),
      })),
};
