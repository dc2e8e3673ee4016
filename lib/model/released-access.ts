/**
 * One access change the release of kept grants makes (`tf --released-grants`, once the retired
 * stacks' removal is applied): a pipeline role loses a retired stack's grant policy, or a policy
 * loses a rule on one. One shape for what `moves` announces in the note and what `tf` checks and logs.
 */
export interface ReleasedAccess {
  /** The resource address (`vault_jwt_auth_backend_role.pipeline-apply_role_1`). */
  readonly address: string;
  /** The role's or the policy's name on the store. */
  readonly name: string;
  /** What it loses: `policy` (a token policy) or `rule` (a `path` block of its text). */
  readonly loses: 'policy' | 'rule';
  /** The policy name, or the rule's path with its capabilities (`sys/policies/acl/x ["delete"]`). */
  readonly what: string;
}
