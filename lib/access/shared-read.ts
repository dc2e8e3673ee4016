import { Acl } from '../acl/acl';
import { RulePath } from '../acl/rule-path';
import { isDenyMask, maskHas } from '../acl/store-capability';
import { SearchScope, grantWitnesses, witnessRank } from '../invariants/grant-witness';
import { isSecretReadRule } from '../invariants/secret-read-rule';
import { AccessModel, IdentityAccess } from './access-model';
import { compareStrings } from '../private/compare-strings';
import { labelOf } from './namespaced-name';
import { pathSeenFrom } from '../model/store-namespace';

/** One application able to read a path that another application's policy grants it. */
export interface SharedRead {
  /** The identity reading into another's paths (`labelOf`: with its namespace when not the root's). */
  readonly reader: string;
  /** The identity whose rule names the path, of the reader's namespace or one below it. */
  readonly owner: string;
  /** A concrete path both can read, as the reader requests it (behind the owner's namespace prefix when that is below the reader's). */
  readonly path: string;
  /** The owner's rule that governs the owner's read of {@link path} (the store's priority among the owner's rules). */
  readonly ownerRule: string;
}

/**
 * Finds paths readable by two applications (AppRole identities; the spec forbids
 * cross-application access): a path that the owner's token may read under one of its secret-read
 * rules (outside the `default` policy and the store's own endpoints, `isSecretReadRule`) and that
 * the reader's token may read too.
 *
 * Decided for every request path, not from samples: for each (owner, reader) pair whose read rules
 * can meet (one literal prefix starts with the other's: no other pair shares a path), the reader's
 * ACL is searched over the owner's readable paths with the store's own priority rules on both sides
 * (longest prefix, `+` segments, `*`, deny; {@link grantWitnesses}), so two patterns that overlap
 * only partly, or an owner's rule whose plainest path a narrower deny takes away, are seen.
 *
 * Paths are a namespace's own: applications of two namespaces reading the same path read two
 * different secrets, so only applications of one namespace are compared, and an application of a
 * namespace above the owner's, whose rule reaches into it behind its prefix (the store checks a root
 * token's request to `ns1`'s `secret/data/x` as `ns1/secret/data/x`): searched with that prefix, the
 * path reported as the reader requests it (`ns1/secret/data/x`).
 *
 * @returns one entry per (reader, owner) pair with the best such path ({@link sharedReadWitness}),
 *   sorted by reader then owner
 * @throws Error when two policies tell apart too many path classes to search (never a partial answer)
 */
export function findSharedReads(model: AccessModel): SharedRead[] {
  const apps = model.identities.filter((i) => i.identity.method === 'approle' && !i.loginRefused);
  const readers = new ReaderIndex(apps);
  const namespaces = [...new Set(apps.map((a) => a.identity.namespace ?? ''))];
  /** The namespaces whose applications can reach `namespace`'s paths, each with the prefix its requests carry ({@link pathSeenFrom}): its own (''), and each above it. */
  const readersOf = (namespace: string): ReadonlyArray<{ readonly namespace: string; readonly prefix: string }> =>
    namespaces.flatMap((n) => {
      const prefix = pathSeenFrom(n, namespace, '');
      return prefix === undefined ? [] : [{ namespace: n, prefix }];
    });
  const found: SharedRead[] = [];
  for (const owner of apps) {
    if (!owner.acl.rules.some((r) => isSecretReadRule(r))) continue;
    for (const { namespace, prefix } of readersOf(owner.identity.namespace ?? '')) {
      const scope = ownerReadScope(owner.acl, prefix);
      for (const reader of readers.meeting(scope.patterns)) {
        if (reader === owner || (reader.identity.namespace ?? '') !== namespace) continue;
        const shared = witnessIn(reader.acl, scope);
        if (shared) found.push({ reader: labelOf(reader.identity), owner: labelOf(owner.identity), ...shared });
      }
    }
  }
  return found.sort((a, b) => compareStrings(a.reader, b.reader) || compareStrings(a.owner, b.owner));
}

/**
 * The best request path (a clean one first, `witnessRank`; then the shortest, then the first in
 * code point order) that `owner` may read under one
 * of its secret-read rules and `reader` may read too, as the reader sends it (behind `prefix`, the
 * owner's namespace as seen from the reader's: `ns1/` for a root reader of `ns1`, '' for its own),
 * with the owner's rule that governs it; undefined when there is none anywhere. Decided for every
 * request path by {@link grantWitnesses} (the store's priority rules on both sides).
 * @throws Error when the two policies tell apart too many path classes to search
 */
export function sharedReadWitness(owner: Acl, reader: Acl, prefix = ''): { readonly path: string; readonly ownerRule: string } | undefined {
  return owner.rules.some((r) => isSecretReadRule(r)) ? witnessIn(reader, ownerReadScope(owner, prefix)) : undefined;
}

function witnessIn(reader: Acl, scope: SearchScope): { readonly path: string; readonly ownerRule: string } | undefined {
  const witnesses = [...grantWitnesses(reader, ['read'], scope).values()].flatMap((byCapability) => [...byCapability.values()]);
  const best = witnesses.sort((a, b) => witnessRank('read', a.path) - witnessRank('read', b.path) || a.path.length - b.path.length || compareStrings(a.path, b.path))[0];
  return best === undefined ? undefined : { path: best.path, ownerRule: best.invariantPath };
}

/**
 * The request paths `owner` may read under one of its secret-read rules, as a reader whose
 * requests carry `prefix` sends them: every such path is matched by one of those rules (behind the
 * prefix), and the owner's decision on it depends only on which of its rules match it.
 */
function ownerReadScope(owner: Acl, prefix: string): SearchScope {
  const behind = (p: RulePath) => (prefix === '' ? p : RulePath.parse(`${prefix}${p.display}`));
  return {
    patterns: owner.rules.filter((r) => isSecretReadRule(r)).map((r) => behind(r.path)),
    deciding: owner.rules.map((r) => behind(r.path)),
    covers: (_capability, path) => {
      if (!path.startsWith(prefix)) return undefined;
      const decision = owner.check('read', path.slice(prefix.length));
      return decision.allowed && decision.rule !== undefined && isSecretReadRule(decision.rule) ? { invariantPath: decision.rule.path.display } : undefined;
    },
  };
}

/**
 * Applications by the literal prefixes of their read-granting rules, to find the ones whose rules
 * can meet a pattern (only those can read a path it matches: every path two rule paths both match
 * starts with both literal prefixes), so that a 1,000-application configuration searches a few
 * pairs, not a million.
 */
class ReaderIndex {
  private readonly byPrefix = new Map<string, IdentityAccess[]>();
  private readonly sorted: string[];
  private readonly lengths: number[];

  constructor(apps: readonly IdentityAccess[]) {
    for (const app of apps) {
      for (const rule of app.acl.rules) {
        if (isDenyMask(rule.mask) || !maskHas(rule.mask, 'read')) continue;
        const list = this.byPrefix.get(rule.path.literalPrefix) ?? [];
        if (list[list.length - 1] !== app) list.push(app);
        this.byPrefix.set(rule.path.literalPrefix, list);
      }
    }
    this.sorted = [...this.byPrefix.keys()].sort(compareStrings);
    this.lengths = [...new Set(this.sorted.map((p) => p.length))].sort((a, b) => a - b);
  }

  /** The applications with a read-granting rule whose literal prefix starts with, or is a start of, one of `patterns`' (each once, in a stable order). */
  meeting(patterns: readonly RulePath[]): IdentityAccess[] {
    const out = new Set<IdentityAccess>();
    const add = (prefix: string) => {
      for (const app of this.byPrefix.get(prefix) ?? []) out.add(app);
    };
    for (const pattern of patterns) {
      const p = pattern.literalPrefix;
      // Prefixes that are a start of p.
      for (const length of this.lengths) {
        if (length > p.length) break;
        add(p.slice(0, length));
      }
      // Prefixes that start with p: a contiguous run of the sorted list.
      for (let i = lowerBound(this.sorted, p); i < this.sorted.length && this.sorted[i].startsWith(p); i++) add(this.sorted[i]);
    }
    return [...out];
  }
}

/** The first index of `sorted` (by {@link compareStrings}) whose value is not before `value`. */
function lowerBound(sorted: readonly string[], value: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareStrings(sorted[mid], value) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
