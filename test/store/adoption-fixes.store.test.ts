/**
 * Issue 27 on a real store: each fix text of adopt and drift named here is followed to convergence
 * (the fix it names is done, then the next adopt and drift are clean and the apply keeps what the
 * store had), one scenario per fresh store:
 * - `local: true` declared, the store's AppRole mount not local: the fix says to remove `local: true`
 *   (it used to say "declare `local: true`"); followed, the Role ID and the Secret ID issued before stay;
 * - a people role made by hand with `role_type=jwt`: the fix says the store's role is a JWT role (it
 *   used to say "an OIDC role"); followed (the role deleted by hand), the apply makes the OIDC role;
 * - a first apply that failed on an unreachable OIDC discovery URL: the first adopt and the first
 *   drift name the method mounted but never configured, the URL and the fix; followed, the apply
 *   completes and adopt and drift are clean.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { OIDC_CLI_REDIRECT_URI } from '../../lib';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { readDeclaredObjects } from '../../lib/reconcile/declared-object';
import { generateSigningKey } from '../support/store/jwt-signer';
import { RunningOidcProvider, startOidcProvider } from '../support/store/oidc-provider';
import { appRoleLogin, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { storeCli } from '../support/store/store-facts';
import { freePort, RunningStore, startStore, storeRequest } from '../support/store/store-server';

const key = generateSigningKey();
const CLIENT_ID = 'secretstore';
const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

/** A fresh store and fixture for one scenario. */
function scenario(label: string) {
  const s = { store: undefined as unknown as RunningStore, fixture: undefined as unknown as PlatformFixture };
  beforeAll(async () => {
    s.store = await startStore();
    s.fixture = PlatformFixture.create(s.store, label);
    s.fixture.engineEnv = { TF_VAR_oidc_client_secret: clientSecret };
  });
  afterAll(async () => {
    await s.store?.stop();
    s.fixture?.cleanup();
  });
  const cli = (args: string[]) =>
    runStoreCli(args, { cwd: s.fixture.dir, addr: s.store.addr, token: s.store.rootToken, env: { TF_VAR_oidc_client_secret: clientSecret } });
  return { s, cli };
}

describe('fix: `local: true` declared, the store\'s AppRole mount is not local', () => {
  const { s, cli } = scenario('fix-not-local');
  const config = testPlatformConfig(key.publicKeyPem);
  let roleId: string;
  let secretId: string;

  beforeAll(async () => {
    s.fixture.synthPlatform({ ...config, authMounts: { approle: { local: true } } });
    // By hand: a replicated (not local) AppRole mount, one application role with a Secret ID in use.
    await ok(s.store, 'POST', 'sys/auth/approle', { type: 'approle' });
    const declared = readDeclaredObjects(path.join(s.fixture.dir, 'cdktf.out'), 'app-roles').find((o) => o.kind === 'approle-role' && o.name === 'orchestrator-dev')!;
    await ok(s.store, 'POST', 'auth/approle/role/orchestrator-dev', { token_policies: declared.fields.token_policies });
    roleId = (await ok(s.store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id;
    secretId = (await ok(s.store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
    await s.fixture.init('app-roles');
  });

  it('adopt refuses (exit 4) and says to remove `local: true`, not to declare it; drift says the same', async () => {
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /forced by local \(false → true\)\. Fix: the store's mount is not local \(it is replicated\), the declaration says `local: true`: remove `local: true` \(or declare `local: false`\) on the AppRoleAuth construct/,
    );
    expect(r.stderr).not.toContain('declare `local: true`');
    expect(r.stdout).toMatch(/local: declared true, store false: forces a replacement: .*Declare `authMounts\.approle\.local: false`/);
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toMatch(/local: declared true, store false: .*Declare `authMounts\.approle\.local: false`/);
  });

  it('followed (local: true removed): adopt passes, the apply keeps the mount, the Role ID and the Secret ID; adopt and drift are clean', async () => {
    s.fixture.synthPlatform(config);
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    expect((await ok(s.store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id).toBe(roleId);
    expect((await appRoleLogin(s.store, roleId, secretId)).status).toBe(200);
    expect((await s.fixture.plan('app-roles')).code).toBe(0);
    const again = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out', '--dry-run']);
    expect(again.stdout).toContain('0 to import; 0 to create.');
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect([drift.code, drift.stderr]).toEqual([0, '']);
  });
});

describe('people with single sign-on', () => {
  let provider: RunningOidcProvider;
  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret, redirectUris: [OIDC_CLI_REDIRECT_URI], accounts: { alice: ['platform-admins'] } });
  });
  afterAll(async () => {
    await provider?.stop();
  });
  const peopleConfig = (store: RunningStore, discoveryUrl: string): PlatformConfig =>
    testPlatformConfig(key.publicKeyPem, {
      people: { discoveryUrl, clientId: CLIENT_ID, storeUrl: store.addr, groups: { 'platform-admins': { groups: ['platform-admins'] } } },
    });

  describe('fix: a people role made by hand with role_type=jwt', () => {
    const { s, cli } = scenario('fix-jwt-people-role');

    beforeAll(async () => {
      s.fixture.synthPlatform(peopleConfig(s.store, provider.issuer));
      // By hand: the OIDC method as declared, and the group's role as a JWT role.
      const mount = readDeclaredObjects(path.join(s.fixture.dir, 'cdktf.out'), 'people').find((o) => o.kind === 'jwt-auth-mount')!;
      // As declared but the role (the provider writes a JWT method's description only when it mounts it).
      await ok(s.store, 'POST', 'sys/auth/oidc', { type: 'oidc', description: mount.fields.description });
      await ok(s.store, 'POST', 'auth/oidc/config', { oidc_discovery_url: provider.issuer, oidc_client_id: CLIENT_ID, oidc_client_secret: clientSecret, default_role: '' });
      await ok(s.store, 'POST', 'auth/oidc/role/platform-admins', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['hand-made'], token_policies: ['default'] });
      for (const stack of s.fixture.stacks) await s.fixture.init(stack);
    });

    it('adopt refuses (exit 4): the store\'s role is a JWT role where an OIDC role is declared (not "an OIDC role")', async () => {
      const r = await cli(['adopt', 'people', '--outdir', 'cdktf.out']);
      expect(r.code).toBe(4);
      expect(r.stdout).toContain("role_type: declared oidc, store jwt: forces a replacement: applying would delete the store's role and create an OIDC role in its place");
      expect(r.stderr).toMatch(/forced by role_type \("jwt" → "oidc"\)\. Fix: the store's role is a JWT role \(role_type jwt\) where an OIDC role \(people's single sign-on\) is declared: delete the store's role by hand/);
      expect(`${r.stdout}\n${r.stderr}`).not.toContain('is an OIDC role (role_type oidc)');
    });

    it('followed (the store\'s role deleted by hand): adopt passes, the apply makes the OIDC role; adopt and drift are clean', async () => {
      await ok(s.store, 'DELETE', 'auth/oidc/role/platform-admins');
      const r = await cli(['adopt', 'people', '--outdir', 'cdktf.out']);
      expect([r.code, r.stderr]).toEqual([0, '']);
      const applied = await cli(['tf', 'people', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
      expect(applied.code).toBe(0);
      expect((await ok(s.store, 'GET', 'auth/oidc/role/platform-admins')).data.role_type).toBe('oidc');
      expect((await s.fixture.plan('people')).code).toBe(0);
      const again = await cli(['adopt', 'people', '--outdir', 'cdktf.out', '--dry-run']);
      expect(again.stdout).toContain('0 to import; 0 to create.');
      const drift = await cli(['drift', 'cdktf.out', '--stack', 'people']);
      expect([drift.code, drift.stderr]).toEqual([0, '']);
    });
  });

  describe('fix: the first apply failed on an unreachable OIDC discovery URL', () => {
    const { s, cli } = scenario('fix-oidc-discovery');
    let unreachable: string;

    beforeAll(async () => {
      unreachable = `http://127.0.0.1:${await freePort()}`;
      s.fixture.synthPlatform(peopleConfig(s.store, unreachable));
      await s.fixture.init('people');
    });

    it('the first apply fails on the discovery URL', async () => {
      const applied = await cli(['tf', 'people', '--', 'apply', '-auto-approve', '-input=false']);
      expect(applied.code).not.toBe(0);
      expect(applied.stderr).toMatch(/oidc|discovery/i);
    });

    it('the first adopt names the method mounted but never configured, the URL and the fix (exit 3); the first drift names the same', async () => {
      const fix = `It holds no role: disable it (${storeCli()} auth disable oidc) and apply; nothing is lost`;
      const r = await cli(['adopt', 'people', '--outdir', 'cdktf.out']);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('oidc/ is mounted but was never configured (GET auth/oidc/config: 404;');
      expect(r.stderr).toContain(`The store fetches the declared oidc_discovery_url itself (${unreachable}/.well-known/openid-configuration)`);
      expect(r.stderr).toContain(fix);
      const drift = await cli(['drift', 'cdktf.out', '--stack', 'people']);
      expect(drift.code).toBe(1);
      expect(drift.stdout).toContain('OIDC method not configured: oidc/ is mounted but was never configured');
      expect(drift.stdout).toContain(fix);
    });

    it('followed (the right URL declared, the method disabled): the apply completes; adopt and drift are clean', async () => {
      s.fixture.synthPlatform(peopleConfig(s.store, provider.issuer));
      await ok(s.store, 'DELETE', 'sys/auth/oidc');
      const applied = await cli(['tf', 'people', '--', 'apply', '-auto-approve', '-input=false']);
      expect(applied.stderr).not.toMatch(/^Error/m);
      expect(applied.code).toBe(0);
      expect((await ok(s.store, 'GET', 'auth/oidc/config')).data.oidc_discovery_url).toBe(provider.issuer);
      expect((await s.fixture.plan('people')).code).toBe(0);
      const again = await cli(['adopt', 'people', '--outdir', 'cdktf.out']);
      expect([again.code, again.stderr]).toEqual([0, '']);
      expect(again.stdout).toContain('0 to import; 0 to create.');
      const drift = await cli(['drift', 'cdktf.out', '--stack', 'people']);
      expect([drift.code, drift.stderr]).toEqual([0, '']);
    });
  });
});
