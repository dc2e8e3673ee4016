/**
 * The spec's "older form" paths (`secret/registry/svc-{name}`, spec §2.1, §4.1, §9) on a real store:
 *
 * - on the default KV v2 mount, with and without `RegistryServiceAccount({olderFormGrant: true})`;
 * - on a KV v1 mount (`settings.kvMount = new KvMount('secret-v1', 1)`), where the older form is
 *   the only form;
 * - through the store's own CLI (`bao kv get`), which rewrites the older form to `data/` itself.
 *
 * Two stores run side by side, one per mount layout. What the store really answers is recorded in
 * docs/store-tests.md.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KvMount, RegistryServiceAccount } from '../../lib';
import { Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import {
  SPEC_CI_SECRETS,
  appRoleLogin,
  clientToken,
  firstError,
  jwtLogin,
  mountKv,
  PlatformFixture,
  TEST_SETTINGS,
  testPlatformConfig,
  testSecretValues,
  writeKv1,
  writeKv2,
} from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';
import { storeCli, storeKind } from '../support/store/store-facts';

const ACL_DENIED = '1 error occurred:\n\t* permission denied\n\n';
/** The KV v2 engine's warning for the older form; it names the store's CLI. */
const KV2_INVALID_PATH_WARNING =
  'Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. ' +
  (storeKind() === 'vault' ? "If using the Vault CLI, use 'vault kv get' for this operation." : "If using the OpenBao CLI, use 'bao kv get' for this operation.");


/** The test-only account declared with the older-form grant. */
function addLegacyAccount(platform: Platform): void {
  new RegistryServiceAccount(platform.ciAccess, 'svc-legacy', {
    name: 'legacy',
    permissions: ['pypi:read'],
    usedBy: 'an older client that still requests secret/registry/svc-legacy',
    readers: [platform.ciAccess.registryCi],
    olderFormGrant: true,
  });
}

interface Layout {
  store: RunningStore;
  fixture: PlatformFixture;
  ciToken: string;
  seeded: Record<string, Record<string, string>>;
}

/** `<store cli> kv get -format=json <args>` (bao or vault) with a token; the parsed JSON, or the exit status and stderr. */
function cliKvGet(store: RunningStore, token: string, args: string[]): { status: number | null; json?: any; stderr: string } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-cli-'));
  try {
    const res = spawnSync(toolchain().bao, ['kv', 'get', '-format=json', ...args], {
      env: { PATH: process.env.PATH, HOME: home, BAO_ADDR: store.addr, BAO_TOKEN: token, VAULT_ADDR: store.addr, VAULT_TOKEN: token },
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    });
    return { status: res.status, json: res.status === 0 ? JSON.parse(res.stdout) : undefined, stderr: res.stderr };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

describe('older-form paths', () => {
  let key: JwtSigningKey;
  let v2: Layout;
  let v1: Layout;

  async function layout(label: string, config: PlatformConfig, mount: string, version: 1 | 2): Promise<Layout> {
    const store = await startStore();
    const fixture = PlatformFixture.create(store, label);
    const result: Layout = { store, fixture, ciToken: '', seeded: {} };
    try {
      fixture.synthPlatform(config, addLegacyAccount);
      if (version === 1) await mountKv(store, mount, 1);
      await fixture.apply();
      const write = version === 1 ? writeKv1 : writeKv2;
      for (const [logical, keys] of Object.entries({ ...SPEC_CI_SECRETS, 'registry/svc-legacy': ['username', 'password'] })) {
        result.seeded[logical] = testSecretValues(keys);
        await write(store, mount, logical, result.seeded[logical]);
      }
      result.seeded['acme/dev/orchestrator/database'] = testSecretValues(['pg_host', 'pg_user', 'pg_password']);
      await write(store, mount, 'acme/dev/orchestrator/database', result.seeded['acme/dev/orchestrator/database']);
      const jwt = signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
      result.ciToken = clientToken(await jwtLogin(store, 'registry-ci', jwt));
      return result;
    } catch (error) {
      await store.stop();
      fixture.cleanup();
      throw error;
    }
  }

  beforeAll(async () => {
    key = generateSigningKey();
    const base = testPlatformConfig(key.publicKeyPem);
    const kv1 = testPlatformConfig(key.publicKeyPem, { settings: { ...TEST_SETTINGS, kvMount: new KvMount('secret-v1', 1) } });
    const started = await Promise.allSettled([layout('older-v2', base, 'secret', 2), layout('older-v1', kv1, 'secret-v1', 1)]);
    if (started[0].status === 'fulfilled') v2 = started[0].value;
    if (started[1].status === 'fulfilled') v1 = started[1].value;
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  });

  afterAll(async () => {
    await Promise.all([v2?.store.stop(), v1?.store.stop()]);
    v2?.fixture.cleanup();
    v1?.fixture.cleanup();
  });

  const get = (l: Layout, p: string, token: string | undefined = l.ciToken) => storeRequest(l.store, 'GET', p, undefined, token);
  const rulePaths = async (l: Layout) => {
    const policy = await storeRequest(l.store, 'GET', 'sys/policies/acl/registry-ci');
    return [...String(policy.body.data.policy).matchAll(/^path "([^"]+)"/gm)].map((m) => m[1]).sort();
  };

  describe('on the KV v2 mount secret/', () => {
    it('olderFormGrant adds a rule for secret/registry/svc-legacy next to the data/ rule; other accounts get only data/', async () => {
      expect(await rulePaths(v2)).toEqual(
        [...Object.keys(SPEC_CI_SECRETS), 'registry/svc-legacy'].map((p) => `secret/data/${p}`).concat('secret/registry/svc-legacy').sort(),
      );
    });

    it('the KV v2 form reads the account: GET secret/data/registry/svc-legacy', async () => {
      const res = await get(v2, 'secret/data/registry/svc-legacy');
      expect(res.status).toBe(200);
      expect(res.body.data.data).toEqual(v2.seeded['registry/svc-legacy']);
    });

    it('the older form WITH the grant: 404, no data, the store only warns "Invalid path for a versioned K/V secrets engine"', async () => {
      const res = await get(v2, 'secret/registry/svc-legacy');
      expect(res.status).toBe(404);
      expect(res.body.data).toBeNull();
      expect(res.body.errors).toBeUndefined();
      expect(res.body.warnings).toEqual([KV2_INVALID_PATH_WARNING]);
    });

    it('the older form WITHOUT a grant: 403 permission denied (the ACL is checked before the engine)', async () => {
      const res = await get(v2, 'secret/registry/svc-orchestrator');
      expect({ status: res.status, error: firstError(res) }).toEqual({ status: 403, error: ACL_DENIED });
      const root = await get(v2, 'secret/registry/svc-orchestrator', v2.store.rootToken);
      expect({ status: root.status, warnings: root.body.warnings }).toEqual({ status: 404, warnings: [KV2_INVALID_PATH_WARNING] });
    });

    it(`the CLI reads the older form with the data/ grant alone: \`${storeCli()} kv get secret/registry/svc-orchestrator\``, async () => {
      // The CLI asks sys/internal/ui/mounts/<path> (allowed to every token) and inserts data/ itself.
      const mountInfo = await get(v2, 'sys/internal/ui/mounts/secret/registry/svc-orchestrator');
      expect(mountInfo.status).toBe(200);
      expect(mountInfo.body.data).toMatchObject({ path: 'secret/', type: 'kv', options: { version: '2' } });
      for (const args of [['secret/registry/svc-orchestrator'], ['-mount=secret', 'registry/svc-orchestrator']]) {
        const cli = cliKvGet(v2.store, v2.ciToken, args);
        expect({ args, status: cli.status }).toEqual({ args, status: 0 });
        expect(cli.json.data.data).toEqual(v2.seeded['registry/svc-orchestrator']);
      }
    });

    it('the CLI is refused where the data/ form is not granted (svc-deployer)', async () => {
      await writeKv2(v2.store, 'secret', 'registry/svc-deployer', testSecretValues(['username', 'password']));
      const cli = cliKvGet(v2.store, v2.ciToken, ['secret/registry/svc-deployer']);
      expect(cli.status).toBe(2);
      expect(cli.stderr).toMatch(/Code: 403/);
      expect(cli.stderr).toMatch(/permission denied/);
    });
  });

  describe("on a KV v1 mount (settings.kvMount = new KvMount('secret-v1', 1))", () => {
    it('the policy names the v1 paths without data/, and the older-form grant adds no second rule', async () => {
      expect(await rulePaths(v1)).toEqual([...Object.keys(SPEC_CI_SECRETS), 'registry/svc-legacy'].map((p) => `secret-v1/${p}`).sort());
    });

    it.each(Object.keys(SPEC_CI_SECRETS))('the CI token reads secret-v1/%s: data holds the keys directly (spec §4.1 older form)', async (logical) => {
      const res = await get(v1, `secret-v1/${logical}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(v1.seeded[logical]);
      expect(res.body.data.metadata).toBeUndefined();
    });

    it('the KV v2 form on the v1 mount is refused (no rule names it)', async () => {
      const res = await get(v1, 'secret-v1/data/registry/svc-orchestrator');
      expect({ status: res.status, error: firstError(res) }).toEqual({ status: 403, error: ACL_DENIED });
    });

    it('the CLI reads the v1 path too', async () => {
      const cli = cliKvGet(v1.store, v1.ciToken, ['secret-v1/registry/svc-orchestrator']);
      expect(cli.status).toBe(0);
      expect(cli.json.data).toEqual(v1.seeded['registry/svc-orchestrator']);
    });

    it('application policies follow the mount: orchestrator-dev reads secret-v1/acme/dev/orchestrator/database', async () => {
      const roleId = (await storeRequest(v1.store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).body.data.role_id;
      const secretId = (await storeRequest(v1.store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id')).body.data.secret_id;
      const token = clientToken(await appRoleLogin(v1.store, roleId, secretId));
      const res = await get(v1, 'secret-v1/acme/dev/orchestrator/database', token);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(v1.seeded['acme/dev/orchestrator/database']);
      const ci = await get(v1, 'secret-v1/acme/dev/orchestrator/database');
      expect(ci.status).toBe(403);
    });
  });
});
