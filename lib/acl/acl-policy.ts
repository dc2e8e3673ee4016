import { RulePath } from './rule-path';

/** One `path "..." { ... }` block of a parsed policy. */
export interface ParsedPolicyRule {
  /** The rule's path, classified. */
  readonly path: RulePath;
  /** Capability mask after the store's normalisation (legacy `policy`, `deny` alone). */
  readonly mask: number;
  /**
   * Keys of the block that only narrow the requests it allows (`allowed_parameters`,
   * `required_parameters`, `min_wrapping_ttl`, ...: `CONSTRAINT_KEYS` of policy-decoder.ts), sorted; none on a
   * `deny` rule, whose other keys the store ignores. They never add a capability.
   */
  readonly constraints: readonly string[];
  /**
   * Keys of the block the store accepts but the evaluator does not model (Vault's
   * `subscribe_event_types`, or a key of a store-held text unknown to this model), sorted.
   */
  readonly unmodelled?: readonly string[];
}

/** How a policy's text was read; reported so that a reviewer knows which parser vouched for it. */
export type PolicySyntax = 'library' | 'hcl' | 'json' | 'builtin';

/** A named ACL policy, parsed. */
export interface AclPolicy {
  /** Name in the store, lower case (the store lower-cases policy names). */
  readonly name: string;
  /** Rules in the order written; several rules may share a path. */
  readonly rules: readonly ParsedPolicyRule[];
  /** How the text was read. */
  readonly syntax: PolicySyntax;
  /**
   * Why the policy is not fully evaluated, when it is not: keys the store accepts and the evaluator
   * does not model (`path "a": key "subscribe_event_types" is not evaluated`), or, for a text the
   * store holds, what this parser could not read. Its readable rules still count; an identity
   * holding it may have more access than the analysis shows.
   */
  readonly unevaluated?: readonly string[];
}
