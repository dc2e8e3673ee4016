import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/** SSI-R5: an application reads its own paths and nothing else, so no two applications' paths overlap. */
export const SSI_R5: PlatformRule = {
  id: 'SSI-R5',
  description: 'No cross-application access: application paths never overlap.',
  spec: '§2.4',
  check: (d) =>
    d.applications.flatMap((a, i) =>
      d.applications
        .slice(0, i)
        .filter((b) => a.readablePath.overlaps(b.readablePath))
        .map((b) => ({
          constructPath: a.node.path,
          problem: new ValidationProblem(
            'readablePath',
            a.readablePath.policyPath,
            `overlaps ${b.readablePath.policyPath} of ${b.roleName} (${b.node.path}): cross-application secret access is not permitted`,
            'SSI-R5',
          ),
        })),
    ),
};
