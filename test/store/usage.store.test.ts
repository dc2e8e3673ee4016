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
    expect(app.denied[0].fix).toContain("application's paths");

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
