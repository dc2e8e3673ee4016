/**
 * The meta-arguments of a Terraform / OpenTofu resource block: they tell the engine how to manage
 * the resource (order, copies, which provider configuration, lifecycle), and are not attributes of
 * the object on the store. A comparison with the store never reads them: the per-stack grant every
 * resource `depends_on` (docs/pipelines.md §9) is no field of a role.
 */
export const TERRAFORM_META_ARGUMENTS: ReadonlySet<string> = new Set(['connection', 'count', 'depends_on', 'for_each', 'lifecycle', 'provider', 'provisioner']);

/** Whether a key of a resource block is a meta-argument ({@link TERRAFORM_META_ARGUMENTS}) rather than an attribute. */
export function isMetaArgument(key: string): boolean {
  return TERRAFORM_META_ARGUMENTS.has(key);
}
