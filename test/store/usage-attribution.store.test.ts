/**
 * Property test of usage attribution on the real store (issue 47): every audit entry is credited to
 * the identity whose login made its token, never to another. Each round starts a store with a file
 * audit device and sets it up by hand (root token): JWT mounts whose names prefix each other (`jwt`,
 * `jwt-prod`, sometimes `jwt-prod-eu`), AppRole mounts (`approle`, sometimes `approle-prod`), the same
 * role names on several mounts, each role's token type service or batch; on OpenBao a namespace `ns1`
 * with the same mounts, roles, policies and paths. Then a seeded random workload: logins (JWT user
 * claims chosen so that display names collide: `prod-infra/deployer` on `jwt` and `infra/deployer` on
 * `jwt-prod` are both `jwt-prod-infra/deployer`), child tokens (`auth/token/create`, service or
 * batch), reads the store allows and refuses, every one recorded by the test with the HTTP status the
 * store answered: the ground truth (identity = namespace + mount + role → operation, path, allowed or
 * denied). Mid-run the audit file is rotated (renamed, SIGHUP: the store reopens its path) and the
 * workload goes on, old tokens and new.
 *
 * Checks, per namespace (`usage live`, `VAULT_NAMESPACE` for ns1): over both files (given newest
 * first: the reader orders them), each identity's logins, used and denied requests equal the ground
 * truth exactly, nothing is counted as "login not in the log"; over the later file alone, the
 * requests of tokens whose login is in the earlier file are credited to none (docs/usage.md §2),
 * counted in `counts.loginNotInLog` (exactly) or, for a child token created in the earlier file, as
 * unattributed, whatever their display name.
 *
 * Seeded: the seed is printed; SECRETSTORE_IAC_PROPERTY_SEED=<seed> repeats a run.
 * SECRETSTORE_IAC_USAGE_ATTRIBUTION_ROUNDS sets the number of rounds (default 4, one store each).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SeededRandom } from '../support/seeded-random';
import { startAuditedStore } from '../support/store/audit-device';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { TEST_SETTINGS, testSecretValues } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore } from '../support/store/store-server';
import { storeKind } from '../support/store/store-facts';

const ROUNDS = Math.max(1, Number(process.env.SECRETSTORE_IAC_USAGE_ATTRIBUTION_ROUNDS ?? '4') || 4);
const ROLE_NAMES = ['deploy', 'build', 'web'];
/** User claim values: with the mounts' names they make display names that start with several mounts. */
const CLAIMS = ['prod-infra/deployer', 'infra/deployer', 'prod-eu-web/api', 'eu-web/api', 'web/api', 'prod-eu', 'eu'];
const NS = 'ns1';
const WITH_NAMESPACE = storeKind() === 'openbao';

type Family = 'jwt' | 'approle';
interface Identity {
  readonly ns: string;
  readonly mount: string;
  readonly role: string;
  readonly family: Family;
  readonly tokenType: 'service' | 'batch';
}
interface Token {
  readonly value: string;
  readonly ns: string;
  /** The identity whose login made it (a child's: its parent's). */
  readonly identity: Identity;
  readonly phase: 1 | 2;
  readonly child: boolean;
  readonly batch: boolean;
  readonly displayName: string;
  readonly parent?: Token;
}
interface Request {
  readonly token: Token;
  readonly phase: 1 | 2;
  readonly operation: string;
  readonly path: string;
  readonly allowed: boolean;
}
/** Per identity: logins, and `operation path` → count of allowed and of denied requests. */
interface Tally {
  logins: number;
  used: Record<string, number>;
  denied: Record<string, number>;
}

const nameOf = (i: Identity) => `${i.mount}/${i.role}`;
const ownPath = (i: Identity) => `secret/data/own/${i.mount}/${i.role}/s`;
const policyOf = (i: Identity) => `p-${i.mount}-${i.role}`;
/** A path as a token's display name holds it: "/" as "-". */
const dashed = (mount: string) => mount.replace(/\//g, '-');

describe(`usage: attribution by token lineage on ${storeKind()}, random mounts, roles, claims, token types, rotation${WITH_NAMESPACE ? ', a namespace' : ''} (property, ${ROUNDS} rounds)`, () => {
  const random = SeededRandom.fromEnvironment('usage-attribution');
  let store: RunningStore | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await store?.stop();
    store = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  for (let round = 0; round < ROUNDS; round++) {
    it(`round ${round + 1}: 0 entries credited to the wrong identity, over both files and over the later file alone`, async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-usage-attribution-'));
      const log = path.join(dir, 'audit.log');
      const rotated = path.join(dir, 'audit.log.1');
      const key: JwtSigningKey = generateSigningKey();
      store = await startAuditedStore(log);
      const s = store;
      const secrets: string[] = [s.rootToken];
      const aud = TEST_SETTINGS.ciUrl;

      async function call(ns: string, method: string, apiPath: string, body?: unknown, token: string | null = s.rootToken) {
        const headers: Record<string, string> = { ...(token ? { 'X-Vault-Token': token } : {}), ...(ns ? { 'X-Vault-Namespace': ns } : {}) };
        if (body !== undefined) headers['Content-Type'] = 'application/json';
        const res = await fetch(`${s.addr}/v1/${apiPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : undefined };
      }
      const ok = async (ns: string, method: string, apiPath: string, body?: unknown) => {
        const res = await call(ns, method, apiPath, body);
        if (res.status >= 300) throw new Error(`${ns || 'root'}: ${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
        return res.body;
      };

      // The shape of the round: mount chains whose names prefix each other, roles shared between mounts.
      // On OpenBao also a JWT mount named like the namespace: a token of ns1's `jwt` is displayed
      // `ns1-auth-jwt-<claim>`, which starts with `ns1` too.
      const jwtMounts = ['jwt', 'jwt-prod', ...(random.int(2) === 0 ? ['jwt-prod-eu'] : []), ...(WITH_NAMESPACE ? [NS] : [])];
      const appMounts = ['approle', ...(random.int(2) === 0 ? ['approle-prod'] : [])];
      const rolesOf = (family: Family) => {
        // `deploy` on every JWT mount: the same role name on mounts whose names prefix each other.
        const more = ROLE_NAMES.slice(1).filter(() => random.int(2) === 0);
        return family === 'jwt' || random.int(3) > 0 ? ['deploy', ...more] : more.length > 0 ? more : ['deploy'];
      };
      const shape = [...jwtMounts.map((m) => ({ mount: m, family: 'jwt' as Family })), ...appMounts.map((m) => ({ mount: m, family: 'approle' as Family }))].map((m) => ({
        ...m,
        roles: rolesOf(m.family).map((role) => ({ role, tokenType: random.pick<'service' | 'batch'>(['service', 'batch']) })),
      }));
      // Both token types in every round: the first AppRole role takes the type no role drew.
      const drawn = new Set(shape.flatMap((m) => m.roles.map((r) => r.tokenType)));
      if (drawn.size === 1) shape[jwtMounts.length].roles[0].tokenType = drawn.has('batch') ? 'service' : 'batch';
      const namespaces = WITH_NAMESPACE ? ['', NS] : [''];
      const identities: Identity[] = namespaces.flatMap((ns) =>
        // ns1 has the same mounts and roles; token types drawn again (a role of the same name differs).
        shape.flatMap((m) => m.roles.map((r) => ({ ns, mount: m.mount, role: r.role, family: m.family, tokenType: ns === '' ? r.tokenType : random.pick(['service', 'batch'] as const) }))),
      );

      for (const ns of namespaces) {
        if (ns !== '') {
          await ok('', 'POST', `sys/namespaces/${ns}`, {});
          await ok(ns, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
        }
        for (const m of shape) {
          await ok(ns, 'POST', `sys/auth/${m.mount}`, { type: m.family });
          if (m.family === 'jwt') await ok(ns, 'POST', `auth/${m.mount}/config`, { bound_issuer: aud, jwt_validation_pubkeys: [key.publicKeyPem] });
        }
        for (const i of identities.filter((x) => x.ns === ns)) {
          const rules = [`secret/data/own/${i.mount}/${i.role}/*`, 'secret/data/shared/*'].map((p) => `path "${p}" {\n  capabilities = ["read"]\n}\n`);
          rules.push('path "auth/token/create" {\n  capabilities = ["update"]\n}\n');
          await ok(ns, 'PUT', `sys/policies/acl/${policyOf(i)}`, { policy: rules.join('\n') });
          const common = { token_policies: [policyOf(i)], token_type: i.tokenType, token_ttl: 900 };
          if (i.family === 'jwt') await ok(ns, 'POST', `auth/${i.mount}/role/${i.role}`, { role_type: 'jwt', user_claim: 'project_path', bound_audiences: [aud], ...common });
          else await ok(ns, 'POST', `auth/${i.mount}/role/${i.role}`, common);
          await ok(ns, 'POST', `secret/data/own/${i.mount}/${i.role}/s`, { data: testSecretValues(['value']) });
        }
        for (const logical of ['shared/s', 'other/s']) await ok(ns, 'POST', `secret/data/${logical}`, { data: testSecretValues(['value']) });
      }

      const tokens: Token[] = [];
      const requests: Request[] = [];
      let phase: 1 | 2 = 1;

      /** A real login of identity `i`; its display name checked on the store (what the fallback reads). */
      async function login(i: Identity, claim = random.pick(CLAIMS)): Promise<Token> {
        let res;
        if (i.family === 'jwt') {
          const jwt = signJwt(key.privateKey, gitlabJobClaims({ project_path: claim }, { ciUrl: aud }), { kid: key.kid });
          secrets.push(jwt);
          res = await call(i.ns, 'POST', `auth/${i.mount}/login`, { role: i.role, jwt }, null);
        } else {
          const roleId = (await ok(i.ns, 'GET', `auth/${i.mount}/role/${i.role}/role-id`)).data.role_id;
          const secretId = (await ok(i.ns, 'POST', `auth/${i.mount}/role/${i.role}/secret-id`, {})).data.secret_id;
          secrets.push(roleId, secretId);
          res = await call(i.ns, 'POST', `auth/${i.mount}/login`, { role_id: roleId, secret_id: secretId }, null);
        }
        expect([nameOf(i), res.status]).toEqual([nameOf(i), 200]);
        const value: string = res.body.auth.client_token;
        secrets.push(value, ...(res.body.auth.accessor ? [res.body.auth.accessor] : []));
        const looked = await ok(i.ns, 'POST', 'auth/token/lookup', { token: value });
        // The store prefixes the mount's full path: `jwt`, in a namespace `ns1/auth/jwt` (`ns1-auth-jwt`).
        const source = dashed(i.ns === '' ? i.mount : `${i.ns}/auth/${i.mount}`);
        const displayName = i.family === 'jwt' ? `${source}-${claim}` : source;
        expect([nameOf(i), looked.data.display_name, looked.data.type]).toEqual([nameOf(i), displayName, i.tokenType]);
        const t: Token = { value, ns: i.ns, identity: i, phase, child: false, batch: i.tokenType === 'batch', displayName };
        tokens.push(t);
        return t;
      }

      /** A request with `t`, recorded with what the store answered (200 allowed, 403 refused). */
      async function request(t: Token, method: 'GET' | 'POST', apiPath: string, body?: unknown): Promise<any> {
        const res = await call(t.ns, method, apiPath, body, t.value);
        expect([apiPath, res.status === 200 || res.status === 403]).toEqual([apiPath, true]);
        requests.push({ token: t, phase, operation: method === 'GET' ? 'read' : 'update', path: apiPath, allowed: res.status === 200 });
        return res;
      }

      /** A child token of a service token (its policy grants auth/token/create), service or batch. */
      async function child(parent: Token): Promise<Token> {
        const batch = random.int(2) === 0;
        const res = await request(parent, 'POST', 'auth/token/create', { policies: [policyOf(parent.identity)], display_name: 'terraform', ttl: '15m', ...(batch ? { type: 'batch' } : {}) });
        expect(res.status).toBe(200);
        const value: string = res.body.auth.client_token;
        secrets.push(value);
        const t: Token = { value, ns: parent.ns, identity: parent.identity, phase, child: true, batch, displayName: 'token-terraform', parent };
        tokens.push(t);
        return t;
      }

      /** A read with `t`: its own path, another identity's, the shared path or a path nobody holds. */
      async function read(t: Token): Promise<void> {
        const others = identities.filter((o) => o.ns === t.ns && o !== t.identity);
        const target = random.pick([ownPath(t.identity), ownPath(t.identity), 'secret/data/shared/s', 'secret/data/other/s', ...(others.length > 0 ? [ownPath(random.pick(others))] : [])]);
        await request(t, 'GET', target);
      }

      async function workload(logins: number, steps: number, first: Token[] = []): Promise<void> {
        // A login of each token type, then random ones; a child token of a service token.
        for (const type of ['service', 'batch']) await login(random.pick(identities.filter((i) => i.tokenType === type)));
        for (let n = 0; n < logins; n++) await login(random.pick(identities));
        // Each token of this phase, and `first`, reads once; then random steps.
        for (const t of [...first, ...tokens.filter((x) => x.phase === phase)]) await read(t);
        await read(await child(random.pick(tokens.filter((t) => !t.batch && !t.child))));
        for (let n = 0; n < steps; n++) {
          const live = tokens.filter((t) => t.phase <= phase);
          const t = random.pick(live);
          // Children only of service tokens made by a login (a batch token cannot have children, Vault docs: tokens).
          if (random.int(5) === 0 && !t.batch && !t.child) await child(t);
          else await read(t);
        }
      }

      // The collision of the issue, on every store and namespace: `jwt/deploy` with `prod-infra/deployer`
      // and `jwt-prod/deploy` with `infra/deployer`, both `jwt-prod-infra/deployer`.
      const find = (ns: string, mount: string) => identities.find((i) => i.ns === ns && i.mount === mount && i.role === 'deploy')!;
      const colliding: Token[] = [];
      for (const ns of namespaces) colliding.push(await login(find(ns, 'jwt'), 'prod-infra/deployer'), await login(find(ns, 'jwt-prod'), 'infra/deployer'));
      await workload(3 + random.int(4), 16 + random.int(12));

      // Rotation: the file renamed, SIGHUP, and the store writes to a new file at the path.
      fs.renameSync(log, rotated);
      process.kill(s.pid, 'SIGHUP');
      const deadline = Date.now() + 120_000;
      while (!(fs.existsSync(log) && fs.statSync(log).size > 0)) {
        if (Date.now() > deadline) throw new Error(`the store wrote no new ${log} within 120 s of SIGHUP after the rename`);
        await ok('', 'GET', 'sys/mounts');
        await new Promise((r) => setTimeout(r, 100));
      }
      phase = 2;
      await workload(2 + random.int(4), 16 + random.int(12), colliding);

      // The ground truth, per namespace: over both files, and over the later file alone.
      const empty = (): Tally => ({ logins: 0, used: {}, denied: {} });
      const add = (tally: Tally, r: Request) => {
        const k = `${r.operation} ${r.path}`;
        const m = r.allowed ? tally.used : tally.denied;
        m[k] = (m[k] ?? 0) + 1;
      };
      const truth = (ns: string) => {
        const out: Record<string, Tally> = Object.fromEntries(identities.filter((i) => i.ns === ns).map((i) => [nameOf(i), empty()]));
        for (const t of tokens.filter((x) => x.ns === ns && !x.child)) out[nameOf(t.identity)].logins++;
        for (const r of requests.filter((x) => x.token.ns === ns)) add(out[nameOf(r.token.identity)], r);
        return out;
      };
      /**
       * What the later file alone can tell: a token whose login is in it is its identity's; one whose
       * login is not is credited to none ("login not in the log"), whatever its display name; a
       * child is its parent's as known when it was created, and a child created in the earlier file
       * has no role: unattributed.
       */
      const originInLater = (t: Token): Identity | 'login-not-in-log' | 'unattributed' => {
        if (t.child) return t.phase === 2 ? originInLater(t.parent!) : 'unattributed';
        return t.phase === 2 ? t.identity : 'login-not-in-log';
      };
      /** Tokens of the earlier file whose display name fits another identity's mount with the same role: what a prefix guess gets wrong. */
      const prefix = (c: Identity) => dashed(c.ns === '' ? c.mount : `${c.ns}/auth/${c.mount}`);
      const ambiguous = (t: Token) =>
        identities.filter((c) => c.ns === t.ns && c.family === t.identity.family && c.role === t.identity.role && (t.displayName === prefix(c) || t.displayName.startsWith(`${prefix(c)}-`))).length !== 1;
      const truthLater = (ns: string) => {
        const out: Record<string, Tally> = Object.fromEntries(identities.filter((i) => i.ns === ns).map((i) => [nameOf(i), empty()]));
        let notInLog = 0;
        let ambiguousRequests = 0;
        for (const t of tokens.filter((x) => x.ns === ns && !x.child && x.phase === 2)) out[nameOf(t.identity)].logins++;
        for (const r of requests.filter((x) => x.token.ns === ns && x.phase === 2)) {
          const origin = originInLater(r.token);
          if (origin === 'login-not-in-log') {
            notInLog++;
            if (!r.token.child && ambiguous(r.token)) ambiguousRequests++;
          } else if (origin !== 'unattributed') add(out[nameOf(origin)], r);
        }
        return { tally: out, notInLog, ambiguousRequests };
      };

      const usage = async (ns: string, logs: string[]) => {
        const run = await runStoreCli(['usage', 'live', ...logs.flatMap((l) => ['--log', l]), '--format', 'json'], {
          cwd: dir!,
          addr: s.addr,
          token: s.rootToken,
          env: ns === '' ? {} : { VAULT_NAMESPACE: ns },
        });
        expect(run.stderr).toBe('');
        for (const secret of secrets) expect(run.stdout.includes(secret)).toBe(false);
        const report = JSON.parse(run.stdout);
        const tally: Record<string, Tally> = {};
        for (const u of report.identities) {
          const t = (tally[u.identity] = empty());
          t.logins = u.logins;
          for (const g of u.used) for (const r of g.requests) t.used[`${r.operation} ${r.path}`] = (t.used[`${r.operation} ${r.path}`] ?? 0) + r.count;
          for (const d of u.denied) t.denied[`${d.operation} ${d.path}`] = d.count;
        }
        return { run, report, tally };
      };
      /** Requests credited to an identity that did not make them, per identity: must be none. */
      const misattributed = (got: Record<string, Tally>, want: Record<string, Tally>) => {
        const wrong: string[] = [];
        for (const [name, g] of Object.entries(got)) {
          for (const kind of ['used', 'denied'] as const) {
            for (const [k, n] of Object.entries(g[kind])) if (n > (want[name]?.[kind][k] ?? 0)) wrong.push(`${name}: ${kind} ${k} x${n - (want[name]?.[kind][k] ?? 0)}`);
          }
        }
        return wrong;
      };

      const summary: string[] = [];
      for (const ns of namespaces) {
        const label = ns === '' ? 'root' : ns;
        const want = truth(ns);
        const all = await usage(ns, [log, rotated]);
        expect([label, misattributed(all.tally, want)]).toEqual([label, []]);
        expect([label, all.tally]).toEqual([label, want]);
        expect([label, all.report.counts.loginNotInLog, all.report.counts.malformed]).toEqual([label, 0, 0]);
        if (WITH_NAMESPACE) expect([label, all.report.counts.otherNamespaces > 0]).toEqual([label, true]);
        const anyDenied = requests.some((r) => r.token.ns === ns && !r.allowed);
        expect([label, all.run.code]).toEqual([label, anyDenied ? 1 : 0]);

        const later = truthLater(ns);
        const part = await usage(ns, [log]);
        expect([label, misattributed(part.tally, later.tally)]).toEqual([label, []]);
        expect([label, part.tally]).toEqual([label, later.tally]);
        expect([label, part.report.counts.loginNotInLog]).toEqual([label, later.notInLog]);
        summary.push(`${label}: ${Object.keys(want).length} identities, ${requests.filter((r) => r.token.ns === ns).length} requests (${requests.filter((r) => r.token.ns === ns && !r.allowed).length} denied); later file: ${later.notInLog} login not in the log (${later.ambiguousRequests} of tokens whose display name fits several mounts)`);
      }
      // The round did what it is about: collisions, batch and child tokens, requests of old tokens after the rotation.
      expect(exercised(requests, tokens)).toEqual({ oldTokenAfterRotation: true, batchRequests: true, childRequests: true });
      process.stdout.write(
        `usage-attribution seed ${random.seed} round ${round + 1}: mounts ${shape.map((m) => `${m.mount}[${m.roles.map((r) => `${r.role}:${r.tokenType}`).join(',')}]`).join(' ')}; ` +
          `${tokens.filter((t) => !t.child).length} logins (${tokens.filter((t) => !t.child && t.batch).length} batch), ${tokens.filter((t) => t.child).length} child tokens (${tokens.filter((t) => t.child && t.batch).length} batch); ${summary.join('; ')}\n`,
      );
    });
  }
});

/** Whether the workload exercised what the property is about (a round that did not cannot fail). */
function exercised(requests: readonly Request[], tokens: readonly Token[]) {
  return {
    oldTokenAfterRotation: requests.some((r) => r.phase === 2 && r.token.phase === 1),
    batchRequests: tokens.some((t) => t.batch) && requests.some((r) => r.token.batch),
    childRequests: requests.some((r) => r.token.child),
  };
}
