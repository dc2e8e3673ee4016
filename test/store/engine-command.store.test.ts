/**
 * `secretstore-iac tf`: the spec's SECRETSTORE_ADDR is enough to plan and apply the synthesized
 * stacks, although the vault provider itself only reads VAULT_ADDR.
 */
import * as path from 'path';
import { runCli } from '../../lib/cli/run-cli';
import { generateSigningKey } from '../support/store/jwt-signer';
import { applyPlatform, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';

describe('§2.5: the stacks are planned with SECRETSTORE_ADDR alone', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;

  beforeAll(async () => {
    store = await startStore();
    const key = generateSigningKey();
    ({ fixture } = await applyPlatform(store, testPlatformConfig(key.publicKeyPem)));
  });

  afterAll(async () => {
    fixture?.cleanup();
    await store?.stop();
  });

  async function tf(env: NodeJS.ProcessEnv, ...args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const tools = toolchain();
    const code = await runCli(['tf', 'ci-access', '--outdir', path.join(fixture.dir, 'cdktf.out'), '--engine', tools.tofu, '--', ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TF_CLI_CONFIG_FILE: tools.cliConfig, TF_IN_AUTOMATION: '1', ...env },
      cwd: fixture.dir,
      isTerminal: false,
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
    });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('plans no change with SECRETSTORE_ADDR and VAULT_TOKEN set, VAULT_ADDR unset', async () => {
    const r = await tf({ SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: store.rootToken }, 'plan', '-detailed-exitcode', '-input=false', '-lock=false');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/No changes/);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(store.rootToken);
  });

  it('stops before running the engine when no address is set (spec §7, first row)', async () => {
    const r = await tf({ VAULT_TOKEN: store.rootToken }, 'plan');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/SECRETSTORE_ADDR \(or VAULT_ADDR \/ BAO_ADDR\) is unset or empty/);
    expect(r.stdout).toBe('');
  });
});
