/**
 * Issue 46 under gitlab-ci-local against a real store (OpenBao and Vault) and a PostgreSQL state, with a local stand-in
 * for exactly the GitLab API endpoints the pipeline calls (test/support/gitlab-stand-in.ts): the
 * approval of record is what the default branch applies.
 * - one merge request approved and merged: its note carries the record (posted with the pipeline's
 *   token); the default branch reads it back through the API and applies unchanged;
 * - a grant made by hand between review and merge: the default branch's plan would revert it; nothing
 *   is applied, the difference is named as drift and posted to the merge request; after a person starts
 *   the manual confirmation job, the store equals the confirmed change, each identity's live answers
 *   checked with its own token;
 * - three merge requests reviewed against one base and merged in turn, each merge's pipeline applying
 *   on top of the one before: the second's change composes with the first's (another binding of the
 *   identity): applied, its note marked stale in the merge request; the third's changes the binding
 *   the first changed: the result is one no note showed, named as another merge request's, not applied;
 * - without the note token on the default branch: fail-closed (nothing applied, the line names the
 *   variable), applied once a person starts the manual job;
 * - a merge request approved, then merged with a merge commit carrying a change its head did not (a
 *   resolution that gives audit-dev the orchestrator's policy): nothing applied (audit-dev's read of
 *   the orchestrator's secret stays 403 with its own token), named as a change no note showed
 *   (`unapproved`, the identity and path), posted; applied once a person starts the manual job, the
 *   store then equal to the confirmed change (live answers);
 * - a squash commit that differs from the reviewed head the same way: stopped, named, posted.
 * The scenarios build on each other, in order.
 */
import * as fs from 'fs';
import { AccessChangeRecord } from '../../lib/access/access-change-record';
import { GitLabStandIn } from '../support/gitlab-stand-in';
import { PROJECT_ID } from '../support/store/configuration-pipeline-harness';
import { appRoleLogin, clientToken, mountKv, TEST_SETTINGS, writeKv2 } from '../support/store/platform-fixture';
import { PipelineScenario, ScenarioParts } from '../support/store/pipeline-scenario';
import { storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';

const BOT = { id: 90, username: `project_${PROJECT_ID}_bot`, token: 'glpat-scenario-bot-7f3e' };
const CONFIRM = 'secretstore-iac-confirm-apply';
const REVIEW = 'secretstore-iac-access-diff-default-branch';

// audit-dev's TTLs: the defaults' line and the application's own lines are separate hunks, so merge
// requests changing one each merge cleanly (and may meet in one binding of the identity).
const configSource = ({ key }: ScenarioParts) => `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

const appDefaults = { tokenTtl: Duration.hours(12), tokenMaxTtl: Duration.hours(24) };

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(15),
  configurationProject: { projectId: '${PROJECT_ID}' },
  applications: {
    'audit-dev': {
      ...appDefaults,
      // its own settings override the defaults
      name: 'audit',
      environment: 'dev',
      secretIdTtl: Duration.seconds(0),
    },
  },
};
`;

describe(`the approval of record is what the default branch applies on ${storeKind()} (issue 46)`, () => {
  let scenario: PipelineScenario;
  let gitlab: GitLabStandIn;

  beforeAll(async () => {
    gitlab = await GitLabStandIn.start(PROJECT_ID, [BOT]);
    scenario = await PipelineScenario.start({
      name: 'approval-of-record',
      config: configSource,
      bootstrap: ['app-roles', 'ci-access'],
      variables: { SECRETSTORE_IAC_NOTE_TOKEN: BOT.token, CI_API_V4_URL: gitlab.apiUrl, CI_PROJECT_ID: PROJECT_ID, SECRETSTORE_IAC_ACCEPT_RISK: 'true', GITLAB_USER_LOGIN: 'alice' },
    });
  });

  afterAll(async () => {
    await scenario?.stop();
    await gitlab?.stop();
  });

  /** The shipped entry point's one-line declaration, as a block where merge requests add applications (one line each). */
  const DECLARED = '(a) => definePlatform(a, platformConfig, postgresState()));';
  const BLOCK = '(a) => {\n  const platform = definePlatform(a, platformConfig, postgresState());\n  // applications added by merge requests\n';

  /** A merge request adding application `name` to app-roles, its pipeline run: its note posted. */
  async function mergeRequestAdding(name: string, iid: number) {
    const main = scenario.read('stacks/main.ts');
    const line = `  platform.appRoles.addApplication('${name}-dev', { name: '${name}', environment: 'dev' });\n`;
    // addApplication returns the application, not the platform: one statement per application.
    const changed = main.includes(BLOCK) ? main.replace(BLOCK, `${BLOCK}${line}`) : main.replace(DECLARED, `${BLOCK}${line}});`);
    expect(changed).not.toBe(main);
    scenario.write('stacks/main.ts', changed);
    return mergeRequestOf(`add-${name}`, iid, `add the ${name} application`);
  }

  /** The working tree's change as merge request `iid` on `branch` (from the default branch), its pipeline run: its note posted. */
  async function mergeRequestOf(branch: string, iid: number, message: string) {
    scenario.commitOnBranch(branch, message);
    const head = scenario.git('rev-parse', branch);
    gitlab.mergeRequests.set(iid, { iid, state: 'opened', target_branch: 'main', sha: head, merge_commit_sha: null, squash_commit_sha: null, commits: scenario.git('rev-list', `main..${branch}`).split('\n') });
    const run = await scenario.mergeRequest(branch, iid);
    expect(run.output).toContain(`secretstore-iac pipeline review: the note is posted to !${iid}`);
    const notes = gitlab.noteBodies(iid);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain('### Approval record');
    expect(notes[0]).toMatch(/<!-- secretstore-iac:approval-record sha256=[0-9a-f]{64} /);
    return run;
  }

  /** Merges it (fast-forward, pushed), as GitLab marks it merged: the commit before, for the push's pipeline. */
  function merge(name: string, iid: number): string {
    return mergeBranch(`add-${name}`, iid);
  }

  /** Merges `branch` (fast-forward, pushed), as GitLab marks merge request `iid` merged: the commit before. */
  function mergeBranch(branch: string, iid: number): string {
    const before = scenario.merge(branch);
    gitlab.mergeRequests.get(iid)!.state = 'merged';
    return before;
  }

  /**
   * Merges `branch` with a merge commit (GitLab's default merge method), pushed, as GitLab records it:
   * the commit before. `resolution`: edits made in the merge commit itself (as a conflict resolution
   * does), beyond both parents.
   */
  function mergeCommit(branch: string, iid: number, resolution?: () => void): string {
    const before = scenario.git('rev-parse', 'main');
    const message = `Merge branch '${branch}' into 'main'`;
    if (resolution === undefined) scenario.git('merge', '-q', '--no-ff', '-m', message, branch);
    else {
      scenario.git('merge', '-q', '--no-ff', '--no-commit', branch);
      resolution();
      scenario.git('commit', '-q', '-am', message);
      expect(scenario.git('rev-list', '--parents', '-n', '1', 'HEAD').split(' ')).toHaveLength(3);
    }
    scenario.git('push', '-q', 'origin', 'main');
    Object.assign(gitlab.mergeRequests.get(iid)!, { state: 'merged', merge_commit_sha: scenario.git('rev-parse', 'main') });
    return before;
  }

  /** Squashes `branch` into one commit on the default branch with `extra` edits beside it, pushed, as GitLab records it: the commit before. */
  function squash(branch: string, iid: number, extra: () => void): string {
    const before = scenario.git('rev-parse', 'main');
    scenario.git('merge', '-q', '--squash', branch);
    extra();
    scenario.git('commit', '-q', '-am', `${branch} (squashed)`);
    expect(scenario.git('rev-list', '--parents', '-n', '1', 'HEAD').split(' ')).toEqual([scenario.git('rev-parse', 'main'), before]);
    scenario.git('push', '-q', 'origin', 'main');
    Object.assign(gitlab.mergeRequests.get(iid)!, { state: 'merged', squash_commit_sha: scenario.git('rev-parse', 'main') });
    return before;
  }

  /** Adds to stacks/main.ts's block a line that gives application role `role` also the policy `other` (an escape hatch: addOverride of token_policies). */
  function attachPolicy(role: string, other: string) {
    const main = scenario.read('stacks/main.ts');
    expect(main).toContain(BLOCK);
    const line = `  platform.appRoles.applications.find((a) => a.roleName === '${role}')!.role.addOverride('token_policies', ['${role}', '${other}']);\n`;
    scenario.write('stacks/main.ts', main.replace(BLOCK, `${BLOCK}${line}`));
  }

  /** A store token of AppRole role `role`, logged in with its own Role ID and a new Secret ID. */
  async function roleToken(role: string): Promise<string> {
    const roleId = (await storeRequest(scenario.store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id;
    const secretId = (await storeRequest(scenario.store, 'POST', `auth/approle/role/${role}/secret-id`)).body.data.secret_id;
    return clientToken(await appRoleLogin(scenario.store, roleId, secretId));
  }

  /** Writes a probe secret (root token) at `secret/data/<logical>` of the store's KV v2 mount `secret` (mounted first when absent). */
  async function writeProbe(logical: string) {
    const mounts = (await storeRequest(scenario.store, 'GET', 'sys/mounts')).body.data as Record<string, unknown>;
    if (mounts['secret/'] === undefined) await mountKv(scenario.store, 'secret', 2);
    await writeKv2(scenario.store, 'secret', logical, { probe: 'not-a-secret' });
  }

  /** Role `role`'s live answer on `path` with its own token: the read's status and the capabilities the store gives it there. */
  async function liveRead(role: string, path: string) {
    const token = await roleToken(role);
    const read = await storeRequest(scenario.store, 'GET', path, undefined, token);
    const caps = (await storeRequest(scenario.store, 'POST', 'sys/capabilities-self', { paths: [path] }, token)).body.capabilities as string[];
    return { status: read.status, capabilities: [...caps].sort() };
  }

  /** Role `role`'s token policies as the store has them (sorted: the store keeps no order). */
  const tokenPolicies = async (role: string) => [...((await storeRequest(scenario.store, 'GET', `auth/approle/role/${role}`)).body.data.token_policies as string[])].sort();

  const auditRole = async () => (await storeRequest(scenario.store, 'GET', 'auth/approle/role/audit-dev')).body.data as { token_ttl: number; token_max_ttl: number };

  const exists = async (role: string) => (await storeRequest(scenario.store, 'GET', `auth/approle/role/${role}`)).status;

  /** Each AppRole identity's live answers, with its own token, on each path pattern of `change`: its capabilities after. */
  async function liveAnswers(change: AccessChangeRecord) {
    const answers: { identity: string; path: string; live: string[]; after: string[] }[] = [];
    for (const identity of change.identities.filter((i) => i.identity.startsWith('approle/') && i.change !== 'removed')) {
      const role = identity.identity.slice('approle/'.length);
      const token = await roleToken(role);
      for (const rule of identity.rules) {
        const path = rule.path.replace(/\*$/, 'x').replace(/\+/g, 'x');
        const live = (await storeRequest(scenario.store, 'POST', 'sys/capabilities-self', { paths: [path] }, token)).body.capabilities as string[];
        answers.push({ identity: identity.identity, path: rule.path, live: [...live].sort(), after: rule.after.length === 0 ? ['deny'] : [...rule.after].sort() });
      }
    }
    return answers;
  }

  it('one merge request approved and merged: the default branch reads its record back through the API and applies it unchanged', async () => {
    await mergeRequestAdding('billing', 1);
    const before = merge('billing', 1);
    const pipeline = await scenario.defaultBranch(before);
    const review = pipeline.job(REVIEW).join('\n');
    expect(review).toContain(`!1: approval record of note 1 (by @${BOT.username}`);
    expect(review).toContain('the plans give exactly the change approved by !1: the apply jobs apply them');
    expect(pipeline.output).toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete! Resources: [1-9]\d* added/);
    expect(pipeline.code).toBe(0);
    expect(await exists('billing-dev')).toBe(200);
    // Nothing more posted: the note is the approval of record.
    expect(gitlab.noteBodies(1)).toHaveLength(1);
    // Only the endpoints the pipeline calls.
    expect([...new Set(gitlab.requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{40}/, ':sha').replace(/merge_requests\/\d+/, 'merge_requests/:iid')}`))].sort()).toEqual([
      // The merge request's review asks for the default branch's usage file (docs/usage.md §9): none here (404).
      'GET /api/v4/projects/4242/jobs/artifacts/main/raw/usage.json',
      'GET /api/v4/projects/4242/merge_requests/:iid/notes',
      'GET /api/v4/projects/4242/repository/commits/:sha/merge_requests',
      'GET /api/v4/user',
      'POST /api/v4/projects/4242/merge_requests/:iid/notes',
    ]);
    expect(pipeline.output).not.toContain(BOT.token);
    const approved = JSON.parse(fs.readFileSync(scenario.artifact(REVIEW, 'access-change.json'), 'utf8')) as AccessChangeRecord;
    for (const a of await liveAnswers(approved)) expect(a).toEqual({ ...a, live: a.after });
  });

  it('a grant made by hand between review and merge: nothing applied, named as drift and posted; the manual job applies once a person starts it, and the store equals the confirmed change', async () => {
    await mergeRequestAdding('ledger', 2);
    // By hand, after the review: the orchestrator's policy gains a read on the team's secrets.
    const role = (await storeRequest(scenario.store, 'GET', 'auth/approle/role/orchestrator-dev')).body.data;
    const policyName = (role.token_policies as string[]).find((p) => p !== 'default')!;
    const policy = (await storeRequest(scenario.store, 'GET', `sys/policies/acl/${policyName}`)).body.data.policy as string;
    const handGrant = '\npath "secret/data/team/*" { capabilities = ["read"] }\n';
    expect((await storeRequest(scenario.store, 'PUT', `sys/policies/acl/${policyName}`, { policy: policy + handGrant })).status).toBe(204);

    const before = merge('ledger', 2);
    const pipeline = await scenario.defaultBranch(before);
    const review = pipeline.job(REVIEW).join('\n');
    expect(review).toMatch(/secretstore-iac pipeline review: drift: approle\/orchestrator-dev secret\/data\/team\/\*: drift: the store has read where the configuration applied before has none; applying reverts it \(read → none\)/);
    expect(review).toContain(`nothing is applied automatically; the manual job ${CONFIRM} applies them once a person starts it`);
    expect(review).toContain('the comparison is posted to !2');
    expect(pipeline.output).toMatch(/secretstore-iac pipeline apply: app-roles: not applied: the plans differ from what the notes of !2 approved/);
    expect(pipeline.output).not.toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete!/);
    expect(await exists('ledger-dev')).toBe(404);
    expect((await storeRequest(scenario.store, 'GET', `sys/policies/acl/${policyName}`)).body.data.policy).toContain('secret/data/team/*');
    const posted = gitlab.noteBodies(2)[1];
    expect(posted).toContain('## Not applied: the default branch would apply a change no note approved');
    expect(posted).toContain('| drift | `approle/orchestrator-dev secret/data/team/*` |');
    const outcome = JSON.parse(fs.readFileSync(scenario.artifact(REVIEW, 'approval-comparison.json'), 'utf8')) as { differences: { cause: string }[] };
    expect(outcome.differences.length).toBeGreaterThan(0);
    // Every difference is the hand grant's (its rule, and the policy object the configuration declares as before): drift, nothing else.
    expect(new Set(outcome.differences.map((d) => d.cause))).toEqual(new Set(['drift']));

    // A person who has read it starts the manual job: recorded, then applied as planned.
    const confirmed = await scenario.defaultBranch(before, { jobs: [CONFIRM], only: true, manual: CONFIRM });
    expect(confirmed.output).toContain(`secretstore-iac pipeline confirm: confirmed by alice: applying the plans as they are, ${outcome.differences.length} difference(s) from what was approved`);
    expect(confirmed.output).toMatch(/Apply complete! Resources: [1-9]\d* added/);
    expect(confirmed.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(scenario.artifact(CONFIRM, 'approval-confirmation.json'), 'utf8'))).toMatchObject({ confirmedBy: 'alice', mergeRequests: [2] });
    expect(gitlab.noteBodies(2)[2]).toContain('## Confirmed by @alice');
    expect(await exists('ledger-dev')).toBe(200);
    // The store equals the confirmed change: each identity's live answers, with its own token.
    const change = JSON.parse(fs.readFileSync(scenario.artifact(REVIEW, 'access-change.json'), 'utf8')) as AccessChangeRecord;
    expect(change.identities.map((i) => i.identity)).toEqual(expect.arrayContaining(['approle/ledger-dev', 'approle/orchestrator-dev']));
    const answers = await liveAnswers(change);
    expect(answers.find((a) => a.identity === 'approle/orchestrator-dev' && a.path === 'secret/data/team/*')).toEqual({ identity: 'approle/orchestrator-dev', path: 'secret/data/team/*', live: ['deny'], after: ['deny'] });
    for (const a of answers) expect(a).toEqual({ ...a, live: a.after });
  }, 1_200_000);

  it('three merge requests reviewed against one base, merged in turn: the second composes with the first (applied; its note marked stale in the merge request), the third meets the first in one binding (named, not applied)', async () => {
    const base = scenario.read('stacks/platform.config.ts');
    const edit = (from: string, to: string) => {
      const text = scenario.read('stacks/platform.config.ts');
      expect(text).toContain(from);
      scenario.write('stacks/platform.config.ts', text.replace(from, to));
    };
    // !3: the defaults' token TTL, 12 h → 1 h (audit-dev's token_ttl).
    edit('tokenTtl: Duration.hours(12), tokenMaxTtl', 'tokenTtl: Duration.hours(1), tokenMaxTtl');
    await mergeRequestOf('audit-ttl', 3, "audit's default token TTL 1 h");
    // !4, against the same base: audit-dev's own token max TTL, 24 h → 20 h (another binding of the identity; not below the token TTL).
    edit("      environment: 'dev',\n", "      environment: 'dev',\n      tokenMaxTtl: Duration.hours(20),\n");
    await mergeRequestOf('audit-max-ttl', 4, "audit's token max TTL 2 h");
    // !5, against the same base: audit-dev's own token TTL, 12 h → 90 min (the binding !3 changes).
    edit('      ...appDefaults,\n', '      ...appDefaults,\n      tokenTtl: Duration.minutes(90),\n');
    await mergeRequestOf('audit-own-ttl', 5, "audit's own token TTL 90 min");
    expect(scenario.read('stacks/platform.config.ts')).toBe(base);
    const target = scenario.git('rev-parse', 'main');
    for (const iid of [3, 4, 5]) expect(gitlab.noteBodies(iid)[0]).toContain(`computed against the target commit \`${target}\``);

    // !3 merged (fast-forward): applied as approved.
    expect(await auditRole()).toMatchObject({ token_ttl: 43200, token_max_ttl: 86400 });
    expect(mergeBranch('audit-ttl', 3)).toBe(target);
    const first = await scenario.defaultBranch(target);
    expect(first.job(REVIEW).join('\n')).toContain('the plans give exactly the change approved by !3: the apply jobs apply them');
    expect(first.code).toBe(0);
    expect(await auditRole()).toMatchObject({ token_ttl: 3600, token_max_ttl: 86400 });
    expect(gitlab.noteBodies(3)).toHaveLength(1);

    // !4 merged with a merge commit, on top of !3: its change composes with the one applied (another binding): applied;
    // its note was computed against the base, not the merge's parent (!3's commit): marked stale in !4.
    const afterFirst = mergeCommit('audit-max-ttl', 4);
    const second = await scenario.defaultBranch(afterFirst);
    const secondReview = second.job(REVIEW).join('\n');
    expect(secondReview).toContain('the plans give exactly the change approved by !4: the apply jobs apply them');
    expect(secondReview).toContain(`!4: its note is stale: computed against ${target.slice(0, 12)}, not the merge's parent ${afterFirst.slice(0, 12)}`);
    expect(second.output).toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete! Resources: 0 added, 1 changed/);
    expect(second.code).toBe(0);
    expect(await auditRole()).toMatchObject({ token_ttl: 3600, token_max_ttl: 72000 });
    expect(gitlab.noteBodies(4)).toHaveLength(2);
    expect(gitlab.noteBodies(4)[1]).toContain('## Applied as approved');
    expect(gitlab.noteBodies(4)[1]).toContain(`**Stale note** of !4: computed against the target commit \`${target}\`, not the merge's parent \`${afterFirst}\``);

    // !5 merged on top of both: it reviewed 12 h → 90 min; the store has !3's 1 h: 1 h → 90 min, which no note showed.
    const afterSecond = mergeCommit('audit-own-ttl', 5);
    const third = await scenario.defaultBranch(afterSecond);
    const thirdReview = third.job(REVIEW).join('\n');
    expect(thirdReview).toContain("secretstore-iac pipeline review: other-merge-request: approle/audit-dev binding token_ttl: the store changed after the review of !5 by a change applied since (the configuration applied before has it: another merge request's): the note showed 43200 → 5400, this pipeline applies 3600 → 5400");
    expect(thirdReview).toContain(`nothing is applied automatically; the manual job ${CONFIRM} applies them once a person starts it`);
    expect(third.output).toMatch(/secretstore-iac pipeline apply: app-roles: not applied: the plans differ from what the notes of !5 approved/);
    expect(third.output).not.toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete!/);
    expect(await auditRole()).toMatchObject({ token_ttl: 3600, token_max_ttl: 72000 });
    const posted = gitlab.noteBodies(5)[1];
    expect(posted).toContain('## Not applied: the default branch would apply a change no note approved');
    expect(posted).toContain('| other-merge-request | `approle/audit-dev binding token_ttl` | `43200 → 5400` (!5) | `3600 → 5400` |');
    expect(posted).toContain('**Stale note** of !5');
  }, 1_800_000);

  it('without the note token on the default branch: fail-closed, the line names the variable and how to set it; applied once a person starts the manual job', async () => {
    // The last scenario's change is still planned (audit-dev's token TTL 1 h → 90 min); a pipeline started by hand, no note token.
    const unset = { SECRETSTORE_IAC_NOTE_TOKEN: '' };
    const pipeline = await scenario.defaultBranch(undefined, { variables: unset });
    const review = pipeline.job(REVIEW).join('\n');
    expect(review).toContain('SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch: no approval record can be read, so nothing is applied automatically (fail-closed)');
    expect(review).toContain('set SECRETSTORE_IAC_NOTE_TOKEN (Settings > CI/CD > Variables: masked, for protected and unprotected branches) to a project access token with scope api');
    expect(review).toContain('set SECRETSTORE_IAC_APPLY_UNBOUND=true');
    expect(pipeline.output).toMatch(/secretstore-iac pipeline apply: app-roles: not applied: SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch: no approval record can be read, so the default branch applies nothing automatically \(fail-closed\)/);
    expect(pipeline.output).not.toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete!/);
    expect(pipeline.code).toBe(0);
    expect((await auditRole()).token_ttl).toBe(3600);
    const requests = gitlab.requests.length;

    const confirmed = await scenario.defaultBranch(undefined, { jobs: [CONFIRM], only: true, manual: CONFIRM, variables: unset });
    expect(confirmed.output).toContain('secretstore-iac pipeline confirm: confirmed by alice: applying the plans as they are, bound to no approval (SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch: no note could be read)');
    expect(confirmed.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(scenario.artifact(CONFIRM, 'approval-confirmation.json'), 'utf8'))).toMatchObject({ confirmedBy: 'alice', unbound: 'SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch' });
    expect((await auditRole()).token_ttl).toBe(5400);
    // Without the token nothing reaches the GitLab API.
    expect(gitlab.requests.length).toBe(requests);
  }, 1_200_000);

  /** The default branch's verdict, as its review left it. */
  const outcomeOf = () =>
    JSON.parse(fs.readFileSync(scenario.artifact(REVIEW, 'approval-comparison.json'), 'utf8')) as { status: string; mergeRequests: number[]; differences: { cause: string; where: string; approved?: unknown; applying?: string; message: string }[]; stale: unknown[] };

  it('a change in the merge commit: a merge request approved, merged with a merge commit that also gives audit-dev the orchestrator\'s policy: nothing applied, named as a change no note showed and posted; applied once a person starts the manual job, the store then equal to the confirmed change', async () => {
    const orchestratorSecret = 'secret/data/acme/dev/orchestrator/database';
    await writeProbe('acme/dev/orchestrator/database');
    expect(await liveRead('audit-dev', orchestratorSecret)).toEqual({ status: 403, capabilities: ['deny'] });
    expect(await tokenPolicies('audit-dev')).toEqual(['audit-dev']);

    await mergeRequestAdding('payments', 6);
    const reviewed = gitlab.noteBodies(6)[0];
    expect(reviewed).toContain('approle/payments-dev');
    expect(reviewed).not.toContain('orchestrator/*');
    // The merge commit resolves the merge (as a conflict resolution would) with a line neither side has: audit-dev also gets orchestrator-dev's policy.
    const before = mergeCommit('add-payments', 6, () => attachPolicy('audit-dev', 'orchestrator-dev'));
    expect(scenario.git('show', '--format=', '--cc', 'HEAD')).toContain("'token_policies', ['audit-dev', 'orchestrator-dev']");

    const pipeline = await scenario.defaultBranch(before);
    const review = pipeline.job(REVIEW).join('\n');
    expect(review).toContain(`!6: approval record of note`);
    // Computed against the merge's parent: not stale.
    expect(review).not.toContain('!6: its note is stale');
    const outcome = outcomeOf();
    expect(outcome).toMatchObject({ status: 'differs', mergeRequests: [6], stale: [] });
    // Named by cause: a change no note showed, the identity and the path in one line of the log and a row of the posted note.
    const gained = outcome.differences.find((d) => d.where === 'approle/audit-dev secret/data/acme/dev/orchestrator/*');
    expect(gained).toEqual({
      cause: 'unapproved',
      where: 'approle/audit-dev secret/data/acme/dev/orchestrator/*',
      applying: 'none → read',
      message: 'approle/audit-dev secret/data/acme/dev/orchestrator/*: none → read, a change no note showed (a commit without a merge request, a change in the merge commit, or a merge request without a trusted record)',
    });
    expect(review).toContain(`secretstore-iac pipeline review: unapproved: ${gained!.message}`);
    // Every difference is the resolution's (audit-dev's rules, binding and role object): the approved change (payments-dev) is not one.
    expect(new Set(outcome.differences.map((d) => d.cause))).toEqual(new Set(['unapproved']));
    expect(outcome.differences.filter((d) => d.where.includes('payments'))).toEqual([]);
    expect(outcome.differences.map((d) => d.where)).toContain('approle/audit-dev binding token_policies');
    expect(review).toContain(`nothing is applied automatically; the manual job ${CONFIRM} applies them once a person starts it`);
    expect(review).toContain('the comparison is posted to !6');
    expect(pipeline.output).toMatch(/secretstore-iac pipeline apply: app-roles: not applied: the plans differ from what the notes of !6 approved/);
    expect(pipeline.output).not.toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete!/);
    // Nothing applied automatically, the approved part neither: the store's live answers are unchanged.
    expect(await exists('payments-dev')).toBe(404);
    expect(await tokenPolicies('audit-dev')).toEqual(['audit-dev']);
    expect(await liveRead('audit-dev', orchestratorSecret)).toEqual({ status: 403, capabilities: ['deny'] });
    const posted = gitlab.noteBodies(6)[1];
    expect(posted).toContain('## Not applied: the default branch would apply a change no note approved');
    expect(posted).toContain(`| unapproved | \`approle/audit-dev secret/data/acme/dev/orchestrator/*\` | nothing | \`${gained!.applying}\` |`);
    expect(posted).toContain(`- **unapproved**: \`${gained!.message}\``);

    // A person who has read it starts the manual job: recorded, then applied as planned.
    const confirmed = await scenario.defaultBranch(before, { jobs: [CONFIRM], only: true, manual: CONFIRM });
    expect(confirmed.output).toContain(`secretstore-iac pipeline confirm: confirmed by alice: applying the plans as they are, ${outcome.differences.length} difference(s) from what was approved`);
    expect(confirmed.output).toMatch(/Apply complete! Resources: [1-9]\d* added/);
    expect(confirmed.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(scenario.artifact(CONFIRM, 'approval-confirmation.json'), 'utf8'))).toMatchObject({ confirmedBy: 'alice', mergeRequests: [6] });
    expect(gitlab.noteBodies(6)[2]).toContain('## Confirmed by @alice');
    expect(await exists('payments-dev')).toBe(200);
    expect(await tokenPolicies('audit-dev')).toEqual(['audit-dev', 'orchestrator-dev']);
    expect(await liveRead('audit-dev', orchestratorSecret)).toMatchObject({ status: 200 });
    // The store equals the confirmed change: each identity's live answers, with its own token.
    const change = JSON.parse(fs.readFileSync(scenario.artifact(REVIEW, 'access-change.json'), 'utf8')) as AccessChangeRecord;
    expect(change.identities.map((i) => i.identity)).toEqual(expect.arrayContaining(['approle/audit-dev', 'approle/payments-dev']));
    const answers = await liveAnswers(change);
    expect(answers.map((a) => `${a.identity} ${a.path}`)).toContain('approle/audit-dev secret/data/acme/dev/orchestrator/*');
    for (const a of answers) expect(a).toEqual({ ...a, live: a.after });
  }, 1_200_000);

  it('a squash that differs from the reviewed head: the squash commit also gives orchestrator-dev audit-dev\'s policy: nothing applied, named as a change no note showed and posted', async () => {
    const auditSecret = 'secret/data/acme/dev/audit/probe';
    await writeProbe('acme/dev/audit/probe');
    expect(await liveRead('orchestrator-dev', auditSecret)).toEqual({ status: 403, capabilities: ['deny'] });

    await mergeRequestAdding('search', 7);
    const before = squash('add-search', 7, () => attachPolicy('orchestrator-dev', 'audit-dev'));
    const pipeline = await scenario.defaultBranch(before);
    const review = pipeline.job(REVIEW).join('\n');
    expect(review).toContain(`!7: approval record of note`);
    expect(review).not.toContain('!7: its note is stale');
    const outcome = outcomeOf();
    expect(outcome).toMatchObject({ status: 'differs', mergeRequests: [7], stale: [] });
    const gained = outcome.differences.find((d) => d.where === 'approle/orchestrator-dev secret/data/acme/dev/audit/*');
    expect(gained).toMatchObject({ cause: 'unapproved', applying: 'none → read' });
    expect(gained!.approved).toBeUndefined();
    expect(review).toContain(`secretstore-iac pipeline review: unapproved: ${gained!.message}`);
    expect(new Set(outcome.differences.map((d) => d.cause))).toEqual(new Set(['unapproved']));
    expect(outcome.differences.filter((d) => d.where.includes('search'))).toEqual([]);
    expect(pipeline.output).toMatch(/secretstore-iac pipeline apply: app-roles: not applied: the plans differ from what the notes of !7 approved/);
    expect(pipeline.output).not.toMatch(/secretstore-iac-apply-app-roles\s+> Apply complete!/);
    expect(await exists('search-dev')).toBe(404);
    expect(await tokenPolicies('orchestrator-dev')).not.toContain('audit-dev');
    expect(await liveRead('orchestrator-dev', auditSecret)).toEqual({ status: 403, capabilities: ['deny'] });
    expect(gitlab.noteBodies(7)[1]).toContain(`| unapproved | \`approle/orchestrator-dev secret/data/acme/dev/audit/*\` | nothing | \`${gained!.applying}\` |`);
  }, 1_200_000);
});
