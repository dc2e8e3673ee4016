import { Capability, normalizeCapabilities, unknownToStore } from './capability';
import { StoreTarget } from './store-target';
import { ValidationProblem } from './validation-problem';

/** One `path "..." { capabilities = [...] }` block of a policy, with why it is there. */
export interface PolicyRule {
  /** ACL path pattern (exact, `*` prefix or `+` segment wildcard). */
  readonly path: string;
  /** Capabilities, normalised: sorted, unique, `deny` alone. */
  readonly capabilities: readonly Capability[];
  /** Declarations that asked for this rule (construct paths), sorted; rendered as comments. */
  readonly sources: readonly string[];
}

/**
 * An ACL policy: named path rules, merged per path and rendered deterministically.
 *
 * Rules for the same path string merge the way the store merges them (capabilities OR-ed, `deny`
 * wins), so the rendered policy is what the store will enforce. Rendering sorts rules by path and
 * capabilities in documentation order: the same declarations always give the same bytes.
 */
export class PolicyDocument {
  // `rule` keeps the normalised form until the entry changes: grants ask again and again for the same rule.
  private readonly byPath = new Map<string, { capabilities: Set<Capability>; sources: Set<string>; rule?: PolicyRule }>();
  private changes = 0;
  private sorted?: { readonly revision: number; readonly rules: readonly PolicyRule[] };

  /** @param name the policy's name in the store (`registry-ci`, `orchestrator-dev`) */
  constructor(readonly name: string) {}

  /**
   * Adds capabilities on a path, merging with an existing rule for the same path.
   * @param source who asked for it (a construct path); shown as a comment above the rule
   * @returns the rule as it stands after the merge
   */
  addRule(path: string, capabilities: readonly Capability[], source: string): PolicyRule {
    let entry = this.byPath.get(path);
    if (!entry) {
      entry = { capabilities: new Set(), sources: new Set() };
      this.byPath.set(path, entry);
    }
    const before = entry.capabilities.size + entry.sources.size;
    capabilities.forEach((c) => entry.capabilities.add(c));
    entry.sources.add(source);
    if (entry.capabilities.size + entry.sources.size !== before) {
      entry.rule = undefined;
      this.changes++;
    }
    return this.ruleFor(path)!;
  }

  /**
   * Changes when a rule is added or grows, and only then (adding a rule that is already there
   * leaves it): whoever renders the document keeps the text for as long as it stays.
   */
  get revision(): number {
    return this.changes;
  }

  /** The rule for exactly this path string, if any. */
  ruleFor(path: string): PolicyRule | undefined {
    const entry = this.byPath.get(path);
    if (!entry) return undefined;
    return (entry.rule ??= {
      path,
      capabilities: normalizeCapabilities(entry.capabilities),
      sources: [...entry.sources].sort(),
    });
  }

  /** All rules, sorted by path. */
  get rules(): PolicyRule[] {
    if (this.sorted?.revision !== this.changes) {
      this.sorted = { revision: this.changes, rules: [...this.byPath.keys()].sort().map((p) => this.ruleFor(p)!) };
    }
    return [...this.sorted.rules];
  }

  /** True when the policy has no rule: such a policy is never rendered. */
  get isEmpty(): boolean {
    return this.byPath.size === 0;
  }

  /**
   * Problems: an empty policy, a rule with an empty capability list, and with `store`, a capability
   * that store does not know (it would refuse the whole policy at apply).
   */
  problems(field = 'policy', store?: StoreTarget): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    if (this.isEmpty) {
      problems.push(
        new ValidationProblem(field, this.name, 'grants nothing: an empty policy is never emitted; grant a path or remove the identity'),
      );
    }
    for (const rule of this.rules) {
      if (rule.capabilities.length === 0) {
        problems.push(new ValidationProblem(`${field}.rules["${rule.path}"]`, [], 'must name at least one capability'));
      }
      if (store) problems.push(...storeCapabilityProblems(`${field}.rules["${rule.path}"]`, rule.capabilities, store));
    }
    return problems;
  }
}

/**
 * The problem of capabilities the target store does not know: the store refuses the whole policy
 * (`invalid capability "scan"` from Vault), so apply would fail.
 */
export function storeCapabilityProblems(field: string, capabilities: readonly string[], store: StoreTarget): ValidationProblem[] {
  const unknown = unknownToStore(store.kind, capabilities);
  if (unknown.length === 0) return [];
  return [
    new ValidationProblem(
      field,
      [...capabilities],
      `names ${unknown.map((c) => `"${c}"`).join(', ')}, which ${store.productName} does not know: it refuses the whole policy ` +
        `with invalid capability "${unknown[0]}"; remove it, or set settings.store to the store you run`,
    ),
  ];
}
