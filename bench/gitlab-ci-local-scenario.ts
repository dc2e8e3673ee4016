/**
 * A cold pipeline under gitlab-ci-local (`npm run bench:store -- --gitlab-ci-local`): a configuration
 * repository made as a team makes one (this library packed with `npm pack`, `secretstore-iac init`,
 * `npm install` from npm's cache: its build compiles only its own `stacks/`, the library is a
 * package) declaring N generated applications in hash shards, state in a throw-away PostgreSQL,
 * bootstrapped by an administrator; then one application added, first as a merge request (the
 * pipeline to the note: build, synth, plans with the read-only role, access diff), then merged (the
 * default-branch pipeline: build, synth, plans and applies with the apply role). Each pipeline starts
 * cold: no `.gitlab-ci-local` state from an earlier run (no artifacts, no plugin cache). Wall time of
 * each pipeline and of each job, as gitlab-ci-local reports it. Job tokens are signed with the key the
 * store's JWT method trusts (gitlab-ci-local mints none).
 *
 * Not measured: the dependency install. The jobs' `SECRETSTORE_IAC_INSTALL` links the configuration
 * repository's node_modules (installed once, before) instead of `npm ci` (no registry download in a
 * benchmark); the pipeline's cache keeps node_modules for every job but the first pipeline's build.
 */
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startPostgres } from '../test/support/store/postgres-server';
import { BENCH_SETTINGS } from './bench-platform';
import { CI_ACCESS, PARALLEL_STACKS, PROJECT_ID, seconds, StoreWorkspace } from './store-workspace';

const ROOT = path.resolve(__dirname, '..', '..');
const GLCI = path.join(ROOT, 'node_modules', '.bin', 'gitlab-ci-local');

/** Runs a command to its end; its output (job logs: no token is printed by the jobs) collected. */
function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, output: output.replace(/\u001b\[[0-9;]*m/g, '') }));
  });
}

/** The configuration repository's sources: the bench's platform, `APPLICATIONS` from stacks/applications.ts. */
function writeConfiguration(repo: string, ws: StoreWorkspace, applications: number): void {
  fs.writeFileSync(
    path.join(repo, 'stacks', 'platform.config.ts'),
    `import { JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(BENCH_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(ws.ciPublicKeyPem)}]),
  configurationProject: { projectId: '${PROJECT_ID}' },
  applicationSharding: { by: 'hash', shards: ${ws.shards} },
};
`,
  );
  fs.writeFileSync(path.join(repo, 'stacks', 'applications.ts'), `export const APPLICATIONS = ${applications};\n`);
  fs.writeFileSync(
    path.join(repo, 'stacks', 'main.ts'),
    `import { definePlatform, postgresState, SecretStoreApp } from 'secretstore-iac';
import { APPLICATIONS } from './applications';
import { platformConfig } from './platform.config';

const app = new SecretStoreApp().define((a) => {
  const platform = definePlatform(a, platformConfig, postgresState());
  for (let i = 0; i < APPLICATIONS; i++) platform.appRoles.addApplication(\`bench-\${i}\`, { name: \`bench\${i}\`, environment: 'prod' });
});
app.synth();
`,
  );
}

/** One pipeline's figures: its wall time, exit code, each job's "finished in", the synth job's steps, the load around it. */
interface PipelineRun {
  readonly s: number;
  readonly code: number;
  readonly jobs: readonly string[];
  /** The synth job's `synth steps: ...` line (`secretstore-iac pipeline synth`), when it printed one. */
  readonly synthSteps?: string;
  /** Where the synth job's base came from, as its log says. */
  readonly baseFrom?: string;
  readonly load: string;
}

/** The system's load averages (1, 5, 15 min), printed beside every figure: the machine is shared. */
export function loadavg(): string {
  try {
    return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return os.loadavg().map((l) => l.toFixed(2)).join(' ');
  }
}

/** Issue 39's target for adding one application, merge request to note and merge to applied: 15 s up to 5,000 applications, 30 s up to 20,000. */
export function pipelineTargetS(applications: number): number {
  return applications <= 5000 ? 15 : 30;
}

/** Seconds of a gitlab-ci-local duration (`540 ms`, `12.3 s`, `1.03 min`). */
export function durationS(text: string): number {
  let s = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|min|m|h)\b/g)) s += Number(m[1]) * { ms: 0.001, s: 1, min: 60, m: 60, h: 3600 }[m[2] as 'ms' | 's' | 'min' | 'm' | 'h'];
  return s;
}

/**
 * The critical path of a pipeline, by stage: each stage waits for the slowest job of the one before
 * (the plan jobs of the shards run side by side), so its figure is its slowest job's; the synth job's
 * own steps beside it.
 */
function criticalPath(p: PipelineRun): string {
  const byJob = new Map(p.jobs.filter((j) => !j.startsWith('pipeline ')).map((j) => [j.split(' ')[0], durationS(j.slice(j.indexOf('finished in ')))]));
  const stage = (label: string, match: (job: string) => boolean) => {
    const jobs = [...byJob].filter(([job]) => match(job));
    if (jobs.length === 0) return undefined;
    const [job, s] = jobs.reduce((a, b) => (b[1] > a[1] ? b : a));
    return `${label} ${s.toFixed(1)} s${jobs.length > 1 ? ` (slowest of ${jobs.length}: ${job.replace(/^secretstore-iac-/, '')})` : ''}`;
  };
  return [
    stage('build', (j) => j === 'secretstore-iac-build'),
    stage('synth', (j) => j === 'secretstore-iac-synth'),
    stage('plan', (j) => /^secretstore-iac-plan-/.test(j)),
    stage('review', (j) => /^secretstore-iac-access-diff/.test(j)),
    stage('apply', (j) => /^secretstore-iac-apply-/.test(j)),
  ]
    .filter(Boolean)
    .join(', ');
}

export async function measureColdPipeline(size: number, shards: number, storeBinary: string, tools: Record<string, string>): Promise<void> {
  console.log('');
  console.log(`cold pipeline under gitlab-ci-local, ${size} applications in ${shards} hash shards, one added (a repository from secretstore-iac init; dependencies linked, not installed); load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const ws = await StoreWorkspace.open(size, shards, storeBinary, tools);
  const pg = await startPostgres();
  try {
    // The configuration repository as a team makes it: the packed library, `init`, `npm install`.
    const repo = path.join(ws.work, 'config');
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', ws.work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).replace(/^[^[]*/, '')) as { filename: string }[];
    execFileSync(process.execPath, [path.join(ROOT, 'dist', 'bin', 'secretstore-iac.js'), 'init', 'config', '--package', `file:${path.join(ws.work, packed.filename)}`], { cwd: ws.work, stdio: 'pipe' });
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: repo, stdio: 'pipe' });
    writeConfiguration(repo, ws, size);
    const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim();
    execFileSync('npm', ['run', 'synth'], { cwd: repo, stdio: 'pipe' });
    fs.mkdirSync(path.join(repo, '.gitlab'), { recursive: true });
    fs.copyFileSync(path.join(repo, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), path.join(repo, '.gitlab', 'secretstore-iac.gitlab-ci.yml'));
    fs.writeFileSync(path.join(repo, '.gitlab-ci.yml'), 'include:\n  - local: .gitlab/secretstore-iac.gitlab-ci.yml\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'platform configuration');
    git(ws.work, 'init', '-q', '--bare', '-b', 'main', 'origin.git');
    git(repo, 'remote', 'add', 'origin', path.join(ws.work, 'origin.git'));
    git(repo, 'push', '-q', 'origin', 'main');
    git(repo, 'remote', 'set-head', 'origin', 'main');

    // Bootstrap by an administrator (root token), same PostgreSQL state as the pipeline.
    const adminEnv = { ...process.env, ...tools, HOME: ws.work, SECRETSTORE_ADDR: ws.store.addr, VAULT_TOKEN: ws.store.rootToken, PG_CONN_STR: pg.connStr, TF_IN_AUTOMATION: '1', TF_PLUGIN_CACHE_DIR: path.join(ws.work, 'plugin-cache') };
    const stacks = Object.keys((JSON.parse(fs.readFileSync(path.join(repo, 'cdktf.out', 'manifest.json'), 'utf8')) as { stacks: object }).stacks).sort();
    const cli = async (stack: string, args: string[]) => {
      const r = await run(process.execPath, [path.join('node_modules', 'secretstore-iac', 'dist', 'bin', 'secretstore-iac.js'), 'tf', stack, '--', ...args], repo, adminEnv);
      if (r.code !== 0) throw new Error(`bootstrap ${stack} ${args[0]} failed:\n${r.output.slice(-3000)}`);
    };
    for (const stack of stacks) await cli(stack, ['init', '-input=false']);
    const bootstrapS = await seconds(async () => {
      await cli(CI_ACCESS, ['apply', '-input=false', '-auto-approve']);
      await cli('app-roles', ['apply', '-input=false', '-auto-approve']);
      await ws.parallel(stacks.filter((s) => s !== CI_ACCESS && s !== 'app-roles'), (s) => cli(s, ['apply', '-input=false', '-auto-approve']), PARALLEL_STACKS);
    });
    console.log(`  bootstrap (administrator, ${stacks.length} stacks): ${bootstrapS.toFixed(1)} s`);
    fs.rmSync(path.join(repo, 'cdktf.out'), { recursive: true, force: true });
    fs.rmSync(path.join(repo, 'dist'), { recursive: true, force: true });

    const variables = (who: 'plan' | 'apply') =>
      Object.entries({
        SECRETSTORE_ADDR: ws.store.addr,
        PG_CONN_STR: pg.connStr,
        SECRETSTORE_ID_TOKEN: ws.jobToken(who),
        SECRETSTORE_IAC_INSTALL: `ln -sfn ${repo}/node_modules node_modules`,
        SECRETSTORE_IAC_TOFU: tools.SECRETSTORE_IAC_TOFU,
        TF_CLI_CONFIG_FILE: tools.TF_CLI_CONFIG_FILE,
      }).flatMap(([k, v]) => ['--variable', `${k}=${v}`]);
    // Each pipeline starts without an earlier one's artifacts, builds or plugin cache; the pipeline's
    // `cache:` (the synthesis cache the default branch's synth job fills) is kept, as on a runner.
    const state = path.join(repo, '.gitlab-ci-local');
    const pipeline = async (who: 'plan' | 'apply', extra: string[]): Promise<PipelineRun> => {
      if (fs.existsSync(state)) for (const entry of fs.readdirSync(state)) if (entry !== 'cache') fs.rmSync(path.join(state, entry), { recursive: true, force: true });
      const load = loadavg();
      let r = { code: -1, output: '' };
      const s = await seconds(async () => {
        r = await run(GLCI, ['--shell-isolation', '--no-color', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...variables(who), ...extra], repo, { ...process.env, HOME: ws.work });
      });
      if (process.env.SECRETSTORE_IAC_BENCH_PIPELINE_LOG) fs.appendFileSync(process.env.SECRETSTORE_IAC_BENCH_PIPELINE_LOG, r.output);
      const jobs = r.output.split('\n').filter((l) => /^\S+\s+finished in /.test(l)).map((l) => l.replace(/\s+/g, ' ').trim());
      const synthSteps = /secretstore-iac: synth steps: (.*)$/m.exec(r.output)?.[1].trim();
      const baseFrom = /secretstore-iac: base [0-9a-f]{12}: ([^(:]*)/m.exec(r.output)?.[1].trim();
      return { s, code: r.code, jobs, synthSteps, baseFrom, load: `${load} -> ${loadavg()}` };
    };

    // The default branch's pipeline of the base commit ran before (its build and synth jobs: they store
    // its synthesis in the pipeline's synthesis cache); nothing changed since the commit before it.
    const head = git(repo, 'rev-parse', 'HEAD');
    const basePipeline = await pipeline('apply', ['secretstore-iac-build', 'secretstore-iac-synth', '--variable', `CI_COMMIT_BEFORE_SHA=${head}`]);
    console.log(`  the base's own default-branch pipeline (build, synth: stores its synthesis): ${basePipeline.s.toFixed(1)} s, exit ${basePipeline.code}; load ${basePipeline.load}`);

    // The merge request: one application more.
    git(repo, 'checkout', '-q', '-b', 'feature');
    writeConfiguration(repo, ws, size + 1);
    git(repo, 'commit', '-q', '-am', 'one application more');
    const mr = await pipeline('plan', ['--variable', 'CI_PIPELINE_SOURCE=merge_request_event', '--variable', 'CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main', '--variable', 'CI_MERGE_REQUEST_IID=1']);
    git(repo, 'checkout', '-q', 'main');
    const before = git(repo, 'rev-parse', 'main');
    git(repo, 'merge', '-q', '--ff-only', 'feature');
    git(repo, 'push', '-q', 'origin', 'main');
    const merged = await pipeline('apply', ['--variable', `CI_COMMIT_BEFORE_SHA=${before}`]);
    const added = await fetch(`${ws.store.addr}/v1/auth/approle/role/bench${size}-prod`, { headers: { 'X-Vault-Token': ws.store.rootToken } });
    for (const [label, p] of [['merge request (to the note)', mr], ['default branch (to applied)', merged]] as const) {
      const jobs = p.jobs.filter((j) => !j.startsWith('pipeline ')).length;
      console.log(`  ${label}: ${p.s.toFixed(1)} s, ${(p.s / pipelineTargetS(size)).toFixed(2)}x the ${pipelineTargetS(size)} s target, exit ${p.code}, ${jobs} jobs; load ${p.load}`);
      console.log(`    critical path: ${criticalPath(p)}`);
      console.log(`    synth job's steps: ${p.synthSteps ?? '(not printed)'}; base ${p.baseFrom ?? '(not said)'}`);
      for (const job of p.jobs) console.log(`    ${job}`);
    }
    console.log(`  the added application's role on the store after the default branch: HTTP ${added.status}`);
  } finally {
    await pg.stop();
    ws.close();
  }
}
