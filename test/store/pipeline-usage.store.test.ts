/**
 * Issue 47, "in the pipeline" (docs/usage.md §9), under gitlab-ci-local against a real store with a
 * file audit device: an application logs in with its AppRole and reads its secret; the schedule's
 * `secretstore-iac-usage` job, given the store's audit log by `SECRETSTORE_IAC_AUDIT_LOG`, keeps
 * `usage.json` (that read among the application's used grants) and `usage.svg`, and the narrowing
 * as a change (`narrowing.patch`: the account `helm`'s `readByCi`, never read, set to false; git
 * applies it to the repository) with its description (`narrowing.md`); served as the
 * default branch's artifact by a stand-in of exactly the GitLab endpoint the review calls, a merge
 * request that removes the application gets a note that shows the removed access's last use and
 * flags `access in use removed`, and its review fails until the risk is acknowledged.
 * Then that narrowing goes through the pipeline: the patch applied on a branch, its merge request's
 * note shows `jwt/registry-ci` losing the read of `svc-helm` (no `access in use removed`), the
 * default branch applies it as approved, and a CI job's token is refused that read (403; 200 before)
 * while the application's used read stays 200; the workload replayed after it is refused nothing,
 * and the next usage job narrows nothing more (a fixed point). With
 * `SECRETSTORE_IAC_NARROW_RETIRE_IDLE=true` the narrowing also retires the application that never
 * logged in (`search-dev`): through the merge request and the manual removal job, its role is gone
 * and its login refused (400).
 * On both stores: each writes its own audit log, which the usage job reads (the other gitlab-ci-local
 * scenarios run on OpenBao only).
 */
import * as fs from 'fs';
import { GitLabStandIn } from '../support/gitlab-stand-in';
import { PROJECT_ID } from '../support/store/configuration-pipeline-harness';
import { appRoleLogin, clientToken, jwtLogin, TEST_SETTINGS } from '../support/store/platform-fixture';
import { gitlabJobClaims, signJwt } from '../support/store/jwt-signer';
import { PipelineScenario, ScenarioParts } from '../support/store/pipeline-scenario';
import { storeRequest } from '../support/store/store-server';

const USAGE_JOB = 'secretstore-iac-usage';
const REVIEW = 'secretstore-iac-access-diff';
const BOT = { id: 90, username: 'project_4242_bot', token: 'glpat-store-usage-bot' };
const SECRET_PATH = 'secret/data/acme/dev/billing/database';

const configSource = ({ key }: ScenarioParts, billing: boolean) => `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(15),
  configurationProject: { projectId: '${PROJECT_ID}' },
  accounts: { helm: { permissions: ['raw:read'], usedBy: 'helm charts', readByCi: true } },
  applications: { ${billing ? "'billing-dev': { name: 'billing', environment: 'dev' }, " : ''}'search-dev': { name: 'search', environment: 'dev' } },
};
`;

describe('the usage file in the pipeline: the schedule keeps it from the audit log, every merge request\'s note reads it', () => {
  let scenario: PipelineScenario;
  let gitlab: GitLabStandIn;

  beforeAll(async () => {
    gitlab = await GitLabStandIn.start(PROJECT_ID, [BOT]);
    scenario = await PipelineScenario.start({
      name: 'pipeline-usage',
      audited: true,
      config: (parts) => configSource(parts, true),
      bootstrap: ['app-roles', 'ci-access'],
      variables: { SECRETSTORE_IAC_NOTE_TOKEN: BOT.token, CI_API_V4_URL: gitlab.apiUrl, CI_PROJECT_ID: PROJECT_ID, CI_DEFAULT_BRANCH: 'main', GITLAB_USER_LOGIN: 'alice' },
    });
  });

  /** The usage job's last patch applied on `branch`, as docs/usage.md §9 says a person does, and that branch's merge request `iid` reviewed: its run and its note. */
  async function narrowingMergeRequest(branch: string, iid: number, message: string) {
    scenario.git('checkout', '-q', '-b', branch);
    scenario.git('apply', scenario.artifact(USAGE_JOB, 'narrowing.patch'));
    scenario.git('commit', '-q', '-am', message);
    scenario.git('checkout', '-q', 'main');
    gitlab.mergeRequests.set(iid, { iid, state: 'opened', target_branch: 'main', sha: scenario.git('rev-parse', branch), merge_commit_sha: null, squash_commit_sha: null, commits: scenario.git('rev-list', `main..${branch}`).split('\n') });
    const mr = await scenario.mergeRequest(branch, iid);
    return { mr, note: gitlab.noteBodies(iid).join('\n') };
  }

  /** The HTTP status of `path` read by a fresh AppRole login of `role` (its Role ID and a new Secret ID, read with the root token). */
  async function readAsApplication(role: string, path: string): Promise<number> {
    const roleId = (await storeRequest(scenario.store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id;
    const secretId = (await storeRequest(scenario.store, 'POST', `auth/approle/role/${role}/secret-id`, {})).body.data.secret_id;
    return (await storeRequest(scenario.store, 'GET', path, undefined, clientToken(await appRoleLogin(scenario.store, roleId, secretId)))).status;
  }

  afterAll(async () => {
    await scenario?.stop();
    await gitlab?.stop();
  });

  it('the application reads its secret; the usage job keeps that read in usage.json and draws it in usage.svg; the merge request removing the application shows its last use and flags it', async () => {
    // The workload: billing-dev's container logs in with its AppRole and reads its database secret.
    expect((await storeRequest(scenario.store, 'POST', SECRET_PATH, { data: { host: 'db.billing.internal' } })).status).toBe(200);
    const roleId = (await storeRequest(scenario.store, 'GET', 'auth/approle/role/billing-dev/role-id')).body.data.role_id;
    const secretId = (await storeRequest(scenario.store, 'POST', 'auth/approle/role/billing-dev/secret-id', {})).body.data.secret_id;
    const token = clientToken(await appRoleLogin(scenario.store, roleId, secretId));
    expect((await storeRequest(scenario.store, 'GET', SECRET_PATH, undefined, token)).status).toBe(200);
    expect(fs.statSync(scenario.auditLog!).size).toBeGreaterThan(0);

    // The schedule's usage job, the audit log given as the operators would (a path on the runner).
    const schedule = await scenario.defaultBranch(undefined, { jobs: [USAGE_JOB], variables: { CI_PIPELINE_SOURCE: 'schedule', SECRETSTORE_IAC_AUDIT_LOG: scenario.auditLog! } });
    expect({ code: schedule.code, usage: schedule.job(USAGE_JOB).join('\n').includes('grants used') }).toEqual({ code: 0, usage: true });
    const usageText = fs.readFileSync(scenario.artifact(USAGE_JOB, 'usage.json'), 'utf8');
    const usage = JSON.parse(usageText) as { identities: Array<{ identity: string; logins: number; used: Array<{ rule: string; requests: Array<{ path: string; operation: string }> }> }> };
    const billing = usage.identities.find((u) => u.identity === 'approle/billing-dev')!;
    expect(billing.logins).toBe(1);
    expect(billing.used.flatMap((g) => g.requests.map((r) => `${r.operation} ${r.path}`))).toContain(`read ${SECRET_PATH}`);
    expect(fs.readFileSync(scenario.artifact(USAGE_JOB, 'usage.svg'), 'utf8')).toContain('data-identity="approle/billing-dev"');
    // No secret value in what the job keeps: the audit log HMACs them, the report counts requests.
    expect(usageText).not.toContain('db.billing.internal');
    expect(usageText).not.toContain(secretId);
    // The narrowing of that usage as a change (docs/usage.md §8-9): helm's readByCi, never read by CI in
    // the window, set to false in a patch of stacks/platform.config.ts that git applies to the repository.
    expect(schedule.job(USAGE_JOB).join('\n')).toMatch(/the narrowing as a change: narrowing\.patch \(2 changed lines of stacks\/platform\.config\.ts; `git apply narrowing\.patch` in a merge request\) and narrowing\.md/);
    expect(fs.readFileSync(scenario.artifact(USAGE_JOB, 'narrowing.md'), 'utf8')).toContain('| `accounts.helm.readByCi: true -> false');
    const patch = scenario.artifact(USAGE_JOB, 'narrowing.patch');
    expect(scenario.read('stacks/platform.config.ts')).toContain('readByCi: true');
    scenario.git('apply', patch);
    expect(scenario.read('stacks/platform.config.ts')).toBe(configSource(scenario, true).replace('readByCi: true', 'readByCi: false'));
    scenario.git('checkout', '--', 'stacks/platform.config.ts');

    // GitLab keeps it as the default branch's artifact; the merge request that removes billing-dev.
    gitlab.setBranchArtifact('main', USAGE_JOB, 'usage.json', usageText);
    gitlab.mergeRequests.set(1, { iid: 1, state: 'opened', target_branch: 'main', sha: '', merge_commit_sha: null, squash_commit_sha: null, commits: [] });
    scenario.git('checkout', '-q', '-b', 'remove-billing');
    scenario.writeConfig(configSource(scenario, false));
    scenario.git('commit', '-q', '-am', 'remove the billing application');
    scenario.git('checkout', '-q', 'main');
    const mr = await scenario.mergeRequest('remove-billing', 1);
    const review = mr.job(REVIEW).join('\n');
    expect(review).toContain("read usage.json of secretstore-iac-usage in main's latest successful pipeline (GitLab API) as usage-of-default-branch.json");
    expect(gitlab.requests.filter((q) => q.path.endsWith('/jobs/artifacts/main/raw/usage.json'))).toEqual([{ method: 'GET', path: `/api/v4/projects/${PROJECT_ID}/jobs/artifacts/main/raw/usage.json`, user: BOT.username, status: 200 }]);
    const note = gitlab.noteBodies(1).join('\n');
    expect(note).toContain('Use of the access this change removes');
    expect(note).toContain('access in use removed');
    expect(note).toContain(SECRET_PATH);
    // The risk flag fails the review until acknowledged (the label, or SECRETSTORE_IAC_ACCEPT_RISK).
    expect(mr.code).not.toBe(0);
    expect(review).toMatch(/risk flag/);
  });
  it("the narrowing applied through the pipeline: its merge request's note shows registry-ci losing the never-used read, the default branch applies it as approved, and a CI job's token is then refused that read (403)", async () => {
    const HELM = 'secret/data/registry/svc-helm';
    expect((await storeRequest(scenario.store, 'POST', HELM, { data: { password: 'helm-registry-test-password' } })).status).toBe(200);
    const jobToken = async () => clientToken(await jwtLogin(scenario.store, 'registry-ci', signJwt(scenario.key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: scenario.key.kid })));
    expect((await storeRequest(scenario.store, 'GET', HELM, undefined, await jobToken())).status).toBe(200);

    // A person applies the usage job's patch on a branch, as docs/usage.md §9 says.
    const { mr, note } = await narrowingMergeRequest('narrow-helm', 2, 'narrow: helm is never read by CI (narrowing.patch of the usage job)');
    expect(note).toContain('jwt/registry-ci');
    expect(note).toContain(HELM);
    expect(note).not.toContain('access in use removed');
    expect(mr.code).toBe(0);

    const before = scenario.merge('narrow-helm');
    gitlab.mergeRequests.get(2)!.state = 'merged';
    const applied = await scenario.defaultBranch(before);
    expect(applied.job('secretstore-iac-access-diff-default-branch').join('\n')).toContain('the plans give exactly the change approved by !2: the apply jobs apply them');
    expect(applied.code).toBe(0);

    // The workload replayed after the narrowing (docs/usage.md §9): the application logs in and reads
    // its secret, a CI job logs in; the next schedule's usage job, over the log since the replay began,
    // finds no request of theirs refused and narrows nothing more (a fixed point).
    const replayStart = new Date(Date.now() - 1000).toISOString();
    expect(await readAsApplication('billing-dev', SECRET_PATH)).toBe(200);
    await jobToken();
    const replay = await scenario.defaultBranch(undefined, { jobs: [USAGE_JOB], variables: { CI_PIPELINE_SOURCE: 'schedule', SECRETSTORE_IAC_AUDIT_LOG: scenario.auditLog!, SECRETSTORE_IAC_USAGE_SINCE: replayStart } });
    expect(replay.code).toBe(0);
    const replayed = (JSON.parse(fs.readFileSync(scenario.artifact(USAGE_JOB, 'usage.json'), 'utf8')) as { identities: Array<{ identity: string; logins: number; used: Array<{ requests: Array<{ path: string; operation: string }> }>; denied: Array<{ path: string; operation: string }> }> }).identities;
    const workload = (identity: string) => {
      const u = replayed.find((i) => i.identity === identity)!;
      return { logins: u.logins, used: u.used.flatMap((g) => g.requests.map((r) => `${r.operation} ${r.path}`)), denied: u.denied };
    };
    expect(workload('approle/billing-dev')).toEqual({ logins: 1, used: [`read ${SECRET_PATH}`], denied: [] });
    expect(workload('jwt/registry-ci')).toEqual({ logins: 1, used: [], denied: [] });
    expect(replay.job(USAGE_JOB).join('\n')).toContain('the narrowing edits nothing in stacks/platform.config.ts');
    expect(fs.existsSync(scenario.artifact(USAGE_JOB, 'narrowing.patch'))).toBe(false);

    // The removed grant is refused on the store; the application's used read is untouched.
    expect((await storeRequest(scenario.store, 'GET', HELM, undefined, await jobToken())).status).toBe(403);
    expect(await readAsApplication('billing-dev', SECRET_PATH)).toBe(200);
  });

  it('with SECRETSTORE_IAC_NARROW_RETIRE_IDLE=true the narrowing retires the application that never logged in: its patch removes search-dev, the merge request shows the role removed, the manual job destroys it, and its login is then refused (400)', async () => {
    // Credentials of the idle application, read with the root token (no request of search-dev's own).
    const roleId = (await storeRequest(scenario.store, 'GET', 'auth/approle/role/search-dev/role-id')).body.data.role_id;
    const secretId = (await storeRequest(scenario.store, 'POST', 'auth/approle/role/search-dev/secret-id', {})).body.data.secret_id;
    const schedule = await scenario.defaultBranch(undefined, { jobs: [USAGE_JOB], variables: { CI_PIPELINE_SOURCE: 'schedule', SECRETSTORE_IAC_AUDIT_LOG: scenario.auditLog!, SECRETSTORE_IAC_NARROW_RETIRE_IDLE: 'true' } });
    expect(schedule.code).toBe(0);
    expect(fs.readFileSync(scenario.artifact(USAGE_JOB, 'narrowing.md'), 'utf8')).toContain('| `applications.search-dev removed (role approle/search-dev (stack app-roles) never logged in in the window)` |');
    const { mr, note } = await narrowingMergeRequest('retire-search', 3, 'narrow: search-dev never logged in (narrowing.patch of the usage job, SECRETSTORE_IAC_NARROW_RETIRE_IDLE)');
    expect(scenario.git('show', 'retire-search:stacks/platform.config.ts')).toBe(configSource(scenario, true).replace('readByCi: true', 'readByCi: false').replace(", 'search-dev': { name: 'search', environment: 'dev' }", '').trimEnd());
    expect(note).toContain('approle/search-dev');
    expect(note).toContain('auth/approle/role/search-dev');
    expect(note).not.toContain('access in use removed');
    expect(mr.code).toBe(0);
    // Merged: the apply jobs leave the revocation to the manual job; a person starts it.
    const before = scenario.merge('retire-search');
    gitlab.mergeRequests.get(3)!.state = 'merged';
    const applied = await scenario.defaultBranch(before);
    expect(applied.code).toBe(0);
    expect((await storeRequest(scenario.store, 'GET', 'auth/approle/role/search-dev')).status).toBe(200);
    const destroyed = await scenario.defaultBranch(before, { jobs: ['secretstore-iac-destroy-removed-objects'], only: true, manual: 'secretstore-iac-destroy-removed-objects' });
    expect(destroyed.output).toMatch(/secretstore-iac pipeline removals: app-roles: destroys [^\n]*auth\/approle\/role\/search-dev/);
    expect(destroyed.code).toBe(0);
    expect((await storeRequest(scenario.store, 'GET', 'auth/approle/role/search-dev')).status).toBe(404);
    expect((await appRoleLogin(scenario.store, roleId, secretId)).status).toBe(400);
    expect(destroyed.output).not.toContain(secretId);
    // The used application is untouched.
    expect(await readAsApplication('billing-dev', SECRET_PATH)).toBe(200);
  });
});
