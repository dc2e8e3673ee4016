import { IConstruct } from 'constructs';
import { TerraformElement, TerraformStack } from './framework';

/**
 * The Terraform elements of `stack`, in the order cdktf renders them: the construct tree without
 * nested stacks (the render key and the stack-local check walk the stack as its synthesis does).
 */
export function stackElements(stack: TerraformStack): TerraformElement[] {
  const elements: TerraformElement[] = [];
  const visit = (c: IConstruct) => {
    if (TerraformElement.isTerraformElement(c)) elements.push(c);
    for (const child of c.node.children) if (!TerraformStack.isStack(child)) visit(child);
  };
  visit(stack);
  return elements;
}
