/**
 * A cold pipeline under gitlab-ci-local (`npm run bench:store -- --gitlab-ci-local`): a configuration
 * repository made as a team makes one (this library packed with `npm pack`, `secretstore-iac init`,
 * `npm install` from npm's cache: its build compiles only its own `stacks/`, the library is a
 * package) declaring N generated applications in hash shards, state in a throw-away PostgreSQL,
 * bootstrapped by an administrator; then one application added, first as a merge request (the
 * pipeline to the note: synth (which compiles), plans with the read-only role, access diff), then merged (the
 * default-branch pipeline: synth, plans, the comparison with the merge request's approved note and the
 * applies with the apply role; the note is posted to and read back from a local stand-in for the GitLab
 * API, test/support/gitlab-stand-in.ts). Each pipeline starts
 * cold: no `.gitlab-ci-local` state from an earlier run (no artifacts, no plugin cache). Wall time of
 * each pipeline and of each job, as gitlab-ci-local reports it. Job tokens are signed with the key the
 * store's JWT method trusts (gitlab-ci-local mints none).
 *
 * The dependency install is the generated pipeline's: each job takes node_modules from the pipeline's
 * cache (keyed on package-lock.json) and runs `SECRETSTORE_IAC_INSTALL` only without it, here the
 * generated default `npm ci` with `--offline` (npm's cache of the repository's first install: no
 * registry in a benchmark). The default branch's cache is filled by the base's own pipeline before
 * the rounds; the merge requests' (GitLab keeps protected and unprotected caches apart) by a copy of
 * it, as an earlier merge request's pipeline would have left it. So every measured job restores
 * node_modules from the cache, as gitlab-ci-local does it (a copy into the job's folder), and its
 * artifacts likewise. Not counted: runner pick-up, the clone, the cache and artifacts going through
 * GitLab's object storage (docs/pipelines.md §12).
 */
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { GitLabStandIn } from '../test/support/gitlab-stand-in';
import { startPostgres } from '../test/support/store/postgres-server';
import { randomBytes } from 'crypto';
import { toolchainCache } from '../lib/engine/toolchain-cache';
import { DEFAULT_NOTE_TOKEN_VARIABLE, DEPENDENCY_CACHE_PREFIX, SHARED_SYNTH_CACHE_KEY_PREFIX } from '../lib/render/configuration-pipeline-yaml';
import { SYNTH_CACHE_SECRET_VARIABLE } from '../lib/sources/synthesis-cache';
import { BENCH_SETTINGS } from './bench-platform';
import { COMPARISON_STEP, JobTimeline, jobTimelines, timelineLines } from './pipeline-job-steps';
import { longestNeedsChain, PipelineJobGraph, pipelineJobGraph } from './pipeline-needs-graph';
import { CI_ACCESS, PARALLEL_STACKS, PROJECT_ID, seconds, StoreWorkspace } from './store-workspace';

const ROOT = path.resolve(__dirname, '..', '..');
/** Objects the engine writes at once in the bootstrap's applies (the engine's default is 10). */
const BOOTSTRAP_PARALLELISM = 20;
const GLCI = path.join(ROOT, 'node_modules', '.bin', 'gitlab-ci-local');
/** The user whose project access token posts the notes (the note token's user). */
const NOTE_BOT = { id: 90, username: 'secretstore-iac-bot', token: `glpat-bench-${randomBytes(12).toString('hex')}` };

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
  readonly timelines: readonly JobTimeline[];
  /** gitlab-ci-local's output (the jobs' logs). */
  readonly output: string;
  /** The synth job's `synth steps: ...` line (`secretstore-iac pipeline synth`), when it printed one. */
  readonly synthSteps?: string;
  /** Where the synth job's base came from, as its log says. */
  readonly baseFrom?: string;
  readonly load: string;
  /** Bytes of each job's artifacts as gitlab-ci-local kept them (`.gitlab-ci-local/artifacts/<job>/`), by job. */
  readonly artifactBytes: ReadonlyMap<string, number>;
  /** Bytes of the pipeline's cache (`.gitlab-ci-local/cache/`) after it. */
  readonly cacheBytes: number;
}

/** Bytes of the files below `dir` (0 when it does not exist); links are not followed. */
function treeBytes(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) bytes += treeBytes(p);
    else if (entry.isFile()) bytes += fs.statSync(p).size;
  }
  return bytes;
}

/** Each job's artifact bytes below gitlab-ci-local's state folder. */
function artifactBytesOf(state: string): Map<string, number> {
  const dir = path.join(state, 'artifacts');
  if (!fs.existsSync(dir)) return new Map();
  return new Map(fs.readdirSync(dir).sort().map((job) => [job, treeBytes(path.join(dir, job))]));
}

/** Megabytes with one decimal. */
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

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

/**
 * The critical path of a pipeline: the longest chain of its jobs through their `needs` (a job
 * without waits for every job of the stages before), each counted from its start to its artifacts
 * exported (bench/pipeline-needs-graph.ts): on the default branch the applies are a chain, each on
 * the path. What is left of the pipeline's wall time is gitlab-ci-local's own work between the jobs
 * (parsing, artifacts copied, scheduling). Beside it, for comparison with earlier figures, the sum of
 * each stage's slowest job (which counts a chain of applies as one). Each job's steps under it.
 */
export function criticalPath(p: { readonly s: number; readonly timelines: readonly JobTimeline[] }, graph: PipelineJobGraph): string[] {
  const byJob = new Map(p.timelines.map((t) => [t.job, t]));
  const chain = longestNeedsChain(graph, new Map(p.timelines.map((t) => [t.job, t.totalS])));
  const short = (job: string) => job.replace(/^secretstore-iac-/, '');
  const stage = (label: string, match: (job: string) => boolean): [string, JobTimeline, number] | undefined => {
    const jobs = p.timelines.filter((t) => match(t.job));
    if (jobs.length === 0) return undefined;
    return [label, jobs.reduce((a, b) => (b.totalS > a.totalS ? b : a)), jobs.length];
  };
  const stages = [
    stage('synth', (j) => j === 'secretstore-iac-synth'),
    stage('plan', (j) => /^secretstore-iac-plan-/.test(j)),
    stage('review', (j) => /^secretstore-iac-access-diff/.test(j)),
    stage('apply', (j) => /^secretstore-iac-apply-/.test(j)),
  ].filter((x): x is [string, JobTimeline, number] => x !== undefined);
  const stageSum = stages.reduce((a, [, t]) => a + t.totalS, 0);
  const lines = [
    `critical path (needs): ${chain.jobs.map((j) => `${short(j)} ${byJob.get(j)!.totalS.toFixed(1)} s`).join(' -> ')} = ${chain.s.toFixed(1)} s; gitlab-ci-local between the jobs ${(p.s - chain.s).toFixed(1)} s`,
    `slowest job of each stage (counts a chain as one job): ${stages.map(([label, t, n]) => `${label} ${t.totalS.toFixed(1)} s${n > 1 ? ` (of ${n})` : ''}`).join(' + ')} = ${stageSum.toFixed(1)} s`,
  ];
  for (const job of chain.jobs) lines.push(...timelineLines(byJob.get(job)!));
  return lines;
}

/**
 * The cold pipeline at `size` applications, one application added per round: idle; with `load`,
 * again beside `stress --cpu load`.
 */
export async function measureColdPipeline(size: number, shards: number, storeBinary: string, tools: Record<string, string>, load?: number): Promise<void> {
  console.log('');
  console.log(`cold pipeline under gitlab-ci-local, ${size} applications in ${shards} hash shards, one added (a repository from secretstore-iac init; each job's dependencies from the pipeline's cache, npm ci --offline without it); load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const ws = await StoreWorkspace.open(size, shards, storeBinary, tools);
  const pg = await startPostgres();
  // The GitLab API endpoints the pipeline calls (the merge request's note posted, the default branch's
  // comparison reading it back: docs/pipelines.md §13), so that the comparison is on the critical path.
  const gitlab = await GitLabStandIn.start(PROJECT_ID, [NOTE_BOT]);
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
    // The first init fills the plugin cache; the others only link from it, so they may run side by
    // side, each stack's init just before its apply (the engine's CPU is the bound on two cores).
    const initS = await seconds(() => cli(CI_ACCESS, ['init', '-input=false']));
    const bootstrapS = await seconds(async () => {
      await cli(CI_ACCESS, ['apply', '-input=false', '-auto-approve']);
      const initApply = async (stack: string) => {
        await cli(stack, ['init', '-input=false']);
        await cli(stack, ['apply', '-input=false', '-auto-approve', `-parallelism=${BOOTSTRAP_PARALLELISM}`]);
      };
      await initApply('app-roles');
      await ws.parallel(stacks.filter((s) => s !== CI_ACCESS && s !== 'app-roles'), initApply, PARALLEL_STACKS);
    });
    console.log(`  bootstrap (administrator, ${stacks.length} stacks, every object applied; init of each stack and apply, ${PARALLEL_STACKS} stacks at a time, -parallelism=${BOOTSTRAP_PARALLELISM}): ${(initS + bootstrapS).toFixed(1)} s; load ${loadavg()}`);
    fs.rmSync(path.join(repo, 'cdktf.out'), { recursive: true, force: true });
    fs.rmSync(path.join(repo, 'dist'), { recursive: true, force: true });

    const cacheSecret = randomBytes(32).toString('hex');
    const variables = (who: 'plan' | 'apply') =>
      Object.entries({
        SECRETSTORE_ADDR: ws.store.addr,
        PG_CONN_STR: pg.connStr,
        SECRETSTORE_ID_TOKEN: ws.jobToken(who),
        // The default branch is protected (it writes the shared synthesis), a merge request's branch is not.
        CI_COMMIT_REF_PROTECTED: who === 'apply' ? 'true' : 'false',
        // The synthesis cache's key, a protected variable (docs/pipelines.md §7): without it the
        // default branch reads none of its entries and synthesizes its base again.
        ...(who === 'apply' ? { [SYNTH_CACHE_SECRET_VARIABLE]: cacheSecret } : {}),
        // The generated default, offline: npm's cache of the repository's first install (the jobs' HOME is the workspace).
        SECRETSTORE_IAC_INSTALL: 'npm ci --offline --no-audit --no-fund',
        npm_config_cache: path.join(os.homedir(), '.npm'),
        SECRETSTORE_IAC_TOFU: tools.SECRETSTORE_IAC_TOFU,
        TF_CLI_CONFIG_FILE: tools.TF_CLI_CONFIG_FILE,
        // Where the tool finds its provider mirror: an engine run writes its own CLI configuration
        // (issue 45), and the jobs' HOME is the workspace, whose ~/.cache holds none.
        SECRETSTORE_IAC_CACHE: toolchainCache(process.env) ?? '',
        // The note token and the stand-in's API: the merge request posts its note with its approval
        // record, the default branch compares its plans with it before it applies (docs/pipelines.md §13).
        [DEFAULT_NOTE_TOKEN_VARIABLE]: NOTE_BOT.token,
        CI_API_V4_URL: gitlab.apiUrl,
        CI_PROJECT_ID: PROJECT_ID,
      }).flatMap(([k, v]) => ['--variable', `${k}=${v}`]);
    // Each pipeline starts without an earlier one's artifacts, builds or plugin cache; the pipeline's
    // `cache:` (the synthesis cache the default branch's synth job fills) is kept, as on a runner.
    // GitLab keeps a protected ref's cache apart from the others' (except `unprotect: true` entries:
    // the shared synthesis a merge request reads), which gitlab-ci-local does not: each side's cache
    // is kept here and laid as gitlab-ci-local's before the pipeline of that side.
    const state = path.join(repo, '.gitlab-ci-local');
    const caches = { protected: path.join(ws.work, 'cache-protected'), unprotected: path.join(ws.work, 'cache-unprotected') };
    for (const dir of Object.values(caches)) fs.mkdirSync(dir, { recursive: true });
    const pipeline = async (who: 'plan' | 'apply', extra: string[]): Promise<PipelineRun> => {
      if (fs.existsSync(state)) for (const entry of fs.readdirSync(state)) fs.rmSync(path.join(state, entry), { recursive: true, force: true });
      const side = who === 'apply' ? caches.protected : caches.unprotected;
      fs.mkdirSync(state, { recursive: true });
      fs.cpSync(side, path.join(state, 'cache'), { recursive: true, verbatimSymlinks: true });
      const load = loadavg();
      let r = { code: -1, output: '' };
      const s = await seconds(async () => {
        r = await run(GLCI, ['--shell-isolation', '--no-color', '--timestamps', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...variables(who), ...extra], repo, { ...process.env, HOME: ws.work });
      });
      // The pipeline's cache back to its side; the shared entries (unprotect: true) to both.
      const after = path.join(state, 'cache');
      fs.rmSync(side, { recursive: true, force: true });
      if (fs.existsSync(after)) fs.cpSync(after, side, { recursive: true, verbatimSymlinks: true });
      else fs.mkdirSync(side, { recursive: true });
      const other = who === 'apply' ? caches.unprotected : caches.protected;
      for (const entry of fs.existsSync(after) ? fs.readdirSync(after) : []) {
        if (entry.startsWith(SHARED_SYNTH_CACHE_KEY_PREFIX)) fs.cpSync(path.join(after, entry), path.join(other, entry), { recursive: true, force: true, verbatimSymlinks: true });
      }
      if (process.env.SECRETSTORE_IAC_BENCH_PIPELINE_LOG) fs.appendFileSync(process.env.SECRETSTORE_IAC_BENCH_PIPELINE_LOG, r.output);
      if (r.code !== 0) console.log(r.output.slice(-6000));
      const synthSteps = /secretstore-iac: synth steps: (.*)$/m.exec(r.output)?.[1].trim();
      const baseFrom = /secretstore-iac: base [0-9a-f]{12}: ([^(:]*)/m.exec(r.output)?.[1].trim();
      return { s, code: r.code, output: r.output, timelines: jobTimelines(r.output), synthSteps, baseFrom, load: `${load} -> ${loadavg()}`, artifactBytes: artifactBytesOf(state), cacheBytes: treeBytes(path.join(state, 'cache')) };
    };

    // The default branch's pipeline of the base commit ran before (its synth job: it stores
    // its synthesis in the pipeline's synthesis cache); nothing changed since the commit before it.
    const head = git(repo, 'rev-parse', 'HEAD');
    const basePipeline = await pipeline('apply', ['secretstore-iac-synth', '--variable', `CI_COMMIT_BEFORE_SHA=${head}`]);
    console.log(`  the base's own default-branch pipeline (synth: installs the dependencies into the pipeline's cache, stores its synthesis): ${basePipeline.s.toFixed(1)} s, exit ${basePipeline.code}; load ${basePipeline.load}`);
    // The merge requests' dependency cache as an earlier merge request's pipeline left it: the same lock file, the same node_modules.
    // gitlab-ci-local names it `<place in the job's cache list>_<prefix>-<digest>` (the generated jobs all list it first).
    const deps = fs.readdirSync(caches.protected).filter((entry) => entry.replace(/^\d+_/, '').startsWith(DEPENDENCY_CACHE_PREFIX));
    if (deps.length === 0) throw new Error(`the base's pipeline left no dependency cache (${DEPENDENCY_CACHE_PREFIX}*) in ${caches.protected}`);
    for (const entry of deps) fs.cpSync(path.join(caches.protected, entry), path.join(caches.unprotected, entry), { recursive: true, verbatimSymlinks: true });

    // One application more as a merge request, then merged: the idle round; with `load`, a second
    // round (one more application) beside `stress --cpu N`. The merged pipeline of a round is the
    // default-branch pipeline of the next round's base (it stores its synthesis in the cache).
    const rounds: [string, number | undefined, string[]][] = [['idle', undefined, []]];
    if (load !== undefined) rounds.push([`loaded (stress --cpu ${load})`, load, []]);
    let applications = size;
    for (const [round, cpus, roundVariables] of rounds) {
      applications += 1;
      const branch = `feature-${applications}`;
      const diffBase = git(repo, 'rev-parse', 'main');
      git(repo, 'checkout', '-q', '-b', branch);
      writeConfiguration(repo, ws, applications);
      git(repo, 'commit', '-q', '-am', `application ${applications}`);
      const iid = applications;
      gitlab.mergeRequests.set(iid, { iid, state: 'opened', target_branch: 'main', sha: git(repo, 'rev-parse', 'HEAD'), merge_commit_sha: null, squash_commit_sha: null, commits: git(repo, 'rev-list', `main..${branch}`).split('\n') });
      const stress = cpus === undefined ? undefined : spawn('stress', ['--cpu', String(cpus)], { stdio: 'ignore' });
      try {
        // Let the load average see the stress before the first figure.
        if (stress) await new Promise((resolve) => setTimeout(resolve, 20_000));
        const mr = await pipeline('plan', [...roundVariables, '--variable', 'CI_PIPELINE_SOURCE=merge_request_event', '--variable', 'CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main', '--variable', `CI_MERGE_REQUEST_IID=${iid}`, '--variable', `CI_MERGE_REQUEST_DIFF_BASE_SHA=${diffBase}`]);
        git(repo, 'checkout', '-q', 'main');
        const before = git(repo, 'rev-parse', 'main');
        git(repo, 'merge', '-q', '--ff-only', branch);
        git(repo, 'push', '-q', 'origin', 'main');
        gitlab.mergeRequests.get(iid)!.state = 'merged';
        const merged = await pipeline('apply', [...roundVariables, '--variable', `CI_COMMIT_BEFORE_SHA=${before}`]);
        const verdict = /secretstore-iac pipeline review: (the plans (give exactly|differ from)[^\n]*)/.exec(merged.output)?.[1] ?? '(no verdict in the log)';
        const added = await fetch(`${ws.store.addr}/v1/auth/approle/role/bench${applications - 1}-prod`, { headers: { 'X-Vault-Token': ws.store.rootToken } });
        console.log(`  ${round}: application ${applications} added (${applications} in all)`);
        for (const [label, p] of [['merge request (to the note)', mr], ['default branch (to applied)', merged]] as const) {
          console.log(`    ${label}: ${p.s.toFixed(1)} s, ${(p.s / pipelineTargetS(size)).toFixed(2)}x the ${pipelineTargetS(size)} s target, exit ${p.code}, ${p.timelines.length} jobs; load ${p.load}`);
          for (const line of criticalPath(p, pipelineJobGraph(fs.readFileSync(path.join(repo, '.gitlab', 'secretstore-iac.gitlab-ci.yml'), 'utf8')))) console.log(`      ${line}`);
          console.log(`      synth job's steps: ${p.synthSteps ?? '(not printed)'}; base ${p.baseFrom ?? '(not said)'}`);
          const artifacts = [...p.artifactBytes].sort((a, b) => b[1] - a[1]);
          console.log(
            `      artifacts: ${mb(artifacts.reduce((a, [, b]) => a + b, 0))} in ${artifacts.length} jobs (each job that needs one imports it: largest ${artifacts.slice(0, 3).map(([j, b]) => `${j.replace(/^secretstore-iac-/, '')} ${mb(b)}`).join(', ') || 'none'}); the pipeline's cache ${mb(p.cacheBytes)}`,
          );
          console.log(`      every job: ${p.timelines.map((t) => `${t.job.replace(/^secretstore-iac-/, '')} ${t.totalS.toFixed(1)} s`).join(', ')}`);
        }
        console.log(`    the added application's role on the store after the default branch: HTTP ${added.status}`);
        const comparisonS = merged.timelines.flatMap((t) => t.steps).find((x) => x.label.endsWith(`: ${COMPARISON_STEP}`))?.s;
        console.log(`    the default branch's comparison with !${iid}'s approved note (on its critical path, in the review job: GitLab API calls and compare): ${comparisonS === undefined ? '(no such step in the log)' : `${comparisonS.toFixed(2)} s`}; ${verdict}`);
      } finally {
        stress?.kill();
      }
    }
  } finally {
    await gitlab.stop();
    await pg.stop();
    ws.close();
  }
}
