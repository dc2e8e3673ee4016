import { Acl, AclRule, outranksRulePath } from '../acl/acl';
import { RulePath } from '../acl/rule-path';
import { StoreCapability, isDenyMask, maskHas } from '../acl/store-capability';
import { rootPathPatterns } from '../acl/sudo-path';
import { visitPathClasses } from './path-classes';
import { DEAD, PathPatternAutomaton, REQUEST_PATH_SHAPE } from './path-pattern-automaton';

/** Where a request is inside a scope: the scope's pattern that covers it, and for another application's path, that application. */
export interface ScopeHit {
  /** The pattern that covers the request path. */
  readonly invariantPath: string;
  /** The application whose own path it is, for `@other-applications`. */
  readonly owner?: string;
}

/**
 * A set of request paths to search, told by patterns: every request path it holds is matched by
 * one of {@link patterns}, and whether it holds one is decided by {@link covers} from which of
 * {@link patterns} and {@link deciding} match it (so that the search can decide it for every path).
 */
export interface SearchScope {
  /** Patterns one of which matches every request path the scope holds. */
  readonly patterns: readonly RulePath[];
  /** Further patterns whose matches {@link covers} reads (other applications' own paths). */
  readonly deciding?: readonly RulePath[];
  /** Whether the scope holds a request needing `capability` on the request path `path` (as the store sees it: LIST ends in `/`). */
  covers(capability: StoreCapability, path: string): ScopeHit | undefined;
  /** When given, what the scope is: two scopes with one key cover alike (their answers may be shared through a cache). */
  readonly key?: string;
}

/** Answers of {@link grantWitnesses} shared between ACLs whose rules near the scope are the same: by rule slot. */
export type GrantWitnessCache = Map<string, ReadonlyMap<string, ReadonlyMap<StoreCapability, GrantWitness>>>;

/** A request path on which a rule grants a capability inside a scope. */
export interface GrantWitness extends ScopeHit {
  /** The request path as the store checks it (`Acl.check`). */
  readonly path: string;
}

/**
 * For each rule of `acl` and each of `capabilities`, a request path inside `scope` on which the
 * store's decision (`Acl.check`) allows the capability with that rule governing, if there is one
 * anywhere: decided for every request path, not for samples. The decision on a path depends only on
 * which rule paths match it (the exact rule, the longest prefix, the segment rules and their
 * priority, LIST's and SCAN's path without its `/`, the root-protected paths), so the paths fall in
 * finitely many classes ({@link visitPathClasses}) over the rules that can meet the scope (their
 * literal prefixes agree), and `Acl.check` decides each class on its shortest path. The witness is
 * the shortest clean path (no empty, `.` or `..` segment) when there is one, else the shortest
 * path; among those one not ending in `/` when there is one (a LIST path always does); and is
 * checked again with `Acl.check` before it is returned.
 *
 * The answer depends only on the rules that can meet the scope (no other rule matches a path the
 * search visits), so with `cache` and a scope with a key, ACLs with the same such rules (a thousand
 * identities holding the same `default` rules) share one search.
 * @throws Error when the rules tell apart too many classes to search (never a partial answer)
 */
export function grantWitnesses(acl: Acl, capabilities: readonly StoreCapability[], scope: SearchScope, cache?: GrantWitnessCache): Map<AclRule, Map<StoreCapability, GrantWitness>> {
  const meets = (p: RulePath, others: readonly RulePath[]) => others.some((o) => p.literalPrefix.startsWith(o.literalPrefix) || o.literalPrefix.startsWith(p.literalPrefix));
  const granting = acl.rules.filter((r) => !isDenyMask(r.mask) && capabilities.some((c) => maskHas(r.mask, c)) && meets(r.path, scope.patterns)).map((r) => r.path);
  if (granting.length === 0 || acl.isRoot) return new Map();
  // Only rule paths that meet both the scope and a granting rule can match where a violation is:
  // every path matched by two rule paths starts with both literal prefixes.
  const near = scope.patterns.filter((p) => meets(p, granting));
  const nearBoth = (p: RulePath) => meets(p, granting) && meets(p, near);
  // The ACL's own rules apart from the other patterns: only they are forgotten when outranked.
  const others = uniqueBySlot([...near, ...rootPathPatterns(acl.store).filter(nearBoth), ...(scope.deciding ?? []).filter(nearBoth)]);
  const rules = uniqueBySlot([...granting, ...acl.rules.map((r) => r.path).filter(nearBoth)]);
  const ruleBySlot = new Map(acl.rules.map((r) => [r.path.slot, r]));
  const key =
    cache !== undefined && scope.key !== undefined
      ? [scope.key, acl.store, acl.listLookup, capabilities.join(','), ...rules.map((p) => `${p.slot}=${ruleBySlot.get(p.slot)!.mask}`).sort()].join('\u0000')
      : undefined;
  let bySlot = key === undefined ? undefined : cache!.get(key);
  if (bySlot === undefined) {
    bySlot = searchClasses(acl, capabilities, scope, near, granting, others, rules);
    if (key !== undefined) cache!.set(key, bySlot);
  }
  const out = new Map<AclRule, Map<StoreCapability, GrantWitness>>();
  for (const [slot, byCapability] of bySlot) {
    const rule = ruleBySlot.get(slot)!;
    const witnesses = new Map<StoreCapability, GrantWitness>();
    for (const [capability, witness] of byCapability) {
      const again = acl.check(capability, witness.path);
      if (!again.allowed || again.rule !== rule || scope.covers(capability, again.path)?.invariantPath !== witness.invariantPath) {
        throw new Error(`internal error: the witness ${witness.path} of rule "${rule.path.display}" does not check again`);
      }
      witnesses.set(capability, witness);
    }
    out.set(rule, witnesses);
  }
  return out;
}

/** The search itself: the best witness of each rule (by slot) and capability over the classes of `others` and `rules`. */
function searchClasses(
  acl: Acl,
  capabilities: readonly StoreCapability[],
  scope: SearchScope,
  near: readonly RulePath[],
  granting: readonly RulePath[],
  others: readonly RulePath[],
  rules: readonly RulePath[],
): Map<string, Map<StoreCapability, GrantWitness>> {
  const found = new Map<string, Map<StoreCapability, GrantWitness & { rank: number }>>();
  const automata = [...others, ...rules].map((p) => PathPatternAutomaton.of(p));
  const slotIndex = (paths: readonly RulePath[], offset: number) => new Map(paths.map((p, i) => [p.slot, offset + i]));
  const otherIndex = slotIndex(others, 0);
  const ruleIndex = slotIndex(rules, others.length);
  // A rule matching every longer path (its `*` reached) outranks for good every non-exact rule
  // below it in the store's priority: those can never govern a longer path, so they are forgotten.
  const outranked = rules.map((a) => (a.kind === 'exact' ? [] : rules.flatMap((b, j) => (b.kind !== 'exact' && b !== a && outranksRulePath(a, b) ? [others.length + j] : []))));
  const forget = (states: number[]) => {
    rules.forEach((_, i) => {
      const at = others.length + i;
      if (automata[at].matchesEveryExtension(states[at])) for (const j of outranked[i]) states[j] = DEAD;
    });
  };
  const required = [near.map((p) => otherIndex.get(p.slot)!), granting.map((p) => ruleIndex.get(p.slot)!)];
  visitPathClasses(automata, required, ({ path, endsWithSlash, clean }) => {
    for (const capability of capabilities) {
      // A LIST or SCAN request is `path/`: decided by the class of `path` (the request and the
      // request without its `/`), whatever `path` ends with; clean when `path` is and ends otherwise.
      const listing = isListing(capability);
      const request = listing ? `${path}/` : path;
      const rank = rankOf(capability, listing ? clean && !endsWithSlash : clean, listing || endsWithSlash);
      const decision = acl.check(capability, request);
      if (!decision.allowed || decision.rule === undefined) continue;
      const hit = scope.covers(capability, decision.path);
      if (hit === undefined) continue;
      const byCapability = found.get(decision.rule.path.slot) ?? new Map<StoreCapability, GrantWitness & { rank: number }>();
      found.set(decision.rule.path.slot, byCapability);
      const before = byCapability.get(capability);
      // Classes come shortest first: a later one replaces an earlier only with a better rank.
      if (before === undefined || rank < before.rank) byCapability.set(capability, { path: decision.path, ...hit, rank });
    }
  }, forget);
  const out = new Map<string, Map<StoreCapability, GrantWitness>>();
  for (const [slot, byCapability] of found) out.set(slot, new Map([...byCapability].map(([c, { rank: _rank, ...witness }]) => [c, witness])));
  return out;
}

/**
 * How good a witness is, lower first: a clean request path (no empty, `.` or `..` segment:
 * {@link REQUEST_PATH_SHAPE}), then, but for LIST and SCAN (whose request always ends in `/`), one
 * not ending in `/`. Among witnesses of one rank the shortest is the best.
 */
export function witnessRank(capability: StoreCapability, request: string): number {
  let state = REQUEST_PATH_SHAPE.start;
  for (const char of request) state = REQUEST_PATH_SHAPE.step(state, char);
  return rankOf(capability, state !== DEAD && REQUEST_PATH_SHAPE.clean(state), state !== DEAD && REQUEST_PATH_SHAPE.endsWithSlash(state));
}

/** {@link witnessRank} of a request whose shape is known (the search has it from the path's class). */
function rankOf(capability: StoreCapability, clean: boolean, endsWithSlash: boolean): number {
  return (clean ? 0 : 2) + (!isListing(capability) && endsWithSlash ? 1 : 0);
}

function isListing(capability: StoreCapability): boolean {
  return capability === 'list' || capability === 'scan';
}

function uniqueBySlot(paths: readonly RulePath[]): RulePath[] {
  const bySlot = new Map<string, RulePath>();
  for (const p of paths) if (!bySlot.has(p.slot)) bySlot.set(p.slot, p);
  return [...bySlot.values()];
}
