/**
 * The state of a repository `secretstore-iac init` writes is shared by construction (issue 37): its
 * stacks/main.ts keeps every stack's state in PostgreSQL (`postgresState()`, the connection from
 * `PG_CONN_STR`), so two runners, each with its own working copy and nothing carried between them,
 * see the same state: after the first applied, the second plans no change. A third working copy of the
 * same configuration on local state (the opt-out) plans every object as new: what a pipeline on local
 * state would do, and what the synthesis now refuses without `localStateReason`.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../lib/cli/run-cli';
import { REPO_ROOT } from '../support/paths';
import { generateSigningKey } from '../support/store/jwt-signer';
import { TEST_SETTINGS } from '../support/store/platform-fixture';
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';

describe('an init\'d configuration keeps its state in PostgreSQL: two runners share it', () => {
  let store: RunningStore;
  let pg: RunningPostgres;
  let work: string;
  let initialized: string;
  const publicKeyPem = generateSigningKey().publicKeyPem;

  beforeAll(async () => {
    store = await startStore();
    pg = await startPostgres();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-init-state-'));
    initialized = path.join(work, 'init');
    const out: string[] = [];
    const code = await runCli(['init', initialized], { env: {}, cwd: work, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => out.push(l) });
    if (code !== 0) throw new Error(`init failed (${code}):\n${out.join('\n')}`);
  });

  afterAll(async () => {
    await store?.stop();
    await pg?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  /**
   * A runner's working copy: the init'd repository copied (nothing of another runner's), the test's
   * settings and key in stacks/platform.config.ts (a local store cannot reach the example's OIDC
   * discovery), synthesized by its own stacks/main.ts as `npm run synth` runs it.
   */
  function runner(name: string, localStateReason?: string): string {
    const dir = path.join(work, name);
    fs.cpSync(initialized, dir, { recursive: true });
    const pipeline = localStateReason === undefined ? `{ projectId: '4242' }` : `{ projectId: '4242', localStateReason: ${JSON.stringify(localStateReason)} }`;
    fs.writeFileSync(
      path.join(dir, 'stacks', 'platform.config.ts'),
      `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify({ ...TEST_SETTINGS, store: { kind: storeKind() } })},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(15),
  configurationProject: ${pipeline},
};
`,
    );
    if (localStateReason !== undefined) {
      // The opt-out's working copy: the same configuration on the default local state.
      const main = path.join(dir, 'stacks', 'main.ts');
      fs.writeFileSync(main, fs.readFileSync(main, 'utf8').replace('definePlatform(a, platformConfig, postgresState())', 'definePlatform(a, platformConfig)').replace('postgresState, ', ''));
    }
    const saved = process.env.CDKTF_OUTDIR;
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    process.env.CDKTF_OUTDIR = path.join(dir, 'cdktf.out');
    try {
      jest.isolateModules(() => require(path.join(dir, 'stacks', 'main.ts')));
    } finally {
      if (saved === undefined) delete process.env.CDKTF_OUTDIR;
      else process.env.CDKTF_OUTDIR = saved;
      log.mockRestore();
    }
    return dir;
  }

  /** `secretstore-iac tf STACK ...` in a runner's working copy, the connection string from the environment only. */
  const tf = (dir: string, args: string[]) => runStoreCli(['tf', ...args], { cwd: dir, addr: store.addr, token: store.rootToken, env: { PG_CONN_STR: pg.connStr } });

  /** Every state file below a directory (not `.terraform/terraform.tfstate`: the engine's record of the backend configuration). */
  const stateFiles = (dir: string): string[] =>
    fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tfstate(\.backup)?$/.test(f) && !f.split(path.sep).includes('.terraform'));

  it('the init\'d stacks/main.ts is the shipped one, with the state in PostgreSQL', () => {
    const main = fs.readFileSync(path.join(initialized, 'stacks', 'main.ts'), 'utf8');
    expect(main).toBe(fs.readFileSync(path.join(REPO_ROOT, 'stacks', 'main.ts'), 'utf8'));
    expect(main).toContain('definePlatform(a, platformConfig, postgresState())');
  });

  it('the first runner applies; the second, with its own working copy, plans no change; neither holds a state file', async () => {
    const first = runner('runner-1');
    const stacks = fs.readdirSync(path.join(first, 'cdktf.out', 'stacks')).sort();
    expect(stacks).toEqual(['app-roles', 'ci-access']);
    for (const stack of ['ci-access', 'app-roles']) {
      const json = JSON.parse(fs.readFileSync(path.join(first, 'cdktf.out', 'stacks', stack, 'cdk.tf.json'), 'utf8'));
      expect(json.terraform.backend).toEqual({ pg: { schema_name: `secretstore_iac_${stack.replace('-', '_')}` } });
      for (const args of [[stack, '--', 'init', '-input=false'], [stack, '--refuse-replace', '--', 'plan', '-input=false', '-out=first.tfplan'], [stack, '--refuse-replace', '--', 'apply', '-input=false', 'first.tfplan']]) {
        const r = await tf(first, args);
        if (r.code !== 0) throw new Error(`runner-1: tf ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
      }
    }

    const second = runner('runner-2');
    expect(fs.existsSync(path.join(second, 'cdktf.out', 'stacks', 'ci-access', '.terraform'))).toBe(false);
    for (const stack of ['ci-access', 'app-roles']) {
      expect((await tf(second, [stack, '--', 'init', '-input=false'])).code).toBe(0);
      const plan = await tf(second, [stack, '--', 'plan', '-input=false', '-no-color', '-detailed-exitcode']);
      expect({ stack, code: plan.code, stderr: plan.stderr }).toEqual({ stack, code: 0, stderr: expect.any(String) });
      expect(plan.stdout).toContain('No changes.');
    }
    expect([...stateFiles(first), ...stateFiles(second)]).toEqual([]);
    // The connection string (here without a password) reaches no file of either runner.
    for (const dir of [first, second]) {
      for (const f of fs.readdirSync(path.join(dir, 'cdktf.out'), { recursive: true, encoding: 'utf8' })) {
        const file = path.join(dir, 'cdktf.out', f);
        if (fs.statSync(file).isFile() && !f.includes('.terraform/providers')) expect({ f, leaks: fs.readFileSync(file, 'utf8').includes(pg.connStr) }).toEqual({ f, leaks: false });
      }
    }
  });

  it('the same configuration on local state (the opt-out) in a third working copy plans every object as new', async () => {
    const third = runner('runner-3', 'test: shows what a runner on local state plans');
    expect((await tf(third, ['ci-access', '--', 'init', '-input=false'])).code).toBe(0);
    const plan = await tf(third, ['ci-access', '--', 'plan', '-input=false', '-no-color', '-detailed-exitcode']);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toMatch(/Plan: [1-9]\d* to add, 0 to change, 0 to destroy\./);
  });
});
