import { Acl, AclRule } from '../../../lib/acl/acl';
import { RulePath } from '../../../lib/acl/rule-path';
import { CAPABILITY_BITS, StoreCapability, capabilityMask } from '../../../lib/acl/store-capability';
import { AccessInvariant } from '../../../lib/invariants/access-invariant';
import { GrantWitness, SearchScope, grantWitnesses } from '../../../lib/invariants/grant-witness';
import { invariantViolations } from '../../../lib/invariants/invariant-check';
import { InvariantSubject } from '../../../lib/invariants/invariant-subject';
import { PathOwnership } from '../../../lib/invariants/path-ownership';
import { aclOf, isCleanPath, randomRulePath, randomRules, requestAlphabet, requestPaths, ruleOnWitness, RandomRule } from '../../support/acl/random-acl-case';
import { SeededRandom } from '../../support/seeded-random';

const CAPS: readonly StoreCapability[] = ['read', 'list'];

/** The invariant path as a one-rule ACL granting everything, written apart from `InvariantScopes`. */
function patternScope(pattern: string, like: Acl): SearchScope {
  const all = Acl.fromPolicies([{ name: 'i', syntax: 'library', rules: [{ path: RulePath.parse(pattern), mask: capabilityMask(CAPS), constraints: [] }] }], { store: like.store, listLookup: like.listLookup });
  return { patterns: [RulePath.parse(pattern)], covers: (c, path) => (all.check(c, path).allowed ? { invariantPath: pattern } : undefined) };
}

interface Best {
  readonly rank: number;
  readonly length: number;
}

/** How good a witness is, as the search ranks it: a clean path first, then (but for LIST) one not ending in `/`. */
function rankOf(c: StoreCapability, request: string): number {
  return (isCleanPath(request) ? 0 : 2) + (c !== 'list' && request.endsWith('/') ? 1 : 0);
}

const better = (a: Best, b: Best) => a.rank < b.rank || (a.rank === b.rank && a.length < b.length);

/** Every (rule, capability) with a violating request path of at most `maxLength` characters, by brute force over every such path. */
function bruteForce(acl: Acl, scope: SearchScope, maxLength: number): Map<string, Best> {
  const out = new Map<string, Best>();
  // Every character a pattern names, `/`, and one no pattern names.
  const alphabet = requestAlphabet([...acl.rules.map((r) => r.path), ...scope.patterns, ...(scope.deciding ?? [])].map((p) => p.key));
  for (const path of requestPaths(alphabet, maxLength)) {
    for (const c of CAPS) {
      const d = acl.check(c, path);
      if (d.path.length > maxLength || !d.allowed || scope.covers(c, d.path) === undefined) continue;
      const key = `${d.rule!.path.slot} ${c}`;
      const here = { rank: rankOf(c, d.path), length: d.path.length };
      const before = out.get(key);
      if (before === undefined || better(here, before)) out.set(key, here);
    }
  }
  return out;
}

const MAX_LENGTH = 6;

/** Compares the exact search with brute force: returns the differences (empty when they agree). */
function differences(acl: Acl, scope: SearchScope, exact: Map<AclRule, Map<StoreCapability, GrantWitness>>): string[] {
  const brute = bruteForce(acl, scope, MAX_LENGTH);
  const out: string[] = [];
  const reported = new Set<string>();
  for (const [rule, byCap] of exact) {
    for (const [c, w] of byCap) {
      const key = `${rule.path.slot} ${c}`;
      reported.add(key);
      // Every witness is a real violation, checked apart from the search.
      const d = acl.check(c, w.path);
      if (d.path !== w.path || !d.allowed || d.rule !== rule || scope.covers(c, d.path) === undefined) out.push(`false report ${key} at ${w.path}`);
      const mine = { rank: rankOf(c, w.path), length: w.path.length };
      const b = brute.get(key);
      if (b === undefined) {
        if (mine.length <= MAX_LENGTH) out.push(`no path of brute force for ${key}, witness ${w.path}`);
      } else if (mine.length > MAX_LENGTH) {
        // Brute force saw only paths up to the bound: a better one there means the witness is not the best.
        if (!(b.rank > mine.rank)) out.push(`brute force has a better path than ${w.path} for ${key}: ${JSON.stringify(b)}`);
      } else if (b.rank !== mine.rank || b.length !== mine.length) out.push(`not the best witness for ${key}: ${w.path}, brute force ${JSON.stringify(b)}`);
    }
  }
  for (const key of brute.keys()) if (!reported.has(key)) out.push(`miss ${key}`);
  return out;
}

describe('exact invariants: a grant anywhere inside the invariant is found, for every path', () => {
  const team: AccessInvariant = { id: 'no-app-team', reason: 'applications never read team secrets', who: { kind: 'application' }, paths: ['secret/data/team/*'], capabilities: ['read'] };
  const subject = (rules: Record<string, StoreCapability[]>): InvariantSubject => ({
    name: 'approle/shop',
    kind: 'application',
    acl: aclOf(Object.entries(rules).map(([path, capabilities]) => ({ path, capabilities }))),
  });

  it('a deny on the direct children does not hide the grant on deeper paths (secret/data/team/* read + secret/data/team/+ deny)', () => {
    const s = subject({ 'secret/data/team/*': ['read'], 'secret/data/team/+': ['deny'] });
    const v = invariantViolations([s], [team]);
    expect(v.map((x) => [x.rule, x.path])).toEqual([['secret/data/team/*', 'secret/data/team/w/w']]);
    expect(s.acl.check('read', 'secret/data/team/a/b').allowed).toBe(true);
    expect(s.acl.check('read', v[0].path).rule?.path.display).toBe('secret/data/team/*');
  });

  it('a deny on the letter the probe used does not hide the grant (secret/data/other/* read + secret/data/other/w* deny)', () => {
    const s = subject({ 'secret/data/other/*': ['read'], 'secret/data/other/w*': ['deny'] });
    const v = invariantViolations([s], [{ ...team, paths: ['secret/data/other/*'] }]);
    expect(v.map((x) => [x.rule, x.path])).toEqual([['secret/data/other/*', 'secret/data/other/x']]);
  });

  it('a grant taken away on every path inside the invariant is no violation', () => {
    const s = subject({ 'secret/data/*': ['read'], 'secret/data/team/*': ['deny'], 'secret/data/team': ['deny'] });
    expect(invariantViolations([s], [team])).toEqual([]);
    // ... but a segment rule of the same first-wildcard position outranks that deny.
    const t = subject({ 'secret/data/team/+/x': ['read'], 'secret/data/team/*': ['deny'] });
    expect(invariantViolations([t], [team]).map((x) => x.path)).toEqual(['secret/data/team/w/x']);
  });

  it('paths with empty, "." or ".." segments count (the store takes them written with %2F / %2E); a clean witness is preferred', () => {
    const s = subject({ 'secret/data/team//x': ['read'], 'secret/data/team/./x': ['read'], 'secret/data/team/../x': ['read'] });
    expect(invariantViolations([s], [team]).map((x) => x.path)).toEqual(['secret/data/team/../x', 'secret/data/team/./x', 'secret/data/team//x']);
    const t = subject({ 'secret/data/team/+/x': ['read'] });
    expect(invariantViolations([t], [team]).map((x) => x.path)).toEqual(['secret/data/team/w/x']);
  });

  it('a root-protected path needs sudo on the governing rule: exact over the root paths too', () => {
    const inv: AccessInvariant = { id: 'no-audit', reason: 'r', who: { kind: 'application' }, paths: ['sys/audit', 'sys/audit/*'], capabilities: ['read'] };
    expect(invariantViolations([subject({ 'sys/audit*': ['read'] })], [inv])).toEqual([]);
    expect(invariantViolations([subject({ 'sys/audit*': ['read', 'sudo'] })], [inv]).map((x) => x.path)).toEqual(['sys/audit']);
    // Next to them, sys/auditw is not root-protected: found without sudo.
    expect(invariantViolations([subject({ 'sys/audit*': ['read'] })], [{ ...inv, paths: ['sys/audit*'] }]).map((x) => x.path)).toEqual(['sys/auditw']);
  });

  it('property: the exact search equals brute force over every path up to 6 characters (random ACLs, deny and narrower rules placed on the witnesses)', () => {
    const r = SeededRandom.fromEnvironment('invariant-exact');
    let cases = 0;
    let reported = 0;
    let beyond = 0;
    const found: string[] = [];
    for (let n = 0; n < 60; n++) {
      const store = r.pick(['openbao', 'vault'] as const);
      const lookup = r.pick(['trimmed-first', 'path-first'] as const);
      const pattern = randomRulePath(r);
      let rules = randomRules(r, CAPS);
      for (let round = 0; round < 3; round++) {
        const acl = aclOf(rules, store, lookup);
        const scope = patternScope(pattern, acl);
        const exact = grantWitnesses(acl, CAPS, scope);
        cases++;
        const diff = differences(acl, scope, exact);
        if (diff.length > 0) found.push(`${JSON.stringify({ store, lookup, pattern, rules })}: ${diff.join('; ')}`);
        const witnesses = [...exact.values()].flatMap((m) => [...m.values()]);
        reported += witnesses.length;
        beyond += witnesses.filter((w) => w.path.length > MAX_LENGTH).length;
        if (witnesses.length === 0) break;
        // Place rules on a witness: a check on sample paths loses the grant there.
        const placed = ruleOnWitness(r, r.pick(witnesses).path, CAPS);
        rules = [...rules.filter((x) => x.path !== placed.path), placed];
      }
    }
    process.stdout.write(`invariant-exact: ${cases} checks, ${reported} witnesses (${beyond} longer than ${MAX_LENGTH}, re-checked alone), ${found.length} differences\n`);
    expect(found).toEqual([]);
    expect(reported).toBeGreaterThan(50);
  });

  it('property: @other-applications equals brute force too (random own paths, random readers)', () => {
    const r = SeededRandom.fromEnvironment('invariant-exact-owners');
    const found: string[] = [];
    for (let n = 0; n < 40; n++) {
      const apps = ['approle/a', 'approle/b', 'approle/c'].map((name) => ({ name, own: [randomRulePath(r)] }));
      const rules = [...randomRules(r, CAPS), ...apps[0].own.map((path) => ({ path, capabilities: ['read'] }))];
      const acl = aclOf(rules);
      const subjects: InvariantSubject[] = apps.map((a, i) => ({ name: a.name, kind: 'application', acl: i === 0 ? acl : aclOf(a.own.map((path) => ({ path, capabilities: ['read'] }))), ownPaths: a.own }));
      const ownership = new PathOwnership(subjects);
      const scope: SearchScope = {
        patterns: ownership.owned.filter((o) => o.owner !== 'approle/a').map((o) => o.path),
        deciding: ownership.patterns,
        covers: (_c, path) => {
          const g = ownership.governing(path);
          return g === undefined || g.owners.includes('approle/a') ? undefined : { invariantPath: g.pattern, owner: g.owners[0] };
        },
      };
      const diff = differences(acl, scope, grantWitnesses(acl, CAPS, scope));
      if (diff.length > 0) found.push(`${JSON.stringify({ apps, rules })}: ${diff.join('; ')}`);
    }
    expect(found).toEqual([]);
  });

  it('deny the sample of the old check everywhere: the search still answers in bounded time for many rules', () => {
    const rules: RandomRule[] = Array.from({ length: 40 }, (_, i) => ({ path: `secret/data/team/${'+/'.repeat(i % 5)}x${i}*`, capabilities: i % 2 === 0 ? ['deny'] : ['read'] }));
    const acl = aclOf([...rules, { path: 'secret/data/*', capabilities: ['read'] }]);
    const exact = grantWitnesses(acl, ['read'], patternScope('secret/data/team/*', acl));
    expect([...exact.keys()].map((x) => x.path.display)).toContain('secret/data/*');
    expect(CAPABILITY_BITS.read).toBeGreaterThan(0);
  });
});
