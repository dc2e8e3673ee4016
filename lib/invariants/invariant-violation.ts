/** One identity holding, through one rule, capabilities an invariant forbids. */
export interface InvariantViolation {
  /** The invariant's id. */
  readonly invariant: string;
  /** Why the invariant holds. */
  readonly reason: string;
  /** The identity. */
  readonly identity: string;
  /** Its store namespace; absent for the root namespace. */
  readonly namespace?: string;
  /** Its kind. */
  readonly kind: string;
  /** The forbidden capabilities the rule grants, in documentation order. */
  readonly capabilities: readonly string[];
  /** The rule that grants them (its path pattern). */
  readonly rule: string;
  /** The policies behind the rule. */
  readonly policies: readonly string[];
  /** A request path the invariant covers on which the rule grants them (checked by the evaluator). */
  readonly path: string;
  /** The invariant's path pattern that covers {@link path} (for `@other-applications`, the other application's own path). */
  readonly invariantPath: string;
  /** For `@other-applications`: the application whose own path {@link invariantPath} is. */
  readonly owner?: string;
  /** The declarations (construct paths) that asked for the rule, when known. */
  readonly declaredBy: readonly string[];
}

/** The invariant path of a violation for a reader: `"secret/data/a/*"`, or `"secret/data/a/*" (the own path of approle/a)`. */
export function invariantPathText(v: InvariantViolation): string {
  return v.owner === undefined ? `"${v.invariantPath}"` : `"${v.invariantPath}" (the own path of ${v.owner})`;
}

/** A violation in one line: `jwt/deploy-ci can read secret/data/a/prod/w (rule "secret/data/*", policy deploy-ci): breaks "no-ci-prod" (CI never reads production)`. */
export function violationText(v: InvariantViolation): string {
  const policies = v.policies.length === 0 ? '' : `, ${v.policies.length === 1 ? 'policy' : 'policies'} ${v.policies.join(', ')}`;
  const declared = v.declaredBy.length === 0 ? '' : `; granted by ${v.declaredBy.join(', ')}`;
  return (
    `${v.namespace === undefined ? v.identity : `${v.identity} in the namespace ${v.namespace}`} (${v.kind}) can ${v.capabilities.join(', ')} ${v.path}${v.owner === undefined ? '' : `, ${invariantPathText(v)}`} (rule "${v.rule}"${policies}${declared}): ` +
    `breaks invariant "${v.invariant}" (${v.reason})`
  );
}
