/**
 * People through single sign-on on a real store (spec §5.6): a real OpenID provider (the
 * `oidc-provider` library) runs on 127.0.0.1; the platform with a `people` section is synthesized
 * and applied with the real engine, the client secret given only as TF_VAR_oidc_client_secret; then
 * people log in through the store's OIDC login (`auth_url`, the provider's login, the callback) as
 * a browser would. Statuses and messages asserted here are the ones the real store returns.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { OIDC_CLI_REDIRECT_URI } from '../../lib';
import { AccessModel } from '../../lib/access/access-model';
import { readStoreConfiguration } from '../../lib/access/store-configuration';
import { whoCan } from '../../lib/access/who-can';
import { planAdoption } from '../../lib/reconcile/adoption-plan';
import { IMPORT_FILE, renderImportFile } from '../../lib/reconcile/import-blocks';
import { readDeclaredObjects } from '../../lib/reconcile/declared-object';
import { liveStoreConfiguration, readLiveStore } from '../../lib/reconcile/live-store-reader';
import { detectDrift } from '../../lib/reconcile/store-drift';
import { StoreClient } from '../../lib/store/store-client';
import { generateSigningKey } from '../support/store/jwt-signer';
import { RunningOidcProvider, ssoLogin, startOidcProvider } from '../support/store/oidc-provider';
import { PlatformFixture, SPEC_CI_SECRETS, clientToken, testPlatformConfig, testSecretValues, writeKv2 } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/store-facts';

const CLIENT_ID = 'secretstore';
/** Application secrets (one per application of the platform): nobody of the people reads them. */
const APP_SECRETS: Record<string, string[]> = {
  'acme/dev/orchestrator/database': ['pg_host', 'pg_user', 'pg_password'],
  'acme/shared/identity/config': ['client_secret'],
  'acme/shared/sourcehost/config': ['root_password'],
  'acme/shared/registry/config': ['admin_password'],
};
const ACL_DENIED = '1 error occurred:\n\t* permission denied\n\n';
/** The store's answer (HTTP 400) to the callback of a person whose groups claim holds none of the role's groups. */
/**
 * The callback's refusal of a person outside the role's groups, as each store words it: OpenBao
 * prefixes "Vault login failed. ", Vault 1.21 does not (both seen on the real servers).
 */
const GROUP_REFUSED = `${storeKind() === 'openbao' ? 'Vault login failed. ' : ''}error validating claims: claim "groups" does not match any associated bound claim values`;

describe('People through single sign-on on a real store, with a real OpenID provider', () => {
  let store: RunningStore;
  let provider: RunningOidcProvider;
  let fixture: PlatformFixture;
  const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;
  const seeded: Record<string, Record<string, string>> = {};
  const read = (token: string, logical: string) => storeRequest(store, 'GET', `secret/data/${logical}`, undefined, token);
  const ciKey = generateSigningKey();
  const peopleConfig = () =>
    testPlatformConfig(ciKey.publicKeyPem, {
      people: {
        discoveryUrl: provider.issuer,
        clientId: CLIENT_ID,
        storeUrl: store.addr,
        groups: {
          'platform-admins': { groups: ['platform-admins'], reads: [{ path: 'team/runbooks', subtree: true }] },
          developers: { groups: ['developers'] },
        },
      },
    });
  const login = (role: string, who: string) => ssoLogin(store, { mount: 'oidc', role, login: who, redirectUri: OIDC_CLI_REDIRECT_URI });

  beforeAll(async () => {
    store = await startStore();
    provider = await startOidcProvider({
      clientId: CLIENT_ID,
      clientSecret,
      redirectUris: [OIDC_CLI_REDIRECT_URI],
      accounts: { alice: ['platform-admins', 'staff'], bob: ['developers'], mallory: ['contractors'] },
    });
    fixture = PlatformFixture.create(store, 'people');
    fixture.engineEnv = { TF_VAR_oidc_client_secret: clientSecret };
    fixture.synthPlatform(peopleConfig());
    await fixture.apply();
    const all = { ...SPEC_CI_SECRETS, ...APP_SECRETS, 'team/runbooks/oncall': ['phone'], 'team/other/notes': ['text'] };
    for (const [logical, keys] of Object.entries(all)) {
      seeded[logical] = testSecretValues(keys);
      await writeKv2(store, 'secret', logical, seeded[logical]);
    }
  });

  afterAll(async () => {
    await provider?.stop();
    await store?.stop();
    fixture?.cleanup();
  });

  describe('the client secret is never synthesized nor kept in state', () => {
    it('is on the store (the login works, below) but in no file of the synthesis, the state or the engine directory', () => {
      const files = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
          const p = path.join(dir, e.name);
          if (e.isDirectory()) return e.name === 'providers' ? [] : files(p);
          return e.isFile() ? [p] : [];
        });
      const all = files(fixture.dir);
      const state = path.join(fixture.dir, 'terraform.people.tfstate');
      expect(all).toEqual(expect.arrayContaining([state, path.join(fixture.stackDir('people'), 'cdk.tf.json')]));
      expect(JSON.parse(fs.readFileSync(state, 'utf8')).resources.map((r: any) => r.type)).toContain('vault_jwt_auth_backend');
      for (const file of all) expect({ file, holds: fs.readFileSync(file).includes(clientSecret) }).toEqual({ file, holds: false });
    });

    it('a second plan with the same secret changes nothing', async () => {
      expect((await fixture.plan('people')).code).toBe(0);
    });
  });

  describe('a member of a declared group logs in and reads exactly what its role declares', () => {
    let token: string;
    let auth: any;
    beforeAll(async () => {
      const { callback } = await login('platform-admins', 'alice');
      expect(callback.status).toBe(200);
      token = clientToken(callback);
      auth = (callback.body as any).auth;
    });

    it('gets a token of its role: its policy and default, for 1h', () => {
      expect(auth.policies).toEqual(['default', 'platform-admins']);
      expect(auth.lease_duration).toBe(3600);
      expect(auth.metadata).toMatchObject({ role: 'platform-admins' });
    });

    it('reads the team subtree it is given, and lists it', async () => {
      const res = await read(token, 'team/runbooks/oncall');
      expect(res.status).toBe(200);
      expect((res.body as any).data.data).toEqual(seeded['team/runbooks/oncall']);
      const list = await storeRequest(store, 'GET', 'secret/metadata/team/runbooks?list=true', undefined, token);
      expect(list.status).toBe(200);
      expect((list.body as any).data.keys).toEqual(['oncall']);
    });

    it('reads nothing else: another team path, every CI secret, every application secret (403 each)', async () => {
      for (const logical of ['team/other/notes', ...Object.keys(SPEC_CI_SECRETS), ...Object.keys(APP_SECRETS)]) {
        const res = await read(token, logical);
        expect({ logical, status: res.status, body: res.body }).toEqual({ logical, status: 403, body: { errors: [ACL_DENIED] } });
      }
    });
  });

  describe('a group without reads gets no platform secret path at all', () => {
    it('bob of developers logs in and reads nothing of the platform (403 each)', async () => {
      const { callback } = await login('developers', 'bob');
      expect(callback.status).toBe(200);
      const token = clientToken(callback);
      expect((callback.body as any).auth.policies).toEqual(['default', 'developers']);
      for (const logical of ['team/runbooks/oncall', ...Object.keys(SPEC_CI_SECRETS), ...Object.keys(APP_SECRETS)]) {
        expect({ logical, status: (await read(token, logical)).status }).toEqual({ logical, status: 403 });
      }
    });
  });

  describe('a person outside every declared group is refused', () => {
    it.each([['platform-admins'], ['developers']])('mallory of contractors is refused as %s, with no token', async (role) => {
      const { callback } = await login(role, 'mallory');
      expect({ status: callback.status, body: callback.body }).toEqual({
        status: 400,
        body: { errors: [GROUP_REFUSED] },
      });
    });

    it('a member of one group is refused as the other group', async () => {
      const { callback } = await login('developers', 'alice');
      expect({ status: callback.status, body: callback.body }).toEqual({ status: 400, body: { errors: [GROUP_REFUSED] } });
    });
  });

  describe('the people appear in access, who-can, drift and adopt', () => {
    it('who-can (declared) names the group for its team path, and no person for CI or application paths', async () => {
      const model = await AccessModel.load(readStoreConfiguration(path.join(fixture.dir, 'cdktf.out')));
      expect(whoCan(model, 'read', 'secret/data/team/runbooks/oncall').allowed.map((e) => e.identity)).toEqual(['oidc/platform-admins']);
      for (const logical of [...Object.keys(SPEC_CI_SECRETS), ...Object.keys(APP_SECRETS)]) {
        expect(whoCan(model, 'read', `secret/data/${logical}`).allowed.map((e) => e.identity).filter((i) => i.startsWith('oidc/'))).toEqual([]);
      }
    });

    it('the live reader reads the oidc mount, its configuration and its roles as oidc identities', async () => {
      const live = await readLiveStore(new StoreClient({ address: store.addr, token: store.rootToken }));
      expect(live.mounts.find((m) => m.path === 'oidc')).toMatchObject({ type: 'oidc' });
      expect(live.jwtConfigs.find((c) => c.mount === 'oidc')?.fields).toMatchObject({ oidc_discovery_url: provider.issuer, oidc_client_id: CLIENT_ID });
      const identities = liveStoreConfiguration(live).identities.filter((i) => i.method === 'oidc');
      expect(identities.map((i) => i.name)).toEqual(['oidc/developers', 'oidc/platform-admins']);
      expect(identities[1].bindings).toMatchObject({ bound_claims: { groups: ['platform-admins'] }, groups_claim: 'groups', oidc_client_id: CLIENT_ID });
    });

    it('drift finds the store as declared, then reports a group binding changed by hand', async () => {
      const out = path.join(fixture.dir, 'cdktf.out');
      const declared = readDeclaredObjects(out);
      const configuration = readStoreConfiguration(out);
      const client = new StoreClient({ address: store.addr, token: store.rootToken });
      expect((await detectDrift(declared, configuration, await readLiveStore(client))).findings).toEqual([]);
      await storeRequest(store, 'POST', 'auth/oidc/role/developers', { bound_claims: { groups: ['developers', 'contractors'] } });
      try {
        const findings = (await detectDrift(declared, configuration, await readLiveStore(client))).findings;
        expect(findings.map((f) => `${f.kind} ${f.storePath}: ${f.summary}\n${f.details.join('\n')}`)).toEqual([
          'changed auth/oidc/role/developers: role oidc/developers differs\nbound_claims: declared groups: developers, store groups: contractors | developers',
        ]);
      } finally {
        await storeRequest(store, 'POST', 'auth/oidc/role/developers', { bound_claims: { groups: ['developers'] } });
      }
    });

    it('adopt imports the OIDC method, its roles and policies when the state lost them, and would create nothing', async () => {
      const out = path.join(fixture.dir, 'cdktf.out');
      const declared = readDeclaredObjects(out, 'people');
      const live = await readLiveStore(new StoreClient({ address: store.addr, token: store.rootToken }));
      const plan = await planAdoption('people', declared, readStoreConfiguration(out), live, new Set());
      expect(plan.conflicts).toEqual([]);
      expect(plan.creates).toEqual([]);
      expect(plan.imports.map((i) => i.id).sort()).toEqual(['auth/oidc/role/developers', 'auth/oidc/role/platform-admins', 'developers', 'oidc', 'platform-admins']);
      expect(plan.access.added).toEqual([]);
      expect(plan.access.changed).toEqual([]);
    });

    it('a stack whose state was lost adopts them with the import blocks: the engine imports, creates and destroys nothing, and logins keep working', async () => {
      const adopter = PlatformFixture.create(store, 'people-adopt');
      try {
        adopter.engineEnv = { TF_VAR_oidc_client_secret: clientSecret };
        adopter.synthPlatform(peopleConfig());
        const out = path.join(adopter.dir, 'cdktf.out');
        const live = await readLiveStore(new StoreClient({ address: store.addr, token: store.rootToken }));
        const plan = await planAdoption('people', readDeclaredObjects(out, 'people'), readStoreConfiguration(out), live, new Set());
        fs.writeFileSync(path.join(adopter.stackDir('people'), IMPORT_FILE), renderImportFile(plan.imports));
        const changes = (await adopter.planChanges('people')).raw.resource_changes.map((rc: any) => ({
          type: rc.type,
          actions: rc.change.actions,
          importing: rc.change.importing !== undefined,
        }));
        expect(changes.filter((c: any) => !c.importing)).toEqual([]);
        expect(changes.filter((c: any) => c.actions.includes('create') || c.actions.includes('delete'))).toEqual([]);
        expect(changes).toHaveLength(5);
        await adopter.apply(['people']);
        expect((await adopter.plan('people')).code).toBe(0);
        expect(fs.readFileSync(path.join(adopter.dir, 'terraform.people.tfstate')).includes(clientSecret)).toBe(false);
        expect((await login('platform-admins', 'alice')).callback.status).toBe(200);
      } finally {
        adopter.cleanup();
      }
    });
  });
});
