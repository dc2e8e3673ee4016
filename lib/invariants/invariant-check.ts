import { RulePath } from '../acl/rule-path';
import { StoreCapability, capabilityMask, capabilityNames, isDenyMask, maskHas } from '../acl/store-capability';
import { InvariantScopes } from './invariant-scope';
import { PathOwnership } from './path-ownership';
import { compareStrings } from '../private/compare-strings';
import { AccessInvariant, OTHER_APPLICATIONS, forbiddenCapabilities } from './access-invariant';
import { selects } from './identity-selector';
import { sharedPathCandidates } from './shared-path';
import { InvariantSubject } from './invariant-subject';
import { InvariantViolation } from './invariant-violation';

/**
 * Every violation of `invariants` by `subjects`: for each identity an invariant selects, each rule
 * of its ACL granting a forbidden capability on some request path an invariant path matches. Both
 * sides are decided by the store's evaluator (`Acl.check`): the invariant's path as a one-rule ACL,
 * the identity's ACL as the store builds it, so a narrower `deny` or a more specific rule that
 * takes the request away counts as the store counts it. One violation per invariant, identity and
 * rule; sorted by invariant, identity, rule. The path `@other-applications` stands, for each
 * identity, for the own paths of every other application (`InvariantSubject.ownPaths`): a path
 * counts when it belongs to another application and not to the identity ({@link PathOwnership}).
 */
export function invariantViolations(subjects: readonly InvariantSubject[], invariants: readonly AccessInvariant[]): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  const scopes = new InvariantScopes();
  const ownership = invariants.some((i) => i.paths.includes(OTHER_APPLICATIONS)) ? new PathOwnership(subjects) : undefined;
  for (const invariant of invariants) {
    for (const subject of subjects) {
      if (!selects(invariant.who, subject.name, subject.kind)) continue;
      if ((invariant.except ?? []).some((e) => selects(e, subject.name, subject.kind))) continue;
      const acl = subject.acl;
      if (acl.isRoot) continue;
      const forbidden = forbiddenCapabilities(invariant, acl.store);
      for (const rule of acl.rules) {
        if (isDenyMask(rule.mask)) continue;
        const granted = forbidden.filter((c) => maskHas(rule.mask, c));
        if (granted.length === 0) continue;
        const prefix = rule.path.literalPrefix;
        const patterns: Array<{ pattern: string; owner?: string }> = invariant.paths.flatMap((pattern) =>
          pattern !== OTHER_APPLICATIONS
            ? [{ pattern }]
            : // Only paths whose fixed prefixes agree can meet: the rest is not probed.
              ownership!.owned.filter((o) => o.owner !== subject.name && (o.prefix.startsWith(prefix) || prefix.startsWith(o.prefix))),
        );
        for (const { pattern, owner } of patterns) {
          // A path of another application: one that application owns and the subject does not.
          const covered = (capability: StoreCapability, path: string) =>
            owner === undefined ? scopes.covers(pattern, capability, path, acl) : ownership!.ownersOf(path).includes(owner) && !ownership!.ownersOf(path).includes(subject.name);
          const found = new Map<StoreCapability, string>();
          for (const capability of granted) {
            for (const path of sharedPathCandidates(rule.path, RulePath.parse(pattern))) {
              const decision = acl.check(capability, path);
              if (decision.allowed && decision.rule === rule && covered(capability, path)) {
                found.set(capability, decision.path);
                break;
              }
            }
          }
          if (found.size === 0) continue;
          out.push({
            invariant: invariant.id,
            reason: invariant.reason,
            identity: subject.name,
            kind: subject.kind,
            capabilities: capabilityNames(capabilityMask(found.keys())),
            rule: rule.path.display,
            policies: rule.policies,
            path: [...found.values()][0],
            invariantPath: pattern,
            ...(owner !== undefined ? { owner } : {}),
            declaredBy: subject.declaredBy?.(rule) ?? [],
          });
          break;
        }
      }
    }
  }
  return out.sort((a, b) => compareStrings(a.invariant, b.invariant) || compareStrings(a.identity, b.identity) || compareStrings(a.rule, b.rule));
}
