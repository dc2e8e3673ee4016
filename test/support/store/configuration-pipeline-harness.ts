/**
 * What the gitlab-ci-local tests of the configuration pipeline share: a configuration repository made
 * from this project's library, bin and stacks (with a remote `origin`), its first synthesis and the
 * committed copy of the pipeline file, the administrator's bootstrap of its stacks, and runs of
 * gitlab-ci-local (shell executor, artifacts isolated per job) with the job token and variables.
 */
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from '../paths';
import { gitlabJobClaims, JwtSigningKey, signJwt } from './jwt-signer';
import { TEST_SETTINGS } from './platform-fixture';

/** The gitlab-ci-local of this project's devDependencies. */
export const GLCI = path.join(REPO_ROOT, 'node_modules', '.bin', 'gitlab-ci-local');
/**
 * What one job printed in a gitlab-ci-local log, in order, without its prefix: gitlab-ci-local prints
 * the lines of jobs that run at the same time as they come, each after its job's name and `> `.
 */
export function jobLines(log: string, job: string): string[] {
  const prefix = new RegExp(`^${job.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+> ?(.*)$`);
  return log.split('\n').flatMap((line) => prefix.exec(line)?.[1] ?? []);
}

/** The project ID of the configuration project the pipeline roles are bound to. */
export const PROJECT_ID = '4242';

/** A finished command: exit code, and standard output and error together without colours. */
export interface CollectedRun {
  readonly code: number;
  readonly output: string;
}

/**
 * Runs a command to its end, output collected (gitlab-ci-local streams every job's log). With
 * SECRETSTORE_IAC_PIPELINE_LOG set, the whole log is appended there (jest shows only the start of a
 * long string in a failing assertion).
 */
export function runCollected(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CollectedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (process.env.SECRETSTORE_IAC_PIPELINE_LOG) fs.appendFileSync(process.env.SECRETSTORE_IAC_PIPELINE_LOG, `$ ${args.join(' ')}\n${output}\n`);
      // Without the engine's colours, for the assertions.
      resolve({ code: code ?? -1, output: output.replace(/\u001b\[[0-9;]*m/g, '') });
    });
  });
}

/** Runs git in `cwd` as a test committer; its trimmed output. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim();
}

/** gitlab-ci-local's `--variable K=V` arguments. */
export function glciVariables(vars: Readonly<Record<string, string>>): string[] {
  return Object.entries(vars).flatMap(([k, v]) => ['--variable', `${k}=${v}`]);
}

/** A job's ID token for the configuration project, signed with the key the store's JWT method trusts (gitlab-ci-local mints none). */
export function pipelineJobToken(key: JwtSigningKey, claims: Record<string, unknown>): string {
  return signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, project_path: 'acme/secretstore-config', ...claims }, { ciUrl: TEST_SETTINGS.ciUrl, lifetimeSeconds: 3600 }));
}

/** Runs gitlab-ci-local in `repo` (shell isolation, schema validation, no colours) with `variables` and `extra` arguments. */
export function gitlabCiLocal(repo: string, home: string, args: string[], variables: Readonly<Record<string, string>>, extra: string[] = []): Promise<CollectedRun> {
  return runCollected(GLCI, [...args, '--shell-isolation', '--no-color', '--json-schema-validation', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...glciVariables(variables), ...extra], repo, { HOME: home });
}

/** The entries of this project a configuration repository made from it holds (the library is its own package). */
const LIBRARY_ENTRIES = ['lib', 'bin', 'stacks', 'scripts', 'package.json', 'tsconfig.json', 'cdktf.json'];

/** Makes `repo` a configuration repository from this project's library, bin and stacks, with this project's node_modules linked and `.gitignore`. */
export function copyLibraryInto(repo: string, gitignore: readonly string[] = ['node_modules', 'dist', 'cdktf.out', '.gitlab-ci-local']): void {
  fs.mkdirSync(repo, { recursive: true });
  for (const entry of LIBRARY_ENTRIES) fs.cpSync(path.join(REPO_ROOT, entry), path.join(repo, entry), { recursive: true });
  fs.writeFileSync(path.join(repo, '.gitignore'), `${gitignore.join('\n')}\n`);
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(repo, 'node_modules'), 'dir');
}

/** Synthesizes the repository as it is (build, then its stacks), as its `npm run synth` does. */
export function synthesizeRepository(repo: string): void {
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: repo, stdio: 'pipe' });
  execFileSync(process.execPath, ['scripts/copy-assets.js'], { cwd: repo, stdio: 'pipe' });
  execFileSync(process.execPath, ['dist/stacks/main.js'], { cwd: repo, stdio: 'pipe' });
}

/** Copies the pipeline file the last synthesis wrote to the repository's committed copy (`.gitlab/`). */
export function copyPipelineFile(repo: string): void {
  fs.mkdirSync(path.join(repo, '.gitlab'), { recursive: true });
  fs.copyFileSync(path.join(repo, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), path.join(repo, '.gitlab', 'secretstore-iac.gitlab-ci.yml'));
}

/** Removes what a synthesis built (`cdktf.out`, `dist`): the jobs build their own. */
export function removeBuild(repo: string): void {
  for (const dir of ['cdktf.out', 'dist']) fs.rmSync(path.join(repo, dir), { recursive: true, force: true });
}

/** Commits everything in `repo` as the first commit of `main`, pushed to a bare `origin.git` in `root` (the merge requests' target). */
export function commitWithOrigin(root: string, repo: string, message: string): void {
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', message);
  pushToNewOrigin(root, repo);
}

/** Pushes `main` of `repo` to a new bare repository `origin.git` in `root`, its `origin` (whose HEAD is `main`). */
export function pushToNewOrigin(root: string, repo: string): void {
  git(root, 'init', '-q', '--bare', '-b', 'main', 'origin.git');
  git(repo, 'remote', 'add', 'origin', path.join(root, 'origin.git'));
  git(repo, 'push', '-q', 'origin', 'main');
  git(repo, 'remote', 'set-head', 'origin', 'main');
}

/**
 * The administrator's first apply of `stacks` (the pipeline's own roles exist only afterwards), with
 * the repository's built CLI and `env` (a privileged token, the state's connection string, the engine).
 * @throws Error with the engine's output when a step fails
 */
export async function bootstrapStacks(repo: string, stacks: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  for (const stack of stacks) {
    for (const args of [['init', '-input=false'], ['apply', '-input=false', '-auto-approve']]) {
      const r = await runCollected(process.execPath, ['dist/bin/secretstore-iac.js', 'tf', stack, '--', ...args], repo, env);
      if (r.code !== 0) throw new Error(`bootstrap ${stack} ${args[0]} failed:\n${r.output}`);
    }
  }
}
