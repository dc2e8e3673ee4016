/**
 * The configuration repository's pipeline under gitlab-ci-local (shell executor, artifacts isolated per
 * job) against a real OpenBao and a real PostgreSQL state, on the scenario harness
 * (test/support/store/pipeline-scenario.ts): one end-to-end scenario per pipeline kind of an everyday
 * change.
 * - default branch: a change that adds an application passes its first pipeline: built once, only
 *   app-roles (which holds the application's grant) planned with the apply role, the saved plan reviewed
 *   (its SHA-256 recorded) and applied only because the digest matches;
 * - merge request, after that pipeline: the base's synthesis comes from the default branch's pipeline
 *   (the copy it wrote for merge requests), not a worktree compile; plans with the read-only role; the
 *   note is the review of the saved plans with the stacks' digests; a risk flag fails the review until
 *   the label acknowledges it;
 * - default branch, sharding: the applications migrated into hash shards (each planned and applied by
 *   its shard job), then re-sharded: the retired shard, holding only the pipeline roles' grants there,
 *   applied last by the default branch without the manual job; nothing recreated, a Secret ID issued
 *   before still logs in.
 * What each subcommand decides (selection with dependents, moves, retired stacks, shard shares,
 * removals, input variables, the note and its label) is proven by test/unit/pipeline/*; removals and
 * people have their own scenarios (pipeline-removals, configuration-pipeline-people).
 */
import { createHash } from 'crypto';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_ID } from '../support/store/configuration-pipeline-harness';
import { gitlabJobClaims, signJwt } from '../support/store/jwt-signer';
import { jwtLogin, TEST_SETTINGS } from '../support/store/platform-fixture';
import { PipelineScenario, ScenarioParts } from '../support/store/pipeline-scenario';
import { postgresBinDir } from '../support/store/postgres-server';
import { storeKind } from '../support/store/toolchain-env';
import { planArchiveEntries } from '../../lib/sources/plan-archive';

/**
 * The jobs of a gitlab-ci-local log that compiled the configuration: each line where npm runs the
 * build script's `tsc` (npm prints `> tsc -p tsconfig.json ...` before it runs a script).
 */
function compilingJobs(log: string): string[] {
  return [...log.matchAll(/^(\S+)\s+> > tsc -p tsconfig\.json/gm)].map((m) => m[1]);
}

// Like every gitlab-ci-local pipeline test, in the OpenBao suite only and reported skipped in the
// Vault suite: the jobs run the same commands on either store (docs/store-tests.md); the engine
// commands they run are proven on Vault by the other store tests.
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

/** stacks/platform.config.ts of the scenario: the test settings and key, a given job timeout, hash shards if given. */
const configSource = ({ key }: ScenarioParts, minutes: number, hashShards?: number) => `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(${minutes}),
  configurationProject: { projectId: '${PROJECT_ID}' },${hashShards === undefined ? '' : `\n  applicationSharding: { by: 'hash', shards: ${hashShards} },`}
};
`;

describeOnOpenBao('the configuration repository\'s pipeline under gitlab-ci-local (OpenBao suite only)', () => {
  let scenario: PipelineScenario;

  beforeAll(async () => {
    // Bootstrap, by an administrator with a privileged token: the pipeline's own roles exist only after a first apply.
    scenario = await PipelineScenario.start({ name: 'config-pipeline', config: (parts) => configSource(parts, 15), bootstrap: ['app-roles', 'ci-access'] });
  });

  afterAll(async () => {
    await scenario?.stop();
  });

  it('the roles: a merge-request job token logs in as the plan role, not as the apply role', async () => {
    const { store, key } = scenario;
    const mrToken = signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, ref: 'feature', ref_protected: 'false', ref_path: 'refs/heads/feature' }, { ciUrl: TEST_SETTINGS.ciUrl }));
    expect((await jwtLogin(store, 'secretstore-iac-plan', mrToken)).status).toBe(200);
    expect((await jwtLogin(store, 'secretstore-iac-pipeline', mrToken)).status).toBe(400);
    const otherProject = signJwt(key.privateKey, gitlabJobClaims({ project_id: '42' }, { ciUrl: TEST_SETTINGS.ciUrl }));
    expect((await jwtLogin(store, 'secretstore-iac-pipeline', otherProject)).status).toBe(400);
    expect((await jwtLogin(store, 'secretstore-iac-plan', otherProject)).status).toBe(400);
  });

  it('default branch: a change that adds an application passes its first pipeline: only app-roles, which holds its grant, planned, reviewed and applied with the apply role', async () => {
    // The README's way: one addApplication on the platform's app-roles stack in stacks/main.ts. The
    // pipeline roles' rules on an application's objects live in the grant policies of the stack that
    // declares it (docs/pipelines.md §9): ci-access, whose roles name that grant already, is unchanged.
    scenario.write(
      'stacks/main.ts',
      scenario.read('stacks/main.ts').replace('definePlatform(a, platformConfig, postgresState())', "definePlatform(a, platformConfig, postgresState()).appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev' })"),
    );
    expect(scenario.read('stacks/main.ts')).toContain(".appRoles.addApplication('billing-dev'");
    const before = scenario.commitToMain('add the billing application');
    const list = await scenario.list();
    expect(list).toMatch(/secretstore-iac-apply-ci-access\s/);
    // The merge request's review job is not in this pipeline; the default branch's is, before the applies.
    expect(list).not.toMatch(/secretstore-iac-access-diff\s/);
    expect(list).toMatch(/secretstore-iac-access-diff-default-branch\s+review\s/);

    const pipeline = await scenario.defaultBranch(before);
    const out = pipeline.output;
    expect(compilingJobs(out)).toEqual(['secretstore-iac-synth']);
    // Every job runs the bin the pipeline's variable names (this repository's dist/ here), not npx.
    expect(out).toMatch(/^secretstore-iac-apply-ci-access\s+\$ "\$SECRETSTORE_IAC_BIN" pipeline apply --stack ci-access$/m);
    expect(out).not.toMatch(/\$ npx /);
    // The first pipeline: its base's commit had none (the administrator bootstrapped it), so it is compiled, saying so.
    expect(out).toMatch(/secretstore-iac: base [0-9a-f]{12}: no synthesis of it in the synthesis cache \(no pipeline of its commit stored one this job can verify\): compiled and synthesized in a worktree/);
    // This commit's synthesis, for the next pipelines: sealed in the protected cache, and the copy merge requests read.
    expect(out).toMatch(/secretstore-iac: this commit's synthesis \(tree [0-9a-f]{12}\) stored in the synthesis cache \(\S*\/protected\), sealed/);
    expect(out).toMatch(/secretstore-iac: this commit's synthesis \(tree [0-9a-f]{12}\) written to \.secretstore-iac\/synth-shared too/);
    // A new application changes only its stack: app-roles is selected, ci-access is not.
    expect(out).toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bapp-roles\n/);
    expect(out).not.toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bci-access\n/);
    expect(out).toContain('secretstore-iac pipeline plan: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan');
    expect(out).toContain('secretstore-iac pipeline apply: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to apply');
    expect(out).not.toContain('stack app-roles is unchanged');
    // Between plan and apply, the review of this pipeline's saved plans records each one's SHA-256
    // (an artifact, printed in its log); the apply applies the plan only because the digests match.
    const planDigest = createHash('sha256').update(fs.readFileSync(scenario.artifact('secretstore-iac-plan-app-roles-default-branch', 'secretstore-iac-plans', 'app-roles.tfplan'))).digest('hex');
    const reviewed = JSON.parse(fs.readFileSync(scenario.artifact('secretstore-iac-access-diff-default-branch', 'reviewed-plans.json'), 'utf8'));
    expect(reviewed.plans.map((p: any) => [p.stack, p.sha256])).toEqual([['app-roles', planDigest]]);
    expect(pipeline.job('secretstore-iac-access-diff-default-branch').join('\n')).toContain(planDigest);
    expect(out).toMatch(/secretstore-iac-apply-app-roles\s+> secretstore-iac tf: app-roles: \S+\/app-roles\.tfplan is the plan the review \S+\/reviewed-plans\.json read \(SHA-256 matches\)/);
    // The review is sealed with the protected SECRETSTORE_IAC_REVIEW_SECRET (the harness sets it, as
    // docs/pipelines.md says to), for this pipeline and commit; the apply checks the seal before it trusts a digest.
    expect(reviewed.seal).toEqual({ hmac: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/), pipeline: expect.stringMatching(/^\d+$/), commit: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect(out).toMatch(/secretstore-iac-apply-app-roles\s+> secretstore-iac tf: app-roles: \S+\/reviewed-plans\.json: its seal verifies \(HMAC-SHA256 with SECRETSTORE_IAC_REVIEW_SECRET, pipeline \d+, commit [0-9a-f]{12}\)/);
    expect(out).not.toContain('is unverified (SECRETSTORE_IAC_REVIEW_SECRET is not set');
    // Created with the apply role's token, whose grant in app-roles the same apply widened first.
    expect(out).not.toMatch(/permission denied|Code: 403/);
    expect(out).toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete! Resources: [1-9]\d* added, \d+ changed, 0 destroyed/);
    expect(out).not.toContain(scenario.store.rootToken);
    expect(pipeline.code).toBe(0);
    const role = await fetch(`${scenario.store.addr}/v1/auth/approle/role/billing-dev`, { headers: { 'X-Vault-Token': scenario.store.rootToken } });
    expect(role.status).toBe(200);
  });

  it('merge request: its base from the default branch\'s pipeline (not compiled); plans with the read-only role; the access diff fails on a risk flag until acknowledged', async () => {
    // The change under review raises the job timeout: a TTL raised, one risk flag.
    scenario.writeConfig(configSource(scenario, 20));
    scenario.commitOnBranch('feature', 'longer CI jobs');
    const list = await scenario.list('feature');
    expect(list).toMatch(/secretstore-iac-plan-ci-access\s/);
    expect(list).not.toMatch(/secretstore-iac-apply-/);

    const pipeline = await scenario.mergeRequest('feature', 7);
    const out = pipeline.output;
    expect(out).toContain('json schema validated');
    // Compiled once per pipeline: tsc runs once, in the synth job (npm's line for its build script);
    // its synthesis runs that dist/ (npm run synth:built), without compiling again.
    expect(compilingJobs(out)).toEqual(['secretstore-iac-synth']);
    expect(out).toMatch(/secretstore-iac-synth\s+> secretstore-iac: synthesizing the dist\/ the job's npm run build compiled from [0-9a-f]{40}/);
    expect(out).toMatch(/secretstore-iac-synth\s+> > node dist\/stacks\/main\.js/);
    // One synthesis per ref: this commit by the synth job's own synthesis (secretstore-iac pipeline
    // synth), stored in its (unprotected) synthesis cache; the base, its diff base commit, from the copy
    // the default branch's pipeline of that commit wrote for merge requests (a cache entry keyed by the
    // commit; the protected, sealed entries are not this pipeline's): verified, not compiled.
    const diffBase = scenario.git('rev-parse', 'main');
    expect(out).toMatch(/secretstore-iac: this commit's synthesis \(tree [0-9a-f]{12}\) stored in the synthesis cache/);
    expect(out).toContain(`imported cache 'secretstore-iac-synth-shared-${diffBase}'`);
    expect(out).toContain(`secretstore-iac: base: ${diffBase} (${diffBase.slice(0, 12)}), the merge request's diff base (CI_MERGE_REQUEST_DIFF_BASE_SHA)`);
    expect(out).toContain(`secretstore-iac: base ${diffBase.slice(0, 12)}: its synthesis from the target branch's pipeline (the copy its synth job wrote to .secretstore-iac/synth-shared; key, tree and file digests match; unverified: a plain SHA-256 seal, which anyone who can write an unprotected cache can compute again, so it only decides this merge request's base): not compiled`);
    expect(out).not.toMatch(/synthesizing [0-9a-f]{12} in a temporary worktree|compiled and synthesized in a worktree/);
    expect(out).not.toMatch(/written to \.secretstore-iac\/synth-shared too/);
    expect(out).toMatch(/secretstore-iac: synth steps: this commit \d+\.\d s, store \d+\.\d s, base \d+\.\d s, moves \d+\.\d s, changed-stacks \d+\.\d s/);
    // The note's access part is the review of the plan jobs' saved plans (what the engine will apply),
    // naming each plan file with the SHA-256 of the artifact; the stack not planned is said so.
    expect(out).toMatch(/## Access changes: `store state \(refreshed, as planned\)` → `after applying the saved plans`/);
    const mrPlan = scenario.artifact('secretstore-iac-plan-ci-access', 'secretstore-iac-plans', 'ci-access.tfplan');
    expect(out).toContain(`| \`ci-access\` | \`secretstore-iac-plans/ci-access.tfplan\` | \`${createHash('sha256').update(fs.readFileSync(mrPlan)).digest('hex')}\` |`);
    expect(out).toContain('Read from the synthesized output on both sides (no plan given, taken as unchanged): `app-roles`.');
    // Only ci-access changed (its JWT roles' TTLs): app-roles's plan job ends at once, saying so.
    expect(out).toMatch(/secretstore-iac-plan-app-roles\s+finished in/);
    expect(out).toContain('secretstore-iac pipeline plan: stack app-roles is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan');
    expect(fs.existsSync(scenario.artifact('secretstore-iac-plan-app-roles', 'secretstore-iac-plans', 'app-roles.tfplan'))).toBe(false);
    expect(out).toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bci-access\n/);
    // The MR note: the access diff, then the stacks planned with their digests.
    expect(out).toContain('### Stacks planned: 1 of 2');
    expect(out).toMatch(/\| `app-roles` \| unchanged \| no \| `sha256:([0-9a-f]{16})` \| `sha256:\1` \|/);
    expect(out).toMatch(/\| `ci-access` \| changed \| yes \| `sha256:[0-9a-f]{16}` \| `sha256:[0-9a-f]{16}` \|/);
    for (const stack of ['ci-access']) {
      expect(out).toMatch(new RegExp(`secretstore-iac-plan-${stack}\\s+finished in`));
      const plan = scenario.artifact(`secretstore-iac-plan-${stack}`, 'secretstore-iac-plans', `${stack}.tfplan`);
      // The saved plan is an artifact: neither the state's connection string nor a store token is in it.
      const entries = planArchiveEntries(fs.readFileSync(plan));
      expect([...entries.keys()]).toContain('tfplan');
      const text = [...entries.values()].map((b) => b.toString('latin1')).join('\n');
      expect(text).toContain('secretstore_iac_');
      expect(text).not.toContain(scenario.pg.connStr.replace(/\?.*$/, ''));
      expect(text).not.toContain(scenario.store.rootToken);
    }
    // The three JWT roles' TTLs (registry-ci and the two pipeline roles), planned with the read-only role.
    expect(out).toMatch(/Plan: 0 to add, 3 to change, 0 to destroy/);
    expect(out).toContain('SECRETSTORE_IAC_NOTE_TOKEN is not set: the note is not posted; it is in the job log above and in the artifact access-diff.md');
    expect(out).toMatch(/risk flag\(s\) in the access diff: review them, then add the label access-risk-acknowledged/);
    expect(out).toMatch(/\*\*TTL raised\*\*/);
    expect(pipeline.code).not.toBe(0);
    expect(out).not.toContain(scenario.store.rootToken);

    // The label, on the review job alone (it reads the plan jobs' saved plans, the artifacts of the run above).
    const acknowledged = await scenario.mergeRequest('feature', 7, { jobs: ['secretstore-iac-access-diff'], only: true, variables: { CI_MERGE_REQUEST_LABELS: 'docs,access-risk-acknowledged' } });
    expect(acknowledged.output).toMatch(/risk flag\(s\) acknowledged by the label access-risk-acknowledged/);
    expect(acknowledged.code).toBe(0);
  });

  it('default branch, sharding: the migration into hash shards, then a re-shard whose retired shard, holding only its own grants, is applied without the manual job; nothing recreated, a Secret ID issued before still logs in', async () => {
    const { store, pg } = scenario;
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
    // The retired shard's two grants: the only objects it declares that no stack declares any more.
    const retiredGrants = ['secretstore-iac-pipeline-app-roles-02', 'secretstore-iac-plan-app-roles-02'];
    /** The stacks a shard job of `run` plans or applies, from its log line. */
    const shardJob = (run: { job(job: string): string[] }, job: string, what: 'plans' | 'applies', n: number, of: number) => {
      const lines = run.job(job);
      const prefix = `secretstore-iac pipeline ${what === 'plans' ? 'plan' : 'apply'}: job ${n} of ${of} of app-roles-shards ${what}, in this order: `;
      const line = lines.find((l) => l.startsWith(prefix));
      expect({ job, found: line !== undefined }).toEqual({ job, found: true });
      return { stacks: line!.slice(prefix.length).replace(/ \(.*$/, '').split(', '), log: lines.join('\n') };
    };

    // 1. Into three hash shards: authentik-role in app-roles-01, the four others in app-roles-02. The
    // new shards' grants are new names on the pipeline roles: ci-access changes too. New shard stacks
    // are new jobs: the committed copy of the pipeline follows the synthesis.
    scenario.writeConfig(configSource(scenario, 15, 3));
    scenario.refreshPipelineCopy();
    const migrated = await scenario.defaultBranch(scenario.commitToMain('applications in 3 hash shards'));
    let out = migrated.output;
    expect(out).toMatch(/Wrote cdktf\.out\/stacks\/app-roles\/moves\.tf\.json: forget 10, import 0\./);
    expect(out).toMatch(/Wrote cdktf\.out\/stacks\/app-roles-02\/moves\.tf\.json: forget 0, import 8\./);
    // The synth job's list (standard error lines may come between its lines: the log merges both streams).
    const synthLines = migrated.job('secretstore-iac-synth');
    const header = synthLines.findIndex((l) => /stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):$/.test(l));
    const end = synthLines.findIndex((l, i) => i > header && l.startsWith('secretstore-iac: synth steps:'));
    const selection = synthLines.slice(header + 1, end).flatMap((l) => /^secretstore-iac: {3}(\S+)$/.exec(l)?.[1] ?? []);
    // Every stack, each shard after the mount stack it depends on.
    expect({ header, sorted: [...selection].sort() }).toEqual({ header: expect.any(Number), sorted: ['app-roles', 'app-roles-01', 'app-roles-02', 'ci-access'] });
    expect(selection.indexOf('app-roles')).toBeLessThan(selection.indexOf('app-roles-01'));
    expect(out).toContain('no retired stack (one the base had and this commit no longer has): nothing to apply');
    // The shards are planned and applied by the shard jobs (two: no more than there are shards), one each.
    for (const [n, stack] of [[1, 'app-roles-01'], [2, 'app-roles-02']] as const) {
      expect(shardJob(migrated, `secretstore-iac-plan-app-roles-shards-${n}-default-branch`, 'plans', n, 2).stacks).toEqual([stack]);
      const applied = shardJob(migrated, `secretstore-iac-apply-app-roles-shards-${n}`, 'applies', n, 2);
      expect(applied.stacks).toEqual([stack]);
      expect(applied.log).toMatch(/Apply complete!/);
    }
    expect(out).not.toMatch(/secretstore-iac-(plan|apply)-app-roles-0\d\s/);
    expect(out.match(new RegExp(destroying.source, 'g')) ?? []).toEqual([]);
    expect(out).not.toMatch(/permission denied/);
    expect(migrated.code).toBe(0);
    expect(stateResources('app-roles').filter((r) => r.startsWith('vault_approle_auth_backend_role.'))).toEqual([]);
    expect(stateResources('app-roles-02').filter((r) => r.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(4);
    const rolesBefore = await listed('auth/approle/role');
    const policiesBefore = await listed('sys/policies/acl');
    expect(policiesBefore).toEqual(expect.arrayContaining(retiredGrants));

    // 2. Down to two shards: every application in app-roles-01; app-roles-02 is retired. Its objects
    // all moved, and its two grants, declared nowhere any more, are the pipeline's own: destroyed with
    // its apply in the retire stage, with the apply role's own token, no person needed (docs/pipelines.md §8).
    scenario.writeConfig(configSource(scenario, 15, 2));
    scenario.refreshPipelineCopy();
    const resharded = await scenario.defaultBranch(scenario.commitToMain('applications in 2 hash shards'));
    out = resharded.output;
    expect(out).toMatch(/Wrote cdktf\.out\/stacks\/app-roles-02\/moves\.tf\.json: forget 8, import 0 \(a stack HEAD no longer has: plan and apply it, which destroys its 2 pipeline grants without approval/);
    // ci-access keeps the retired shard's grants on the roles (the override moves wrote) until the retire stage.
    expect(out).toContain('its roles keep the policies of app-roles-02 until their removal is applied.');
    // The job log merges standard output and standard error in arrival order: a line of changed-stacks'
    // (standard error) may come between the header and the list (seen once in CI).
    expect(out).toMatch(/retired stacks, planned and applied after every other stack \(forgets; removals only by secretstore-iac-destroy-removed-objects\):\n(?:[^\n]*\n)*?[^\n]*?secretstore-iac: {3}app-roles-02\n/);
    expect(out).toMatch(/secretstore-iac-plan-retired-default-branch\s+> [^\n]*8 to forget/);
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
    expect(shardJob(resharded, 'secretstore-iac-apply-app-roles-shards-1', 'applies', 1, 1).stacks).toEqual(['app-roles-01']);
    expect(out).not.toContain('secretstore-iac-apply-app-roles-shards-2');
    expect(finished('secretstore-iac-apply-app-roles-shards-1')).toBeGreaterThanOrEqual(0);
    expect(finished('secretstore-iac-apply-app-roles-shards-1')).toBeLessThan(finished('secretstore-iac-apply-retired'));
    // The retired state is empty; every application is in app-roles-01.
    expect(stateResources('app-roles-02')).toEqual([]);
    expect(stateResources('app-roles-01').filter((r) => r.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(5);

    // Each stack's engine run carries only the grants it needs (docs/pipelines.md §9), not every stack's
    // the jobs' tokens carry: the shard that imports the retired shard's objects also that shard's grant
    // (only it covers them until the shard's apply widens its own), the retired shard its own.
    const stackToken = (job: string, stack: string) => resharded.job(job).find((l) => / the engine runs with a token of its own carrying /.test(l) && l.includes(`: ${stack}: `)) ?? `${job}: no narrowed token for ${stack}`;
    for (const job of ['secretstore-iac-plan-app-roles-shards-1-default-branch', 'secretstore-iac-apply-app-roles-shards-1']) {
      const line = stackToken(job, 'app-roles-01');
      const carried = /carrying ([^:]*):/.exec(line)?.[1].split(', ').sort();
      expect({ job, carried }).toEqual({ job, carried: ['default', 'secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles-01', 'secretstore-iac-pipeline-app-roles-02'] });
      expect(line).toContain('secretstore-iac-pipeline-app-roles-02 (the grant of app-roles-02: objects moved out of it');
    }
    expect(stackToken('secretstore-iac-apply-retired', 'app-roles-02')).toMatch(/carrying default, secretstore-iac-pipeline, secretstore-iac-pipeline-app-roles-02: .*not the \d+ other stacks' grants/);

    // Nothing of an application was destroyed or recreated: the same roles and policies but the two
    // grants, the same Role IDs, and the Secret ID issued before the moves logs in.
    expect(await listed('auth/approle/role')).toEqual(rolesBefore);
    expect(await listed('sys/policies/acl')).toEqual(policiesBefore.filter((p) => !retiredGrants.includes(p)));
    expect({ 'orchestrator-dev': await roleId('orchestrator-dev'), 'billing-dev': await roleId('billing-dev') }).toEqual(before);
    const login = await fetch(`${store.addr}/v1/auth/approle/login`, { method: 'POST', body: JSON.stringify({ role_id: before['orchestrator-dev'], secret_id: secretId }) });
    expect(login.status).toBe(200);
    expect(migrated.output).not.toContain(secretId);
    expect(resharded.output).not.toContain(secretId);
  });

  it('default branch: a reviewed-plans.json edited between the review and the apply is refused by the apply job (its seal does not verify, or it carries none): nothing applied; the review as sealed applies', async () => {
    const { store } = scenario;
    const root = { headers: { 'X-Vault-Token': store.rootToken } };
    const roleStatus = async () => (await fetch(`${store.addr}/v1/auth/approle/role/metrics-dev`, root)).status;
    const billing = ".appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev' })";
    const main = scenario.read('stacks/main.ts');
    expect(main).toContain(billing);
    scenario.write(
      'stacks/main.ts',
      main.replace(`definePlatform(a, platformConfig, postgresState())${billing}`, "{ const roles = definePlatform(a, platformConfig, postgresState()).appRoles; roles.addApplication('billing-dev', { name: 'billing', environment: 'dev' }); roles.addApplication('metrics-dev', { name: 'metrics', environment: 'dev' }); }"),
    );
    // metrics-dev hashes into app-roles-01, the one shard of two the applications use (hashShard): no new
    // shard stack, so no new jobs and the committed pipeline copy stays.
    const before = scenario.commitToMain('add the metrics application');
    const APPLY = 'secretstore-iac-apply-app-roles-shards-1';
    // The pipeline up to its review: synthesized, planned, reviewed, sealed with the protected secret.
    const reviewedRun = await scenario.defaultBranch(before, { jobs: ['secretstore-iac-access-diff-default-branch'] });
    expect({ code: reviewedRun.code, tail: reviewedRun.code === 0 ? '' : reviewedRun.output.split('\n').filter((l) => /error|Error|refus|fail|FAIL/.test(l)).slice(-25).join('\n') }).toEqual({ code: 0, tail: '' });
    const file = scenario.artifact('secretstore-iac-access-diff-default-branch', 'reviewed-plans.json');
    const sealed = fs.readFileSync(file, 'utf8');
    const review = JSON.parse(sealed);
    expect(review.plans.map((p: any) => p.stack)).toEqual(['app-roles-01']);
    expect(review.seal.hmac).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(await roleStatus()).toBe(404);

    const refusedWith = async (edited: string, why: RegExp) => {
      fs.writeFileSync(file, edited);
      const run = await scenario.defaultBranch(before, { jobs: [APPLY], only: true });
      const log = run.job(APPLY).join('\n');
      expect({ code: run.code === 0, why: why.test(log), applied: /Apply complete!/.test(log) }).toEqual({ code: false, why: true, applied: false });
      expect(await roleStatus()).toBe(404);
    };
    // (a) One plan's digest changed (the way to make it name another plan), the seal kept.
    const otherDigest = createHash('sha256').update('another plan').digest('hex');
    await refusedWith(JSON.stringify({ ...review, plans: review.plans.map((p: any) => ({ ...p, sha256: otherDigest })) }, null, 2), /the seal of \S*reviewed-plans\.json does not verify with SECRETSTORE_IAC_REVIEW_SECRET: the file was edited after the review/);
    // (b) The seal taken away (an unsealed file is what a review without the secret writes).
    const { seal: _seal, ...unsealed } = review;
    await refusedWith(JSON.stringify(unsealed, null, 2), /reviewed-plans\.json carries no seal, and SECRETSTORE_IAC_REVIEW_SECRET is set/);

    // The review as its job sealed it: the same apply job applies it.
    fs.writeFileSync(file, sealed);
    const applied = await scenario.defaultBranch(before, { jobs: [APPLY], only: true });
    const log = applied.job(APPLY).join('\n');
    expect(log).toMatch(/reviewed-plans\.json: its seal verifies \(HMAC-SHA256 with SECRETSTORE_IAC_REVIEW_SECRET, pipeline \d+, commit [0-9a-f]{12}\)/);
    expect(log).toMatch(/Apply complete! Resources: [1-9]\d* added/);
    expect(applied.code).toBe(0);
    expect(await roleStatus()).toBe(200);
    expect(reviewedRun.output + applied.output).not.toContain(store.rootToken);
  });
});
