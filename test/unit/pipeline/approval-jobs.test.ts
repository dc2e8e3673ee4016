/**
 * The approval of record through the jobs, against a local stand-in of the GitLab API
 * (test/support/gitlab-stand-in.ts) and a real git history: the merge request's review posts its
 * note with the record; the default branch's review reads the merged merge request's notes, checks
 * the author, compares, and gates the apply jobs; the manual confirmation job records who started
 * it and applies. `access-diff --plans` is a prepared answer that writes the access change it is
 * given (its own tests cover it); the engine is a recording runner.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ACCESS_CHANGE_FORMAT, AccessChangeRecord, canonicalJson } from '../../../lib/access/access-change-record';
import { approvalRecordOf, renderApprovalSection } from '../../../lib/pipeline/approval-record';
import { runConfirmationJob } from '../../../lib/pipeline/confirmation-job';
import { jobStacks } from '../../../lib/pipeline/job-stacks';
import { runApplyJob } from '../../../lib/pipeline/pipeline-apply-job';
import { PipelineReviewRunner, runReviewJob } from '../../../lib/pipeline/pipeline-review-job';
import { GitLabStandIn } from '../../support/gitlab-stand-in';
import { FIXTURE_OPTIONS, jobDirectory, recordingContext } from './pipeline-fixture';
import { describePipeline } from '../../../lib/pipeline/pipeline-description';

const BOT = { id: 90, username: 'project_4242_bot', token: 'glpat-bot-0a1b2c' };
const AUTHOR = { id: 5, username: 'mallory', token: 'glpat-mallory-9z8y' };
const PLANS = { 'secretstore-iac-plans/app-roles.tfplan': 'PK-a' };
const description = describePipeline(FIXTURE_OPTIONS);

const grant = (identity: string, path: string, before: string[], after: string[]) => ({
  identity,
  method: 'approle',
  change: 'changed' as const,
  rules: [{ path, kind: 'prefix', before, after, gained: after.filter((c) => !before.includes(c)), lost: before.filter((c) => !after.includes(c)) }],
  bindings: [],
});
const APPROVED: AccessChangeRecord = { format: ACCESS_CHANGE_FORMAT, identities: [grant('billing-dev', 'secret/data/billing/*', [], ['read'])], objects: [{ stack: 'app-roles', address: 'vault_policy.billing', action: 'create' }], plans: [], complete: true };
const WIDER: AccessChangeRecord = { ...APPROVED, identities: [...APPROVED.identities, grant('orchestrator-dev', 'secret/data/team/*', ['read'], [])] };

/** access-diff, prepared: its note on standard output, `change` in the --access-change file. */
function review(dir: string, change: AccessChangeRecord): PipelineReviewRunner {
  return async (args) => {
    const at = (o: string) => (args.indexOf(o) >= 0 ? args[args.indexOf(o) + 1] : undefined);
    if (at('--risk-flag-count')) fs.writeFileSync(path.join(dir, at('--risk-flag-count')!), '0\n');
    if (at('--access-change')) fs.writeFileSync(path.join(dir, at('--access-change')!), `${canonicalJson(change)}\n`);
    return { exitCode: 1, stdout: args.includes('json') ? '{"plans":[]}' : '## Access changes\n\n| `billing-dev` | ... |\n' };
  };
}

/** A job directory that is a git repository: the target commit, then the merge request's commit (fast-forwarded). */
function repository(files: Record<string, string>) {
  const dir = jobDirectory(files);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('commit', '-q', '--allow-empty', '-m', 'target');
  const target = git('rev-parse', 'HEAD');
  git('commit', '-q', '--allow-empty', '-m', 'the merge request');
  return { dir, target, head: git('rev-parse', 'HEAD') };
}

let gitlab: GitLabStandIn;
beforeEach(async () => {
  gitlab = await GitLabStandIn.start('4242', [BOT, AUTHOR]);
});
afterEach(() => gitlab.stop());

/** The variables GitLab gives a job of the project, with the note token. */
const ci = (extra: Record<string, string>) => ({ SECRETSTORE_IAC_NOTE_TOKEN: BOT.token, CI_API_V4_URL: gitlab.apiUrl, CI_PROJECT_ID: '4242', ...extra });

/** Merge request !7's pipeline (its note posted), then its merge: the default branch's review of `applying`. */
async function reviewedAndMerged(applying: AccessChangeRecord, afterNote?: (repo: ReturnType<typeof repository>) => void) {
  const repo = repository(PLANS);
  gitlab.mergeRequests.set(7, { iid: 7, state: 'opened', target_branch: 'main', sha: repo.head, merge_commit_sha: null, squash_commit_sha: null, commits: [repo.head] });
  const mr = recordingContext(repo.dir, ci({ CI_MERGE_REQUEST_IID: '7', CI_COMMIT_SHA: repo.head, CI_MERGE_REQUEST_DIFF_BASE_SHA: repo.target }));
  expect((await runReviewJob('merge-request', mr.ctx, review(repo.dir, APPROVED))).exitCode).toBe(0);
  afterNote?.(repo);
  gitlab.mergeRequests.get(7)!.state = 'merged';
  const db = recordingContext(repo.dir, ci({ CI_COMMIT_SHA: repo.head, CI_COMMIT_BEFORE_SHA: repo.target, CI_COMMIT_BRANCH: 'main' }));
  expect((await runReviewJob('default-branch', db.ctx, review(repo.dir, applying))).exitCode).toBe(0);
  const outcome = JSON.parse(fs.readFileSync(path.join(repo.dir, 'approval-comparison.json'), 'utf8'));
  return { repo, mr, db, outcome };
}

const applyJob = () => jobStacks({ kind: 'stack', stack: 'app-roles' }, description, { selected: ['app-roles'], retired: [] }, 'apply');

describe('the merge request\'s note carries the record; the default branch applies only what it approved', () => {
  it('approved and merged unchanged: equal; the apply job applies; nothing more is posted', async () => {
    const { repo, db, outcome } = await reviewedAndMerged(APPROVED);
    expect(gitlab.noteBodies(7)).toHaveLength(1);
    expect(gitlab.noteBodies(7)[0]).toContain('<!-- secretstore-iac:approval-record sha256=');
    expect(outcome).toMatchObject({ status: 'equal', mergeRequests: [7], differences: [] });
    expect(db.lines.join('\n')).toContain(`!7: approval record of note 1 (by @${BOT.username}, head ${repo.head.slice(0, 12)}, computed against ${repo.target.slice(0, 12)})`);
    const apply = recordingContext(repo.dir, {});
    expect(await runApplyJob(applyJob(), apply.ctx)).toEqual({ exitCode: 0, stacks: ['app-roles'] });
    expect(apply.callLines().map((l) => l.split(' -- ')[1].split(' ')[0])).toEqual(['init', 'apply']);
    // Exactly the endpoints the pipeline calls.
    expect([...new Set(gitlab.requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{40}/, ':sha')}`))].sort()).toEqual([
      'GET /api/v4/projects/4242/merge_requests/7/notes',
      'GET /api/v4/projects/4242/repository/commits/:sha/merge_requests',
      'GET /api/v4/user',
      'POST /api/v4/projects/4242/merge_requests/7/notes',
    ]);
    expect(JSON.stringify([db.lines, apply.lines])).not.toContain(BOT.token);
  });

  it('a change no note showed: nothing applied; the difference posted to the merge request; the manual job applies once a person starts it, recording who', async () => {
    const { repo, outcome } = await reviewedAndMerged(WIDER);
    expect(outcome.status).toBe('differs');
    expect(outcome.differences.map((d: { cause: string; where: string }) => [d.cause, d.where])).toEqual([['unapproved', 'orchestrator-dev secret/data/team/*']]);
    expect(gitlab.noteBodies(7)[1]).toContain('## Not applied: the default branch would apply a change no note approved');
    expect(gitlab.noteBodies(7)[1]).toContain('`orchestrator-dev secret/data/team/*`');
    const apply = recordingContext(repo.dir, {});
    expect(await runApplyJob(applyJob(), apply.ctx)).toEqual({ exitCode: 0, stacks: [] });
    expect(apply.calls).toEqual([]);
    expect(apply.lines.at(-1)).toContain('app-roles: not applied: the plans differ from what the notes of !7 approved (1 difference(s)');
    expect(apply.lines.at(-1)).toContain('the manual job secretstore-iac-confirm-apply applies the plans as they are once a person who has read them starts it');

    const selection = { selected: ['app-roles'], retired: [] };
    await expect(runConfirmationJob(selection, recordingContext(repo.dir, ci({})).ctx)).rejects.toThrow('GITLAB_USER_LOGIN is not set');
    const confirm = recordingContext(repo.dir, ci({ GITLAB_USER_LOGIN: 'alice', GITLAB_USER_ID: '12' }));
    expect(await runConfirmationJob(selection, confirm.ctx)).toEqual({ exitCode: 0, stacks: ['app-roles'] });
    expect(confirm.callLines().map((l) => l.split(' -- ')[1].split(' ')[0])).toEqual(['init', 'apply']);
    expect(JSON.parse(fs.readFileSync(path.join(repo.dir, 'approval-confirmation.json'), 'utf8'))).toMatchObject({ confirmedBy: 'alice', userId: '12', commit: repo.head, mergeRequests: [7] });
    expect(gitlab.noteBodies(7)[2]).toContain('## Confirmed by @alice');
  });

  it('a look-alike note by the merge request\'s author, approving the wider change, is refused: the comparison is with the pipeline\'s note', async () => {
    const { db, outcome } = await reviewedAndMerged(WIDER, () => {
      // The author copies the note's section for a record of the wider change (the library's own renderer: an exact look-alike).
      const head = gitlab.mergeRequests.get(7)!.sha;
      const target = gitlab.noteBodies(7)[0].match(/computed against the target commit `([0-9a-f]{40})`/)![1];
      gitlab.addNote(7, AUTHOR.username, renderApprovalSection(approvalRecordOf(WIDER, 7, head, target)));
    });
    expect(outcome.status).toBe('differs');
    expect(db.lines.join('\n')).toContain(`!7: note 2 by @mallory: not written by the pipeline's user @${BOT.username} (id ${BOT.id}), whose token posts the notes: refused`);
  });

  it('a push after the review: the record is of another head, refused; the change counts as approved by no note', async () => {
    const { db, outcome } = await reviewedAndMerged(APPROVED, (repo) => {
      gitlab.mergeRequests.get(7)!.sha = 'e'.repeat(40);
      gitlab.mergeRequests.get(7)!.commits.push('e'.repeat(40));
      void repo;
    });
    expect(outcome.status).toBe('differs');
    expect(db.lines.join('\n')).toContain('its record is of the head');
  });

  it('without the note token on the default branch: unbound and fail-closed: nothing applied automatically, the line names the variable and how to set it; the manual job applies once a person starts it', async () => {
    const repo = repository(PLANS);
    const db = recordingContext(repo.dir, {});
    await runReviewJob('default-branch', db.ctx, review(repo.dir, WIDER));
    const outcome = JSON.parse(fs.readFileSync(path.join(repo.dir, 'approval-comparison.json'), 'utf8'));
    expect(outcome).toMatchObject({ status: 'unbound', reason: 'SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch' });
    expect(outcome.appliesUnbound).toBeUndefined();
    expect(db.lines.join('\n')).toContain(
      'SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch: no approval record can be read, so nothing is applied automatically (fail-closed); the manual job secretstore-iac-confirm-apply applies the plans once a person who has read them starts it. To bind the apply to the approvals, set SECRETSTORE_IAC_NOTE_TOKEN (Settings > CI/CD > Variables: masked, for protected and unprotected branches) to a project access token with scope api',
    );
    expect(db.lines.join('\n')).toContain('to apply unbound plans automatically instead, set SECRETSTORE_IAC_APPLY_UNBOUND=true (docs/pipelines.md §13)');
    const apply = recordingContext(repo.dir, {});
    expect(await runApplyJob(applyJob(), apply.ctx)).toEqual({ exitCode: 0, stacks: [] });
    expect(apply.calls).toEqual([]);
    expect(apply.lines.at(-1)).toContain('app-roles: not applied: SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch: no approval record can be read, so the default branch applies nothing automatically (fail-closed)');
    // A person starts the manual job: recorded (no note can be posted without the token), then applied.
    const confirm = recordingContext(repo.dir, { GITLAB_USER_LOGIN: 'alice' });
    expect(await runConfirmationJob({ selected: ['app-roles'], retired: [] }, confirm.ctx)).toEqual({ exitCode: 0, stacks: ['app-roles'] });
    expect(confirm.lines.join('\n')).toContain('confirmed by alice: applying the plans as they are, bound to no approval (SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch: no note could be read)');
    expect(JSON.parse(fs.readFileSync(path.join(repo.dir, 'approval-confirmation.json'), 'utf8'))).toMatchObject({ confirmedBy: 'alice', unbound: 'SECRETSTORE_IAC_NOTE_TOKEN is not set on the default branch' });
    expect(confirm.callLines().map((l) => l.split(' -- ')[1].split(' ')[0])).toEqual(['init', 'apply']);
    expect(gitlab.requests).toEqual([]);
  });

  it('without the note token, with the documented opt-out SECRETSTORE_IAC_APPLY_UNBOUND=true: unbound, said in the log; the apply jobs apply; the manual job has nothing to confirm', async () => {
    const repo = repository(PLANS);
    const db = recordingContext(repo.dir, { SECRETSTORE_IAC_APPLY_UNBOUND: 'true' });
    await runReviewJob('default-branch', db.ctx, review(repo.dir, WIDER));
    expect(JSON.parse(fs.readFileSync(path.join(repo.dir, 'approval-comparison.json'), 'utf8'))).toMatchObject({ status: 'unbound', appliesUnbound: 'opt-out' });
    expect(db.lines.join('\n')).toContain("and SECRETSTORE_IAC_APPLY_UNBOUND=true: the apply jobs apply the plans NOT bound to what a merge request's note approved (the documented opt-out;");
    expect((await runApplyJob(applyJob(), recordingContext(repo.dir, {}).ctx)).stacks).toEqual(['app-roles']);
    const confirm = recordingContext(repo.dir, { GITLAB_USER_LOGIN: 'alice' });
    expect(await runConfirmationJob({ selected: ['app-roles'], retired: [] }, confirm.ctx)).toEqual({ exitCode: 0, stacks: [] });
    expect(confirm.calls).toEqual([]);
    // Any other value is not the opt-out: fail-closed.
    const other = repository(PLANS);
    await runReviewJob('default-branch', recordingContext(other.dir, { SECRETSTORE_IAC_APPLY_UNBOUND: '1' }).ctx, review(other.dir, WIDER));
    expect((await runApplyJob(applyJob(), recordingContext(other.dir, {}).ctx)).stacks).toEqual([]);
    expect(gitlab.requests).toEqual([]);
  });

  it('without the note token, plans that change no access and no object: nothing to bind, the apply jobs apply them', async () => {
    const repo = repository(PLANS);
    const none: AccessChangeRecord = { format: ACCESS_CHANGE_FORMAT, identities: [], objects: [], plans: [], complete: true };
    const db = recordingContext(repo.dir, {});
    await runReviewJob('default-branch', db.ctx, review(repo.dir, none));
    expect(JSON.parse(fs.readFileSync(path.join(repo.dir, 'approval-comparison.json'), 'utf8'))).toMatchObject({ status: 'unbound', appliesUnbound: 'no-change' });
    expect((await runApplyJob(applyJob(), recordingContext(repo.dir, {}).ctx)).stacks).toEqual(['app-roles']);
    // Incomplete (a value unknown until apply): not "no change": fail-closed.
    const unknown = repository(PLANS);
    await runReviewJob('default-branch', recordingContext(unknown.dir, {}).ctx, review(unknown.dir, { ...none, complete: false }));
    expect((await runApplyJob(applyJob(), recordingContext(unknown.dir, {}).ctx)).stacks).toEqual([]);
  });

  it('a note computed against a target commit that is not the merge\'s parent: marked stale in the merge request itself, though the change is equal', async () => {
    const repo = repository(PLANS);
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: repo.dir, encoding: 'utf8' }).trim();
    // !7 reviewed against `target`; another merge lands first; !7's commit is rebased onto it by the merge (its parent is the other one).
    git('reset', '-q', '--hard', repo.target);
    git('commit', '-q', '--allow-empty', '-m', 'another merge request');
    const other = git('rev-parse', 'HEAD');
    git('commit', '-q', '--allow-empty', '-m', 'the merge request, rebased on merge');
    const head = git('rev-parse', 'HEAD');
    gitlab.mergeRequests.set(7, { iid: 7, state: 'opened', target_branch: 'main', sha: head, merge_commit_sha: null, squash_commit_sha: null, commits: [head] });
    const mr = recordingContext(repo.dir, ci({ CI_MERGE_REQUEST_IID: '7', CI_COMMIT_SHA: head, CI_MERGE_REQUEST_DIFF_BASE_SHA: repo.target }));
    expect((await runReviewJob('merge-request', mr.ctx, review(repo.dir, APPROVED))).exitCode).toBe(0);
    gitlab.mergeRequests.get(7)!.state = 'merged';
    const db = recordingContext(repo.dir, ci({ CI_COMMIT_SHA: head, CI_COMMIT_BEFORE_SHA: other, CI_COMMIT_BRANCH: 'main' }));
    expect((await runReviewJob('default-branch', db.ctx, review(repo.dir, APPROVED))).exitCode).toBe(0);
    const outcome = JSON.parse(fs.readFileSync(path.join(repo.dir, 'approval-comparison.json'), 'utf8'));
    expect(outcome).toMatchObject({ status: 'equal', stale: [{ mergeRequest: 7, targetCommit: repo.target, mergeParent: other }] });
    expect(db.lines.join('\n')).toContain(`!7: its note is stale: computed against ${repo.target.slice(0, 12)}, not the merge's parent ${other.slice(0, 12)}`);
    expect(gitlab.noteBodies(7)).toHaveLength(2);
    expect(gitlab.noteBodies(7)[1]).toContain('## Applied as approved');
    expect(gitlab.noteBodies(7)[1]).toContain(`**Stale note** of !7: computed against the target commit \`${repo.target}\`, not the merge's parent \`${other}\``);
    // Equal: the apply job applies.
    expect((await runApplyJob(applyJob(), recordingContext(repo.dir, {}).ctx)).stacks).toEqual(['app-roles']);
  });
});
