/**
 * The generated pipeline of a configuration with people (an OIDC method, a real OpenID provider on
 * 127.0.0.1), three hash shards and the reader policy, run by gitlab-ci-local against a real store
 * and a PostgreSQL state (issue 26): the pipeline roles' policies are derived from what the stacks
 * declare, so the first default-branch pipeline plans and applies every stack with the roles' own
 * tokens, people included; the grants for each stack's objects live in that stack (issue 30), so
 * the roles list grants the store does not have yet and each stack's apply creates its own first,
 * and a change to the people groups plans and applies the people stack only; the client secret reaches only the people stack's jobs, from the CI/CD
 * variable TF_VAR_oidc_client_secret, and is in no log, artifact or state; a merge request plans
 * without it (a protected variable), with the read-only role. The only root token is the
 * administrator's bootstrap of ci-access, which creates the pipeline roles (docs/pipelines.md).
 */
import { execFileSync } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { OIDC_CLI_REDIRECT_URI } from '../../lib';
import { REPO_ROOT } from '../support/paths';
import { generateSigningKey, JwtSigningKey } from '../support/store/jwt-signer';
import { RunningOidcProvider, ssoLogin, startOidcProvider } from '../support/store/oidc-provider';
import { TEST_SETTINGS } from '../support/store/platform-fixture';
import { postgresBinDir, RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore } from '../support/store/store-server';
import { storeKind, toolchain } from '../support/store/toolchain-env';
import { GLCI, jobLines, pipelineJobToken, PROJECT_ID, runCollected as run } from '../support/store/configuration-pipeline-harness';

const CLIENT_ID = 'secretstore';


/** Every regular file below `dir`, `.terraform` provider binaries and node_modules left out. */
function filesBelow(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isSymbolicLink()) return [];
    if (e.isDirectory()) return ['providers', 'node_modules', '.git'].includes(e.name) ? [] : filesBelow(p);
    return e.isFile() ? [p] : [];
  });
}

// OpenBao suite only, reported skipped in the Vault suite: the pipeline's jobs run the same commands on either store, and this test takes about 17 minutes per store under gitlab-ci-local (docs/store-tests.md).
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('the configuration pipeline with people, hash shards and the reader policy, under gitlab-ci-local (OpenBao suite only)', () => {
  let store: RunningStore;
  let pg: RunningPostgres;
  let provider: RunningOidcProvider;
  let key: JwtSigningKey;
  let root: string;
  let repo: string;
  const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim();

  /** stacks/platform.config.ts of the test repository, with the people groups given. */
  const configSource = (groups: Record<string, unknown>) => `import { JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  configurationProject: { projectId: '${PROJECT_ID}' },
  applicationSharding: { by: 'hash', shards: 3 },
  readerPolicy: true,
  people: {
    discoveryUrl: ${JSON.stringify(provider.issuer)},
    clientId: '${CLIENT_ID}',
    storeUrl: ${JSON.stringify(store.addr)},
    groups: ${JSON.stringify(groups)},
  },
};
`;
  const ADMINS = { 'platform-admins': { groups: ['platform-admins'], reads: [{ path: 'team/runbooks', subtree: true }] } };
  const WITH_DEVELOPERS = { ...ADMINS, developers: { groups: ['developers'] } };

  /** Synthesizes the test repository as it is and copies the pipeline it writes to the committed copy. */
  const synthAndCopyPipeline = () => {
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: repo, stdio: 'pipe' });
    execFileSync(process.execPath, ['scripts/copy-assets.js'], { cwd: repo, stdio: 'pipe' });
    execFileSync(process.execPath, ['dist/stacks/main.js'], { cwd: repo, stdio: 'pipe' });
    fs.mkdirSync(path.join(repo, '.gitlab'), { recursive: true });
    fs.copyFileSync(path.join(repo, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), path.join(repo, '.gitlab', 'secretstore-iac.gitlab-ci.yml'));
  };
  const cleanBuild = () => {
    fs.rmSync(path.join(repo, 'cdktf.out'), { recursive: true, force: true });
    fs.rmSync(path.join(repo, 'dist'), { recursive: true, force: true });
  };

  /** The engine, the provider mirror and the dependencies every job needs, as gitlab-ci-local variables. No store token. */
  const variables = (claims: Record<string, unknown>) => {
    const tools = toolchain();
    const vars: Record<string, string> = {
      SECRETSTORE_ADDR: store.addr,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_ID_TOKEN: pipelineJobToken(key, claims),
      SECRETSTORE_IAC_INSTALL: `ln -sfn ${REPO_ROOT}/node_modules node_modules`,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
    };
    return Object.entries(vars).flatMap(([k, v]) => ['--variable', `${k}=${v}`]);
  };
  const glci = (args: string[], claims: Record<string, unknown>, extra: string[] = []) =>
    // No VAULT_TOKEN reaches the jobs: gitlab-ci-local's environment is the test's, without it.
    run(GLCI, [...args, '--shell-isolation', '--no-color', '--json-schema-validation', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...variables(claims), ...extra], repo, { HOME: root, VAULT_TOKEN: '' });
  const PROTECTED = { ref: 'main', ref_protected: 'true' };
  /** The protected CI/CD variable, given to default-branch pipelines only (as GitLab gives protected variables). */
  const SECRET = ['--variable', `TF_VAR_oidc_client_secret=${clientSecret}`];

  /** What must never show: the client secret and the root token, in the log, the artifacts, the state. */
  const expectNoSecretAnywhere = (output: string) => {
    expect(output).not.toContain(clientSecret);
    expect(output).not.toContain(store.rootToken);
    for (const file of filesBelow(path.join(repo, '.gitlab-ci-local'))) {
      expect({ file, holds: fs.readFileSync(file).includes(clientSecret) }).toEqual({ file, holds: false });
    }
    const dump = execFileSync(path.join(postgresBinDir(), 'pg_dump'), [pg.connStr], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(dump).toContain('vault_jwt_auth_backend');
    expect(dump.includes(clientSecret)).toBe(false);
  };

  beforeAll(async () => {
    store = await startStore();
    pg = await startPostgres();
    key = generateSigningKey();
    provider = await startOidcProvider({
      clientId: CLIENT_ID,
      clientSecret,
      redirectUris: [OIDC_CLI_REDIRECT_URI],
      accounts: { alice: ['platform-admins'], bob: ['developers'] },
    });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'config-pipeline-people-'));
    repo = path.join(root, 'config');
    fs.mkdirSync(repo);
    for (const entry of ['lib', 'bin', 'stacks', 'scripts', 'package.json', 'tsconfig.json', 'cdktf.json']) {
      fs.cpSync(path.join(REPO_ROOT, entry), path.join(repo, entry), { recursive: true });
    }
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(ADMINS));
    // The state in PostgreSQL, as the shipped stacks/main.ts declares it (postgresState()).
    const main = path.join(repo, 'stacks', 'main.ts');
    expect(fs.readFileSync(main, 'utf8')).toContain('definePlatform(a, platformConfig, postgresState())');
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules\ndist\ncdktf.out\n.gitlab-ci-local\n');
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(repo, 'node_modules'), 'dir');
    synthAndCopyPipeline();
    fs.writeFileSync(path.join(repo, '.gitlab-ci.yml'), 'include:\n  - local: .gitlab/secretstore-iac.gitlab-ci.yml\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'platform configuration: people, three hash shards, the reader policy');
    git(root, 'init', '-q', '--bare', '-b', 'main', 'origin.git');
    git(repo, 'remote', 'add', 'origin', path.join(root, 'origin.git'));
    git(repo, 'push', '-q', 'origin', 'main');
    git(repo, 'remote', 'set-head', 'origin', 'main');

    // Bootstrap, once, by an administrator: ci-access only, which holds the pipeline roles (they
    // exist only after a first apply). Every other stack is the pipeline's first run.
    const tools = toolchain();
    const env = {
      SECRETSTORE_ADDR: store.addr,
      VAULT_TOKEN: store.rootToken,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      TF_PLUGIN_CACHE_DIR: tools.pluginCacheDir,
      TF_IN_AUTOMATION: '1',
    };
    for (const args of [['init', '-input=false'], ['apply', '-input=false', '-auto-approve']]) {
      const r = await run(process.execPath, ['dist/bin/secretstore-iac.js', 'tf', 'ci-access', '--', ...args], repo, env);
      if (r.code !== 0) throw new Error(`bootstrap ci-access ${args[0]} failed:\n${r.output}`);
    }
    cleanBuild();
  }, 600_000);

  afterAll(async () => {
    await provider?.stop();
    await store?.stop();
    await pg?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('the first default-branch pipeline plans and applies every stack with the pipeline roles\' tokens: people, the shards, the reader policy; green', async () => {
    const pipeline = await glci([], PROTECTED, SECRET);
    const out = pipeline.output;
    expect(out).toContain('no previous commit to compare with: every stack is planned');
    expect(out).not.toMatch(/permission denied/);
    // Every planned create was looked up: the apply role reads every object its stacks declare.
    expect(out).not.toContain('could not check whether the store already has');
    for (const stack of ['ci-access', 'app-roles', 'people']) {
      expect({ stack, applied: new RegExp(`secretstore-iac-apply-${stack}\\s+finished in`).test(out) }).toEqual({ stack, applied: true });
    }
    // The two shards: applied by the shard jobs (two, no more than shards), one each.
    for (const [n, stack] of [[1, 'app-roles-01'], [2, 'app-roles-02']] as const) {
      const lines = jobLines(out, `secretstore-iac-apply-app-roles-shards-${n}`);
      const prefix = `secretstore-iac pipeline apply: job ${n} of 2 of app-roles-shards applies, in this order: `;
      const line = lines.find((l) => l.startsWith(prefix)) ?? '';
      expect({ n, stacks: line.slice(prefix.length).replace(/ \(.*$/, '').split(', '), applied: lines.some((l) => /Apply complete! Resources: [1-9]\d* added/.test(l)) }).toEqual({ n, stacks: [stack], applied: true });
    }
    expect(out).toMatch(/secretstore-iac-apply-people\s+> Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
    expect(pipeline.code).toBe(0);
    expectNoSecretAnywhere(out);

    // The store has what the pipeline applied, and the client secret it wrote works: alice logs in.
    const headers = { 'X-Vault-Token': store.rootToken };
    expect((await fetch(`${store.addr}/v1/sys/policies/acl/secretstore-iac-reader`, { headers })).status).toBe(200);
    expect((await fetch(`${store.addr}/v1/auth/approle/role/orchestrator-dev`, { headers })).status).toBe(200);
    const { callback } = await ssoLogin(store, { mount: 'oidc', role: 'platform-admins', login: 'alice', redirectUri: OIDC_CLI_REDIRECT_URI });
    expect(callback.status).toBe(200);
  }, 1_800_000);

  let beforeMerge = '';
  it('a merge request adding a group plans people only (ci-access unchanged: the grants are people\'s) with the read-only role, without the protected client secret (a placeholder): the OIDC method unchanged', async () => {
    git(repo, 'checkout', '-q', '-b', 'developers');
    try {
      fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(WITH_DEVELOPERS));
      git(repo, 'commit', '-q', '-am', 'people: developers');
      const mr = ['--variable', 'CI_PIPELINE_SOURCE=merge_request_event', '--variable', 'CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main', '--variable', 'CI_MERGE_REQUEST_IID=3'];
      const claims = { ref: 'developers', ref_protected: 'false', ref_path: 'refs/heads/developers' };
      const planned = await glci(['secretstore-iac-plan-people', 'secretstore-iac-plan-ci-access', '--needs'], claims, mr);
      const out = planned.output;
      expect(out).toMatch(/stacks to plan and apply, in dependency order \(against origin\/main\):\n[^\n]*?\bpeople\n/);
      expect(out).toContain('secretstore-iac pipeline plan: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan');
      expect(out).toContain('TF_VAR_oidc_client_secret is not set (merge-request pipelines get no protected variable): oidc_client_secret of stack people is planned with a placeholder');
      // The new group's role and policy, and the pipeline roles' two grants in people widened to them; the OIDC method (whose write-only secret the plan does not compare) unchanged.
      expect(out).toMatch(/secretstore-iac-plan-people\s+> Plan: 2 to add, 2 to change, 0 to destroy/);
      expect(out).not.toMatch(/vault_jwt_auth_backend\.[^\s]+ will be/);
      expect(out).not.toMatch(/secretstore-iac-plan-ci-access\s+> Plan:/);
      expect(out).not.toMatch(/permission denied/);
      expect(planned.code).toBe(0);
      expectNoSecretAnywhere(out);
    } finally {
      git(repo, 'checkout', '-q', 'main');
    }
  }, 1_800_000);

  it('merged: the default-branch pipeline applies people only (its grants first); the new group logs in', async () => {
    beforeMerge = git(repo, 'rev-parse', 'main');
    git(repo, 'merge', '-q', '--ff-only', 'developers');
    git(repo, 'push', '-q', 'origin', 'main');
    const pipeline = await glci([], PROTECTED, [...SECRET, '--variable', `CI_COMMIT_BEFORE_SHA=${beforeMerge}`]);
    const out = pipeline.output;
    expect(out).not.toMatch(/permission denied/);
    expect(out).toMatch(/secretstore-iac-apply-people\s+> Apply complete! Resources: 2 added, 2 changed, 0 destroyed/);
    expect(pipeline.code).toBe(0);
    expect(out).toContain('secretstore-iac pipeline apply: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to apply');
    // The grant widened before the new group's role was created with it (the role depends on the grant).
    const widened = out.search(/vault_policy\.secretstore-iac-grant-pipeline-apply: Modifications complete/);
    expect(widened).toBeGreaterThan(0);
    expect(out.search(/vault_jwt_auth_backend_role\.group-developers_role_[A-F0-9]+: Creating/)).toBeGreaterThan(widened);
    expectNoSecretAnywhere(out);
    const { callback } = await ssoLogin(store, { mount: 'oidc', role: 'developers', login: 'bob', redirectUri: OIDC_CLI_REDIRECT_URI });
    expect(callback.status).toBe(200);
  }, 1_800_000);

  it('a default-branch job of the people stack without the CI/CD variable fails before the engine runs, naming it', async () => {
    const r = await glci(['secretstore-iac-plan-people-default-branch', '--needs'], PROTECTED, ['--variable', `CI_COMMIT_BEFORE_SHA=${beforeMerge}`]);
    expect(r.output).toContain('stack people declares the input variable oidc_client_secret: set the CI/CD variable TF_VAR_oidc_client_secret (masked, protected; docs/pipelines.md)');
    expect(r.output).not.toMatch(/No value for required variable/);
    expect(r.code).not.toBe(0);
  }, 900_000);
});
