import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/** SSI-R6: a CI secret inside an application's prefix would let CI jobs read application secrets. */
export const SSI_R6: PlatformRule = {
  id: 'SSI-R6',
  description: "CI secrets never lie inside an application's paths.",
  check: (d) =>
    d.ciSecretDeclarations.flatMap(({ construct, secret }) =>
      d.applications
        .filter((a) => a.readablePath.overlaps(secret.path))
        .map((a) => ({
          constructPath: construct.node.path,
          problem: new ValidationProblem(
            'path',
            secret.path.logical,
            `lies inside the paths of application ${a.roleName} (${a.node.path}): CI would read application secrets`,
            'SSI-R6',
          ),
        })),
    ),
};
