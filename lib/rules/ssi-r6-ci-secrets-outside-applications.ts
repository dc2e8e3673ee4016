import { PlatformRule } from './platform-rule';
import { storeOnlyOverlapNote } from './store-path-overlap';
import { ValidationProblem } from '../model/validation-problem';

/**
 * SSI-R6: a CI secret inside an application's prefix would let CI jobs read application secrets.
 * Compared as store API paths on either KV version (`KvPath.overlaps`): a KV v1 declaration of
 * a mount that is v2 on the store must not let `data/<app prefix>/...` through.
 */
export const SSI_R6: PlatformRule = {
  id: 'SSI-R6',
  description: "CI secrets never lie inside an application's paths, as store API paths on either KV version.",
  check: (d) =>
    d.ciSecretDeclarations.flatMap(({ construct, secret }) =>
      d.applications
        .filter((a) => a.readablePath.overlaps(secret.path))
        .map((a) => ({
          constructPath: construct.node.path,
          problem: new ValidationProblem(
            'path',
            secret.path.logical,
            `lies inside the paths of application ${a.roleName} (${a.node.path}): CI would read application secrets${storeOnlyOverlapNote(secret.path, a.readablePath)}`,
            'SSI-R6',
          ),
        })),
    ),
};
