/**
 * A configuration repository as an organisation keeps it (issue 28), against a real store: this
 * project packed (`npm pack`, which builds it), `secretstore-iac init` writing a repository that
 * depends on the tarball, `npm install` there, `npm run synth`, and both stacks applied with the
 * installed CLI (`npx secretstore-iac tf`). The provider lock files land in `locks/<stack>/`, where
 * they are committed, and a later init uses them. Then an upgrade of the library: a second version
 * packed with one changed default (the AppRole token TTL), installed into the same repository, and
 * `secretstore-iac access-diff` between the two syntheses shows that change and nothing else. Last,
 * a second repository with its state in PostgreSQL runs its generated pipeline under gitlab-ci-local,
 * green on the first run, every job using the committed lock files.
 *
 * npm installs from its cache where it can (`--prefer-offline`); the registry is used for what the
 * cache lacks.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../support/paths';
import { git, GLCI, glciVariables, pushToNewOrigin } from '../support/store/configuration-pipeline-harness';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { jwtLogin, TEST_SETTINGS } from '../support/store/platform-fixture';
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind, toolchain } from '../support/store/toolchain-env';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end, output collected; the variables the engine and npm must not inherit are
 * dropped, and so are a CI runner's own (`CI`, `GITLAB_CI`, `CI_*`): these commands stand for a person's
 * checkout, where the tool says to commit the lock it kept (a CI job is told it is not committed).
 */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|VAULT_|BAO_|SECRETSTORE_|npm_|CI_|GITLAB_)/.test(k) && k !== 'CI'));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Runs a command that must succeed; its output on failure. */
async function ok(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const r = await run(command, args, cwd, env);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r;
}

/** `npm pack` of the project at `dir` (prepack builds it) into `destination`; the tarball's path. */
async function pack(dir: string, destination: string): Promise<string> {
  const r = await ok('npm', ['pack', '--json', '--pack-destination', destination], dir);
  const [packed] = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as Array<{ filename: string }>;
  return path.join(destination, packed.filename);
}

// OpenBao suite only, reported skipped in the Vault suite: packing, init and npm install are store-independent, and the run takes 4-6 minutes per store (docs/store-tests.md).
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('a configuration repository: npm pack, secretstore-iac init, npm install, synthesize, apply (OpenBao suite only)', () => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let work: string;
  let repo: string;
  let tarball: string;

  /** The test's settings and key in place of the example's (whose OIDC discovery key source a local store cannot reach). */
  const configSource = (projectId = '4242') => `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(15),
  configurationProject: { projectId: '${projectId}' },
};
`;

  /** The state of the first repository (its stacks/main.ts, as init wrote it, keeps it in PostgreSQL). */
  let statePg: RunningPostgres;
  /** `npx secretstore-iac tf STACK -- ARGS` in the repository, with the installed CLI, as its README says. */
  const tf = (stack: string, ...args: string[]) => tfIn(repo, { PG_CONN_STR: statePg.connStr }, stack, ...args);
  const tfIn = (dir: string, env: NodeJS.ProcessEnv, stack: string, ...args: string[]) => {
    const tools = toolchain();
    return run('npx', ['--no-install', 'secretstore-iac', 'tf', stack, '--', ...args], dir, {
      SECRETSTORE_ADDR: store.addr,
      VAULT_TOKEN: store.rootToken,
      // The toolchain's engine and its provider mirror (the provider is built from source: docs/toolchain.md).
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
      SECRETSTORE_IAC_CACHE: tools.cacheDir,
      TF_IN_AUTOMATION: '1',
      ...env,
    });
  };

  beforeAll(async () => {
    store = await startStore();
    statePg = await startPostgres();
    key = generateSigningKey();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'config-repo-'));
    tarball = await pack(REPO_ROOT, work);
    // The CLI that was just packed (prepack built dist/).
    const init = await ok(process.execPath, [path.join(REPO_ROOT, 'dist', 'bin', 'secretstore-iac.js'), 'init', 'secrets-config', '--package', `file:${tarball}`], work);
    expect(init.stdout).toContain('secretstore-iac init: wrote a configuration repository');
    repo = path.join(work, 'secrets-config');
    await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], repo);
  });

  afterAll(async () => {
    await store?.stop();
    await statePg?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('the repository starts from the configuration this project ships, and installs the packed library with its bin', () => {
    expect(fs.readFileSync(path.join(repo, 'stacks', 'platform.config.ts'), 'utf8')).toBe(fs.readFileSync(path.join(REPO_ROOT, 'stacks', 'platform.config.ts'), 'utf8'));
    const installed = JSON.parse(fs.readFileSync(path.join(repo, 'node_modules', 'secretstore-iac', 'package.json'), 'utf8'));
    expect(installed.version).toBe(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version);
    expect(fs.existsSync(path.join(repo, 'node_modules', '.bin', 'secretstore-iac'))).toBe(true);
    // Only the package: no sources of this project but the configuration template.
    expect(fs.existsSync(path.join(repo, 'node_modules', 'secretstore-iac', 'lib'))).toBe(false);
  });

  it('npm run synth writes both stacks and the pipeline that .gitlab-ci.yml includes', async () => {
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource());
    const synth = await ok('npm', ['run', 'synth'], repo);
    expect(synth.stdout).toContain('synthesized cdktf.out/stacks/{app-roles,ci-access}/cdk.tf.json');
    const include = /- local: "([^"]+)"/.exec(fs.readFileSync(path.join(repo, '.gitlab-ci.yml'), 'utf8'))?.[1];
    expect(fs.readFileSync(path.join(repo, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8')).toContain(`#     - local: ${include}`);
  });

  it('npx secretstore-iac tf applies both stacks to the store; init keeps each stack\'s lock file in locks/<stack>/ and says to commit it', async () => {
    for (const stack of ['ci-access', 'app-roles']) {
      const init = await tf(stack, 'init', '-input=false', '-no-color');
      expect(init.code).toBe(0);
      expect(init.stdout).toContain('has been successfully initialized');
      // The first init writes its lock, and the other stack's from it (the same provider build); the second init finds it committed.
      if (stack === 'ci-access') {
        expect(init.stderr).toContain('secretstore-iac tf: the engine wrote the provider lock file: copied to locks/ci-access/.terraform.lock.hcl; commit it');
        expect(init.stderr).toContain('secretstore-iac tf: wrote locks/app-roles/.terraform.lock.hcl from this stack\'s provider lock (the same provider builds); commit it');
      } else expect(init.stderr).not.toContain('commit it');
      const lock = fs.readFileSync(path.join(repo, 'locks', stack, '.terraform.lock.hcl'), 'utf8');
      expect(lock).toMatch(/provider "registry\.[a-z.]+\/hashicorp\/vault"/);
      expect(lock).toBe(fs.readFileSync(path.join(repo, 'cdktf.out', 'stacks', stack, '.terraform.lock.hcl'), 'utf8'));
      const apply = await tf(stack, 'apply', '-input=false', '-auto-approve', '-no-color');
      expect(apply.code).toBe(0);
      expect(apply.stdout).toMatch(/Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
      expect(apply.stderr).not.toContain('commit it');
      expect(apply.stdout + apply.stderr).not.toContain(store.rootToken);
    }
    // What was applied works: a CI job of the configured organisation logs in as registry-ci.
    const job = signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }));
    expect((await jwtLogin(store, 'registry-ci', job)).status).toBe(200);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/orchestrator-dev')).status).toBe(200);
  });

  it('another checkout (no .terraform, no lock in the output): init takes the committed lock and changes nothing; the plan is empty', async () => {
    const stackDir = path.join(repo, 'cdktf.out', 'stacks', 'ci-access');
    const committed = fs.readFileSync(path.join(repo, 'locks', 'ci-access', '.terraform.lock.hcl'), 'utf8');
    fs.rmSync(path.join(stackDir, '.terraform'), { recursive: true, force: true });
    fs.rmSync(path.join(stackDir, '.terraform.lock.hcl'));
    const init = await tf('ci-access', 'init', '-input=false', '-no-color');
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/Reusing previous version of hashicorp\/vault from the dependency lock file/);
    expect(init.stderr).not.toContain('commit it');
    expect(fs.readFileSync(path.join(repo, 'locks', 'ci-access', '.terraform.lock.hcl'), 'utf8')).toBe(committed);
    const plan = await tf('ci-access', 'plan', '-input=false', '-no-color', '-detailed-exitcode');
    expect(plan.stdout).toContain('No changes.');
    expect(plan.code).toBe(0);
  });

  it('an upgrade of the library is reviewed as an access change: access-diff between the two syntheses shows exactly what the new version changes', async () => {
    // The next version: this project with one default changed (an application's token TTL, 12h to 16h).
    const next = path.join(work, 'next-version');
    fs.mkdirSync(next);
    for (const entry of ['lib', 'bin', 'stacks', 'scripts', 'package.json', 'tsconfig.json', 'README.md', 'RULES.md', 'CHANGELOG.md']) {
      fs.cpSync(path.join(REPO_ROOT, entry), path.join(next, entry), { recursive: true });
    }
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(next, 'node_modules'), 'dir');
    const application = path.join(next, 'lib', 'constructs', 'approle-application.ts');
    const source = fs.readFileSync(application, 'utf8');
    expect(source).toContain("checked.value('tokenTtl', Duration.hours(12))");
    fs.writeFileSync(application, source.replace("checked.value('tokenTtl', Duration.hours(12))", "checked.value('tokenTtl', Duration.hours(16))"));
    const manifest = JSON.parse(fs.readFileSync(path.join(next, 'package.json'), 'utf8'));
    const nextVersion = manifest.version.replace(/\d+$/, (patch: string) => String(Number(patch) + 1));
    fs.writeFileSync(path.join(next, 'package.json'), JSON.stringify({ ...manifest, version: nextVersion }, null, 2));
    const nextTarball = await pack(next, work);

    // The configuration stays as it is; only the library changes.
    fs.cpSync(path.join(repo, 'cdktf.out'), path.join(repo, 'cdktf.out.before'), { recursive: true });
    await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `file:${nextTarball}`], repo);
    expect(JSON.parse(fs.readFileSync(path.join(repo, 'node_modules', 'secretstore-iac', 'package.json'), 'utf8')).version).toBe(nextVersion);
    await ok('npm', ['run', 'synth'], repo);

    const diff = await run('npx', ['--no-install', 'secretstore-iac', 'access-diff', 'cdktf.out.before', 'cdktf.out', '--format', 'json'], repo);
    expect(diff.code).toBe(1);
    const report = JSON.parse(diff.stdout);
    expect(report.added).toEqual([]);
    expect(report.removed).toEqual([]);
    // Every application's role, and only the token TTL: 12h (43200 s) to 16h (57600 s).
    const changed = report.changed.map((c: { name: string; rules: unknown[]; bindings: unknown[] }) => ({ name: c.name, rules: c.rules, bindings: c.bindings }));
    const names = changed.map((c: { name: string }) => c.name);
    expect(names).toEqual(expect.arrayContaining(['approle/orchestrator-dev', 'approle/authentik-role', 'approle/gitlab-role', 'approle/registry']));
    expect(names.every((n: string) => n.startsWith('approle/'))).toBe(true);
    for (const c of changed) {
      expect(c.rules).toEqual([]);
      expect(c.bindings).toEqual([{ field: 'token_ttl', before: 43200, after: 57600 }]);
    }
    expect(report.flags.length).toBeGreaterThan(0);
    for (const flag of report.flags) expect(flag.message).toContain('token_ttl');

    // The Markdown a reviewer reads says the same.
    const markdown = await run('npx', ['--no-install', 'secretstore-iac', 'access-diff', 'cdktf.out.before', 'cdktf.out'], repo);
    expect(markdown.code).toBe(1);
    expect(markdown.stdout).toMatch(/TTL raised/);
    // And the store would change the same: app-roles plans the four TTLs, ci-access nothing.
    const plan = await tf('app-roles', 'plan', '-input=false', '-no-color', '-detailed-exitcode');
    expect(plan.stdout).toMatch(/Plan: 0 to add, 4 to change, 0 to destroy/);
    expect(plan.code).toBe(2);
  });

  it('its generated pipeline runs green under gitlab-ci-local on the first run (state in PostgreSQL)', async () => {
    let pg: RunningPostgres | undefined;
    // A store of its own: the first repository's objects are on the other one.
    let fresh: RunningStore | undefined;
    try {
      pg = await startPostgres();
      fresh = await startStore();
      const storeEnv = { SECRETSTORE_ADDR: fresh.addr, VAULT_TOKEN: fresh.rootToken };
      const PROJECT_ID = '4343';
      const glciRoot = path.join(work, 'pipeline');
      fs.mkdirSync(glciRoot);
      const config = path.join(glciRoot, 'secrets-config');
      await ok(process.execPath, [path.join(REPO_ROOT, 'dist', 'bin', 'secretstore-iac.js'), 'init', 'secrets-config', '--package', `file:${tarball}`], glciRoot);
      await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], config);
      // A team's repository: the test's settings, and the state in PostgreSQL (postgresState(), as docs/configuration-repository.md says).
      fs.writeFileSync(path.join(config, 'stacks', 'platform.config.ts'), configSource(PROJECT_ID));
      const main = path.join(config, 'stacks', 'main.ts');
      expect(fs.readFileSync(main, 'utf8')).toContain('definePlatform(a, platformConfig, postgresState())');
      // The README's steps: synthesize, commit the pipeline's copy.
      await ok('npm', ['run', 'synth'], config);
      fs.mkdirSync(path.join(config, '.gitlab'));
      fs.copyFileSync(path.join(config, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), path.join(config, '.gitlab', 'secretstore-iac.gitlab-ci.yml'));
      // The first apply, by an administrator: the pipeline's own roles exist only afterwards. Its lock files are committed.
      for (const stack of ['ci-access', 'app-roles']) {
        for (const args of [['init', '-input=false', '-no-color'], ['apply', '-input=false', '-auto-approve', '-no-color']]) {
          const r = await tfIn(config, { ...storeEnv, PG_CONN_STR: pg.connStr }, stack, ...args);
          if (r.code !== 0) throw new Error(`bootstrap ${stack} ${args[0]} failed:\n${r.stdout}\n${r.stderr}`);
        }
      }
      expect(fs.readdirSync(path.join(config, 'locks')).sort()).toEqual(['app-roles', 'ci-access']);
      fs.rmSync(path.join(config, 'cdktf.out'), { recursive: true, force: true });
      fs.rmSync(path.join(config, 'dist'), { recursive: true, force: true });
      git(config, 'init', '-q', '-b', 'main');
      git(config, 'add', '.');
      expect(git(config, 'status', '--porcelain')).toContain('locks/ci-access/.terraform.lock.hcl');
      expect(git(config, 'status', '--porcelain')).toContain('package-lock.json');
      git(config, 'commit', '-q', '-m', 'secrets store configuration');
      pushToNewOrigin(glciRoot, config);

      const tools = toolchain();
      const variables: Record<string, string> = {
        SECRETSTORE_ADDR: fresh.addr,
        PG_CONN_STR: pg.connStr,
        SECRETSTORE_ID_TOKEN: signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, project_path: 'acme/secrets-config', ref: 'main', ref_protected: 'true' }, { ciUrl: TEST_SETTINGS.ciUrl, lifetimeSeconds: 3600 })),
        // Each job's copy of the repository gets the dependencies npm installed (npm ci would resolve the tarball's relative path from the copy).
        SECRETSTORE_IAC_INSTALL: `ln -sfn ${path.join(config, 'node_modules')} node_modules`,
        SECRETSTORE_IAC_TOFU: tools.tofu,
        TF_CLI_CONFIG_FILE: tools.cliConfig,
        // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
        SECRETSTORE_IAC_CACHE: tools.cacheDir,
        // A first push: no previous commit, every stack is planned.
        CI_COMMIT_BEFORE_SHA: '0'.repeat(40),
      };
      const pipeline = await run(
        GLCI,
        ['--shell-isolation', '--no-color', '--json-schema-validation', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...glciVariables(variables)],
        config,
        { HOME: glciRoot },
      );
      const out = (pipeline.stdout + pipeline.stderr).replace(/\u001b\[[0-9;]*m/g, '');
      if (process.env.SECRETSTORE_IAC_PIPELINE_LOG) fs.appendFileSync(process.env.SECRETSTORE_IAC_PIPELINE_LOG, out);
      expect(out).toContain('json schema validated');
      for (const stack of ['ci-access', 'app-roles']) {
        expect(out).toMatch(new RegExp(`secretstore-iac-apply-${stack}\\s+finished in`));
      }
      // Already applied by the administrator: the pipeline finds nothing to change, and installs the committed lock.
      expect(out.match(/Apply complete! Resources: 0 added, 0 changed, 0 destroyed/g)?.length).toBe(2);
      // Every job installs the provider the committed lock names.
      expect(out.match(/Reusing previous version of hashicorp\/vault from the dependency lock file/g)?.length).toBeGreaterThanOrEqual(4);
      expect(out).not.toContain('commit it');
      expect(out).not.toContain(fresh.rootToken);
      expect(pipeline.code).toBe(0);
    } finally {
      await fresh?.stop();
      await pg?.stop();
    }
  });
});
