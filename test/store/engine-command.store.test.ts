/**
 * `secretstore-iac tf`: the spec's SECRETSTORE_ADDR is enough to plan and apply the synthesized
 * stacks, although the vault provider itself only reads VAULT_ADDR.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../support/paths';
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
    // Only the line naming the engine, its version and why.
    expect(r.stderr).toMatch(/^secretstore-iac tf: engine \S+ \(OpenTofu v\d+\.\d+\.\d+; [^)]+\)$/);
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

  it('the bin passes the terminal through: an apply without -auto-approve answered "yes" on standard input applies', async () => {
    // The real bin as a process (compiled with tsc), its standard input a pipe holding the answer.
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tf-bin-'));
    execFileSync(process.execPath, [
      path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      ...['--outDir', out, '--rootDir', REPO_ROOT, '--module', 'commonjs', '--target', 'ES2022', '--strict'],
      ...['--esModuleInterop', '--skipLibCheck', '--types', 'node', path.join(REPO_ROOT, 'bin', 'secretstore-iac.ts')],
    ]);
    // As `npm run build` does: the renderers' shell and awk files next to the compiled modules.
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'copy-assets.js'), out]);
    // Something to apply: the store lost a policy the stack declares (the engine reads it back empty: a change).
    const del = await fetch(`${store.addr}/v1/sys/policies/acl/registry-ci`, { method: 'DELETE', headers: { 'X-Vault-Token': store.rootToken } });
    expect(del.status).toBe(204);
    const tools = toolchain();
    const r = spawnSync(process.execPath, [path.join(out, 'bin', 'secretstore-iac.js'), 'tf', 'ci-access', '--outdir', path.join(fixture.dir, 'cdktf.out'), '--', 'apply', '-no-color'], {
      cwd: fixture.dir,
      input: 'yes\n',
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_PATH: path.join(REPO_ROOT, 'node_modules'),
        TF_CLI_CONFIG_FILE: tools.cliConfig,
        // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
        SECRETSTORE_IAC_CACHE: tools.cacheDir,
        SECRETSTORE_IAC_TOFU: tools.tofu,
        SECRETSTORE_ADDR: store.addr,
        VAULT_TOKEN: store.rootToken,
      },
    });
    fs.rmSync(out, { recursive: true, force: true });
    expect(r.stdout).toContain('Do you want to perform these actions?');
    expect(r.stdout).toMatch(/Apply complete! Resources: 0 added, 1 changed, 0 destroyed/);
    expect(r.stderr).not.toContain('error asking for approval');
    expect(r.status).toBe(0);
    const read = await fetch(`${store.addr}/v1/sys/policies/acl/registry-ci`, { headers: { 'X-Vault-Token': store.rootToken } });
    expect(read.status).toBe(200);
  });
});
