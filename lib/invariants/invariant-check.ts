import { AclRule } from '../acl/acl';
import { RulePath } from '../acl/rule-path';
import { StoreCapability, capabilityMask, capabilityNames } from '../acl/store-capability';
import { InvariantScopes } from './invariant-scope';
import { PathOwnership } from './path-ownership';
import { compareStrings } from '../private/compare-strings';
import { canonicalStoreNamespace, pathSeenFrom } from '../model/store-namespace';
import { AccessInvariant, OTHER_APPLICATIONS, forbiddenCapabilities } from './access-invariant';
import { selects } from './identity-selector';
import { GrantWitness, GrantWitnessCache, SearchScope, grantWitnesses } from './grant-witness';
import { InvariantSubject } from './invariant-subject';
import { InvariantViolation } from './invariant-violation';

/**
 * Every violation of `invariants` by `subjects`: for each identity an invariant selects, each rule
 * of its ACL that governs, with a forbidden capability granted, some request path an invariant path
 * covers, decided for every request path (`grantWitnesses`), not from sample paths. Both sides are
 * the store's evaluator (`Acl.check`): the invariant's path as a one-rule ACL, the identity's ACL as
 * the store builds it, so a narrower `deny` or a more specific rule that takes a request away counts
 * as the store counts it, and a grant left on any other path inside the invariant is found. One
 * violation per invariant, identity and rule, with the shortest such path; sorted by invariant,
 * identity, rule. The path `@other-applications` stands, for each identity, for the own paths of
 * every other application (`InvariantSubject.ownPaths`): a request path counts when it belongs to
 * another application and not to the identity ({@link PathOwnership}). Paths are a store namespace's
 * own: an identity of a namespace is checked on its namespace's paths, and its "other applications"
 * are those of its namespace. A rule can also reach into a namespace below the identity's (the store
 * checks a request to `ns1`'s `secret/data/x` against a root token's rules as the path
 * `ns1/secret/data/x`): each namespace below it that the subjects or `namespaces` name is searched as
 * well, its invariant paths and its applications' own paths behind that prefix, where the identity
 * owns nothing; a violation's path then carries the prefix (`ns1/secret/data/x`).
 * @param namespaces further namespaces to search (a live store's, the configuration's), beside the subjects'
 * @throws Error naming the invariant and the identity when their rules are too many to search
 */
export function invariantViolations(subjects: readonly InvariantSubject[], invariants: readonly AccessInvariant[], namespaces: readonly string[] = []): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  const scopes = new InvariantScopes();
  // Identities whose rules near an invariant path are the same share its search.
  const cache: GrantWitnessCache = new Map();
  // One ownership per namespace: an application of another namespace owns paths of that namespace only.
  const ownerships = new Map<string, PathOwnership>();
  const ownershipOf = (namespace: string | undefined): PathOwnership => {
    let o = ownerships.get(namespace ?? '');
    if (o === undefined) ownerships.set(namespace ?? '', (o = new PathOwnership(subjects.filter((s) => s.namespace === namespace))));
    return o;
  };
  const known = [...new Set([...subjects.map((s) => s.namespace ?? ''), ...namespaces.map(canonicalStoreNamespace)])].sort(compareStrings);
  /** The request-path prefixes under which a subject of `namespace` reaches each namespace ({@link pathSeenFrom}): '' for its own, `child/` for those below it. */
  const reach = (namespace: string | undefined): ReadonlyArray<{ readonly namespace: string; readonly prefix: string }> =>
    known.flatMap((n) => {
      const prefix = pathSeenFrom(namespace ?? '', n, '');
      return prefix === undefined ? [] : [{ namespace: n, prefix }];
    });
  for (const invariant of invariants) {
    for (const subject of subjects) {
      if (!selects(invariant.who, subject.name, subject.kind, subject.namespace)) continue;
      if ((invariant.except ?? []).some((e) => selects(e, subject.name, subject.kind, subject.namespace))) continue;
      const acl = subject.acl;
      if (acl.isRoot) continue;
      const forbidden = forbiddenCapabilities(invariant, acl.store);
      if (forbidden.length === 0) continue;
      // Per rule, the witnesses of the first invariant path (in declared order) it breaks.
      const byRule = new Map<AclRule, Map<StoreCapability, GrantWitness>>();
      for (const { namespace, prefix } of reach(subject.namespace)) {
        for (const pattern of invariant.paths) {
          const scope: SearchScope =
            pattern !== OTHER_APPLICATIONS
              ? {
                  patterns: [RulePath.parse(`${prefix}${pattern}`)],
                  covers: (c, path) => (path.startsWith(prefix) && scopes.covers(pattern, c, path.slice(prefix.length), acl) ? { invariantPath: pattern } : undefined),
                  key: `${prefix}${pattern}`,
                }
              : otherApplications(ownershipOf(namespace === '' ? undefined : namespace), prefix === '' ? subject.name : undefined, prefix);
          let found: Map<AclRule, Map<StoreCapability, GrantWitness>>;
          try {
            found = grantWitnesses(acl, forbidden, scope, cache);
          } catch (error) {
            throw new Error(`invariant "${invariant.id}" on ${subject.name}: ${(error as Error).message}`);
          }
          for (const [rule, witnesses] of found) if (!byRule.has(rule)) byRule.set(rule, witnesses);
        }
      }
      for (const rule of acl.rules) {
        const witnesses = byRule.get(rule);
        if (witnesses === undefined) continue;
        const first = forbidden.map((c) => witnesses.get(c)).find((w) => w !== undefined)!;
        out.push({
          invariant: invariant.id,
          reason: invariant.reason,
          identity: subject.name,
          ...(subject.namespace === undefined ? {} : { namespace: subject.namespace }),
          kind: subject.kind,
          capabilities: capabilityNames(capabilityMask(witnesses.keys())),
          rule: rule.path.display,
          policies: rule.policies,
          path: first.path,
          invariantPath: first.invariantPath,
          ...(first.owner !== undefined ? { owner: first.owner } : {}),
          declaredBy: subject.declaredBy?.(rule) ?? [],
        });
      }
    }
  }
  return out.sort(
    (a, b) => compareStrings(a.invariant, b.invariant) || compareStrings(a.identity, b.identity) || compareStrings(a.namespace ?? '', b.namespace ?? '') || compareStrings(a.rule, b.rule),
  );
}

/**
 * `@other-applications` for `identity`: the request paths whose governing own path (by the store's
 * priority among every application's own paths) is another application's and not the identity's;
 * behind `prefix` for a namespace below the identity's, where it owns nothing (`identity` undefined).
 */
function otherApplications(ownership: PathOwnership, identity: string | undefined, prefix = ''): SearchScope {
  const behind = (p: RulePath) => (prefix === '' ? p : RulePath.parse(`${prefix}${p.display}`));
  return {
    patterns: ownership.owned.filter((o) => o.owner !== identity).map((o) => behind(o.path)),
    deciding: ownership.patterns.map(behind),
    covers: (_c, path) => {
      if (!path.startsWith(prefix)) return undefined;
      const owner = ownership.governing(path.slice(prefix.length));
      return owner === undefined || (identity !== undefined && owner.owners.includes(identity)) ? undefined : { invariantPath: owner.pattern, owner: owner.owners[0] };
    },
  };
}
