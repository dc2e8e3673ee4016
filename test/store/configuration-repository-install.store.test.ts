/**
 * A configuration repository installed as a runner installs it (issue 37), in the three forms `init
 * --package` takes that a runner can install from a clean checkout, each with an EMPTY npm cache
 * (`npm_config_cache` a new directory; every other dependency from the npm registry), then the
 * generated pipeline run with the repository's own `npm run pipeline:local` (a pinned gitlab-ci-local
 * by npx, no dependency of the repository; every job's `npm ci` with that cache), and `git status
 * --porcelain` empty afterwards (the generated .gitignore covers every file the local run left):
 * - a tarball URL (this project packed, served by an HTTP server of the test, as a GitLab generic
 *   package or a release asset serves it): `init` by this project's CLI; the administrator's first
 *   apply with the installed CLI; the default branch's pipeline;
 * - a team's own registry (Verdaccio, a real npm registry, packages readable only with a token): the
 *   package published under the scope `@acme` with the token, `init` run by `npx` from that registry
 *   (its default spec names the scope), the repository's committed `.npmrc` with the scope's registry
 *   and `${NPM_TOKEN}`, the token a CI/CD variable of the pipeline and never printed; a merge request's
 *   pipeline (plans with the read-only role, the access diff's note);
 * - a git URL with a tag (`git daemon` serving this project's tree at `v<version>`): npm installs the
 *   checkout's dependencies and builds it (`prepare`), the installed bin works; the default branch's
 *   pipeline.
 * The three repositories hold the same configuration and share the store and the state (PostgreSQL):
 * the first applies it, the other two plan against it.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../support/paths';
import { git, glciVariables, pushToNewOrigin } from '../support/store/configuration-pipeline-harness';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { RunningNpmRegistry, startNpmRegistry } from '../support/store/npm-registry';
import { TEST_SETTINGS } from '../support/store/platform-fixture';
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { freePort, RunningStore, startStore } from '../support/store/store-server';
import { storeKind, toolchain } from '../support/store/toolchain-env';

/** The commands still running (their process groups): ended by afterAll, so that a test that timed out leaves nothing writing into its work folder. */
const runningCommands = new Set<ChildProcess>();

/** Runs a command to its end (no TF_/VAULT_/npm_ variables inherited); exit code and output. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|VAULT_|BAO_|SECRETSTORE_|npm_)/.test(k)));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    runningCommands.add(child);
    child.on('exit', () => runningCommands.delete(child));
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (process.env.SECRETSTORE_IAC_PIPELINE_LOG) fs.appendFileSync(process.env.SECRETSTORE_IAC_PIPELINE_LOG, `$ ${command} ${args.join(' ')}\n${output}\n`);
      resolve({ code: code ?? -1, output: output.replace(/\u001b\[[0-9;]*m/g, '') });
    });
  });
}

async function ok(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await run(command, args, cwd, env);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${r.code}\n${r.output}`);
  return r.output;
}

/**
 * A consumer installing the package from a registry or a tarball runs no script of ours (issue 48):
 * the installed manifest has none of the install lifecycle scripts and npm 11 printed no
 * `install-scripts` warning about it.
 */
function expectNoInstallScript(installOutput: string, repo: string): void {
  const installed = JSON.parse(fs.readFileSync(path.join(repo, 'node_modules', 'secretstore-iac', 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  expect(Object.keys(installed.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
  expect(installOutput).not.toMatch(/install-scripts|secretstore-iac@[^ ]* \(prepare/);
}

// The one list of install scripts, kept by the script that strips them when packing.
const { INSTALL_SCRIPTS } = require(path.join(REPO_ROOT, 'scripts', 'published-manifest.js')) as { INSTALL_SCRIPTS: readonly string[] };
const CLI = path.join(REPO_ROOT, 'dist', 'bin', 'secretstore-iac.js');
const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const PROJECT_ID = '4444';
const STACKS = ['ci-access', 'app-roles'];

// OpenBao suite only (installing is store-independent), reported skipped in the Vault suite.
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('a configuration repository installed from a tarball URL, a team registry and a git URL with a tag, each with an empty npm cache, runs its pipeline locally and leaves a clean tree', () => {
  let store: RunningStore;
  let pg: RunningPostgres;
  let key: JwtSigningKey;
  let work: string;
  let tarball: string;
  const stops: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'config-install-'));
    const packed = JSON.parse((await ok('npm', ['pack', '--json', '--pack-destination', work], REPO_ROOT)).replace(/^[^[]*/s, '')) as Array<{ filename: string }>;
    tarball = path.join(work, packed[0].filename);
    store = await startStore();
    pg = await startPostgres();
    key = generateSigningKey();
  });

  afterAll(async () => {
    // A test that timed out may have left npm or git running (and writing into the work folder): ended first.
    for (const child of runningCommands) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const stop of stops.reverse()) await stop();
    await store?.stop();
    await pg?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  /** npm's settings for one install: a new, empty cache. */
  function emptyNpmCache(): NodeJS.ProcessEnv {
    const env = { npm_config_cache: fs.mkdtempSync(path.join(work, 'empty-npm-cache-')), npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
    expect(fs.readdirSync(env.npm_config_cache)).toEqual([]);
    return env;
  }

  /** The repository's configuration for this store (a key pair of the test, PostgreSQL state), synthesized, committed and pushed to `origin`. */
  async function configureAndCommit(root: string, repo: string, npmEnv: NodeJS.ProcessEnv, bootstrap: boolean): Promise<void> {
    // The only dependency of the pipeline's jobs besides the library: what the synth job compiles with.
    expect(Object.keys(JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')).devDependencies).sort()).toEqual(['@types/node', 'typescript']);
    expect(fs.existsSync(path.join(repo, 'node_modules', 'gitlab-ci-local'))).toBe(false);
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), platformConfig(15));
    // The entry init writes keeps the state in PostgreSQL (PG_CONN_STR): the pipeline's jobs share it.
    expect(fs.readFileSync(path.join(repo, 'stacks', 'main.ts'), 'utf8')).toContain('postgresState()');
    await ok('npm', ['run', 'synth'], repo, npmEnv);
    fs.mkdirSync(path.join(repo, '.gitlab'));
    fs.copyFileSync(path.join(repo, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), path.join(repo, '.gitlab', 'secretstore-iac.gitlab-ci.yml'));
    if (bootstrap) {
      // The administrator's first apply with the installed CLI (the pipeline's own roles exist only afterwards).
      const tools = toolchain();
      const engineEnv = { SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: store.rootToken, PG_CONN_STR: pg.connStr, SECRETSTORE_IAC_TOFU: tools.tofu, TF_CLI_CONFIG_FILE: tools.cliConfig, SECRETSTORE_IAC_CACHE: tools.cacheDir };
      for (const stack of STACKS) {
        for (const args of [['init', '-input=false'], ['apply', '-input=false', '-auto-approve']]) await ok('npx', ['--no-install', 'secretstore-iac', 'tf', stack, '--', ...args], repo, engineEnv);
      }
    }
    for (const dir of ['cdktf.out', 'dist']) fs.rmSync(path.join(repo, dir), { recursive: true, force: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'secrets store configuration');
    pushToNewOrigin(root, repo);
  }

  function platformConfig(jobTimeoutMinutes: number): string {
    return `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(${jobTimeoutMinutes}),
  configurationProject: { projectId: '${PROJECT_ID}' },
};
`;
  }

  /** `npm run pipeline:local` of `repo` as the job token of `ref` would run it; the output, with every check of a green run done. */
  async function pipeline(root: string, repo: string, npmEnv: NodeJS.ProcessEnv, ref: { ref: string; protected: boolean }, extra: Record<string, string> = {}, secret?: string): Promise<string> {
    const tools = toolchain();
    const variables = {
      SECRETSTORE_ADDR: store.addr,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_ID_TOKEN: signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, project_path: 'acme/secrets-config', ref: ref.ref, ref_protected: String(ref.protected), ref_path: `refs/heads/${ref.ref}` }, { ciUrl: TEST_SETTINGS.ciUrl, lifetimeSeconds: 3600 })),
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
      SECRETSTORE_IAC_CACHE: tools.cacheDir,
      ...extra,
    };
    // The jobs' npm ci (the pipeline's default install) with the same cache: only what the first install put there.
    const r = await run('npm', ['run', 'pipeline:local', '--', '--no-color', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...glciVariables(variables)], repo, { ...npmEnv, HOME: root });
    expect(r.output).toContain('json schema validated');
    expect(r.output).not.toContain(store.rootToken);
    if (secret) expect(r.output).not.toContain(secret);
    expect(r.code).toBe(0);
    // Everything the local run left is ignored (the lock files and package-lock.json were committed).
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    return r.output;
  }

  it('a tarball URL: npm install, npm run synth, the default branch\'s pipeline green; git status clean', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === `/${path.basename(tarball)}`) fs.createReadStream(tarball).pipe(res.writeHead(200, { 'content-type': 'application/octet-stream' }));
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    stops.push(() => new Promise((r) => server.close(r)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${path.basename(tarball)}`;
    const npmEnv = emptyNpmCache();
    const root = path.join(work, 'tarball');
    fs.mkdirSync(root);
    const init = await ok(process.execPath, [CLI, 'init', 'secrets-config', '--package', url], root);
    expect(init).not.toContain('note:');
    const repo = path.join(root, 'secrets-config');
    expectNoInstallScript(await ok('npm', ['install'], repo, npmEnv), repo);
    await configureAndCommit(root, repo, npmEnv, true);
    const out = await pipeline(root, repo, npmEnv, { ref: 'main', protected: true }, { CI_COMMIT_BEFORE_SHA: '0'.repeat(40) });
    for (const stack of STACKS) expect(out).toMatch(new RegExp(`secretstore-iac-apply-${stack}\\s+finished in`));
  });

  it('a team registry: published under @acme with a token, init from it, .npmrc with ${NPM_TOKEN}; a merge request\'s pipeline green, the token never printed; git status clean', async () => {
    const registry: RunningNpmRegistry = await startNpmRegistry(path.join(work, 'verdaccio'));
    stops.push(() => registry.stop());
    const host = registry.url.replace(/^https?:/, '');
    // What a team's .npmrc holds (docs/configuration-repository.md §0): the scope's registry and the
    // token by reference, which npm reads from the environment (a masked CI/CD variable in a pipeline).
    const npmrc = `@acme:registry=${registry.url}\n${host}:_authToken=\${NPM_TOKEN}\n`;
    const tokenEnv = { NPM_TOKEN: registry.token };

    // Published as docs/configuration-repository.md §0 says (under the scope, with the token); the
    // content is the packed tarball's (a checkout at the tag would build the same with prepack).
    const publish = path.join(work, 'publish');
    fs.mkdirSync(publish);
    await ok('tar', ['-xzf', tarball, '-C', publish], work);
    const pkg = path.join(publish, 'package');
    fs.writeFileSync(path.join(pkg, '.npmrc'), npmrc);
    await ok('npm', ['pkg', 'set', 'name=@acme/secretstore-iac'], pkg);
    const published = await ok('npm', ['publish', '--ignore-scripts', '--registry', registry.url], pkg, { ...emptyNpmCache(), ...tokenEnv });
    expect(published).toContain(`@acme/secretstore-iac@${VERSION}`);
    expect(published).not.toContain(registry.token);
    // Without the token the registry serves nothing: the jobs' installs below use it.
    const anonymous = await fetch(`${registry.url}@acme%2fsecretstore-iac`);
    expect(anonymous.status).toBe(401);

    const npmEnv = { ...emptyNpmCache(), ...tokenEnv };
    const root = path.join(work, 'registry');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, '.npmrc'), npmrc);
    // init as the docs run it: by npx, from the team's registry (its default spec names the scope).
    const init = await ok('npx', ['--yes', `--package=@acme/secretstore-iac@${VERSION}`, '--', 'secretstore-iac', 'init', 'secrets-config'], root, npmEnv);
    expect(init).toContain(`depending on secretstore-iac npm:@acme/secretstore-iac@^${VERSION} in secrets-config`);
    const repo = path.join(root, 'secrets-config');
    expect(JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')).dependencies).toEqual({ 'secretstore-iac': `npm:@acme/secretstore-iac@^${VERSION}` });
    fs.writeFileSync(path.join(repo, '.npmrc'), npmrc);
    expectNoInstallScript(await ok('npm', ['install'], repo, npmEnv), repo);
    // Installed from the registry under the name the configuration imports (npm takes the tarball
    // from the scope's registry in .npmrc: a lock file may record the URL or, with
    // omit-lockfile-registry-resolved, only the integrity); no token in the lock file.
    const lock = fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8');
    expect(JSON.parse(lock).packages['node_modules/secretstore-iac']).toMatchObject({ name: '@acme/secretstore-iac', version: VERSION });
    expect(lock).not.toContain(registry.token);
    await configureAndCommit(root, repo, npmEnv, false);

    // A merge request that raises the job timeout (a TTL raised: one risk flag, acknowledged by the label).
    git(repo, 'checkout', '-q', '-b', 'feature');
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), platformConfig(20));
    git(repo, 'commit', '-q', '-am', 'longer CI jobs');
    // The token as a CI/CD variable: gitlab-ci-local's variables file (ignored by git; a command-line
    // variable would be in npm's echo of the script); none in the environment of the run itself.
    fs.writeFileSync(path.join(repo, '.gitlab-ci-local-variables.yml'), `NPM_TOKEN: ${JSON.stringify(registry.token)}\n`);
    const out = await pipeline(
      root,
      repo,
      // A new empty cache: the synth job's npm ci takes the package from the registry, with the token.
      { ...emptyNpmCache(), NPM_TOKEN: '' },
      { ref: 'feature', protected: false },
      { CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main', CI_MERGE_REQUEST_IID: '7', CI_MERGE_REQUEST_LABELS: 'access-risk-acknowledged' },
      registry.token,
    );
    expect(out).toMatch(/secretstore-iac-synth\s+> added \d+ packages/);
    expect(out).toMatch(/secretstore-iac-plan-ci-access\s+finished in/);
    expect(out).toMatch(/Plan: 0 to add, 3 to change, 0 to destroy/);
    expect(out).toMatch(/risk flag\(s\) acknowledged by the label access-risk-acknowledged/);
    expect(out).not.toMatch(/secretstore-iac-apply-/);
  });

  it('a git URL with a tag: npm clones, installs and builds the checkout (prepare), the bin works; the default branch\'s pipeline green; git status clean', async () => {
    // This project's tree (tracked and new files, as the working tree has them) committed and tagged v<version>, served by git daemon.
    const src = path.join(work, 'library-src');
    const listed = git(REPO_ROOT, 'ls-files', '-z', '-c', '-o', '--exclude-standard').split('\0').filter((f) => f !== '');
    for (const file of listed) {
      const from = path.join(REPO_ROOT, file);
      if (!fs.existsSync(from) || fs.lstatSync(from).isDirectory()) continue;
      fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
      fs.copyFileSync(from, path.join(src, file));
    }
    git(src, 'init', '-q', '-b', 'main');
    git(src, 'add', '.');
    git(src, 'commit', '-q', '-m', `secretstore-iac ${VERSION}`);
    git(src, 'tag', `v${VERSION}`);
    const served = path.join(work, 'git-served');
    fs.mkdirSync(served);
    git(served, 'clone', '-q', '--bare', src, 'secretstore-iac.git');
    const port = await freePort();
    const daemon: ChildProcess = spawn('git', ['daemon', '--reuseaddr', '--listen=127.0.0.1', `--port=${port}`, `--base-path=${served}`, '--export-all', served], { stdio: 'ignore' });
    stops.push(() => new Promise((r) => (daemon.exitCode !== null ? r(undefined) : (daemon.once('exit', r), daemon.kill('SIGTERM')))));
    const url = `git://127.0.0.1:${port}/secretstore-iac.git`;
    for (let attempt = 0; (await run('git', ['ls-remote', url, `v${VERSION}`], work)).code !== 0; attempt++) {
      if (attempt >= 300) throw new Error(`git daemon does not serve ${url}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    const npmEnv = emptyNpmCache();
    const root = path.join(work, 'git');
    fs.mkdirSync(root);
    const spec = `${url}#v${VERSION}`;
    const init = await ok(process.execPath, [CLI, 'init', 'secrets-config', '--package', spec], root);
    expect(init).not.toContain('note:');
    const repo = path.join(root, 'secrets-config');
    await ok('npm', ['install'], repo, npmEnv);
    // The checkout was built by its prepare script (dist/ is in no commit): the library and its bin are there.
    expect(fs.existsSync(path.join(repo, 'node_modules', 'secretstore-iac', 'dist', 'lib', 'index.js'))).toBe(true);
    expect(await ok('npx', ['--no-install', 'secretstore-iac', 'help', 'init'], repo)).toContain('Usage: secretstore-iac init');
    expect(JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8')).packages['node_modules/secretstore-iac'].resolved).toMatch(new RegExp(`^git://127\\.0\\.0\\.1:${port}/secretstore-iac\\.git#[0-9a-f]{40}$`));
    await configureAndCommit(root, repo, npmEnv, false);
    const out = await pipeline(root, repo, npmEnv, { ref: 'main', protected: true }, { CI_COMMIT_BEFORE_SHA: '0'.repeat(40) });
    for (const stack of STACKS) expect(out).toMatch(new RegExp(`secretstore-iac-apply-${stack}\\s+finished in`));
  });
});
