/**
 * The generated pipeline of the configuration repository, run by gitlab-ci-local (shell executor,
 * artifacts isolated per job) against a real OpenBao and a real PostgreSQL state: the merge-request
 * jobs plan with the read-only role and gate the access diff on risk flags; the default-branch jobs
 * apply the saved plans with the apply role. Only the changed stacks (and those depending on them) are
 * planned and applied: the synth job runs `secretstore-iac changed-stacks` against the target branch
 * or the commit before the push (gitlab-ci-local has no CI_COMMIT_BEFORE_SHA: the test gives it). gitlab-ci-local does not mint ID tokens: the test signs
 * one per pipeline with the key the store's JWT method trusts and passes it as a variable.
 */
import { execFileSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { REPO_ROOT } from '../support/paths';
import {
  bootstrapStacks,
  commitWithOrigin,
  copyLibraryInto,
  copyPipelineFile,
  git,
  gitlabCiLocal,
  jobLines,
  pipelineJobToken,
  PROJECT_ID,
  removeBuild,
  synthesizeRepository,
} from '../support/store/configuration-pipeline-harness';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { jwtLogin, TEST_SETTINGS } from '../support/store/platform-fixture';
import { postgresBinDir, RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore } from '../support/store/store-server';
import { storeKind, toolchain } from '../support/store/toolchain-env';

/** The uncompressed entries of a zip archive (a saved plan), read through its central directory. */
function zipEntries(file: string): Record<string, Buffer> {
  const zip = fs.readFileSync(file);
  const entries: Record<string, Buffer> = {};
  // The end-of-central-directory record (no archive comment) gives the directory's offset.
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let at = zip.readUInt32LE(end + 16);
  while (zip.readUInt32LE(at) === 0x02014b50) {
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    entries[name] = method === 8 ? zlib.inflateRawSync(data) : Buffer.from(data);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/**
 * The jobs of a gitlab-ci-local log that compiled the configuration: each line where npm runs the
 * build script's `tsc` (npm prints `> tsc -p tsconfig.json ...` before it runs a script).
 */
function compilingJobs(log: string): string[] {
  return [...log.matchAll(/^(\S+)\s+> > tsc -p tsconfig\.json/gm)].map((m) => m[1]);
}

// Like every gitlab-ci-local pipeline test, in the OpenBao suite only and reported skipped in the
// Vault suite: the jobs run the same commands on either store, and each such test takes 5-17 minutes
// (docs/store-tests.md); the engine commands they run are proven on Vault by the other store tests.
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('the configuration repository\'s pipeline under gitlab-ci-local (OpenBao suite only)', () => {
  let store: RunningStore;
  let pg: RunningPostgres;
  let key: JwtSigningKey;
  let root: string;
  let repo: string;

  /** stacks/platform.config.ts of the test repository: the test settings and key, a given job timeout, hash shards if given. */
  const configSource = (minutes: number, hashShards?: number) => `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(${minutes}),
  configurationProject: { projectId: '${PROJECT_ID}' },${hashShards === undefined ? '' : `\n  applicationSharding: { by: 'hash', shards: ${hashShards} },`}
};
`;

  /** Synthesizes the test repository as it is, and copies the pipeline it writes to the committed copy. */
  const refreshPipelineCopy = () => {
    synthesizeRepository(repo);
    copyPipelineFile(repo);
    removeBuild(repo);
  };

  /** The engine, the provider mirror and the dependencies every job needs, as gitlab-ci-local variables. */
  const variables = (claims: Record<string, unknown>) => {
    const tools = toolchain();
    return {
      SECRETSTORE_ADDR: store.addr,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_ID_TOKEN: pipelineJobToken(key, claims),
      SECRETSTORE_IAC_INSTALL: `ln -sfn ${REPO_ROOT}/node_modules node_modules`,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      // No TF_PLUGIN_CACHE_DIR: the plan jobs run at the same time, and two engines installing into one
      // plugin cache race ("after installing ... it is still not detected in .../plugin-cache"). Each job
      // installs from the local mirror into its own .terraform, as a GitLab job does on its own runner.
      TF_CLI_CONFIG_FILE: tools.cliConfig,
    };
  };

  /** A default-branch pipeline of a push onto `before` (GitLab's CI_COMMIT_BEFORE_SHA). */
  const pushedOnto = (before: string) => ['--variable', `CI_COMMIT_BEFORE_SHA=${before}`];

  const glci = (args: string[], claims: Record<string, unknown>, extra: string[] = [], cwd = repo) => gitlabCiLocal(cwd, root, args, variables(claims), extra);

  beforeAll(async () => {
    store = await startStore();
    pg = await startPostgres();
    key = generateSigningKey();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'config-pipeline-'));
    repo = path.join(root, 'config');
    // The configuration repository: this project's library, bin and stacks, with the test's settings
    // and the state in PostgreSQL.
    copyLibraryInto(repo);
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(15));
    // The state in PostgreSQL, as the shipped stacks/main.ts declares it (postgresState()).
    const main = path.join(repo, 'stacks', 'main.ts');
    expect(fs.readFileSync(main, 'utf8')).toContain('definePlatform(a, platformConfig, postgresState())');
    // Synthesize once to get the pipeline file, commit its copy and include it.
    synthesizeRepository(repo);
    copyPipelineFile(repo);
    fs.writeFileSync(path.join(repo, '.gitlab-ci.yml'), 'include:\n  - local: .gitlab/secretstore-iac.gitlab-ci.yml\n');
    commitWithOrigin(root, repo, 'platform configuration');

    // Bootstrap, once, by an administrator with a privileged token: the pipeline's own roles exist
    // only after a first apply. Same state (PostgreSQL) as the pipeline.
    const tools = toolchain();
    await bootstrapStacks(repo, ['app-roles', 'ci-access'], {
      SECRETSTORE_ADDR: store.addr,
      VAULT_TOKEN: store.rootToken,
      PG_CONN_STR: pg.connStr,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      TF_PLUGIN_CACHE_DIR: tools.pluginCacheDir,
      TF_IN_AUTOMATION: '1',
    });
    removeBuild(repo);
  }, 600_000);

  afterAll(async () => {
    await store?.stop();
    await pg?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('the roles: a merge-request job token logs in as the plan role, not as the apply role', async () => {
    const mrToken = signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, ref: 'feature', ref_protected: 'false', ref_path: 'refs/heads/feature' }, { ciUrl: TEST_SETTINGS.ciUrl }));
    expect((await jwtLogin(store, 'secretstore-iac-plan', mrToken)).status).toBe(200);
    expect((await jwtLogin(store, 'secretstore-iac-pipeline', mrToken)).status).toBe(400);
    const otherProject = signJwt(key.privateKey, gitlabJobClaims({ project_id: '42' }, { ciUrl: TEST_SETTINGS.ciUrl }));
    expect((await jwtLogin(store, 'secretstore-iac-pipeline', otherProject)).status).toBe(400);
    expect((await jwtLogin(store, 'secretstore-iac-plan', otherProject)).status).toBe(400);
  });

  it('merge request: build, synth, plans with the read-only role; the access diff fails on a risk flag until acknowledged', async () => {
    // The change under review raises the job timeout: a TTL raised, one risk flag.
    git(repo, 'checkout', '-q', '-b', 'feature');
    try {
      fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(20));
      git(repo, 'commit', '-q', '-am', 'longer CI jobs');
      const mr = ['--variable', 'CI_PIPELINE_SOURCE=merge_request_event', '--variable', 'CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main', '--variable', 'CI_MERGE_REQUEST_IID=7'];
      const claims = { ref: 'feature', ref_protected: 'false', ref_path: 'refs/heads/feature' };
      const list = await glci(['--list'], claims, mr);
      expect(list.output).toMatch(/secretstore-iac-plan-ci-access\s/);
      expect(list.output).not.toMatch(/secretstore-iac-apply-/);

      const pipeline = await glci([], claims, mr);
      const out = pipeline.output;
      expect(out).toContain('json schema validated');
      // Compiled once per pipeline: tsc runs in the build job only (npm's line for its build script);
      // the synth job synthesizes the build job's dist/ (npm run synth:built), without compiling again.
      expect(compilingJobs(out)).toEqual(['secretstore-iac-build']);
      expect(out).toMatch(/secretstore-iac-synth\s+> secretstore-iac: synthesizing the build job's dist\/ \(compiled from [0-9a-f]{40}\)/);
      expect(out).toMatch(/secretstore-iac-synth\s+> > node dist\/stacks\/main\.js/);
      // One synthesis per ref: this commit by the synth job's own synthesis (secretstore-iac pipeline
      // synth), stored in the synthesis cache; the base, which no pipeline of its commit stored yet,
      // compiled once in a worktree into cdktf.base.out, saying so; moves and changed-stacks read those two.
      expect(out.match(/synthesizing [0-9a-f]{12} in a temporary worktree/g) ?? []).toHaveLength(1);
      expect(out).toMatch(/secretstore-iac: this commit's synthesis \(tree [0-9a-f]{12}\) stored in the synthesis cache/);
      expect(out).toMatch(/secretstore-iac: base: origin\/main \([0-9a-f]{12}\), the merge request's target branch/);
      expect(out).toMatch(/secretstore-iac: base [0-9a-f]{12}: no synthesis of it in the synthesis cache \(no pipeline of its commit stored one this job can verify\): compiled and synthesized in a worktree/);
      expect(out).toMatch(/secretstore-iac: synth steps: this commit \d+\.\d s, store \d+\.\d s, base \d+\.\d s, moves \d+\.\d s, changed-stacks \d+\.\d s/);
      // The note's access part is the review of the plan jobs' saved plans (what the engine will apply),
      // naming each plan file with the SHA-256 of the artifact; the stack not planned is said so.
      expect(out).toMatch(/## Access changes: `store state \(refreshed, as planned\)` → `after applying the saved plans`/);
      const mrPlan = path.join(repo, '.gitlab-ci-local', 'artifacts', 'secretstore-iac-plan-ci-access', 'secretstore-iac-plans', 'ci-access.tfplan');
      expect(out).toContain(`| \`ci-access\` | \`secretstore-iac-plans/ci-access.tfplan\` | \`${createHash('sha256').update(fs.readFileSync(mrPlan)).digest('hex')}\` |`);
      expect(out).toContain('Read from the synthesized output on both sides (no plan given, taken as unchanged): `app-roles`.');
      // Only ci-access changed (its JWT roles' TTLs): app-roles's plan job ends at once, saying so.
      expect(out).toMatch(/secretstore-iac-plan-app-roles\s+finished in/);
      expect(out).toContain('secretstore-iac pipeline plan: stack app-roles is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan');
      expect(fs.existsSync(path.join(repo, '.gitlab-ci-local', 'artifacts', 'secretstore-iac-plan-app-roles', 'secretstore-iac-plans', 'app-roles.tfplan'))).toBe(false);
      expect(out).toMatch(/stacks to plan and apply, in dependency order \(against origin\/main\):\n[^\n]*?\bci-access\n/);
      // The MR note: the access diff, then the stacks planned with their digests.
      expect(out).toContain('### Stacks planned: 1 of 2');
      expect(out).toMatch(/\| `app-roles` \| unchanged \| no \| `sha256:([0-9a-f]{16})` \| `sha256:\1` \|/);
      expect(out).toMatch(/\| `ci-access` \| changed \| yes \| `sha256:[0-9a-f]{16}` \| `sha256:[0-9a-f]{16}` \|/);
      for (const stack of ['ci-access']) {
        expect(out).toMatch(new RegExp(`secretstore-iac-plan-${stack}\\s+finished in`));
        const plan = path.join(repo, '.gitlab-ci-local', 'artifacts', `secretstore-iac-plan-${stack}`, 'secretstore-iac-plans', `${stack}.tfplan`);
        // The saved plan is an artifact: neither the state's connection string nor a store token is in it.
        const entries = zipEntries(plan);
        expect(Object.keys(entries)).toContain('tfplan');
        const text = Object.values(entries).map((b) => b.toString('latin1')).join('\n');
        expect(text).toContain('secretstore_iac_');
        expect(text).not.toContain(pg.connStr.replace(/\?.*$/, ''));
        expect(text).not.toContain(store.rootToken);
      }
      // The three JWT roles' TTLs (registry-ci and the two pipeline roles), planned with the read-only role.
      expect(out).toMatch(/Plan: 0 to add, 3 to change, 0 to destroy/);
      expect(out).toContain('SECRETSTORE_IAC_NOTE_TOKEN is not set: the note is not posted; it is in the job log above and in the artifact access-diff.md');
      expect(out).toMatch(/risk flag\(s\) in the access diff: review them, then add the label access-risk-acknowledged/);
      expect(out).toMatch(/\*\*TTL raised\*\*/);
      expect(pipeline.code).not.toBe(0);
      expect(out).not.toContain(store.rootToken);

      const acknowledged = await glci(['secretstore-iac-access-diff', '--needs'], claims, [...mr, '--variable', 'CI_MERGE_REQUEST_LABELS=docs,access-risk-acknowledged']);
      expect(acknowledged.output).toMatch(/risk flag\(s\) acknowledged by the label access-risk-acknowledged/);
      // The same base again: from the synthesis cache the first pipeline's synth job kept, not synthesized.
      expect(acknowledged.output).toContain('synthesized output from the synthesis cache');
      expect(acknowledged.output).not.toMatch(/synthesizing [0-9a-f]{12} in a temporary worktree/);
      expect(acknowledged.code).toBe(0);
    } finally {
      git(repo, 'checkout', '-q', 'main');
    }
  }, 900_000);

  it('default branch: saved plans applied with the apply role, state in PostgreSQL; two concurrent applies are serialized', async () => {
    const before = git(repo, 'rev-parse', 'main');
    git(repo, 'merge', '-q', '--ff-only', 'feature');
    git(repo, 'push', '-q', 'origin', 'main');
    const claims = { ref: 'main', ref_protected: 'true' };
    const list = await glci(['--list'], claims);
    expect(list.output).toMatch(/secretstore-iac-apply-ci-access\s/);
    // The merge request's review job is not in this pipeline; the default branch's is, before the applies.
    expect(list.output).not.toMatch(/secretstore-iac-access-diff\s/);
    expect(list.output).toMatch(/secretstore-iac-access-diff-default-branch\s+review\s/);
    const pipeline = await glci([], claims, pushedOnto(before));
    expect(compilingJobs(pipeline.output)).toEqual(['secretstore-iac-build']);
    expect(pipeline.output).toMatch(/Apply complete! Resources: 0 added, 3 changed, 0 destroyed/);
    // Between plan and apply, the review of this pipeline's saved plans records each one's SHA-256
    // (an artifact, printed in its log); the apply applies the plan only because the digests match.
    const artifact = (job: string, ...file: string[]) => path.join(repo, '.gitlab-ci-local', 'artifacts', job, ...file);
    const planDigest = createHash('sha256').update(fs.readFileSync(artifact('secretstore-iac-plan-ci-access-default-branch', 'secretstore-iac-plans', 'ci-access.tfplan'))).digest('hex');
    const reviewed = JSON.parse(fs.readFileSync(artifact('secretstore-iac-access-diff-default-branch', 'reviewed-plans.json'), 'utf8'));
    expect(reviewed.plans.map((p: any) => [p.stack, p.sha256])).toEqual([['ci-access', planDigest]]);
    expect(jobLines(pipeline.output, 'secretstore-iac-access-diff-default-branch').join('\n')).toContain(planDigest);
    expect(pipeline.output).toMatch(/secretstore-iac-apply-ci-access\s+> secretstore-iac tf: ci-access: \S+\/ci-access\.tfplan is the plan the review \S+\/reviewed-plans\.json read \(SHA-256 matches\)/);
    // app-roles did not change: neither planned nor applied.
    expect(pipeline.output).toContain('secretstore-iac pipeline plan: stack app-roles is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan');
    expect(pipeline.output).toContain('secretstore-iac pipeline apply: stack app-roles is unchanged (same content digest as the base, and no stack it depends on changed): nothing to apply');
    expect(pipeline.output).not.toMatch(/Apply complete! Resources: 0 added, 0 changed, 0 destroyed/);
    expect(pipeline.code).toBe(0);
    const role = await fetch(`${store.addr}/v1/auth/jwt/role/registry-ci`, { headers: { 'X-Vault-Token': store.rootToken } });
    expect(((await role.json()) as any).data.token_ttl).toBe(20 * 60);

    // Two default-branch pipelines of the next change, each with its saved plan made before either
    // applies, then both apply jobs at once. gitlab-ci-local ignores resource_group (it only validates
    // it); the state lock in PostgreSQL and the plan's state serial serialize them: one applies, the
    // other is refused as stale and changes nothing.
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(25));
    git(repo, 'commit', '-q', '-am', 'even longer CI jobs');
    git(repo, 'push', '-q', 'origin', 'main');
    const clones = ['one', 'two'].map((n) => {
      const dir = path.join(root, `clone-${n}`);
      git(root, 'clone', '-q', path.join(root, 'origin.git'), dir);
      git(dir, 'remote', 'set-head', 'origin', 'main');
      return dir;
    });
    for (const dir of clones) {
      // The plans and their review (the apply jobs need both).
      const planned = await glci(['secretstore-iac-access-diff-default-branch', '--needs'], claims, [], dir);
      expect(planned.output).toMatch(/Plan: 0 to add, 3 to change, 0 to destroy/);
      expect(planned.code).toBe(0);
    }
    // A saved plan its pipeline's review did not read (the other pipeline's plan of the same commit:
    // another digest) is refused by the apply job, nothing applied.
    const planOf = (dir: string) => path.join(dir, '.gitlab-ci-local', 'artifacts', 'secretstore-iac-plan-ci-access-default-branch', 'secretstore-iac-plans', 'ci-access.tfplan');
    const ownPlan = fs.readFileSync(planOf(clones[0]));
    fs.copyFileSync(planOf(clones[1]), planOf(clones[0]));
    const unreviewed = await glci(['secretstore-iac-apply-ci-access'], claims, [], clones[0]);
    expect(unreviewed.output).toMatch(/ci-access: nothing applied: \S+\/ci-access\.tfplan is not the plan the review read: its SHA-256 is [0-9a-f]{64}/);
    expect(unreviewed.output).not.toMatch(/Apply complete!/);
    expect(unreviewed.code).not.toBe(0);
    fs.writeFileSync(planOf(clones[0]), ownPlan);
    const applies = await Promise.all(clones.map((dir) => glci(['secretstore-iac-apply-ci-access'], claims, [], dir)));
    const outputs = applies.map((r) => r.output);
    expect(outputs.filter((o) => /Apply complete! Resources: 0 added, 3 changed, 0 destroyed/.test(o))).toHaveLength(1);
    expect(outputs.filter((o) => /Saved plan is stale/.test(o))).toHaveLength(1);
    expect(applies.map((r) => r.code).sort()).toEqual([0, 1]);
    const after = await fetch(`${store.addr}/v1/auth/jwt/role/registry-ci`, { headers: { 'X-Vault-Token': store.rootToken } });
    expect(((await after.json()) as any).data.token_ttl).toBe(25 * 60);

    // The scheduled drift job: in sync, then a policy deleted behind the configuration's back.
    const schedule = ['--variable', 'CI_PIPELINE_SOURCE=schedule'];
    const inSync = await glci(['secretstore-iac-drift-ci-access', '--needs'], claims, schedule, clones[0]);
    expect(inSync.output).toMatch(/No changes\./);
    expect(inSync.code).toBe(0);
    const del = await fetch(`${store.addr}/v1/sys/policies/acl/registry-ci`, { method: 'DELETE', headers: { 'X-Vault-Token': store.rootToken } });
    expect(del.status).toBe(204);
    const drifted = await glci(['secretstore-iac-drift-ci-access', '--needs'], claims, schedule, clones[0]);
    expect(drifted.output).toMatch(/vault_policy\.registry-ci_policy_[0-9A-F]+ will be (created|updated in-place)/);
    expect(drifted.code).not.toBe(0);
  }, 900_000);

  it('a change that adds an application passes its first default-branch pipeline: only app-roles, which holds its grant, is planned and applied', async () => {
    // The pipeline roles' rules on an application's objects live in the grant policies of the stack
    // that declares it (docs/pipelines.md §9): app-roles writes the widened grant before the new role
    // and policy (they depend on it), and ci-access, whose roles name that grant already, is unchanged.
    const mainFile = path.join(repo, 'stacks', 'main.ts');
    fs.writeFileSync(
      mainFile,
      // The README's way: one addApplication on the platform's app-roles stack in stacks/main.ts.
      fs.readFileSync(mainFile, 'utf8').replace(
        'definePlatform(a, platformConfig, postgresState())',
        "definePlatform(a, platformConfig, postgresState()).appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev' })",
      ),
    );
    expect(fs.readFileSync(mainFile, 'utf8')).toContain(".appRoles.addApplication('billing-dev'");
    const before = git(repo, 'rev-parse', 'main');
    git(repo, 'commit', '-q', '-am', 'add the billing application');
    git(repo, 'push', '-q', 'origin', 'main');
    const claims = { ref: 'main', ref_protected: 'true' };
    const pipeline = await glci([], claims, pushedOnto(before));
    const out = pipeline.output;
    // A new application changes only its stack: app-roles is selected, ci-access is not.
    expect(out).toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bapp-roles\n/);
    expect(out).not.toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bci-access\n/);
    expect(out).toContain('secretstore-iac pipeline plan: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan');
    expect(out).toContain('secretstore-iac pipeline apply: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to apply');
    expect(out).not.toContain('stack app-roles is unchanged');
    expect(out).toMatch(/secretstore-iac-apply-app-roles\s+finished in/);
    // Created with the apply role's token, whose grant in app-roles the same apply widened first.
    expect(out).not.toMatch(/permission denied|Code: 403/);
    expect(out).toMatch(/Apply complete! Resources: [1-9]\d* added, \d+ changed, 0 destroyed/);
    expect(pipeline.code).toBe(0);
    const role = await fetch(`${store.addr}/v1/auth/approle/role/billing-dev`, { headers: { 'X-Vault-Token': store.rootToken } });
    expect(role.status).toBe(200);
  }, 900_000);

  it('a change to a stack others depend on selects them too: app-roles, declared to depend on ci-access, is planned and applied after it', async () => {
    // The configuration's own entry declares the dependency (the platform's stacks are the package's).
    const mainFile = path.join(repo, 'stacks', 'main.ts');
    fs.writeFileSync(
      mainFile,
      fs
        .readFileSync(mainFile, 'utf8')
        .replace(
          "definePlatform(a, platformConfig, postgresState()).appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev' })",
          "((p) => { p.appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev' }); p.appRoles.addDependency(p.ciAccess); })(definePlatform(a, platformConfig, postgresState()))",
        ),
    );
    expect(fs.readFileSync(mainFile, 'utf8')).toContain('p.appRoles.addDependency(p.ciAccess);');
    // Only ci-access's content changes (the job timeout); app-roles's digest stays.
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(30));
    const before = git(repo, 'rev-parse', 'main');
    git(repo, 'commit', '-q', '-am', 'app-roles depends on ci-access; longer CI jobs');
    git(repo, 'push', '-q', 'origin', 'main');
    const claims = { ref: 'main', ref_protected: 'true' };
    const pipeline = await glci([], claims, pushedOnto(before));
    const out = pipeline.output;
    expect(out).toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bci-access\n[^\n]*?\bapp-roles\n/);
    expect(out).not.toContain('is unchanged');
    // ci-access: the three JWT roles' TTLs (registry-ci and the two pipeline roles), and registry-ci's
    // policy written again (updated in place: its state still holds it, the store has no text): the
    // drift check above deleted it behind the configuration's back, and no apply of ci-access ran
    // since (adding an application changes only app-roles, which holds its grants).
    expect(out).toMatch(/Apply complete! Resources: 0 added, 4 changed, 0 destroyed/);
    expect(out).toMatch(/secretstore-iac-plan-ci-access-default-branch\s+> [^\n]*# vault_policy\.registry-ci_policy_[0-9A-F]+[^\n]* will be updated in-place/);
    expect(out).toMatch(/Apply complete! Resources: 0 added, 0 changed, 0 destroyed/);
    expect(pipeline.code).toBe(0);
    const order = ['secretstore-iac-apply-ci-access', 'secretstore-iac-apply-app-roles'].map((job) => out.search(new RegExp(`${job}\\s+finished in`)));
    expect(order[0]).toBeGreaterThanOrEqual(0);
    expect(order[0]).toBeLessThan(order[1]);
  }, 900_000);

  it('sharding through the pipeline: the migration into hash shards, then a re-shard whose retired shard, holding only its own grants, is applied by the default branch without the manual job; nothing recreated, a Secret ID issued before still logs in', async () => {
    const claims = { ref: 'main', ref_protected: 'true' };
    const root = { headers: { 'X-Vault-Token': store.rootToken } };
    const roleId = async (role: string) => ((await (await fetch(`${store.addr}/v1/auth/approle/role/${role}/role-id`, root)).json()) as any).data.role_id as string;
    const listed = async (at: string) => (((await (await fetch(`${store.addr}/v1/${at}?list=true`, root)).json()) as any).data.keys as string[]).sort();
    // Deployment automation issued a Secret ID before any of this.
    const issued = await fetch(`${store.addr}/v1/auth/approle/role/orchestrator-dev/secret-id`, { method: 'POST', ...root });
    const secretId = ((await issued.json()) as any).data.secret_id as string;
    const before = { 'orchestrator-dev': await roleId('orchestrator-dev'), 'billing-dev': await roleId('billing-dev') };
    const stateResources = (stack: string) => {
      const schema = `secretstore_iac_${stack.replace(/-/g, '_')}`;
      const data = execFileSync(path.join(postgresBinDir(), 'psql'), [pg.connStr, '-tAc', `select data from ${schema}.states where name = 'default'`], { encoding: 'utf8' });
      return (JSON.parse(data).resources as { type: string; name: string }[]).map((r) => `${r.type}.${r.name}`);
    };
    const destroying = /(Resources: [^\n]*?[1-9]\d* destroyed|Plan: [^\n]*?[1-9]\d* to destroy)/;
    const noDestroy = (out: string) => expect(out.match(new RegExp(destroying.source, 'g')) ?? []).toEqual([]);
    // The retired shard's two grants: the only objects it declares that no stack declares any more.
    const retiredGrants = ['secretstore-iac-pipeline-app-roles-02', 'secretstore-iac-plan-app-roles-02'];

    // 1. Into three hash shards: authentik-role in app-roles-01, the four others in app-roles-02. The
    // new shards' grants are new names on the pipeline roles: ci-access changes too, and goes first.
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(30, 3));
    // New shard stacks are new jobs: the committed copy of the pipeline follows the synthesis.
    refreshPipelineCopy();
    const unsharded = git(repo, 'rev-parse', 'main');
    git(repo, 'commit', '-q', '-am', 'applications in 3 hash shards');
    git(repo, 'push', '-q', 'origin', 'main');
    const migrated = await glci([], claims, pushedOnto(unsharded));
    let out = migrated.output;
    expect(out).toMatch(/Wrote cdktf\.out\/stacks\/app-roles\/moves\.tf\.json: forget 10, import 0\./);
    expect(out).toMatch(/Wrote cdktf\.out\/stacks\/app-roles-02\/moves\.tf\.json: forget 0, import 8\./);
    expect(out).toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bci-access\n[^\n]*?\bapp-roles\n[^\n]*?\bapp-roles-01\n[^\n]*?\bapp-roles-02\n/);
    expect(out).toContain('no retired stack (one the base had and this commit no longer has): nothing to apply');
    // The shards are planned and applied by the shard jobs (two: no more than there are shards), one each.
    const shardJob = (job: string, what: 'plans' | 'applies', n: number, of: number) => {
      const lines = jobLines(out, job);
      const prefix = `secretstore-iac pipeline ${what === 'plans' ? 'plan' : 'apply'}: job ${n} of ${of} of app-roles-shards ${what}, in this order: `;
      const line = lines.find((l) => l.startsWith(prefix));
      expect({ job, found: line !== undefined }).toEqual({ job, found: true });
      return { stacks: line!.slice(prefix.length).replace(/ \(.*$/, '').split(', '), log: lines.join('\n') };
    };
    for (const [n, stack] of [[1, 'app-roles-01'], [2, 'app-roles-02']] as const) {
      expect(shardJob(`secretstore-iac-plan-app-roles-shards-${n}-default-branch`, 'plans', n, 2).stacks).toEqual([stack]);
      const applied = shardJob(`secretstore-iac-apply-app-roles-shards-${n}`, 'applies', n, 2);
      expect(applied.stacks).toEqual([stack]);
      expect(applied.log).toMatch(/Apply complete!/);
    }
    expect(out).not.toMatch(/secretstore-iac-(plan|apply)-app-roles-0\d\s/);
    noDestroy(out);
    expect(out).not.toMatch(/permission denied/);
    expect(migrated.code).toBe(0);
    expect(stateResources('app-roles').filter((r) => r.startsWith('vault_approle_auth_backend_role.'))).toEqual([]);
    expect(stateResources('app-roles-02').filter((r) => r.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(4);
    const rolesBefore = await listed('auth/approle/role');
    const policiesBefore = await listed('sys/policies/acl');
    expect(policiesBefore).toEqual(expect.arrayContaining(retiredGrants));

    // 2. Down to two shards: every application in app-roles-01; app-roles-02 is retired. Its objects
    // all moved, and its two grants, declared nowhere any more, are the pipeline's own: destroyed with
    // its apply, no person needed (docs/pipelines.md §8).
    // First as a merge request: the retired shard is planned with the read-only role, nothing applied.
    git(repo, 'checkout', '-q', '-b', 'reshard');
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), configSource(30, 2));
    refreshPipelineCopy();
    git(repo, 'commit', '-q', '-am', 'applications in 2 hash shards');
    const mr = ['--variable', 'CI_PIPELINE_SOURCE=merge_request_event', '--variable', 'CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main', '--variable', 'CI_MERGE_REQUEST_IID=9'];
    const review = await glci([], { ref: 'reshard', ref_protected: 'false', ref_path: 'refs/heads/reshard' }, mr);
    out = review.output;
    expect(out).toMatch(/### Retired stacks: their state forgets the objects that moved; what was removed is destroyed only by secretstore-iac-destroy-removed-objects\n[^\n]*\n[^\n]*- `app-roles-02`/);
    // The note lists the grants apart, as destroyed automatically, and no removal (nothing revoked).
    expect(out).not.toContain('### Objects removed');
    expect(out).toContain('### Pipeline grants of retired stacks: 2 destroyed automatically, without approval');
    expect(out).toContain('They are pipeline-internal and give no identity access to a secret');
    for (const grant of retiredGrants) expect(out).toContain(`| \`app-roles-02\` (removed) | \`sys/policies/acl/${grant}\` | pipeline grant`);
    expect(out).toMatch(/secretstore-iac-plan-retired\s+> [^\n]*8 to forget/);
    // The only destroys planned: the retired shard's two grants, passed as its own, not as removals.
    const destroys = out.split('\n').filter((l) => destroying.test(l));
    expect(destroys.length).toBeGreaterThan(0);
    for (const line of destroys) expect(line).toMatch(/^secretstore-iac-plan-retired\s+> [^\n]*\b2 to destroy/);
    expect(out).toMatch(/secretstore-iac tf: app-roles-02: 2 pipeline grants of this retired stack destroyed without approval/);
    expect(out).not.toMatch(/declared nowhere any more, destroyed by this plan/);
    expect(out).not.toMatch(/secretstore-iac-apply-/);
    expect(review.code).toBe(0);
    expect(stateResources('app-roles-02').filter((r) => r.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(4);
    git(repo, 'checkout', '-q', 'main');
    const beforeMerge = git(repo, 'rev-parse', 'main');
    git(repo, 'merge', '-q', '--ff-only', 'reshard');
    git(repo, 'push', '-q', 'origin', 'main');
    const resharded = await glci([], claims, pushedOnto(beforeMerge));
    out = resharded.output;
    expect(out).toMatch(/Wrote cdktf\.out\/stacks\/app-roles-02\/moves\.tf\.json: forget 8, import 0 \(a stack HEAD no longer has: plan and apply it, which destroys its 2 pipeline grants without approval/);
    // ci-access keeps the retired shard's grants on the roles (the override moves wrote): the apply role
    // deletes them with its own token, in the retire stage.
    expect(out).toContain('its roles keep the policies of app-roles-02 until their removal is applied.');
    // The job log merges standard output and standard error in arrival order: a line of changed-stacks'
    // (standard error) may come between the header and the list (seen once in CI).
    expect(out).toMatch(/retired stacks, planned and applied after every other stack \(forgets; removals only by secretstore-iac-destroy-removed-objects\):\n(?:[^\n]*\n)*?[^\n]*?secretstore-iac: {3}app-roles-02\n/);
    // The retired plan (its forgets with its own grants' destroys) is applied here, not held for the manual job.
    expect(out).not.toContain('not applied here');
    expect(out).toMatch(/secretstore-iac-apply-retired\s+> [^\n]*2 pipeline grants of this retired stack destroyed without approval/);
    expect(out).toMatch(/secretstore-iac-apply-retired\s+> [^\n]*Apply complete! Resources: 0 added, 0 changed, 2 destroyed/);
    // Nothing else destroyed anywhere: only the retired stack's apply destroys, and only its 2 grants.
    for (const line of out.split('\n').filter((l) => /Resources: [^\n]*[1-9]\d* destroyed/.test(l))) expect(line).toMatch(/^secretstore-iac-apply-retired\s+> [^\n]*0 added, 0 changed, 2 destroyed/);
    expect(out).not.toMatch(/permission denied/);
    expect(resharded.code).toBe(0);
    const finished = (job: string) => out.search(new RegExp(`${job}\\s+finished in`));
    // One shard left: one shard job, which applies it (the 8 imports) before the retired stack forgets them.
    expect(shardJob('secretstore-iac-apply-app-roles-shards-1', 'applies', 1, 1).stacks).toEqual(['app-roles-01']);
    expect(out).not.toContain('secretstore-iac-apply-app-roles-shards-2');
    expect(finished('secretstore-iac-apply-app-roles-shards-1')).toBeGreaterThanOrEqual(0);
    expect(finished('secretstore-iac-apply-app-roles-shards-1')).toBeLessThan(finished('secretstore-iac-apply-retired'));
    // The retired state is empty; every application is in app-roles-01.
    expect(stateResources('app-roles-02')).toEqual([]);
    expect(stateResources('app-roles-01').filter((r) => r.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(5);

    // 3. The manual job has nothing to do: no plan of this pipeline destroys a removed object.
    const manual = await glci(['secretstore-iac-destroy-removed-objects'], claims, [...pushedOnto(beforeMerge), '--manual', 'secretstore-iac-destroy-removed-objects']);
    expect(manual.output).toContain('secretstore-iac pipeline removals: no plan of this pipeline destroys a removed object');
    expect(manual.output).not.toMatch(/Apply complete!/);
    expect(manual.code).toBe(0);

    // Nothing of an application was destroyed or recreated: the same roles and policies but the two
    // grants, the same Role IDs, and the Secret ID issued before the moves logs in.
    expect(await listed('auth/approle/role')).toEqual(rolesBefore);
    expect(await listed('sys/policies/acl')).toEqual(policiesBefore.filter((p) => !retiredGrants.includes(p)));
    expect({ 'orchestrator-dev': await roleId('orchestrator-dev'), 'billing-dev': await roleId('billing-dev') }).toEqual(before);
    const login = await fetch(`${store.addr}/v1/auth/approle/login`, { method: 'POST', body: JSON.stringify({ role_id: before['orchestrator-dev'], secret_id: secretId }) });
    expect(login.status).toBe(200);
    expect(resharded.output).not.toContain(secretId);
    expect(review.output).not.toContain(secretId);
  }, 900_000);
});
