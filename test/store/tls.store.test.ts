/**
 * A store behind a private CA (the normal case in production): a real OpenBao serving its API over
 * TLS with a certificate the test makes with `openssl`. With VAULT_CACERT (or BAO_CACERT / VAULT_CAPATH)
 * `tf` (plan and apply of the platform stacks), `drift`, `adopt`, `provision` and `check-approle` work;
 * without it each fails closed: a TLS error naming the fix, exit 3, nothing written, no Secret ID issued.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { runStoreCli } from '../support/store/store-cli';
import { StoreClient } from '../../lib/store/store-client';
import { StoreTransport } from '../../lib/store/store-transport';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';
import { makeTestCertificates, TestCertificates } from '../support/tls-certificates';

const TLS_REFUSAL = /TLS with the store failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY): .*Give the CA that signed it with VAULT_CACERT/;

describe('a store behind a private CA: the TLS variables of the store CLI', () => {
  let certs: TestCertificates;
  let store: RunningStore;
  let fixture: PlatformFixture;
  let dir: string;

  beforeAll(async () => {
    certs = makeTestCertificates();
    store = await startStore({ tls: { certFile: certs.serverCert, keyFile: certs.serverKey, caFile: certs.caCert } });
    expect(store.addr).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    fixture = PlatformFixture.create(store, 'tls');
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem));
    // `init` needs no store; plan and apply below go through `secretstore-iac tf`.
    for (const stack of fixture.stacks) await fixture.init(stack);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tls-store-'));
  });

  afterAll(async () => {
    fixture?.cleanup();
    await store?.stop();
    if (certs) fs.rmSync(certs.dir, { recursive: true, force: true });
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const outdir = () => path.join(fixture.dir, 'cdktf.out');

  async function cli(args: string[], env: NodeJS.ProcessEnv) {
    const r = await runStoreCli(args, { cwd: dir, addr: store.addr, env: { ...env } });
    expect(r.stdout + r.stderr).not.toContain(store.rootToken);
    return r;
  }

  const tf = (stack: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
    cli(['tf', stack, '--outdir', outdir(), '--engine', toolchain().tofu, '--', ...args, '-input=false', '-no-color'], { VAULT_TOKEN: store.rootToken, ...env });

  /** Secret IDs of a role, counted through a client that trusts the CA. */
  async function secretIdCount(role: string): Promise<number> {
    const client = new StoreClient({ address: store.addr, token: store.rootToken, transport: StoreTransport.fromEnvironment({ VAULT_CACERT: certs.caCert }) });
    try {
      const res = await client.request('GET', `auth/approle/role/${role}/secret-id?list=true`);
      return res.body.data.keys.length;
    } catch (e) {
      if ((e as { status?: number }).status === 404) return 0;
      throw e;
    }
  }

  it('tf without VAULT_CACERT stops before the engine runs, with the TLS error', async () => {
    const r = await tf('app-roles', {}, 'apply', '-auto-approve');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(TLS_REFUSAL);
    expect(r.stdout).toBe('');
  });

  it('tf applies and plans every platform stack with VAULT_CACERT (the provider reads it too)', async () => {
    for (const stack of fixture.stacks) {
      const apply = await tf(stack, { VAULT_CACERT: certs.caCert }, 'apply', '-auto-approve');
      expect([stack, apply.code, apply.stderr]).toEqual([stack, 0, expect.stringMatching(/^secretstore-iac tf: engine \S+ \(OpenTofu v\d+\.\d+\.\d+; [^)]+\)$/)]);
      expect(apply.stdout).toMatch(/Apply complete!/);
    }
    const plan = await tf('ci-access', { BAO_CACERT: certs.caCert }, 'plan', '-detailed-exitcode');
    expect(plan.stdout).toMatch(/No changes/);
    expect(plan.code).toBe(0);
  });

  it('drift reads the store with VAULT_CACERT (in sync) and fails closed without it', async () => {
    const ok = await cli(['drift', outdir()], { VAULT_TOKEN: store.rootToken, VAULT_CACERT: certs.caCert });
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toContain('**In sync.**');
    expect(ok.code).toBe(0);
    const refused = await cli(['drift', outdir()], { VAULT_TOKEN: store.rootToken });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(TLS_REFUSAL);
    expect(refused.stdout).toBe('');
  });

  it('adopt reads the store with VAULT_CAPATH (nothing to import) and fails closed without a CA', async () => {
    const engine = ['--outdir', outdir(), '--engine', toolchain().tofu];
    const ok = await cli(['adopt', ...engine], { VAULT_TOKEN: store.rootToken, VAULT_CAPATH: certs.caDir });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/0 to import; 0 to create\./);
    const refused = await cli(['adopt', ...engine], { VAULT_TOKEN: store.rootToken });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(TLS_REFUSAL);
    for (const stack of fixture.stacks) expect(fs.existsSync(path.join(fixture.stackDir(stack), IMPORT_FILE))).toBe(false);
  });

  it('provision writes the env file with VAULT_CACERT; without it, nothing is written and no Secret ID is issued', async () => {
    const before = await secretIdCount('registry');
    const refusedFile = path.join(dir, 'refused.env');
    const refused = await cli(['provision', 'registry', '--env-file', refusedFile], { VAULT_TOKEN: store.rootToken });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(TLS_REFUSAL);
    expect(fs.existsSync(refusedFile)).toBe(false);
    expect(await secretIdCount('registry')).toBe(before);

    const file = path.join(dir, 'registry.env');
    const ok = await cli(['provision', 'registry', '--env-file', file], { VAULT_TOKEN: store.rootToken, VAULT_CACERT: certs.caCert });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^SECRETSTORE_SECRET_ID=/m);
    expect(await secretIdCount('registry')).toBe(before + 1);
  });

  it('check-approle logs in with VAULT_CACERT; without it, the pair is never sent', async () => {
    const file = path.join(dir, 'registry.env');
    const ok = await cli(['check-approle', '--env-file', file], { VAULT_CACERT: certs.caCert });
    expect(ok.stdout).toMatch(/^valid: the store accepted the Role ID \/ Secret ID pair/);
    expect(ok.code).toBe(0);
    const refused = await cli(['check-approle', '--env-file', file], {});
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(TLS_REFUSAL);
    const secretId = fs.readFileSync(file, 'utf8').match(/^SECRETSTORE_SECRET_ID=(.*)$/m)![1];
    expect(refused.stderr + ok.stdout).not.toContain(secretId);
  });
});
