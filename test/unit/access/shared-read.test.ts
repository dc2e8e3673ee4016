/**
 * Spec: no application reads another application's paths. The review's "path readable by two
 * applications" flag (`findSharedReads`, through `sharedReadWitness`) is decided for every request
 * path, under the store's priority rules on both sides, not from one probe path per rule.
 */
import { Acl } from '../../../lib/acl/acl';
import { AccessModel } from '../../../lib/access/access-model';
import { diffAccess } from '../../../lib/access/access-diff';
import { storeConfigurationOf } from '../../../lib/access/store-configuration';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { SynthStack } from '../../../lib/sources/synth-output';
import { isSecretReadRule } from '../../../lib/invariants/secret-read-rule';
import { findSharedReads, sharedReadWitness } from '../../../lib/access/shared-read';
import { aclOf, isCleanPath, randomRules, requestAlphabet, requestPaths, ruleOnWitness, RandomRule } from '../../support/acl/random-acl-case';
import { SeededRandom } from '../../support/seeded-random';

const acl = (rules: Record<string, string[]>, store: 'openbao' | 'vault' = 'openbao') => aclOf(Object.entries(rules).map(([path, capabilities]) => ({ path, capabilities })), store);

/** One stack of AppRole applications, each holding one policy of its own with `rules` (read). */
function appsStack(apps: Record<string, string[]>): SynthStack {
  const text = (paths: string[]) => paths.map((p) => `path "${p}" {\n  capabilities = ["read"]\n}\n`).join('\n');
  return {
    name: 'apps',
    file: 'apps/cdk.tf.json',
    namespace: '',
    metadata: {},
    resources: {
      vault_auth_backend: { approle: { type: 'approle', path: 'approle' } },
      vault_approle_auth_backend_role: Object.fromEntries(Object.keys(apps).map((app) => [app, { backend: 'approle', role_name: app, token_policies: [app] }])),
      vault_policy: Object.fromEntries(Object.entries(apps).map(([app, paths]) => [app, { name: app, policy: text(paths) }])),
    },
  };
}

async function model(apps: Record<string, string[]>): Promise<AccessModel> {
  const { overridden: _none, ...configuration } = storeConfigurationOf([appsStack(apps)]);
  return AccessModel.load(configuration, new PolicyParser());
}

/** How good a witness is: a clean path first, then one not ending in `/` (written apart from the library's `witnessRank`). */
const rankOf = (path: string) => (isCleanPath(path) ? 0 : 2) + (path.endsWith('/') ? 1 : 0);

/** The best path (rank, then length; then the first) of at most `maxLength` characters that both may read with the owner's governing rule a secret read, by brute force. */
function bruteForce(owner: Acl, reader: Acl, maxLength: number): string | undefined {
  let best: string | undefined;
  for (const path of requestPaths(requestAlphabet([...owner.rules, ...reader.rules].map((r) => r.path.key)), maxLength)) {
    const mine = owner.check('read', path);
    if (!mine.allowed || mine.rule === undefined || !isSecretReadRule(mine.rule) || !reader.check('read', path).allowed) continue;
    // Paths come shortest first: a later one is better only by rank.
    if (best === undefined || rankOf(path) < rankOf(best)) best = path;
  }
  return best;
}

describe('spec: no application reads a path another application reads (the review flag is exact)', () => {
  it('two patterns that overlap only partly share a path: secret/data/shared/+/x and secret/data/shared/a/* both read secret/data/shared/a/x', () => {
    const owner = acl({ 'secret/data/shared/+/x': ['read'] });
    const reader = acl({ 'secret/data/shared/a/*': ['read'] });
    expect(sharedReadWitness(owner, reader)).toEqual({ path: 'secret/data/shared/a/x', ownerRule: 'secret/data/shared/+/x' });
    expect(sharedReadWitness(reader, owner)).toEqual({ path: 'secret/data/shared/a/x', ownerRule: 'secret/data/shared/a/*' });
    // The probe of one path per rule (`+` and `*` filled with `w`) sees neither: the reader cannot read secret/data/shared/w/x, the owner not secret/data/shared/a/w.
    expect(reader.check('read', 'secret/data/shared/w/x').allowed).toBe(false);
    expect(owner.check('read', 'secret/data/shared/a/w').allowed).toBe(false);
  });

  it("a deny on the owner's plainest path does not hide the rest of its rule", () => {
    const owner = acl({ 'secret/data/team/*': ['read'], 'secret/data/team/w': ['deny'] });
    const reader = acl({ 'secret/data/team/b': ['read'] });
    expect(sharedReadWitness(owner, reader)).toEqual({ path: 'secret/data/team/b', ownerRule: 'secret/data/team/*' });
  });

  it("no shared read where one side's deny or a narrower rule takes every common path away", () => {
    expect(sharedReadWitness(acl({ 'secret/data/team/*': ['read'], 'secret/data/team/b*': ['deny'] }), acl({ 'secret/data/team/b/*': ['read'] }))).toBeUndefined();
    // A narrower rule of the reader granting only list governs there: no read.
    expect(sharedReadWitness(acl({ 'secret/data/team/*': ['read'] }), acl({ 'secret/data/*': ['read'], 'secret/data/team/*': ['list'] }))).toBeUndefined();
    // ... but an owner's `+` rule reaches beside team, where the reader's wide rule still governs.
    expect(sharedReadWitness(acl({ 'secret/data/+/c': ['read'] }), acl({ 'secret/data/*': ['read'], 'secret/data/team/*': ['list'] }))).toEqual({ path: 'secret/data/w/c', ownerRule: 'secret/data/+/c' });
  });

  it("the owner's paths are its secret reads: per-token storage and the store's own endpoints are no one's", () => {
    expect(sharedReadWitness(acl({ 'cubbyhole/*': ['read'], 'sys/mounts': ['read'] }), acl({ '*': ['read'] }))).toBeUndefined();
  });

  it("an owner of a namespace below the reader's is searched behind its prefix (the root reader's ns1/... rule)", () => {
    const owner = acl({ 'secret/data/ns1-only/*': ['read'] });
    const reader = acl({ 'ns1/secret/data/+/k': ['read'] });
    expect(sharedReadWitness(owner, reader, 'ns1/')).toEqual({ path: 'ns1/secret/data/ns1-only/k', ownerRule: 'secret/data/ns1-only/*' });
    expect(sharedReadWitness(owner, reader)).toBeUndefined();
  });

  it("the review: a new partly-overlapping grant is flagged once, on the application that gained it, with the path both read", async () => {
    const base = { billing: ['secret/data/shared/+/x'], shop: ['secret/data/shop/*'], other: ['secret/data/other/*'] };
    const head = { ...base, shop: ['secret/data/shop/*', 'secret/data/shared/a/*'] };
    expect(findSharedReads(await model(base))).toEqual([]);
    expect(findSharedReads(await model(head))).toEqual([
      { reader: 'approle/billing', owner: 'approle/shop', path: 'secret/data/shared/a/x', ownerRule: 'secret/data/shared/a/*' },
      { reader: 'approle/shop', owner: 'approle/billing', path: 'secret/data/shared/a/x', ownerRule: 'secret/data/shared/+/x' },
    ]);
    const flags = diffAccess(await model(base), await model(head)).flags.filter((f) => f.kind === 'shared-read');
    // billing gained nothing: the pair is shown on shop only.
    expect(flags.map((f) => [f.identity, f.message])).toEqual([['approle/shop', "can read `approle/billing`'s `secret/data/shared/+/x`"]]);
    // Both sides new or changed: a new application, and a wildcard over it. The wildcard reads into
    // the new application's narrower rule; the new application reading its own path is not shown.
    const widened = { ...base, shop: ['secret/data/*'], audit: ['secret/data/audit/*'] };
    const both = diffAccess(await model(base), await model(widened)).flags.filter((f) => f.kind === 'shared-read');
    expect(both.map((f) => [f.identity, f.message])).toEqual([
      ['approle/shop', "can read `approle/audit`'s `secret/data/audit/*`, `approle/billing`'s `secret/data/shared/+/x`, `approle/other`'s `secret/data/other/*`"],
    ]);
    // Neither tells more (the same rule on both): both shown.
    const twins = diffAccess(await model(base), await model({ ...base, twin: ['secret/data/twin/*'], twin2: ['secret/data/twin/*'] })).flags.filter((f) => f.kind === 'shared-read');
    expect(twins.map((f) => f.identity)).toEqual(['approle/twin', 'approle/twin2']);
  });

  it('property: the answer equals brute force over every path up to 6 characters (random policies of both, rules placed on the witnesses), and every witness both may read', () => {
    const r = SeededRandom.fromEnvironment('shared-read-exact');
    const MAX = 6;
    const found: string[] = [];
    let shared = 0;
    let none = 0;
    for (let n = 0; n < 150; n++) {
      const store = r.pick(['openbao', 'vault'] as const);
      let ownerRules: RandomRule[] = randomRules(r, ['read', 'list']);
      const readerRules = randomRules(r, ['read', 'list']);
      for (let round = 0; round < 3; round++) {
        const owner = aclOf(ownerRules, store);
        const reader = aclOf(readerRules, store);
        const what = JSON.stringify({ store, ownerRules, readerRules });
        const exact = sharedReadWitness(owner, reader);
        const brute = bruteForce(owner, reader, MAX);
        if (exact === undefined) {
          none++;
          if (brute !== undefined) found.push(`${what}: miss, both read ${brute}`);
          break;
        }
        shared++;
        const mine = owner.check('read', exact.path);
        if (!mine.allowed || mine.rule?.path.display !== exact.ownerRule || !isSecretReadRule(mine.rule) || !reader.check('read', exact.path).allowed) found.push(`${what}: false report ${exact.path}`);
        if (exact.path.length <= MAX && (brute === undefined || rankOf(brute) !== rankOf(exact.path) || brute.length !== exact.path.length)) found.push(`${what}: ${exact.path} is not the best (brute force: ${brute})`);
        // Brute force sees paths up to the bound only: a better one there means the witness is not the best.
        if (exact.path.length > MAX && brute !== undefined && !(rankOf(brute) > rankOf(exact.path))) found.push(`${what}: brute force has a better path ${brute} than ${exact.path}`);
        // A deny or a narrower rule on the witness: a search from samples loses the rest there.
        const placed = ruleOnWitness(r, exact.path, ['read', 'list']);
        ownerRules = [...ownerRules.filter((x) => x.path !== placed.path), placed];
      }
    }
    process.stdout.write(`shared-read-exact: ${shared} shared, ${none} none, ${found.length} differences\n`);
    expect(found).toEqual([]);
    expect(shared).toBeGreaterThan(40);
    expect(none).toBeGreaterThan(40);
  });
});
