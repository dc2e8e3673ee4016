/**
 * Issue 19 §3 and issue 15: the declared KV version against the real store.
 *
 * (a) `secret/` is KV v2 on the store but declared v1: a CI secret at
 *     `data/acme/dev/orchestrator/database` (the application's v2 data path) is refused at synthesis,
 *     and `tf plan`, `drift` and `adopt` refuse the version mismatch.
 * (b) `secret/` is KV v1 on the store (disabled and re-enabled by the test) while the declarations
 *     say v2: `tf`, `drift` and `adopt` stop with the message, nothing applied or written.
 * (c) matching versions still plan, apply, adopt and drift, with the reader policy of docs/adoption.md.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CiSecret, KvMount, SecretStoreApp, SecretStoreValidationError } from '../../lib';
import { READER_POLICY } from '../../lib/reconcile/live-store-reader';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { runStoreCli } from '../support/store/store-cli';
import { storeCli } from '../support/store/store-facts';
import { definePlatform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { generateSigningKey } from '../support/store/jwt-signer';
import { mountKv, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { tempOutdir } from '../support/synthesized-platform';

const V1_DECLARED = (pem: string): PlatformConfig => testPlatformConfig(pem, { settings: { ...TEST_SETTINGS, kvMount: new KvMount('secret', 1) } });

const V2_DECLARED_ON_V1 =
  "secret/ is KV v1 on the store, but stack ci-access declares it KV v2: the policies name secret/data/<p>, which a KV v1 mount serves as the secret \"data/<p>\", so no application or CI job reads its secrets, and the platform rules were checked for paths the store does not use. Fix: settings.kvMount = new KvMount('secret', 1) and synthesize again, or change the mount on the store";
const V1_DECLARED_ON_V2 = (stacks: string) =>
  `secret/ is KV v2 on the store, but ${stacks} it KV v1: the policies name secret/<p>, which a KV v2 mount does not serve, and secret/data/<p> is the v2 data path of <p>: the platform rules were checked for paths the store does not use. Fix: settings.kvMount = new KvMount('secret', 2) and synthesize again, or change the mount on the store`;

/** A token whose only policy is `policy` (root token creates it). */
async function tokenWith(store: RunningStore, name: string, policy: string): Promise<string> {
  expect((await storeRequest(store, 'PUT', `sys/policies/acl/${name}`, { policy })).status).toBe(204);
  const res = await storeRequest(store, 'POST', 'auth/token/create', { policies: [name], no_default_policy: true, ttl: '1h' });
  return res.body.auth.client_token;
}

/** Runs the CLI in the fixture against its store with `token` (HOME is the fixture: no ~/.vault-token). */
const cli = (fixture: PlatformFixture, args: string[], token: string) =>
  runStoreCli(args, { cwd: fixture.dir, addr: fixture.store.addr, token, env: { HOME: fixture.dir } });

const tf = (fixture: PlatformFixture, token: string, ...args: string[]) =>
  cli(fixture, ['tf', 'ci-access', '--outdir', 'cdktf.out', '--', ...args], token);

/** The ACL policy names on the store. */
async function policyNames(store: RunningStore): Promise<string[]> {
  return (await storeRequest(store, 'GET', 'sys/policies/acl?list=true')).body.data.keys.sort();
}

const importFiles = (fixture: PlatformFixture) => fixture.stacks.filter((s) => fs.existsSync(path.join(fixture.stackDir(s), IMPORT_FILE)));

describe('the declared KV version against the real store', () => {
  let pem: string;
  let v2Store: RunningStore;
  let v1Store: RunningStore;

  beforeAll(async () => {
    pem = generateSigningKey().publicKeyPem;
    const started = await Promise.allSettled([startStore(), startStore()]);
    if (started[0].status === 'fulfilled') v2Store = started[0].value;
    if (started[1].status === 'fulfilled') v1Store = started[1].value;
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    // The dev server mounts secret/ as KV v2: make the second store's secret/ KV v1 by the API.
    expect((await storeRequest(v1Store, 'DELETE', 'sys/mounts/secret')).status).toBe(204);
    await mountKv(v1Store, 'secret', 1);
  });

  afterAll(async () => {
    await Promise.all([v2Store?.stop(), v1Store?.stop()]);
  });

  it('the stores answer GET sys/mounts as the check reads it: secret/ is kv with options.version "2", or "1"', async () => {
    expect((await storeRequest(v2Store, 'GET', 'sys/mounts')).body.data['secret/']).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect((await storeRequest(v1Store, 'GET', 'sys/mounts')).body.data['secret/']).toMatchObject({ type: 'kv', options: { version: '1' } });
  });

  describe('(a) secret/ is KV v2 on the store, declared KV v1', () => {
    let fixture: PlatformFixture;
    beforeAll(async () => {
      fixture = PlatformFixture.create(v2Store, 'kv-declared-v1');
      fixture.synthPlatform(V1_DECLARED(pem));
      for (const stack of fixture.stacks) await fixture.init(stack);
    });
    afterAll(() => fixture?.cleanup());

    it('a CI secret at data/acme/dev/orchestrator/database is refused at synthesis: the rule on the path and SSI-R6 on the store API path', () => {
      const outdir = tempOutdir();
      const app = new SecretStoreApp({ outdir });
      const platform = definePlatform(app, V1_DECLARED(pem));
      new CiSecret(platform.ciAccess, 'app-db', {
        path: 'data/acme/dev/orchestrator/database',
        keys: ['pg_password'],
        consumers: ['scan'],
        description: 'what the attacker wanted: the application database password',
        readers: [platform.ciAccess.registryCi],
      });
      let error: unknown;
      try {
        app.synth();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SecretStoreValidationError);
      const problems = (error as SecretStoreValidationError).problems.map((p) => `[${p.constructPath}] ${p.message}`);
      expect(problems).toEqual([
        '[ci-access/app-db] path = "data/acme/dev/orchestrator/database": must not start with "data/", even on a KV v1 mount: "data" is a KV v2 API prefix, so if secret/ is (or becomes) KV v2 on the store, secret/data/acme/dev/orchestrator/database addresses the data of the secret "acme/dev/orchestrator/database" (the store applies its own KV version, not the declared one)',
        '[ci-access/app-db] SSI-R6 path = "data/acme/dev/orchestrator/database": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets (on the store both reach secret/data/acme/dev/orchestrator/database: the store applies each mount\'s own KV version and path, not the declared ones)',
      ]);
      expect(fs.existsSync(outdir)).toBe(false);
    });

    it('what the rule prevents: on this store, secret/data/acme/dev/orchestrator/database IS the application\'s secret acme/dev/orchestrator/database', async () => {
      const write = await storeRequest(v2Store, 'POST', 'secret/data/acme/dev/orchestrator/database', { data: { pg_password: 'test-value' } });
      expect(write.status).toBe(200);
      const read = await storeRequest(v2Store, 'GET', 'secret/data/acme/dev/orchestrator/database');
      expect(Object.keys(read.body.data.data)).toEqual(['pg_password']);
    });

    it('tf plan stops with exit 5 and the mismatch before the engine runs', async () => {
      const r = await tf(fixture, v2Store.rootToken, 'plan', '-input=false');
      expect(r.code).toBe(5);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `secretstore-iac tf: the declared KV mounts do not match the secrets store at ${v2Store.addr}; nothing was planned, applied or written:\n  ${V1_DECLARED_ON_V2('stack ci-access declares')}`,
      );
    });

    it('drift and adopt stop with exit 5 and the mismatch; adopt writes no import file', async () => {
      const drift = await cli(fixture, ['drift', 'cdktf.out'], v2Store.rootToken);
      expect(drift.code).toBe(5);
      expect(drift.stdout).toBe('');
      expect(drift.stderr).toContain(V1_DECLARED_ON_V2('stacks app-roles, ci-access declare'));
      const adopt = await cli(fixture, ['adopt', '--outdir', 'cdktf.out'], v2Store.rootToken);
      expect(adopt.code).toBe(5);
      expect(adopt.stderr).toContain(V1_DECLARED_ON_V2('stacks app-roles, ci-access declare'));
      expect(importFiles(fixture)).toEqual([]);
      expect(await policyNames(v2Store)).toEqual(['default', 'root']);
    });
  });

  describe('(b) secret/ is KV v1 on the store, declared KV v2', () => {
    let fixture: PlatformFixture;
    beforeAll(async () => {
      fixture = PlatformFixture.create(v1Store, 'kv-store-v1');
      fixture.synthPlatform(testPlatformConfig(pem));
      for (const stack of fixture.stacks) await fixture.init(stack);
    });
    afterAll(() => fixture?.cleanup());

    it('tf plan and tf apply stop with exit 5 before the engine runs: nothing is applied', async () => {
      for (const args of [['plan', '-input=false'], ['apply', '-auto-approve', '-input=false']]) {
        const r = await tf(fixture, v1Store.rootToken, ...args);
        expect(r.code).toBe(5);
        expect(r.stdout).toBe('');
        expect(r.stderr).toBe(
          `secretstore-iac tf: the declared KV mounts do not match the secrets store at ${v1Store.addr}; nothing was planned, applied or written:\n  ${V2_DECLARED_ON_V1}`,
        );
      }
      expect(await policyNames(v1Store)).toEqual(['default', 'root']);
      expect((await storeRequest(v1Store, 'GET', 'sys/auth')).body.data['jwt/']).toBeUndefined();
    });

    it('drift and adopt stop with exit 5 (issue 15: they said "in sync" / "No access change" before); no import file is written', async () => {
      const drift = await cli(fixture, ['drift', 'cdktf.out'], v1Store.rootToken);
      expect(drift.code).toBe(5);
      expect(drift.stdout).toBe('');
      expect(drift.stderr).toContain(`secretstore-iac drift: the declared KV mounts do not match the secrets store at ${v1Store.addr}`);
      expect(drift.stderr).toContain("secret/ is KV v1 on the store, but stacks app-roles, ci-access declare it KV v2");
      const adopt = await cli(fixture, ['adopt', '--outdir', 'cdktf.out'], v1Store.rootToken);
      expect(adopt.code).toBe(5);
      expect(adopt.stdout).toBe('');
      expect(adopt.stderr).toContain("secret/ is KV v1 on the store, but stacks app-roles, ci-access declare it KV v2");
      expect(importFiles(fixture)).toEqual([]);
      expect(await policyNames(v1Store)).toEqual(['default', 'root']);
    });
  });

  describe('(c) matching versions still work, with the documented reader policy', () => {
    let fixture: PlatformFixture;
    beforeAll(async () => {
      fixture = PlatformFixture.create(v1Store, 'kv-v1-v1');
      fixture.synthPlatform(V1_DECLARED(pem));
      for (const stack of fixture.stacks) await fixture.init(stack);
    });
    afterAll(() => fixture?.cleanup());

    it('secret/ declared v1 on a KV v1 store: tf plans and applies both stacks', async () => {
      const plan = await tf(fixture, v1Store.rootToken, 'plan', '-input=false', '-detailed-exitcode');
      expect(plan.code).toBe(2);
      for (const stack of fixture.stacks) {
        const r = await cli(fixture, ['tf', stack, '--outdir', 'cdktf.out', '--', 'apply', '-auto-approve', '-input=false'], v1Store.rootToken);
        expect(r.code).toBe(0);
      }
      expect(await policyNames(v1Store)).toContain('registry-ci');
      const policy = (await storeRequest(v1Store, 'GET', 'sys/policies/acl/orchestrator-dev')).body.data.policy;
      expect(policy).toContain('path "secret/acme/dev/orchestrator/*"');
    });

    it('drift --stack ci-access and adopt --dry-run with the reader policy of docs/adoption.md (sys/mounts included): exit 0', async () => {
      const reader = await tokenWith(v1Store, 'secretstore-iac-reader', READER_POLICY);
      const r = await cli(fixture, ['drift', 'cdktf.out', '--stack', 'ci-access'], reader);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const adopt = await cli(fixture, ['adopt', '--outdir', 'cdktf.out', '--dry-run'], reader);
      expect(adopt.stderr).toBe('');
      expect(adopt.code).toBe(0);
    });

    it('a token without read on sys/mounts: drift stops with exit 3 naming the path and the capability', async () => {
      const narrow = await tokenWith(v1Store, 'reader-without-mounts', READER_POLICY.replace('path "sys/mounts" {\n  capabilities = ["read"]\n}\n', ''));
      const r = await cli(fixture, ['drift', 'cdktf.out'], narrow);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`secretstore-iac drift: cannot compare the declared KV mounts (secret/ KV v1) with the store at ${v1Store.addr}: GET /v1/sys/mounts was refused (permission denied: GET /v1/sys/mounts (HTTP 403`);
      expect(r.stderr).toContain('The check needs path "sys/mounts" { capabilities = ["read"] }');
    });

    it('secret/ declared v2 on the KV v2 store: tf plan runs the engine', async () => {
      const v2 = PlatformFixture.create(v2Store, 'kv-v2-v2');
      try {
        v2.synthPlatform(testPlatformConfig(pem));
        await v2.init('ci-access');
        const r = await tf(v2, v2Store.rootToken, 'plan', '-input=false', '-detailed-exitcode');
        expect(r.stderr).toMatch(/^secretstore-iac tf: engine \S+ \(OpenTofu v\d+\.\d+\.\d+; [^)]+\)$/);
        expect(r.code).toBe(2);
        expect(r.stdout).toContain('vault_policy.');
      } finally {
        v2.cleanup();
      }
    });
  });

  describe('(d) a declared KV mount the store does not have', () => {
    it("tf plan stops with exit 5 before the engine runs, and the fix names the store's own CLI (sys/seal-status)", async () => {
      const fixture = PlatformFixture.create(v2Store, 'kv-missing');
      try {
        fixture.synthPlatform(testPlatformConfig(pem, { settings: { ...TEST_SETTINGS, kvMount: new KvMount('kv', 1) } }));
        const r = await tf(fixture, v2Store.rootToken, 'plan', '-input=false');
        expect(r.code).toBe(5);
        expect(r.stderr).toContain('kv/ is not mounted on the store, but stack ci-access relies on it as KV v1');
        expect(r.stderr).toContain(`enable it first (${storeCli()} secrets enable -path=kv -version=1 kv)`);
        expect(r.stderr).not.toContain('engine ');
      } finally {
        fixture.cleanup();
      }
    });
  });
});
