import { IConstruct } from 'constructs';
import { TerraformStack, TerraformVariable } from '../framework/framework';

/**
 * An input variable a stack declares (`variable "oidc_client_secret"` in its `cdk.tf.json`): the
 * engine reads its value from `TF_VAR_<name>` at plan and apply time.
 */
export interface StackInputVariable {
  /** The variable's name in the stack (`oidc_client_secret`). */
  readonly name: string;
  /** Construct path of the variable (`people/oidc/client-secret`), for errors. */
  readonly constructPath: string;
  /** Whether it has no default: the engine refuses to plan without a value. */
  readonly required: boolean;
  /**
   * Whether it is `ephemeral`: the engine keeps its value out of plan files and state, and allows it
   * only where no recorded value depends on it (write-only attributes, provider configuration).
   */
  readonly ephemeral: boolean;
  /** Whether it is `sensitive`: the engine never shows its value. */
  readonly sensitive: boolean;
}

/**
 * The input variables `stack` synthesizes, sorted by name: read from each {@link TerraformVariable}'s
 * synthesized block (overrides applied, so an `ephemeral` set by override counts), never listed by hand.
 */
export function stackInputVariables(stack: IConstruct): StackInputVariable[] {
  return stack.node
    .findAll()
    .filter((c): c is TerraformVariable => c instanceof TerraformVariable && TerraformStack.of(c) === stack)
    .map((v) => {
      const blocks = (v.toTerraform() as { variable: Record<string, Record<string, unknown>> }).variable;
      const [name, block] = Object.entries(blocks)[0];
      return {
        name,
        constructPath: v.node.path,
        required: block.default === undefined,
        ephemeral: block.ephemeral === true,
        sensitive: block.sensitive === true,
      };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
