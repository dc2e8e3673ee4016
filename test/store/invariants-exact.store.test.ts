/**
 * The exact invariant check against the real store (SECRETSTORE_IAC_STORE: OpenBao or Vault).
 *
 * Random policies over a small alphabet, with `+`, `*` and `deny`, under a KV mount `inv/`, are
 * written to the store and attached to an AppRole role; a real login gives the role's token. A
 * random invariant ("this role never reads / lists <pattern>") is checked by the library
 * (`invariantViolations`, and `grantWitnesses` for every rule and capability), with the ACL built
 * from the very policy text the store holds. Every reported witness is requested with the token
 * and must be allowed (no false report); for every capability the check calls unbroken, request
 * paths inside the invariant from the brute-force enumerator are requested and must all be refused
 * with 403 (no miss). Each round then places a rule (a deny, or a narrower grant) on a reported
 * witness, which is what hid grants from the old check, and asks again.
 *
 * The review's "path readable by two applications" (`sharedReadWitness`, under `findSharedReads`)
 * is checked the same way: random policies for an owner and a reader, each reported path read with
 * both real tokens (no false report); where none is reported, paths the owner may read are
 * requested with both tokens and never both allowed (no miss); rules placed on the witness.
 *
 * Seeded: the seed is printed, SECRETSTORE_IAC_PROPERTY_SEED=<seed> replays it;
 * INVARIANT_EXACT_CASES sets the number of cases (default 40, up to three rounds each; the shared
 * reads the same number).
 */
import * as http from 'node:http';
import { Acl, listLookupOf } from '../../lib/acl/acl';
import { PolicyParser } from '../../lib/acl/policy-parser';
import { RulePath } from '../../lib/acl/rule-path';
import { StoreCapability, capabilityMask } from '../../lib/acl/store-capability';
import { AccessInvariant } from '../../lib/invariants/access-invariant';
import { SearchScope, grantWitnesses } from '../../lib/invariants/grant-witness';
import { invariantViolations } from '../../lib/invariants/invariant-check';
import { InvariantSubject } from '../../lib/invariants/invariant-subject';
import { StoreTarget } from '../../lib/model/store-target';
import { sharedReadWitness } from '../../lib/access/shared-read';
import { RandomRule, randomRulePath, randomRules, requestAlphabet, requestPaths, ruleOnWitness, urlPathOf } from '../support/acl/random-acl-case';
import { SeededRandom } from '../support/seeded-random';
import { storeKind } from '../support/store/store-facts';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

const CASES = Number(process.env.INVARIANT_EXACT_CASES ?? 40);
const ROUNDS = 3;
const CAPS: readonly StoreCapability[] = ['read', 'list'];
const ROOT = 'inv/';
/** Request paths inside an unbroken invariant asked per capability and round, at most. */
const MISS_SAMPLE = 40;

function policyText(rules: readonly RandomRule[]): string {
  return rules.map((r) => `path "${r.path}" {\n  capabilities = [${r.capabilities.map((c) => `"${c}"`).join(', ')}]\n}\n`).join('\n');
}

describe(`exact invariants on the real store (${storeKind()}): every reported grant is allowed with the role's token, every path of an unbroken invariant refused`, () => {
  let store: RunningStore;
  let target: StoreTarget;

  beforeAll(async () => {
    store = await startStore();
    target = StoreTarget.fromSealStatus((await storeRequest(store, 'GET', 'sys/seal-status')).body)!;
    expect((await storeRequest(store, 'POST', 'sys/auth/approle', { type: 'approle' })).status).toBe(204);
    expect((await storeRequest(store, 'POST', `sys/mounts/${ROOT.slice(0, -1)}`, { type: 'kv', options: { version: '1' } })).status).toBe(204);
  });

  afterAll(async () => {
    await store?.stop();
  });

  /** A role holding `policy` only, and its token from a real AppRole login. */
  async function roleToken(role: string, policy: string): Promise<string> {
    expect((await storeRequest(store, 'POST', `auth/approle/role/${role}`, { token_policies: [policy], token_no_default_policy: true, token_ttl: '30m' })).status).toBe(204);
    const roleId = (await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id;
    const secretId = (await storeRequest(store, 'POST', `auth/approle/role/${role}/secret-id`, {})).body.data.secret_id;
    const login = await storeRequest(store, 'POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, null);
    expect(login.status).toBe(200);
    return login.body.auth.client_token;
  }

  /**
   * The status of a request needing `capability` on `path` (a LIST as GET `?list=true`), the URL
   * path sent as written (node:http: no client-side cleaning of `.` or `%2E` segments), never
   * following a redirect.
   */
  function request(token: string, capability: StoreCapability, path: string): Promise<number> {
    const url = new URL(store.addr);
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, method: 'GET', path: `/v1/${urlPathOf(path)}${capability === 'list' ? '?list=true' : ''}`, headers: { 'X-Vault-Token': token } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  async function writePolicy(name: string, rules: readonly RandomRule[]): Promise<Acl> {
    const text = policyText(rules);
    const written = await storeRequest(store, 'PUT', `sys/policies/acl/${name}`, { policy: text });
    expect([name, written.status, written.body]).toEqual([name, 204, '']);
    return Acl.fromPolicies([await new PolicyParser(undefined, target.kind).parse(name, text)], { store: target.kind, listLookup: listLookupOf(target) });
  }

  it('a path with an empty, "." or ".." segment reaches the ACL written with %2F / %2E (redirected when written plainly): the check counts it', async () => {
    const acl = await writePolicy('shape', [
      { path: `${ROOT}e/+/x`, capabilities: ['read'] },
      { path: `${ROOT}f/./x`, capabilities: ['read'] },
      { path: `${ROOT}g/../x`, capabilities: ['read'] },
    ]);
    const token = await roleToken('shape', 'shape');
    for (const path of [`${ROOT}e//x`, `${ROOT}f/./x`, `${ROOT}g/../x`]) {
      // Written plainly, `//` is redirected to the cleaned path by the HTTP server (Go's ServeMux:
      // 301 or 307); `.` and `..` are already cleaned by the client (the URL standard).
      if (path.includes('//')) {
        const plain = await fetch(`${store.addr}/v1/${path}`, { headers: { 'X-Vault-Token': token }, redirect: 'manual' });
        expect([path, plain.status >= 300 && plain.status < 400]).toEqual([path, true]);
      }
      // Escaped, the ACL sees it as it is and the grant holds: not 403 (404 nothing there, or the
      // KV engine's own refusal of a `..` key after the ACL let it through).
      const status = await request(token, 'read', path);
      expect([path, status, status !== 403]).toEqual([path, status, true]);
    }
    // The same shapes where no rule grants: refused by the ACL (403), so the answers above are the ACL's.
    for (const path of [`${ROOT}h//x`, `${ROOT}h/./x`, `${ROOT}h/../x`]) expect([path, await request(token, 'read', path)]).toEqual([path, 403]);
    const subject: InvariantSubject = { name: 'approle/shape', kind: 'application', acl };
    const invariant: AccessInvariant = { id: 'no-read', reason: 'r', who: { kind: 'application' }, paths: [`${ROOT}f/*`, `${ROOT}g/*`], capabilities: ['read'] };
    expect(invariantViolations([subject], [invariant]).map((v) => v.path)).toEqual([`${ROOT}f/./x`, `${ROOT}g/../x`]);
  });

  it('a request path written with a leading %2F is the path without it (the store strips the leading /): the check searches no path starting with /', async () => {
    // `+/inv/q` matches `/inv/q` (an empty first segment) but not `inv/q`.
    const acl = await writePolicy('leading', [{ path: `+/${ROOT}q`, capabilities: ['read'] }]);
    const token = await roleToken('leading', 'leading');
    const raw = (urlPath: string) => {
      const url = new URL(store.addr);
      return new Promise<number>((resolve, reject) => {
        const req = http.request({ host: url.hostname, port: url.port, method: 'GET', path: `/v1/${urlPath}`, headers: { 'X-Vault-Token': token } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    };
    // The rule grants where its first segment is a letter: the ACL lets it through (not 403).
    expect(await raw(`w/${ROOT}q`)).not.toBe(403);
    // Written %2F first, the store strips the `/`: `inv/q`, which no rule grants.
    expect(await raw(`%2F${ROOT}q`)).toBe(403);
    expect(acl.check('read', `${ROOT}q`).allowed).toBe(false);
    // The check reports a path with a first segment of its own, never one starting with `/`, and the store lets it through.
    const subject: InvariantSubject = { name: 'approle/leading', kind: 'application', acl };
    const v = invariantViolations([subject], [{ id: 'no-read', reason: 'r', who: { kind: 'application' }, paths: ['*'], capabilities: ['read'] }]);
    expect(v).toHaveLength(1);
    expect(v[0].path).toMatch(new RegExp(`^[^/]+/${ROOT}q$`));
    expect(await raw(v[0].path)).not.toBe(403);
  });

  it("issue 45's counterexamples: a deny on the old probe's paths no longer hides the grant, and the witness is allowed on the store", async () => {
    const shapes: Array<[RandomRule[], string]> = [
      [[{ path: `${ROOT}team/*`, capabilities: ['read'] }, { path: `${ROOT}team/+`, capabilities: ['deny'] }], `${ROOT}team/*`],
      [[{ path: `${ROOT}other/*`, capabilities: ['read'] }, { path: `${ROOT}other/w*`, capabilities: ['deny'] }], `${ROOT}other/*`],
    ];
    for (const [i, [rules, pattern]] of shapes.entries()) {
      const acl = await writePolicy(`counter-${i}`, rules);
      const token = await roleToken(`counter-${i}`, `counter-${i}`);
      const subject: InvariantSubject = { name: `approle/counter-${i}`, kind: 'application', acl };
      const invariant: AccessInvariant = { id: 'no-read', reason: 'r', who: { kind: 'application' }, paths: [pattern], capabilities: ['read'] };
      const v = invariantViolations([subject], [invariant]);
      expect(v.map((x) => x.rule)).toEqual([pattern]);
      expect([v[0].path, await request(token, 'read', v[0].path)]).toEqual([v[0].path, 404]);
      // The paths the old check probed are refused: that is how it missed the grant.
      expect(await request(token, 'read', pattern.replace('*', 'w'))).toBe(403);
    }
  });

  it(`property: random policies and invariants, rules placed on the witnesses: 0 false reports, 0 misses (${CASES} cases x ${ROUNDS} rounds)`, async () => {
    const r = SeededRandom.fromEnvironment(`invariants-exact.store (${storeKind()})`);
    const falseReports: string[] = [];
    const misses: string[] = [];
    let witnesses = 0;
    let refused = 0;
    let unbroken = 0;
    for (let n = 0; n < CASES; n++) {
      const name = `case-${n}`;
      const pattern = randomRulePath(r, ROOT);
      let rules = randomRules(r, CAPS, ROOT);
      let acl = await writePolicy(name, rules);
      const token = await roleToken(name, name);
      for (let round = 0; round < ROUNDS; round++) {
        if (round > 0) acl = await writePolicy(name, rules);
        const what = `${JSON.stringify({ pattern, rules })}`;
        const subject: InvariantSubject = { name: `approle/${name}`, kind: 'application', acl };
        const invariant: AccessInvariant = { id: 'never', reason: 'r', who: { kind: 'application', name: `approle/${name}` }, paths: [pattern], capabilities: [...CAPS] };
        const violations = invariantViolations([subject], [invariant]);
        const scopeAcl = Acl.fromPolicies([{ name: 'i', syntax: 'library', rules: [{ path: RulePath.parse(pattern), mask: capabilityMask(CAPS), constraints: [] }] }], { store: target.kind, listLookup: acl.listLookup });
        const scope: SearchScope = { patterns: [RulePath.parse(pattern)], covers: (c, p) => (scopeAcl.check(c, p).allowed ? { invariantPath: pattern } : undefined) };
        const all = [...grantWitnesses(acl, CAPS, scope).values()].flatMap((m) => [...m.entries()]);
        // The public answer and the search agree on which capabilities are broken.
        const broken = new Set(violations.flatMap((v) => v.capabilities));
        expect([what, [...broken].sort()]).toEqual([what, [...new Set(all.map(([c]) => c))].sort()]);
        for (const [capability, w] of all) {
          witnesses++;
          const status = await request(token, capability, w.path);
          if (status === 403) falseReports.push(`${what}: ${capability} ${w.path} reported, store ${status}`);
        }
        for (const v of violations) {
          const capability = v.capabilities.includes('read') ? 'read' : 'list';
          if ((await request(token, capability, v.path)) === 403) falseReports.push(`${what}: violation ${capability} ${v.path} refused by the store`);
        }
        // No miss: every sampled path inside the invariant is refused for a capability called unbroken.
        const alphabet = requestAlphabet([pattern, ...rules.map((x) => x.path)]);
        for (const capability of CAPS.filter((c) => !broken.has(c))) {
          unbroken++;
          const inside = [...requestPaths(alphabet, 5, ROOT)].filter((p) => !(capability === 'list' && p.endsWith('/')) && scope.covers(capability, capability === 'list' ? `${p}/` : p) !== undefined);
          const sample = inside.length <= MISS_SAMPLE ? inside : Array.from({ length: MISS_SAMPLE }, () => r.pick(inside));
          for (const p of new Set(sample)) {
            refused++;
            const status = await request(token, capability, p);
            if (status !== 403) misses.push(`${what}: ${capability} ${p} called unbroken, store ${status}`);
          }
        }
        if (all.length === 0) break;
        const placed = ruleOnWitness(r, r.pick(all)[1].path, CAPS, ROOT);
        rules = [...rules.filter((x) => x.path !== placed.path), placed];
      }
    }
    process.stdout.write(`invariants-exact.store (${target}): ${witnesses} witnesses allowed, ${refused} paths of unbroken invariants (${unbroken} answers) refused; ${falseReports.length} false reports, ${misses.length} misses\n`);
    expect(falseReports).toEqual([]);
    expect(misses).toEqual([]);
    expect(witnesses).toBeGreaterThan(CASES);
    expect(refused).toBeGreaterThan(CASES);
  });

  it("shared reads, issue 45's shapes: two patterns that overlap only partly, and a deny on the owner's plainest path; the reported path is read with both tokens, the old probe's paths are not", async () => {
    const shapes: Array<{ owner: RandomRule[]; reader: RandomRule[]; path: string; probes: string[] }> = [
      { owner: [{ path: `${ROOT}shared/+/x`, capabilities: ['read'] }], reader: [{ path: `${ROOT}shared/a/*`, capabilities: ['read'] }], path: `${ROOT}shared/a/x`, probes: [`${ROOT}shared/w/x`] },
      {
        owner: [{ path: `${ROOT}team/*`, capabilities: ['read'] }, { path: `${ROOT}team/w`, capabilities: ['deny'] }],
        reader: [{ path: `${ROOT}team/b`, capabilities: ['read'] }, { path: `${ROOT}team/w`, capabilities: ['read'] }],
        path: `${ROOT}team/b`,
        probes: [`${ROOT}team/w`],
      },
    ];
    for (const [i, shape] of shapes.entries()) {
      const owner = await writePolicy(`owner-${i}`, shape.owner);
      const reader = await writePolicy(`reader-${i}`, shape.reader);
      const [ownerToken, readerToken] = [await roleToken(`owner-${i}`, `owner-${i}`), await roleToken(`reader-${i}`, `reader-${i}`)];
      expect(sharedReadWitness(owner, reader)?.path).toBe(shape.path);
      // Both read it (404: allowed, nothing stored there).
      expect([shape.path, await request(ownerToken, 'read', shape.path), await request(readerToken, 'read', shape.path)]).toEqual([shape.path, 404, 404]);
      // The old check's probe (`+` and `*` filled with `w`) is refused to one of them: that is how it missed the pair.
      for (const probe of shape.probes) expect((await request(ownerToken, 'read', probe)) === 403 || (await request(readerToken, 'read', probe)) === 403).toBe(true);
    }
  });

  it(`property: shared reads of random owner and reader policies, rules placed on the witness: 0 false reports, 0 misses (${CASES} cases x ${ROUNDS} rounds)`, async () => {
    const r = SeededRandom.fromEnvironment(`shared-read-exact.store (${storeKind()})`);
    const falseReports: string[] = [];
    const misses: string[] = [];
    let shared = 0;
    let refused = 0;
    for (let n = 0; n < CASES; n++) {
      let ownerRules = randomRules(r, CAPS, ROOT);
      const readerRules = randomRules(r, CAPS, ROOT);
      const reader = await writePolicy(`shared-reader-${n}`, readerRules);
      const readerToken = await roleToken(`shared-reader-${n}`, `shared-reader-${n}`);
      const ownerToken = await roleToken(`shared-owner-${n}`, `shared-owner-${n}`);
      for (let round = 0; round < ROUNDS; round++) {
        const owner = await writePolicy(`shared-owner-${n}`, ownerRules);
        const what = JSON.stringify({ ownerRules, readerRules });
        const witness = sharedReadWitness(owner, reader);
        if (witness !== undefined) {
          shared++;
          const statuses = [await request(ownerToken, 'read', witness.path), await request(readerToken, 'read', witness.path)];
          if (statuses.includes(403)) falseReports.push(`${what}: ${witness.path} reported, store ${statuses.join(' / ')}`);
          const placed = ruleOnWitness(r, witness.path, CAPS, ROOT);
          ownerRules = [...ownerRules.filter((x) => x.path !== placed.path), placed];
          continue;
        }
        // No miss: of the paths the owner may read, none is read by the reader too.
        const alphabet = requestAlphabet([...ownerRules, ...readerRules].map((x) => x.path.slice(ROOT.length)));
        const inside = [...requestPaths(alphabet, 5, ROOT)].filter((p) => owner.check('read', p).allowed);
        const sample = inside.length <= MISS_SAMPLE ? inside : Array.from({ length: MISS_SAMPLE }, () => r.pick(inside));
        for (const p of new Set(sample)) {
          refused++;
          const statuses = [await request(ownerToken, 'read', p), await request(readerToken, 'read', p)];
          if (!statuses.includes(403)) misses.push(`${what}: ${p} read by both (store ${statuses.join(' / ')}), none reported`);
        }
        break;
      }
    }
    process.stdout.write(`shared-read-exact.store (${target}): ${shared} shared paths read by both tokens, ${refused} paths of the owner's refused to one of them; ${falseReports.length} false reports, ${misses.length} misses\n`);
    expect(falseReports).toEqual([]);
    expect(misses).toEqual([]);
    expect(shared).toBeGreaterThan(CASES / 2);
    expect(refused).toBeGreaterThan(CASES);
  });
});
