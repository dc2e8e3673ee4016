import { RulePath } from './rule-path';

/** One `path "..." { ... }` block of a parsed policy. */
export interface ParsedPolicyRule {
  /** The rule's path, classified. */
  readonly path: RulePath;
  /** Capability mask after the store's normalisation (legacy `policy`, `deny` alone). */
  readonly mask: number;
  /**
   * Keys of the block other than `capabilities` and `policy` (`allowed_parameters`,
   * `required_parameters`, ...), sorted. They restrict requests further but never add a capability.
   */
  readonly constraints: readonly string[];
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
}
