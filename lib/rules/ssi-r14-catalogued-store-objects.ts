import { PlatformRule } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/**
 * SSI-R14: the name rules (SSI-R1, SSI-R2, SSI-R7, SSI-R9), the configuration pipeline's grants
 * and the live-store reader are derived from the catalogue of store objects (lib/catalogue/). A
 * store resource of a type the catalogue does not know (a `vault_generic_secret` a user adds)
 * would escape all of them: it could overwrite an object another stack declares, and the pipeline
 * could not apply it. It is refused until the catalogue has an entry for its type.
 */
export const SSI_R14: PlatformRule = {
  id: 'SSI-R14',
  description:
    'Every store resource a stack synthesizes (library constructs and provider resources a user adds) has an entry in the catalogue of store objects (lib/catalogue/), from which the name checks, the pipeline grants and the readers are derived.',
  check: (d) =>
    d.storeObjects.uncatalogued.map((r) => ({
      constructPath: r.constructPath,
      problem: new ValidationProblem(
        'resource type',
        r.resourceType,
        'has no entry in the catalogue of store objects, so no name check, pipeline grant or live-store reader covers it (it could overwrite an object another declaration writes, unnoticed); add an entry for it in lib/catalogue/ (one file per kind, listed in store-object-catalogue.ts), or declare the object with a resource type the catalogue has',
        'SSI-R14',
      ),
    })),
};
