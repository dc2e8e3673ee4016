/**
 * Issue 27: a revocation the configuration declares must reach the store, and only by a person's
 * decision. Under gitlab-ci-local against a real store and PostgreSQL state: the `people` section
 * and one application are removed. The merge request's pipeline plans their removal (the retired
 * `people` stack and `app-roles`) and its note names what access is revoked; the default branch's
 * apply jobs leave those plans to the manual job `secretstore-iac-destroy-removed-objects`; started,
 * it destroys them, and a person can no longer log in through single sign-on.
 *
 * The pipeline roles keep what they need to destroy a removed object until the destroy is applied,
 * with no grant added by hand (issue 30): the roles' grant for an object lives in its stack and is
 * narrowed by the same apply that destroys the object, after it (the object depends on the grant); a
 * retired stack's grants stay on the roles through the override `moves` writes into ci-access.
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
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind, toolchain } from '../support/store/toolchain-env';
import { GLCI, pipelineJobToken, PROJECT_ID, runCollected as run } from '../support/store/configuration-pipeline-harness';

const CLIENT_ID = 'secretstore';
const DESTROY_JOB = 'secretstore-iac-destroy-removed-objects';


// The pipeline's jobs run the same commands on either store, and this test takes 12-19 minutes per
// store under gitlab-ci-local: it runs in the OpenBao suite and is reported skipped in the Vault
// suite (the removal's guard and the manual apply run on Vault in construct-renames.store.test.ts
// and engine-command.store.test.ts); docs/store-tests.md says so.
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('removals through the configuration pipeline: planned in the merge request, destroyed only by the manual job (OpenBao suite only: the jobs are store-independent)', () => {
  let store: RunningStore;
  let pg: RunningPostgres;
  let provider: RunningOidcProvider;
  let key: JwtSigningKey;
  let root: string;
  let repo: string;
  const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim();
  const bobLogsIn = () => ssoLogin(store, { mount: 'oidc', role: 'developers', login: 'bob', redirectUri: OIDC_CLI_REDIRECT_URI });

  /** stacks/platform.config.ts of the test repository, with or without the people section. */
  const configSource = (people: boolean) => `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(15),
  configurationProject: { projectId: '${PROJECT_ID}' },${
    people ? "\n  applications: { 'billing-dev': { name: 'billing', environment: 'dev' } }," : ''
  }${
    people
      ? `\n  people: { discoveryUrl: ${JSON.stringify(provider.issuer)}, clientId: '${CLIENT_ID}', storeUrl: ${JSON.stringify(store.addr)}, groups: { developers: { groups: ['developers'] } } },`
      : ''
  }
};
`;

  /** Synthesizes the repository and copies the pipeline it writes to the committed copy. */
  const synthAndCopyPipeline = () => {
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: repo, stdio: 'pipe' });
    execFileSync(process.execPath, ['scripts/copy-assets.js'], { cwd: repo, stdio: 'pipe' });
    execFileSync(process.execPath, ['dist/stacks/main.js'], { cwd: repo, stdio: 'pipe' });
    fs.mkdirSync(path.join(repo, '.gitlab'), { recursive: true });
    fs.copyFileSync(path.join(repo, 'cdktf.out', 'ci', 'secretstore-iac.gitlab-ci.yml'), path.join(repo, '.gitlab', 'secretstore-iac.gitlab-ci.yml'));
  };
  const clean = () => ['cdktf.out', 'dist'].forEach((d) => fs.rmSync(path.join(repo, d), { recursive: true, force: true }));

  const variables = (claims: Record<string, unknown>) => {
    const tools = toolchain();
    const vars: Record<string, string> = {
      SECRETSTORE_ADDR: store.addr,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_ID_TOKEN: pipelineJobToken(key, claims),
      SECRETSTORE_IAC_INSTALL: `ln -sfn ${REPO_ROOT}/node_modules node_modules`,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      // The access diff's risk flags are the configuration pipeline test's subject, not this one's.
      SECRETSTORE_IAC_ACCEPT_RISK: 'true',
      GITLAB_USER_LOGIN: 'alice',
    };
    return Object.entries(vars).flatMap(([k, v]) => ['--variable', `${k}=${v}`]);
  };
  const glci = (args: string[], claims: Record<string, unknown>, extra: string[] = []) =>
    run(GLCI, [...args, '--shell-isolation', '--no-color', '--json-schema-validation', '--ignore-predefined-vars', 'CI_PIPELINE_SOURCE', ...variables(claims), ...extra], repo, { HOME: root });

  beforeAll(async () => {
    store = await startStore();
    pg = await startPostgres();
    key = generateSigningKey();
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret, redirectUris: [OIDC_CLI_REDIRECT_URI], accounts: { bob: ['developers'] } });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-removals-'));
    repo = path.join(root, 'config');
    fs.mkdirSync(repo);
    for (const entry of ['lib', 'bin', 'stacks', 'scripts', 'package.json', 'tsconfig.json', 'cdktf.json']) {
      fs.cpSync(path.join(REPO_ROOT, entry), path.join(repo, entry), { recursive: true });
    }
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(true));
    // The state in PostgreSQL, as the shipped stacks/main.ts declares it (postgresState()).
    const main = path.join(repo, 'stacks', 'main.ts');
    expect(fs.readFileSync(main, 'utf8')).toContain('definePlatform(a, platformConfig, postgresState())');
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules\ndist\ncdktf.out\n.gitlab-ci-local\nsecretstore-iac-plans\n');
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(repo, 'node_modules'), 'dir');
    synthAndCopyPipeline();
    fs.writeFileSync(path.join(repo, '.gitlab-ci.yml'), 'include:\n  - local: .gitlab/secretstore-iac.gitlab-ci.yml\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'platform configuration with people and billing');
    git(root, 'init', '-q', '--bare', '-b', 'main', 'origin.git');
    git(repo, 'remote', 'add', 'origin', path.join(root, 'origin.git'));
    git(repo, 'push', '-q', 'origin', 'main');
    git(repo, 'remote', 'set-head', 'origin', 'main');

    // Bootstrap by an administrator (root token), same PostgreSQL state as the pipeline.
    const tools = toolchain();
    const env = {
      SECRETSTORE_ADDR: store.addr,
      VAULT_TOKEN: store.rootToken,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      TF_PLUGIN_CACHE_DIR: tools.pluginCacheDir,
      TF_IN_AUTOMATION: '1',
      TF_VAR_oidc_client_secret: clientSecret,
    };
    for (const stack of ['app-roles', 'ci-access', 'people']) {
      for (const args of [['init', '-input=false'], ['apply', '-input=false', '-auto-approve']]) {
        const r = await run(process.execPath, ['dist/bin/secretstore-iac.js', 'tf', stack, '--', ...args], repo, env);
        if (r.code !== 0) throw new Error(`bootstrap ${stack} ${args[0]} failed:\n${r.output}`);
      }
    }
    clean();
  }, 900_000);

  afterAll(async () => {
    await provider?.stop();
    await store?.stop();
    await pg?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('before: a person logs in through single sign-on, and the billing application\'s role exists', async () => {
    const login = await bobLogsIn();
    expect(login.callback.status).toBe(200);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(200);
  });

  it('people and an application removed: the MR plans their removal and its note names what is revoked; the default branch destroys only when the manual job runs', async () => {
    // The change: no people section, no billing application.
    git(repo, 'checkout', '-q', '-b', 'remove-people');
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(false));
    // The people stack's jobs go: the committed copy of the pipeline follows the synthesis.
    synthAndCopyPipeline();
    clean();
    git(repo, 'commit', '-q', '-am', 'remove the people section and the billing application');

    // 1. The merge request: planned with the read-only role, nothing applied, the revocation in the note.
    const mr = ['--variable', 'CI_PIPELINE_SOURCE=merge_request_event', '--variable', 'CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main', '--variable', 'CI_MERGE_REQUEST_IID=11'];
    const review = await glci([], { ref: 'remove-people', ref_protected: 'false', ref_path: 'refs/heads/remove-people' }, mr);
    let out = review.output;
    // The people stack's own 3 objects and the pipeline roles' 2 grants there, the application's role and policy.
    expect(out).toContain('### Objects removed: 7 destroyed on the store, after approval');
    expect(out).toContain('| `people` (removed) | `sys/policies/acl/secretstore-iac-pipeline-people` |');
    expect(out).toContain(`the apply jobs leave a plan that destroys them to the manual job \`${DESTROY_JOB}\``);
    expect(out).toContain('| `people` (removed) | `sys/auth/oidc` | JWT/OIDC auth method: every role under it, every login through it |');
    expect(out).toContain('| `people` (removed) | `auth/oidc/role/developers` | JWT/OIDC role: every login with it (CI jobs or people) |');
    expect(out).toContain('| `app-roles` | `auth/approle/role/billing-dev` | AppRole role: its Role ID and every Secret ID issued for it |');
    expect(out).toMatch(/secretstore-iac-plan-retired\s+> [^\n]*5 to destroy/);
    expect(out).toMatch(/secretstore-iac-plan-app-roles\s+> [^\n]*2 to destroy/);
    expect(out).toMatch(/secretstore-iac tf: people: 5 objects declared nowhere any more, destroyed by this plan \(--allow-removals\):/);
    expect(out).not.toMatch(/secretstore-iac-apply-|destroy-removed-objects\s+> /);
    expect(out).not.toMatch(/the plan would destroy or replace|nothing applied/);
    expect(review.code).toBe(0);
    expect((await bobLogsIn()).callback.status).toBe(200);

    // 2. Merged: the default branch plans again, and every apply job leaves the removals alone.
    git(repo, 'checkout', '-q', 'main');
    const before = git(repo, 'rev-parse', 'main');
    git(repo, 'merge', '-q', '--ff-only', 'remove-people');
    git(repo, 'push', '-q', 'origin', 'main');
    const claims = { ref: 'main', ref_protected: 'true' };
    const pushed = ['--variable', `CI_COMMIT_BEFORE_SHA=${before}`];
    const pipeline = await glci([], claims, pushed);
    out = pipeline.output;
    for (const stack of ['people', 'app-roles']) {
      expect(out).toMatch(new RegExp(`secretstore-iac pipeline apply: ${stack}: not applied here: its plan destroys objects this configuration declares nowhere any more \\(a revocation\\): [^\\n]+; the manual job ${DESTROY_JOB} applies it \\(with its other changes\\) once a person starts it`));
    }
    expect(out).not.toMatch(/Resources: [^\n]*[1-9]\d* destroyed/);
    // ci-access keeps the retired people stack's grants on the roles (the override moves wrote) until the manual job.
    expect(out).toContain('its roles keep the policies of people until their removal is applied.');
    expect(out).not.toMatch(/permission denied/);
    expect(pipeline.code).toBe(0);
    expect((await bobLogsIn()).callback.status).toBe(200);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(200);

    // 3. A person starts the manual job: it names what it destroys, then destroys exactly that.
    const approved = await glci([DESTROY_JOB], claims, [...pushed, '--manual', DESTROY_JOB]);
    out = approved.output;
    expect(out).toContain('secretstore-iac pipeline removals: started by alice: destroying what the configuration declares nowhere any more, in dependency order, retired stacks last:');
    expect(out).toMatch(/secretstore-iac pipeline removals: people: destroys [^\n]*sys\/auth\/oidc \(vault_jwt_auth_backend\.[^)]+\)/);
    expect(out).toMatch(/secretstore-iac pipeline removals: app-roles: destroys [^\n]*auth\/approle\/role\/billing-dev \(vault_approle_auth_backend_role\.[^)]+\)/);
    expect(out).toMatch(/Apply complete! Resources: 0 added, \d+ changed, 2 destroyed/);
    expect(out).toMatch(/Apply complete! Resources: 0 added, 0 changed, 5 destroyed/);
    expect(out).not.toMatch(/permission denied/);
    expect(approved.code).toBe(0);

    // The revocation landed: no person logs in through the OIDC method; the application's role is gone.
    await expect(bobLogsIn()).rejects.toThrow(/auth_url refused: HTTP (400|403|404)/);
    expect((await storeRequest(store, 'GET', 'sys/auth')).body.data['oidc/']).toBeUndefined();
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(404);
    expect(out).not.toContain(store.rootToken);
    expect(out).not.toContain(clientSecret);

    // 4. The roles no longer keep the people grants: the manual job applied ci-access again without
    // moves' override (a plan that only takes them away), so the scheduled drift job is green at once,
    // not after some unrelated change to ci-access (issue 37).
    expect(out).toContain("secretstore-iac pipeline removals: ci-access: its roles kept grants of the retired stacks until their removal, now applied: planned and applied again without them (tf --released-grants)");
    expect(out).toMatch(/ci-access: \S*ci-access\.released\.tfplan only ends the retired stacks' grants its roles kept/);
    const role = await storeRequest(store, 'GET', 'auth/jwt/role/secretstore-iac-pipeline');
    expect(role.body.data.token_policies.filter((p: string) => p.endsWith('-people'))).toEqual([]);
    const drift = await glci(['secretstore-iac-drift-ci-access', '--needs'], claims, [...pushed, '--variable', 'CI_PIPELINE_SOURCE=schedule']);
    expect(drift.output).toMatch(/No changes\./);
    expect(drift.code).toBe(0);
  }, 1_800_000);
});
