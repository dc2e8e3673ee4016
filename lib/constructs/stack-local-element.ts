import { DefaultTokenResolver, StringConcat, TerraformStack, Tokenization } from '../framework/framework';
import { IConstruct } from 'constructs';
import { stackElements } from '../framework/stack-elements';

/** The elements the library created whose values never reach another stack. */
const stackLocal = new WeakSet<IConstruct>();

/**
 * Marks an element the library creates as stack-local: each of its values is a literal (every text
 * goes through `terraformString`, which also defuses a token given as text) or a reference the library
 * built into the element's own stack (a role's mount, a policy's name, a role's Role ID). cdktf's
 * preparing pass ({@link prepareElements}) has nothing to find in it.
 * @param referenced the constructs whose attributes the element references: when one of them is in
 *   another stack, the element is left unmarked, and cdktf prepares it (the cross-stack reference)
 * @returns the element
 */
export function markStackLocal<T extends IConstruct>(element: T, ...referenced: readonly (IConstruct | undefined)[]): T {
  const stack = TerraformStack.of(element);
  if (referenced.every((c) => c === undefined || TerraformStack.of(c) === stack)) stackLocal.add(element);
  return element;
}

/** True when {@link markStackLocal} marked the element. */
export function isStackLocal(element: IConstruct): boolean {
  return stackLocal.has(element);
}

/** The resolver cdktf's own preparing pass uses (`cdktf/lib/_tokens.ts`), from its public API. */
const PREPARING_RESOLVER = new DefaultTokenResolver(new StringConcat());

/**
 * cdktf's preparation of a stack (`TerraformStack.prepareStack`) for the stack-local elements too:
 * cdktf resolves every element once before writing only to find references to other stacks, which
 * it turns into outputs and remote state, and then resolves each again to write it. A stack-local
 * element holds no such reference, so its first resolution found nothing and cost a third of the
 * synthesis; it is skipped. Every other element (a user's resource, a state backend from a
 * factory, an output cdktf added) is prepared exactly as cdktf prepares it.
 */
export function prepareElements(stack: TerraformStack): void {
  stack.ensureBackendExists();
  for (const element of stackElements(stack)) {
    if (isStackLocal(element)) continue;
    Tokenization.resolve(element.toTerraform(), { scope: stack, preparing: true, resolver: PREPARING_RESOLVER });
  }
}

