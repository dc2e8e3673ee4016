import { PlatformRule } from './platform-rule';
import { storeOnlyOverlapNote } from './store-path-overlap';
import { ValidationProblem } from '../model/validation-problem';
import { overlappingPairs } from '../model/kv-path-overlaps';

/**
 * SSI-R5: an application reads its own paths and nothing else, so no two applications' paths
 * overlap, compared as store API paths on either KV version (`KvPath.overlaps`).
 */
export const SSI_R5: PlatformRule = {
  id: 'SSI-R5',
  description: 'No cross-application access: application paths never overlap, as store API paths on either KV version.',
  spec: '§2.4',
  check: (d) =>
    // Indexed, not every pair compared: synthesis stays linear in the number of applications.
    overlappingPairs(d.applications.map((a) => a.readablePath)).map(([later, earlier]) => {
      const a = d.applications[later];
      const b = d.applications[earlier];
      return {
        constructPath: a.node.path,
        problem: new ValidationProblem(
          'readablePath',
          a.readablePath.policyPath,
          `overlaps ${b.readablePath.policyPath} of ${b.roleName} (${b.node.path}): cross-application secret access is not permitted${storeOnlyOverlapNote(a.readablePath, b.readablePath)}`,
          'SSI-R5',
        ),
      };
    }),
};
