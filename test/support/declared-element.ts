import { Construct } from 'constructs';
import { declarePipelineStackGrants } from '../../lib/constructs/pipeline-stack-grant';
import { TerraformElement } from '../../lib/framework/framework';

/**
 * The element at construct path `path` of `app`'s tree, once the configuration pipeline's grants
 * (and the depends_on on them) are declared, as synthesis declares them before validation: an
 * override made on it then comes after everything the library wrote.
 */
export function declaredElement(app: Construct, path: string): TerraformElement {
  declarePipelineStackGrants(app);
  const found = app.node.findAll().find((c) => c.node.path === path);
  if (!(found instanceof TerraformElement)) throw new Error(`no element ${path}`);
  return found;
}
