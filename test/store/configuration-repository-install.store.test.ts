/**
 * A configuration repository installed as a runner installs it (issue 37): this project packed, the
 * tarball served by an HTTP server of the test (a tarball URL, as a GitLab generic package or a
 * release asset serves it: a runner fetches it by URL, which works from any checkout, unlike a
 * `file:` path; a git URL would make npm build the package from source on every install), `init
 * --package <URL>`, `npm install` and every job's `npm ci` with an EMPTY npm cache
 * (`npm_config_cache` a new directory; dependencies from the npm registry), then the generated
 * pipeline run with the repository's own `npm run pipeline:local` (gitlab-ci-local, its
 * devDependency). Afterwards `git status --porcelain` is empty: the generated .gitignore covers
 * every file the local run left.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../support/paths';
import { git, glciVariables, pushToNewOrigin } from '../support/store/configuration-pipeline-harness';
import { generateSigningKey, gitlabJobClaims, signJwt } from '../support/store/jwt-signer';
import { TEST_SETTINGS } from '../support/store/platform-fixture';
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore } from '../support/store/store-server';
import { storeKind, toolchain } from '../support/store/toolchain-env';

/** Runs a command to its end (no TF_/VAULT_/npm_ variables inherited); exit code and output. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|VAULT_|BAO_|SECRETSTORE_|npm_)/.test(k)));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, output: output.replace(/\u001b\[[0-9;]*m/g, '') }));
  });
}

async function ok(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await run(command, args, cwd, env);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${r.code}\n${r.output}`);
  return r.output;
}

// OpenBao suite only (installing is store-independent), reported skipped in the Vault suite.
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('a configuration repository installed from a tarball URL with an empty npm cache runs its pipeline locally and leaves a clean tree', () => {
  let store: RunningStore | undefined;
  let pg: RunningPostgres | undefined;
  let server: http.Server | undefined;
  let work: string;

  afterAll(async () => {
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    await store?.stop();
    await pg?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('npm install, npm run synth, npm run pipeline:local green; git status clean', async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'config-install-'));
    const packed = JSON.parse((await ok('npm', ['pack', '--json', '--pack-destination', work], REPO_ROOT)).replace(/^[^[]*/s, '')) as Array<{ filename: string }>;
    const tarball = path.join(work, packed[0].filename);
    server = http.createServer((req, res) => {
      if (req.url === `/${packed[0].filename}`) fs.createReadStream(tarball).pipe(res.writeHead(200, { 'content-type': 'application/octet-stream' }));
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${packed[0].filename}`;
    const npmEnv = { npm_config_cache: fs.mkdtempSync(path.join(work, 'empty-npm-cache-')), npm_config_audit: 'false', npm_config_fund: 'false' };
    expect(fs.readdirSync(npmEnv.npm_config_cache)).toEqual([]);

    const root = path.join(work, 'pipeline');
    fs.mkdirSync(root);
    const init = await ok(process.execPath, [path.join(REPO_ROOT, 'dist', 'bin', 'secretstore-iac.js'), 'init', 'secrets-config', '--package', url], root);
    expect(init).not.toContain('note:');
    const repo = path.join(root, 'secrets-config');
    await ok('npm', ['install'], repo, npmEnv);
    expect(fs.existsSync(path.join(repo, 'node_modules', '.bin', 'gitlab-ci-local'))).toBe(true);

    store = await startStore();
    pg = await startPostgres();
    const key = generateSigningKey();
    const PROJECT_ID = '4444';
    fs.writeFileSync(
      path.join(repo, 'stacks', 'platform.config.ts'),
      `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(15),
  configurationProject: { projectId: '${PROJECT_ID}' },
};
`,
    );
    const main = path.join(repo, 'stacks', 'main.ts');
    const entry = fs.readFileSync(main, 'utf8');
    if (!entry.includes('postgresState')) {
      fs.writeFileSync(main, entry.replace('import { definePlatform, ', 'import { definePlatform, postgresState, ').replace(/definePlatform\((\w+), platformConfig\)/, 'definePlatform($1, platformConfig, postgresState())'));
    }
    await ok('npm', ['run', 'synth'], repo, npmEnv);
    fs.mkdirSync(path.join(repo, '.gitlab'));
    fs.copyFileSync(path.join(repo, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), path.join(repo, '.gitlab', 'secretstore-iac.gitlab-ci.yml'));
    const tools = toolchain();
    const engineEnv = { SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: store.rootToken, PG_CONN_STR: pg.connStr, SECRETSTORE_IAC_TOFU: tools.tofu, TF_CLI_CONFIG_FILE: tools.cliConfig };
    // The administrator's first apply with the installed CLI (the pipeline's own roles exist only afterwards).
    for (const stack of ['ci-access', 'app-roles']) {
      for (const args of [['init', '-input=false'], ['apply', '-input=false', '-auto-approve']]) await ok('npx', ['--no-install', 'secretstore-iac', 'tf', stack, '--', ...args], repo, engineEnv);
    }
    for (const dir of ['cdktf.out', 'dist']) fs.rmSync(path.join(repo, dir), { recursive: true, force: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'secrets store configuration');
    pushToNewOrigin(root, repo);

    const variables = {
      SECRETSTORE_ADDR: store.addr,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_ID_TOKEN: signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, project_path: 'acme/secrets-config', ref: 'main', ref_protected: 'true' }, { ciUrl: TEST_SETTINGS.ciUrl, lifetimeSeconds: 3600 })),
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      CI_COMMIT_BEFORE_SHA: '0'.repeat(40),
    };
    // The jobs' npm ci (the pipeline's default install) with the same cache: only what the first install put there.
    const pipeline = await run('npm', ['run', 'pipeline:local', '--', '--no-color', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...glciVariables(variables)], repo, { ...npmEnv, HOME: root });
    if (process.env.SECRETSTORE_IAC_PIPELINE_LOG) fs.appendFileSync(process.env.SECRETSTORE_IAC_PIPELINE_LOG, pipeline.output);
    expect(pipeline.output).toContain('json schema validated');
    for (const stack of ['ci-access', 'app-roles']) expect(pipeline.output).toMatch(new RegExp(`secretstore-iac-apply-${stack}\\s+finished in`));
    expect(pipeline.output).not.toContain(store.rootToken);
    expect(pipeline.code).toBe(0);
    // Everything the local run left is ignored (the lock files and package-lock.json were committed above).
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  }, 1_500_000);
});
