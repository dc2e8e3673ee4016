/**
 * How a rule path matches requests:
 * - `exact`: the request path must equal it;
 * - `prefix`: it ended in `*`, which was stripped; any request path starting with it matches
 *   (plain string prefix, not segment-aware);
 * - `segment`: it holds a `+` segment wildcard (and may end in `*`); matched segment by segment.
 */
export type RuleKind = 'exact' | 'prefix' | 'segment';

/** Identity templating (`{{identity.entity.id}}`) in a rule path. */
const TEMPLATE_PATTERN = /\{\{.*?\}\}/;

/**
 * The path of one ACL rule, classified the way the store classifies it when it parses a policy
 * (OpenBao `vault/policy.go`, `parsePaths`).
 */
export class RulePath {
  /**
   * Parses a rule path as written in a policy.
   * @throws Error for `+*`, which the store refuses
   */
  static parse(written: string): RulePath {
    // The store strips exactly one leading slash from a rule path (requests lose all of theirs).
    const path = written.startsWith('/') ? written.slice(1) : written;
    if (path.includes('+*')) {
      throw new Error(`path "${path}": invalid use of wildcards ('+*' is forbidden)`);
    }
    const segment = path === '+' || path.includes('/+') || path.startsWith('+/');
    if (segment) return new RulePath(written, path, 'segment');
    if (path.endsWith('*')) return new RulePath(written, path.slice(0, -1), 'prefix');
    return new RulePath(written, path, 'exact');
  }

  /** Identity of the rule slot in an ACL: kind plus key (`prefix:secret/`). */
  readonly slot: string;
  /** The normalised path as people write it: the key, plus `*` again for a prefix rule. */
  readonly display: string;
  /** True when the path uses identity templating, resolved per token by the store. */
  readonly templated: boolean;

  private constructor(
    /** The path as written in the policy. */
    readonly written: string,
    /**
     * The key the store files the rule under: leading `/` stripped, and for a prefix rule the
     * trailing `*` stripped. Rules of one kind with the same key merge.
     */
    readonly key: string,
    /** How the rule matches. */
    readonly kind: RuleKind,
  ) {
    // Computed once: ACLs of a thousand identities look these up many times.
    this.slot = `${kind}:${key}`;
    this.display = kind === 'prefix' ? `${key}*` : key;
    this.templated = TEMPLATE_PATTERN.test(key);
  }

  /** True for `prefix` and `segment` rules: the rule can match more than one path. */
  get isWildcard(): boolean {
    return this.kind !== 'exact';
  }

  /**
   * The fixed text before the first wildcard: every path the rule matches starts with it.
   * Used to index rules; a segment rule starting with `+` has an empty literal prefix.
   */
  get literalPrefix(): string {
    if (this.kind === 'exact' || this.kind === 'prefix') return this.key;
    const plus = this.key.indexOf('+');
    return this.key.slice(0, plus);
  }
}
