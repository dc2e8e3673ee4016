import { Acl } from '../acl/acl';
import { RulePath } from '../acl/rule-path';
import { CAPABILITY_BITS } from '../acl/store-capability';
import { InvariantSubject } from './invariant-subject';

/**
 * Which application a request path belongs to: the application whose own path
 * (`InvariantSubject.ownPaths`) would govern the request, by the store's own rule priority (an
 * exact path, else the most specific wildcard). Built as an ACL with one policy per application, so
 * the evaluator decides it: `secret/data/acme/dev/shop/x` belongs to the owner of
 * `secret/data/acme/dev/shop/*`, not to one of `secret/data/acme/dev/*`. Applications whose own
 * paths are the same pattern own it together.
 */
export class PathOwnership {
  private readonly acl: Acl;
  /** The own path patterns of every application, with each one's literal prefix (for pruning probes). */
  readonly owned: ReadonlyArray<{ readonly pattern: string; readonly path: RulePath; readonly owner: string; readonly prefix: string }>;

  constructor(subjects: readonly InvariantSubject[]) {
    const apps = subjects.filter((s) => s.kind === 'application' && (s.ownPaths ?? []).length > 0);
    this.owned = apps.flatMap((s) =>
      s.ownPaths!.map((pattern) => {
        const path = RulePath.parse(pattern);
        return { pattern, path, owner: s.name, prefix: path.literalPrefix };
      }),
    );
    const like = subjects[0]?.acl;
    this.acl = Acl.fromPolicies(
      apps.map((s) => ({ name: s.name, syntax: 'library' as const, rules: s.ownPaths!.map((p) => ({ path: RulePath.parse(p), mask: CAPABILITY_BITS.read, constraints: [] })) })),
      like ? { store: like.store, listLookup: like.listLookup } : {},
    );
  }

  /** The applications a request path belongs to, sorted; empty when it is no application's. */
  ownersOf(path: string): readonly string[] {
    return this.governing(path)?.owners ?? [];
  }

  /** The own path pattern that governs a request path and the applications it is the own path of; undefined when it is no application's. */
  governing(path: string): { readonly pattern: string; readonly owners: readonly string[] } | undefined {
    const rule = this.acl.governingRule(path);
    return rule === undefined ? undefined : { pattern: rule.path.display, owners: rule.policies };
  }

  /** The rule paths whose matches decide {@link governing}: every application's own path. */
  get patterns(): readonly RulePath[] {
    return this.acl.rules.map((r) => r.path);
  }
}
