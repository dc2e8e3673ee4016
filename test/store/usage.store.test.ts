/**
 * `secretstore-iac usage` on a real store's file audit device (issue 38): the platform is applied,
 * a workload whose ground truth the test keeps logs in and reads (CI jobs through `registry-ci`,
 * the `orchestrator-dev` application through AppRole), is refused once each (HTTP 403) and fails to
 * log in once on each method (wrong `aud`, a bad Secret ID); the report's used, never used, denied
 * and failed sets equal exactly that workload, and nothing secret of the log is printed.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startAuditedStore } from '../support/store/audit-device';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, jwtLogin, PlatformFixture, SPEC_CI_SECRETS, TEST_SETTINGS, testPlatformConfig, testSecretValues, writeKv2 } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/store-facts';

/** The CI paths the jobs read (below `secret/data/`), each read this many times. */
const CI_READS: Record<string, number> = { 'registry/svc-orchestrator': 2, 'codequality/svc-orchestrator': 1 };
/** What each refused request asked for: a path of another identity (seeded, so 403 is the ACL's). */
const CI_DENIED = 'secret/data/acme/dev/orchestrator/database';
const APP_DENIED = 'secret/data/acme/shared/identity/config';
const APP_READ = 'secret/data/acme/dev/orchestrator/database';
const ACL_DENIED = '1 error occurred:\n\t* permission denied\n\n';

describe(`usage: the audit log of ${storeKind()} mapped to the declared identities and rules`, () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let key: JwtSigningKey;
  let dir: string;
  let log: string;
  /** Everything secret the workload handled: none of it may appear in a report. */
  const secrets: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-usage-'));
    log = path.join(dir, 'audit.log');
    key = generateSigningKey();
    store = await startAuditedStore(log);
    fixture = PlatformFixture.create(store, 'usage');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    await fixture.apply();
    for (const logical of [...Object.keys(SPEC_CI_SECRETS), 'acme/dev/orchestrator/database', 'acme/shared/identity/config']) {
      await writeKv2(store, 'secret', logical, testSecretValues(['value']));
    }
    const job = (claims = {}) => signJwt(key.privateKey, gitlabJobClaims(claims, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
    // CI: two job logins, the reads of CI_READS, one refused read; a job token with a wrong aud.
    for (const [i, [logical, n]] of Object.entries(CI_READS).entries()) {
      const jwt = job();
      const token = clientToken(await jwtLogin(store, 'registry-ci', jwt));
      secrets.push(jwt, token);
      for (let k = 0; k < n; k++) expect((await storeRequest(store, 'GET', `secret/data/${logical}`, undefined, token)).status).toBe(200);
      if (i === 0) {
        const refused = await storeRequest(store, 'GET', CI_DENIED, undefined, token);
        expect([refused.status, refused.body.errors]).toEqual([403, [ACL_DENIED]]);
      }
    }
    const wrongAud = job({ aud: 'https://elsewhere.example' });
    secrets.push(wrongAud);
    expect((await jwtLogin(store, 'registry-ci', wrongAud)).status).toBe(400);
    // The application: Role ID and Secret ID as deployment automation provisions them.
    const roleId = (await storeRequest(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).body.data.role_id;
    const secretId = (await storeRequest(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).body.data.secret_id;
    const appToken = clientToken(await appRoleLogin(store, roleId, secretId));
    secrets.push(roleId, secretId, appToken);
    expect((await storeRequest(store, 'GET', APP_READ, undefined, appToken)).status).toBe(200);
    const refused = await storeRequest(store, 'GET', APP_DENIED, undefined, appToken);
    expect([refused.status, refused.body.errors]).toEqual([403, [ACL_DENIED]]);
    expect((await appRoleLogin(store, roleId, `${secretId.slice(0, -4)}0000`)).status).toBe(400);
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const usage = (...args: string[]) => runStoreCli(['usage', path.join(fixture.dir, 'cdktf.out'), '--log', log, ...args], { cwd: dir, addr: store.addr });

  it('used, never used, denied and failed logins are exactly what the workload did (exit 1: there are denials)', async () => {
    const run = await usage('--format', 'json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    const byName = new Map<string, any>(report.identities.map((u: any) => [u.identity, u]));
    const ci = byName.get('jwt/registry-ci');
    expect(ci.logins).toBe(2);
    expect(ci.used.map((g: any) => [g.rule, g.operations, g.count, g.policies])).toEqual(
      Object.entries(CI_READS)
        .map(([logical, n]) => [`secret/data/${logical}`, ['read'], n, ['registry-ci']])
        .sort(),
    );
    // Never used: the other spec §2.3 paths, each with the construct that grants it.
    const unread = Object.keys(SPEC_CI_SECRETS).filter((l) => !(l in CI_READS));
    expect(ci.unused.map((g: any) => g.rule).sort()).toEqual(unread.map((l) => `secret/data/${l}`).sort());
    for (const g of ci.unused) expect(g.declaredBy).toEqual([expect.stringMatching(/^ci-access\//)]);
    expect(ci.denied).toEqual([
      expect.objectContaining({ path: CI_DENIED, operation: 'read', count: 1, grantedBy: [{ identity: 'approle/orchestrator-dev', rule: 'secret/data/acme/dev/orchestrator/*', policies: ['orchestrator-dev'] }] }),
    ]);
    expect(ci.denied[0].cause).toContain('HTTP 403 reading a secret');
    expect(ci.denied[0].fix).toContain('readByCi');

    const app = byName.get('approle/orchestrator-dev');
    expect(app.logins).toBe(1);
    expect(app.used.map((g: any) => [g.rule, g.count])).toEqual([['secret/data/acme/dev/orchestrator/*', 1]]);
    expect(app.unused).toEqual([]);
    expect(app.denied.map((d: any) => [d.path, d.operation, d.count, d.grantedBy.map((g: any) => g.identity)])).toEqual([[APP_DENIED, 'read', 1, ['approle/authentik-role']]]);
    expect(app.denied[0].fix).toContain("an application's policy reads only its own secret path");

    // Every other identity did nothing: no login, no request; all its rules are never used.
    for (const u of report.identities.filter((x: any) => x !== ci && x !== app)) {
      expect([u.identity, u.logins, u.used, u.denied]).toEqual([u.identity, 0, [], []]);
    }
    // The failed logins: one per method, known by mount (the store HMACs the role and the error).
    expect(report.failedLogins.map((f: any) => [f.mount, f.method, f.count])).toEqual([
      ['approle', 'approle', 1],
      ['jwt', 'jwt', 1],
    ]);
    expect(report.failedLogins[0].cause).toContain('invalid Role ID or Secret ID');
    expect(report.failedLogins[1].cause).toContain('wrong aud or bound claims');
    expect(report.counts.malformed).toBe(0);
    // The root token's own requests (apply, seeding, provisioning) are counted apart.
    expect(report.counts.unattributed).toBeGreaterThan(0);
  });

  it('Markdown and text name the same facts; no token, Secret ID, Role ID or JWT of the workload is printed', async () => {
    const md = await usage();
    expect(md.code).toBe(1);
    expect(md.stdout).toContain('## `jwt/registry-ci`');
    expect(md.stdout).toMatch(/\| `secret\/data\/registry\/svc-executor` \| read \| `ci-access\/[^`]+` \|/);
    const text = await usage('--format', 'text');
    expect(text.stdout).toContain(`  denied   read ${APP_DENIED} x1`);
    for (const out of [md.stdout, text.stdout, (await usage('--format', 'json')).stdout]) {
      for (const s of secrets) expect(out.includes(s)).toBe(false);
    }
  });

  it('a window after the workload counts nothing and exits 0', async () => {
    const run = await usage('--format', 'json', '--since', new Date(Date.now() + 60_000).toISOString());
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.counts.responses).toBe(0);
    expect(report.identities.every((u: any) => u.used.length === 0 && u.logins === 0)).toBe(true);
  });
});

/**
 * Attribution by token lineage on the real store (issue 47): each request is credited to the login
 * that issued its token, as the audit device wrote it, never to a display-name prefix. The store is
 * set up by hand (API calls with the root token) and read live: mounts `jwt` and `jwt-prod` both
 * have a role `deploy`; a job of project `prod-infra/deployer` on `jwt` (display name
 * `jwt-prod-infra/deployer`, which starts with either mount) reads three times and is refused once;
 * an AppRole token creates a child token (`auth/token/create`, as the pipeline's per-stack tokens are
 * made) that reads; on OpenBao a namespace `ns1` has an AppRole role of the same name as the root's.
 */
describe(`usage: requests credited by token lineage on ${storeKind()} (jwt and jwt-prod, a child token${storeKind() === 'openbao' ? ', a namespace' : ''})`, () => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let dir: string;
  let log: string;
  const secrets: string[] = [];
  const NS = 'ns1';
  const withNamespace = storeKind() === 'openbao';

  /** A request in a namespace (`X-Vault-Namespace`), or the root namespace. */
  async function nsRequest(namespace: string | undefined, method: string, apiPath: string, body?: unknown, token: string | null = store.rootToken) {
    const headers: Record<string, string> = { ...(token ? { 'X-Vault-Token': token } : {}), ...(namespace ? { 'X-Vault-Namespace': namespace } : {}) };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${store.addr}/v1/${apiPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const ok = async (namespace: string | undefined, method: string, apiPath: string, body?: unknown) => {
    const res = await nsRequest(namespace, method, apiPath, body);
    if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
    return res.body;
  };
  const read = (rules: string[]) => rules.map((p) => `path "${p}" {\n  capabilities = ["${p === 'auth/token/create' ? 'update' : 'read'}"]\n}\n`).join('\n');

  /** An AppRole token of `role` in `namespace`, from a real login. */
  async function appToken(namespace: string | undefined, role: string): Promise<string> {
    const roleId = (await ok(namespace, 'GET', `auth/approle/role/${role}/role-id`)).data.role_id;
    const secretId = (await ok(namespace, 'POST', `auth/approle/role/${role}/secret-id`, {})).data.secret_id;
    const login = await nsRequest(namespace, 'POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, null);
    expect(login.status).toBe(200);
    secrets.push(roleId, secretId, login.body.auth.client_token);
    return login.body.auth.client_token;
  }
  const get = async (namespace: string | undefined, apiPath: string, token: string) => (await nsRequest(namespace, 'GET', apiPath, undefined, token)).status;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-usage-lineage-'));
    log = path.join(dir, 'audit.log');
    key = generateSigningKey();
    store = await startAuditedStore(log);
    secrets.push(store.rootToken);
    const aud = TEST_SETTINGS.ciUrl;
    for (const mount of ['jwt', 'jwt-prod']) {
      await ok(undefined, 'POST', `sys/auth/${mount}`, { type: 'jwt' });
      await ok(undefined, 'POST', `auth/${mount}/config`, { bound_issuer: aud, jwt_validation_pubkeys: [key.publicKeyPem] });
      await ok(undefined, 'PUT', `sys/policies/acl/${mount}-deploy`, { policy: read([mount === 'jwt' ? 'secret/data/deploy/db' : 'secret/data/prod/*']) });
      // The library's default user claim: the display name is `<mount>-<project path>`.
      await ok(undefined, 'POST', `auth/${mount}/role/deploy`, { role_type: 'jwt', user_claim: 'project_path', bound_audiences: [aud], token_policies: [`${mount}-deploy`], token_ttl: 600 });
    }
    await ok(undefined, 'POST', 'sys/auth/approle', { type: 'approle' });
    await ok(undefined, 'PUT', 'sys/policies/acl/app', { policy: read(['secret/data/app/*', 'auth/token/create']) });
    await ok(undefined, 'POST', 'auth/approle/role/app', { token_policies: ['app'] });
    for (const logical of ['deploy/db', 'prod/db', 'app/config']) await writeKv2(store, 'secret', logical, testSecretValues(['value']));
    if (withNamespace) {
      await ok(undefined, 'POST', `sys/namespaces/${NS}`, {});
      await ok(NS, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
      await ok(NS, 'POST', 'sys/auth/approle', { type: 'approle' });
      await ok(NS, 'PUT', 'sys/policies/acl/app', { policy: read(['secret/data/app/*']) });
      await ok(NS, 'POST', 'auth/approle/role/app', { token_policies: ['app'] });
      await ok(NS, 'POST', 'secret/data/app/config', { data: testSecretValues(['value']) });
    }

    // The job of project prod-infra/deployer on `jwt`: three reads, one refused read.
    const jwt = signJwt(key.privateKey, gitlabJobClaims({ project_path: 'prod-infra/deployer' }, { ciUrl: aud }), { kid: key.kid });
    const job = clientToken(await jwtLogin(store, 'deploy', jwt, 'jwt'));
    secrets.push(jwt, job);
    expect((await storeRequest(store, 'GET', 'auth/token/lookup-self', undefined, job)).body.data.display_name).toBe('jwt-prod-infra/deployer');
    for (let i = 0; i < 3; i++) expect(await get(undefined, 'secret/data/deploy/db', job)).toBe(200);
    expect(await get(undefined, 'secret/data/prod/db', job)).toBe(403);

    // The application reads once; its child token (as the pipeline makes its per-stack tokens) reads twice.
    const app = await appToken(undefined, 'app');
    expect(await get(undefined, 'secret/data/app/config', app)).toBe(200);
    const created = await nsRequest(undefined, 'POST', 'auth/token/create', { policies: ['app'], display_name: 'terraform', ttl: '10m' }, app);
    expect(created.status).toBe(200);
    const child = created.body.auth.client_token;
    secrets.push(child);
    for (let i = 0; i < 2; i++) expect(await get(undefined, 'secret/data/app/config', child)).toBe(200);

    if (withNamespace) {
      // The same role name in ns1: one login, one read.
      const nsApp = await appToken(NS, 'app');
      expect(await get(NS, 'secret/data/app/config', nsApp)).toBe(200);
    }
  });

  afterAll(async () => {
    await store?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const usage = (env: NodeJS.ProcessEnv = {}) => runStoreCli(['usage', 'live', '--log', log, '--format', 'json'], { cwd: dir, addr: store.addr, token: store.rootToken, env });
  const summary = (report: any) =>
    Object.fromEntries(report.identities.map((u: any) => [u.identity, { logins: u.logins, used: u.used.map((g: any) => [g.rule, g.count]), denied: u.denied.map((d: any) => [d.path, d.count]) }]));

  it('the log holds what attribution relies on: the login response\'s accessor is the one its requests carry; the child token\'s creation names its parent', () => {
    const responses = fs.readFileSync(log, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l)).filter((e) => e.type === 'response');
    const login = responses.find((e) => e.request.path === 'auth/jwt/login' && e.response?.auth);
    expect(login.response.auth.accessor).toMatch(/^hmac-sha256:/);
    expect([login.response.auth.display_name, login.response.auth.metadata]).toEqual(['jwt-prod-infra/deployer', { role: 'deploy' }]);
    const reads = responses.filter((e) => e.request.path === 'secret/data/deploy/db' && e.request.operation === 'read');
    expect(reads.map((e) => e.auth.accessor)).toEqual([login.response.auth.accessor, login.response.auth.accessor, login.response.auth.accessor]);
    // No auth mount accessor on a request's token: the login's path and namespace name the mount.
    expect(reads.map((e) => e.auth.mount_accessor)).toEqual([undefined, undefined, undefined]);
    const appLogin = responses.find((e) => e.request.path === 'auth/approle/login' && e.response?.auth && (e.request.namespace?.path ?? '') === '');
    const create = responses.find((e) => e.request.path === 'auth/token/create' && e.auth?.accessor === appLogin.response.auth.accessor);
    expect([create.response.auth.display_name, create.response.auth.metadata]).toEqual(['token-terraform', undefined]);
    const childReads = responses.filter((e) => e.request.path === 'secret/data/app/config' && e.auth?.accessor === create.response.auth.accessor);
    expect(childReads.map((e) => e.auth.metadata)).toEqual([undefined, undefined]);
    if (withNamespace) {
      const ns = responses.filter((e) => e.request.namespace?.path === `${NS}/`).map((e) => e.request.path);
      expect(ns).toEqual(expect.arrayContaining(['auth/approle/login', 'secret/data/app/config']));
    }
  });

  it(`jwt/deploy used its grant 3 times and owns its denial; jwt-prod/deploy never logged in; the child token's reads are approle/app's${withNamespace ? '; ns1 is counted apart' : ''}`, async () => {
    const run = await usage();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(summary(report)).toEqual({
      'approle/app': { logins: 1, used: [['auth/token/create', 1], ['secret/data/app/*', 3]], denied: [] },
      'jwt-prod/deploy': { logins: 0, used: [], denied: [] },
      'jwt/deploy': { logins: 1, used: [['auth/token/lookup-self', 1], ['secret/data/deploy/db', 3]], denied: [['secret/data/prod/db', 1]] },
    });
    expect(report.identities.find((u: any) => u.identity === 'jwt-prod/deploy').unused.map((g: any) => g.rule)).toEqual(['secret/data/prod/*']);
    expect(report.counts.loginNotInLog).toBe(0);
    expect(report.namespace).toBeUndefined();
    // ns1's login and read at least (the root token's set-up calls there too).
    if (withNamespace) expect(report.counts.otherNamespaces).toBeGreaterThanOrEqual(2);
    else expect(report.counts.otherNamespaces).toBe(0);
    for (const s of secrets) expect(run.stdout.includes(s)).toBe(false);
  });

  (withNamespace ? it : it.skip)('VAULT_NAMESPACE=ns1: the report of ns1\'s approle/app is its own login and read only; the root\'s are counted apart', async () => {
    const run = await usage({ VAULT_NAMESPACE: NS });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.namespace).toBe(NS);
    expect(summary(report)).toEqual({ 'approle/app': { logins: 1, used: [['secret/data/app/*', 1]], denied: [] } });
    // The root namespace's 3 logins, 9 requests and more (the set-up) are not ns1's.
    expect(report.counts.otherNamespaces).toBeGreaterThanOrEqual(12);
    expect(report.counts.loginNotInLog).toBe(0);
  });
});
