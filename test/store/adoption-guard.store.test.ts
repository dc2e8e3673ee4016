/**
 * Issue 15 on a real store: adoption never destroys. A store made by hand with attributes that force
 * a replacement (an AppRole mount made with `-local`, `registry-ci` made as an OIDC role): `adopt`
 * plans the imports through the engine, refuses (exit 4), names the object, the attribute and the
 * declaration that keeps it, and leaves no import file, so no apply can replace the mount. With the
 * store's attribute declared (`local: true`), adopt passes its plan check, the apply keeps the Role
 * IDs and the Secret ID issued before. `tf --refuse-replace` refuses the same plan in a pipeline.
 * An import file left empty by a killed adopt does not block the next adopt. A JWT method a failed
 * first apply left mounted is refused by `tf --refuse-replace` up front (issue 27), naming adopt,
 * whose fix is followed to a complete apply.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { liveStoreConfiguration } from '../../lib/reconcile/live-store-reader';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { appRoleLogin, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { runStoreCli } from '../support/store/store-cli';
import { storeCli } from '../support/store/store-facts';
import { readDeclaredObjects } from '../../lib/reconcile/declared-object';

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

describe('adoption never destroys (issue 15)', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  const key: JwtSigningKey = generateSigningKey();
  const config = testPlatformConfig(key.publicKeyPem);
  let roleId: string;
  let secretId: string;
  const importFile = (stack: string) => path.join(fixture.stackDir(stack), IMPORT_FILE);

  const cli = (args: string[]) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken });

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'adopt-guard');
    fixture.synthPlatform(config);
    // By hand: the AppRole mount made with -local, one application role with a Secret ID in use.
    await ok(store, 'POST', 'sys/auth/approle', { type: 'approle', local: true });
    const declared = readDeclaredObjects(path.join(fixture.dir, 'cdktf.out'), 'app-roles').find((o) => o.kind === 'approle-role' && o.name === 'orchestrator-dev')!;
    await ok(store, 'POST', 'auth/approle/role/orchestrator-dev', { token_policies: declared.fields.token_policies });
    roleId = (await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id;
    secretId = (await ok(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
    for (const stack of fixture.stacks) await fixture.init(stack);
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it('a bound claim the store holds as one string "acme,acme/*" matches only that text, and the reader reads one value', async () => {
    await ok(store, 'POST', 'sys/auth/jwt-comma', { type: 'jwt' });
    await ok(store, 'POST', 'auth/jwt-comma/config', { bound_issuer: TEST_SETTINGS.ciUrl, jwt_validation_pubkeys: [key.publicKeyPem] });
    await ok(store, 'POST', 'auth/jwt-comma/role/comma-probe', {
      role_type: 'jwt', user_claim: 'project_path', bound_audiences: [TEST_SETTINGS.ciUrl], bound_claims_type: 'glob',
      bound_claims: { namespace_path: 'acme,acme/*' }, token_policies: ['default'],
    });
    const stored = await ok(store, 'GET', 'auth/jwt-comma/role/comma-probe');
    const jwt = signJwt(key.privateKey, gitlabJobClaims({ namespace_path: 'acme', project_path: 'acme/x' }, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
    const login = await jwtLogin(store, 'comma-probe', jwt, 'jwt-comma');
    const [identity] = liveStoreConfiguration({ address: store.addr, mounts: [], jwtConfigs: [], roles: [{ mount: 'jwt-comma', method: 'jwt', role: 'comma-probe', fields: stored.data }], policies: new Map() }).identities;
    expect({ stored: stored.data.bound_claims, login: login.status, read: identity.bindings.bound_claims }).toEqual({
      stored: { namespace_path: 'acme,acme/*' },
      login: 400,
      read: { namespace_path: ['acme,acme/*'] },
    });
    await ok(store, 'DELETE', 'sys/auth/jwt-comma');
  });

  it('the store\'s mount is local (the fact the plan turns into a replacement)', async () => {
    const auth = await ok(store, 'GET', 'sys/auth');
    expect((auth.data ?? auth)['approle/'].local).toBe(true);
  });

  it('adopt refuses (exit 4): names the mount, "local (true → null)", the declaration and the fix; no import file is left', async () => {
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/secretstore-iac adopt: nothing written \(no import file written\): the plan would destroy or replace 1 object, refused:/);
    expect(r.stderr).toMatch(/vault_auth_backend\.\S+ declared at app-roles\/approle\/backend would be replaced \(destroyed, then created again\); forced by local \(true → (null|false)\)\. Fix: the mount is local \(not replicated\) on the store: declare `local: true` on the AppRoleAuth construct/);
    expect(fs.existsSync(importFile('app-roles'))).toBe(false);
  });

  it('with the imports written anyway (--no-plan-check), tf --refuse-replace refuses the apply (exit 4), and nothing is applied', async () => {
    const adopted = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out', '--no-plan-check']);
    expect([adopted.code, fs.existsSync(importFile('app-roles'))]).toEqual([0, true]);
    const r = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('app-roles: nothing applied: the plan would destroy or replace');
    const auth = await ok(store, 'GET', 'sys/auth');
    expect((auth.data ?? auth)['approle/'].local).toBe(true);
    expect((await appRoleLogin(store, roleId, secretId)).status).toBe(200);
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/orchestrator-dev')).status).toBe(404);
  });

  it('an empty import file left by a killed adopt does not block the next adopt', async () => {
    fs.writeFileSync(importFile('app-roles'), '');
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out', '--dry-run']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`Removed a damaged ${IMPORT_FILE}`);
  });

  it('with local: true declared, adopt passes its plan check; the apply keeps the mount, the Role ID and the Secret ID issued before', async () => {
    fixture.synthPlatform({ ...config, authMounts: { approle: { local: true } } });
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('Plan check: applying the imports destroys and replaces nothing (app-roles).');
    expect(fs.existsSync(importFile('app-roles'))).toBe(true);
    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    const auth = await ok(store, 'GET', 'sys/auth');
    expect((auth.data ?? auth)['approle/'].local).toBe(true);
    expect((await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id).toBe(roleId);
    expect((await appRoleLogin(store, roleId, secretId)).status).toBe(200);
    expect((await fixture.plan('app-roles')).code).toBe(0);
  });

  it('a half-made JWT method (mounted, never configured, as a first apply that failed on OIDC discovery leaves it): tf --refuse-replace refuses the re-apply up front naming adopt; drift reports it; adopt says why the provider cannot import it and what to do; after that, the apply completes', async () => {
    await ok(store, 'POST', 'sys/auth/jwt', { type: 'jwt' });
    expect((await storeRequest(store, 'GET', 'auth/jwt/config')).status).toBe(404);
    // Issue 27: the takeover guard covers mounts: refused before anything is written, naming adopt
    // (without it the apply wrote the policies, then failed on "path is already in use at jwt/").
    const reapplied = await cli(['tf', 'ci-access', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(reapplied.code).toBe(4);
    expect(reapplied.stderr).toMatch(
      /ci-access: nothing applied: the plan would create 1 object the store already has, refused .*\n  vault_jwt_auth_backend\.\S+ would mount jwt\/, but the store has an auth method there \(sys\/auth\/jwt\)\. Fix: run `secretstore-iac adopt ci-access`/s,
    );
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/registry-ci')).status).toBe(404);
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'ci-access']);
    expect([drift.code, drift.stderr]).toEqual([1, '']);
    expect(drift.stdout).toContain('auth/jwt/config');
    const adopted = await cli(['adopt', 'ci-access', '--outdir', 'cdktf.out']);
    expect(adopted.code).toBe(3);
    expect(adopted.stderr).toMatch(
      /nothing written: .*ci-access: vault_jwt_auth_backend\.\S+: jwt\/ is mounted but was never configured \(GET auth\/jwt\/config: 404; .*It holds no role: disable it \((bao|vault) auth disable jwt\) and apply; nothing is lost/s,
    );
    // The fix names the CLI of the store adopt talks to (read from sys/seal-status).
    expect(adopted.stderr).toContain(`disable it (${storeCli()} auth disable jwt)`);
    expect(fs.existsSync(importFile('ci-access'))).toBe(false);
    // The fix the message gives.
    await ok(store, 'DELETE', 'sys/auth/jwt');
    const applied = await cli(['tf', 'ci-access', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    const jwt = signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
    expect((await jwtLogin(store, 'registry-ci', jwt)).status).toBe(200);
  });
});
