/**
 * Issue 15 on a real store: the store shapes the first adoption fixture did not make, one scenario
 * each, each on its own fresh OpenBao (test/support/store/hand-made-shapes.ts makes the shapes):
 * - a tuned AppRole mount (own description, a default lease TTL): drift and adopt name each setting
 *   with what the apply does; the apply changes the description in place and keeps the TTL;
 * - `registry-ci` made as an OIDC role: adopt reports it as a risk and refuses with exit 4 naming
 *   `role_type`; nothing written;
 * - the reader's own policy declared (`readerPolicy: true`) and applied: drift exits 0 with the
 *   reader token; a declared policy deleted by hand is "missing on the store"; a JWT mount's
 *   description changed by hand is reported and an apply does not change it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { runStoreCli } from '../support/store/store-cli';
import { Duration } from '../../lib/model/duration';
import { oidcRegistryCi, tunedAppRoleMount } from '../support/store/hand-made-shapes';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

const key = generateSigningKey();
const config = testPlatformConfig(key.publicKeyPem);

/** A fresh store and a synthesized platform for one scenario. */
function scenario(label: string, configure = config) {
  const s = { store: undefined as unknown as RunningStore, fixture: undefined as unknown as PlatformFixture };
  beforeAll(async () => {
    s.store = await startStore();
    s.fixture = PlatformFixture.create(s.store, label);
    s.fixture.synthPlatform(configure);
  });
  afterAll(async () => {
    await s.store?.stop();
    s.fixture?.cleanup();
  });
  const cli = (args: string[], token = s.store.rootToken) => runStoreCli(args, { cwd: s.fixture.dir, addr: s.store.addr, token });
  const mount = async (p: string) => {
    const auth = (await storeRequest(s.store, 'GET', 'sys/auth')).body;
    return (auth.data ?? auth)[`${p}/`];
  };
  return { s, cli, mount };
}

describe('shape: an AppRole mount with its own description and lease TTL', () => {
  const { s, cli, mount } = scenario('shape-tuned');
  let roleIds: Record<string, string>;
  beforeAll(async () => {
    roleIds = await tunedAppRoleMount(s.store, path.join(s.fixture.dir, 'cdktf.out'));
    await s.fixture.init('app-roles');
  });

  it('drift names the description and the TTL, each with what the apply does (exit 1)', async () => {
    const r = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect([r.code, r.stderr]).toEqual([1, '']);
    expect(r.stdout).toMatch(/- `sys\/auth\/approle`: auth method approle\/ settings differ \(identities: /);
    expect(r.stdout).toContain('  - description: declared "Application sidecar agents (managed by secretstore-iac)", store "hand-made": the apply changes it in place (no replacement)');
    expect(r.stdout).toContain("  - tune.default_lease_ttl: declared 0 (system default), not declared, store 1h: not declared, so the apply keeps the store's value; declare `authMounts.approle.tune.defaultLeaseTtl: Duration.parse('1h')`");
  });

  it('adopt lists the same settings (no replacement), passes its plan check and writes the imports', async () => {
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('Mount settings, store → declarations (no replacement):');
    expect(r.stdout).toMatch(/approle\/ \(vault_auth_backend\.\S+\): description: declared .*, store "hand-made": the apply changes it in place/);
    expect(r.stdout).toMatch(/approle\/ \(vault_auth_backend\.\S+\): tune\.default_lease_ttl: .*store 1h: not declared, so the apply keeps the store's value/);
    expect(r.stdout).not.toContain('Risk:');
    expect(r.stdout).toContain('Plan check: applying the imports destroys and replaces nothing (app-roles).');
    expect(fs.existsSync(path.join(s.fixture.stackDir('app-roles'), IMPORT_FILE))).toBe(true);
  });

  it('the apply changes the description in place, keeps the TTL and the Role IDs; drift then names the TTL only', async () => {
    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    const m = await mount('approle');
    expect([m.description, m.config.default_lease_ttl]).toEqual(['Application sidecar agents (managed by secretstore-iac)', 3600]);
    for (const [role, id] of Object.entries(roleIds)) expect((await storeRequest(s.store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id).toBe(id);
    const r = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect(r.code).toBe(1);
    const details = r.stdout.split('\n').filter((l) => l.startsWith('  - '));
    expect(details).toEqual([expect.stringMatching(/^  - tune\.default_lease_ttl: declared 0 \(system default\), not declared, store 1h: /)]);
  });

  it('with the TTL declared as the store has it, drift is in sync for the stack (exit 0), and the apply replaces nothing and keeps it', async () => {
    s.fixture.synthPlatform({ ...config, authMounts: { approle: { tune: { defaultLeaseTtl: Duration.hours(1) } } } });
    const r = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    expect((await mount('approle')).config.default_lease_ttl).toBe(3600);
  });
});

describe('shape: registry-ci made as an OIDC role', () => {
  const { s, cli } = scenario('shape-oidc');
  beforeAll(async () => {
    await oidcRegistryCi(s.store, path.join(s.fixture.dir, 'cdktf.out'), key.publicKeyPem);
    await s.fixture.init('ci-access');
  });

  it('adopt reports the risk, then refuses with exit 4 naming role_type; no import file; the OIDC role is untouched', async () => {
    const r = await cli(['adopt', 'ci-access', '--outdir', 'cdktf.out']);
    expect(r.code).toBe(4);
    expect(r.stdout).toContain('Risk: applying the imports would destroy an object (the plan check refuses it):');
    expect(r.stdout).toMatch(/auth\/jwt\/role\/registry-ci \(vault_jwt_auth_backend_role\.\S+\): role_type: declared jwt, store oidc: forces a replacement/);
    expect(r.stderr).toMatch(/vault_jwt_auth_backend_role\.\S+ declared at ci-access\/registry-ci\/\S+ would be replaced \(destroyed, then created again\); forced by role_type \("oidc" → "jwt"\)\. Fix: the store's role is an OIDC role/);
    expect(fs.existsSync(path.join(s.fixture.stackDir('ci-access'), IMPORT_FILE))).toBe(false);
    expect((await storeRequest(s.store, 'GET', 'auth/jwt/role/registry-ci')).body.data.role_type).toBe('oidc');
  });

  it('drift says the same of the role (exit 1)', async () => {
    const r = await cli(['drift', 'cdktf.out', '--stack', 'ci-access']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/  - role_type: declared jwt, store oidc: forces a replacement: applying would delete the store's role/);
  });
});

describe('shape: the documented setup with the reader policy declared', () => {
  const { s, cli, mount } = scenario('shape-reader', { ...config, readerPolicy: true });
  let readerToken: string;
  beforeAll(async () => {
    // The documented setup: the policy written by hand (bao policy write secretstore-iac-reader ...), then adopted.
    const printed = await cli(['drift', '--print-reader-policy']);
    expect((await storeRequest(s.store, 'PUT', 'sys/policies/acl/secretstore-iac-reader', { policy: printed.stdout })).status).toBe(204);
    for (const stack of s.fixture.stacks) await s.fixture.init(stack);
  });

  it('adopt imports the hand-written reader policy; after the apply, drift with the reader token exits 0', async () => {
    const adopted = await cli(['adopt', 'ci-access', '--outdir', 'cdktf.out']);
    expect([adopted.code, adopted.stderr]).toEqual([0, '']);
    expect(adopted.stdout).toMatch(/vault_policy\.\S+\s+<-\s+secretstore-iac-reader/);
    await s.fixture.apply();
    const res = await storeRequest(s.store, 'POST', 'auth/token/create', { policies: ['secretstore-iac-reader'], no_default_policy: true, ttl: '1h' });
    readerToken = res.body.auth.client_token;
    const r = await cli(['drift', 'cdktf.out'], readerToken);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('**In sync.**');
  });

  it('a declared policy deleted by hand: "declared but missing on the store", and the access diff says missing, not "not declared"', async () => {
    expect((await storeRequest(s.store, 'DELETE', 'sys/policies/acl/registry')).status).toBe(204);
    const r = await cli(['drift', 'cdktf.out'], readerToken);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/- `sys\/policies\/acl\/registry`: policy registry is declared but missing on the store: it grants nothing until its stack is applied/);
    expect(r.stdout).not.toContain('not declared in the synthesized stacks');
    await s.fixture.apply(['app-roles']);
  });

  it('a JWT mount\'s description changed by hand: drift reports it; an apply does not change it (the provider never writes it after creating the mount)', async () => {
    expect((await storeRequest(s.store, 'POST', 'sys/auth/jwt/tune', { description: 'hand-tuned' })).status).toBe(204);
    const r = await cli(['drift', 'cdktf.out'], readerToken);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('  - description: declared "CI job tokens (managed by secretstore-iac)", store "hand-tuned": the apply does not change it');
    const plan = await s.fixture.plan('ci-access');
    expect(plan.code).toBe(0);
    await s.fixture.apply(['ci-access']);
    expect((await mount('jwt')).description).toBe('hand-tuned');
  });
});
