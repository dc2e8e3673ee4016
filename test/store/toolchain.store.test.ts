/**
 * Smoke test of the store toolchain: a real store (the selected OpenBao or Vault dev server), the real engine
 * (OpenTofu) and the hashicorp/vault provider from the local filesystem mirror, on a
 * hand-written cdk.tf.json (the shape the library synthesizes, provider ">= 5.6.0, < 6.0.0").
 */
import { storeKind } from '../support/store/store-facts';
import { DEFAULT_VAULT_PROVIDER_VERSION } from '../../lib';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEngine } from '../support/store/engine';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

const POLICY_NAME = 'toolchain-smoke';
const POLICY_TEXT = 'path "secret/data/toolchain-smoke/*" {\n  capabilities = ["read"]\n}\n';

const config = {
  terraform: {
    required_providers: {
      vault: { source: 'hashicorp/vault', version: DEFAULT_VAULT_PROVIDER_VERSION },
    },
  },
  provider: { vault: [{}] },
  resource: {
    vault_policy: {
      smoke: { name: POLICY_NAME, policy: POLICY_TEXT },
    },
  },
};

/** The pinned store builds (scripts/toolchain.sh): version and the tag commit's date as build date. */
const PINNED = {
  openbao: { version: '2.4.0', build_date: '2025-08-28T20:23:15Z' },
  vault: { version: '1.21.1', build_date: '2025-11-18T21:04:32Z' },
};

describe(`store toolchain (real ${storeKind()} + OpenTofu + vault provider)`, () => {
  let store: RunningStore | undefined;
  let workDir: string;

  beforeAll(async () => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-engine-'));
    fs.writeFileSync(path.join(workDir, 'cdk.tf.json'), JSON.stringify(config, null, 2));
    store = await startStore();
  });

  afterAll(async () => {
    await store?.stop();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  it(`the store is up and answers with the pinned version (${storeKind()} ${PINNED[storeKind()].version})`, async () => {
    const res = await storeRequest(store!, 'GET', 'sys/seal-status');
    expect(res.status).toBe(200);
    expect(res.body.sealed).toBe(false);
    expect({ version: res.body.version, build_date: res.body.build_date }).toEqual(PINNED[storeKind()]);
  });

  it('init, apply, then an empty plan; the policy is in the store', async () => {
    const init = await runEngine(workDir, ['init'], { store });
    expect(init.stdout).toMatch(/Installed hashicorp\/vault v5\.9\.0/); // the one 5.x the mirror holds
    expect(fs.existsSync(path.join(workDir, '.terraform.lock.hcl'))).toBe(true);

    await runEngine(workDir, ['apply', '-auto-approve'], { store });

    const plan = await runEngine(workDir, ['plan', '-detailed-exitcode'], { store, allowCodes: [0, 2] });
    expect({ code: plan.code, stdout: plan.stdout }).toEqual({ code: 0, stdout: expect.any(String) });

    const res = await storeRequest(store!, 'GET', `/v1/sys/policies/acl/${POLICY_NAME}`);
    expect(res.status).toBe(200);
    expect(res.body.data.name).toBe(POLICY_NAME);
    expect(res.body.data.policy).toBe(POLICY_TEXT);
  });

  it('stop() ends the server process', async () => {
    const { pid } = store!;
    await store!.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    store = undefined;
  });
});
