/**
 * How the configuration pipeline roles' grant in a stack is named (docs/pipelines.md §9): its store
 * policy name and its construct id. One place for both, read by the synthesis that declares the
 * grants (lib/constructs/pipeline-stack-grant.ts) and by `moves` and `tf`, which recognise a retired
 * stack's own grants in a synthesized output (lib/reconcile/retired-stack-grants.ts).
 */

/** The store policy name of the grant of the role named `roleName` for `stack`: `secretstore-iac-pipeline-app-roles-03`. */
export function pipelineGrantPolicyName(roleName: string, stack: string): string {
  return `${roleName}-${stack}`;
}

/**
 * The construct id of the grant, in each stack, of the role whose construct id is `roleId`
 * (`secretstore-iac-grant-pipeline-apply`): a child of the stack itself, so cdktf records its
 * construct path as `<stack>/<id>` in the resource's `//.metadata.path`.
 */
export function pipelineGrantConstructId(roleId: string): string {
  return `secretstore-iac-grant-${roleId}`;
}
