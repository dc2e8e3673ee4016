import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { accessChangeDigest, AccessChangeRecord, NO_ACCESS_CHANGE } from '../access/access-change-record';
import { mdCode, mdTable } from '../render/markdown-text';
import { ACCESS_CHANGE_FILE, APPLY_UNBOUND_VARIABLE, BASE_OUTPUT, CONFIRM_APPLY_JOB } from '../render/configuration-pipeline-yaml';
import { appliedConfiguration } from './applied-configuration';
import { ApprovalComparison, compareWithApprovals, MergedApproval } from './approval-comparison';
import { ApprovalOutcome, writeApprovalOutcome } from './approval-outcome';
import { approvedRecordOf } from './approval-record';
import { GitLabApiTarget, gitlabCommitMergeRequests, gitlabCurrentUser, gitlabMergeRequestNotes, gitlabPostCommitComment, gitlabPostMergeRequestNote } from './gitlab-api';
import { readJobAccessChange } from './job-access-change';
import { PipelineJobContext } from './pipeline-job-context';

/** Forty zeros: GitLab's "no commit" (a new branch, a pipeline started by hand). */
const NO_COMMIT = /^0{40}$/;

/** A commit of the default branch's first-parent chain since the commit before the push, with its first parent. */
interface ChainCommit {
  readonly sha: string;
  readonly parent?: string;
}

/** `git rev-list --first-parent --parents before..head`, oldest first. */
function chainSince(dir: string, before: string, head: string): ChainCommit[] {
  const out = execFileSync('git', ['rev-list', '--first-parent', '--parents', `${before}..${head}`], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [sha, parent] = l.trim().split(/\s+/);
      return { sha, ...(parent !== undefined ? { parent } : {}) };
    })
    .reverse();
}

/**
 * The default branch's comparison before any apply (docs/pipelines.md §13): its own canonical access
 * change ({@link ACCESS_CHANGE_FILE}) against the approved records of the merge requests merged since
 * the commit before the push (`CI_COMMIT_BEFORE_SHA`..`CI_COMMIT_SHA`, first parents; each commit's
 * merge requests from the API, merged into this branch), each read from the notes of its merge
 * request written by the token's own user (`GET /user`). Writes the verdict ({@link writeApprovalOutcome});
 * when they differ, or a record is stale, posts that to the merge requests (or the commit).
 * Without the note token no record can be read: the verdict is `unbound`, said in the log; fail-closed
 * (only the manual job applies) unless the plans change nothing or {@link APPLY_UNBOUND_VARIABLE} is `true`.
 * @throws Error when the API or git cannot be read, or a note cannot be posted: the job fails, nothing is applied
 */
export async function compareWithApprovedNotes(ctx: PipelineJobContext): Promise<ApprovalOutcome> {
  const env = ctx.env;
  const applying: AccessChangeRecord = readJobAccessChange(ctx.dir) ?? NO_ACCESS_CHANGE;
  const tokenVariable = ctx.description.noteTokenVariable;
  const token = env[tokenVariable] ?? '';
  const finish = (outcome: ApprovalOutcome) => {
    writeApprovalOutcome(ctx.dir, outcome);
    return outcome;
  };
  if (token === '') {
    const setIt = `set ${tokenVariable} (Settings > CI/CD > Variables: masked, for protected and unprotected branches) to a project access token with scope api, the user that posts the merge requests' notes`;
    const unbound = { status: 'unbound' as const, commit: env.CI_COMMIT_SHA ?? '', reason: `${tokenVariable} is not set on the default branch`, mergeRequests: [], applying: accessChangeDigest(applying), differences: [], stale: [] };
    // Fail-closed: plans nobody can bind to an approval are not applied automatically, unless they change nothing or the opt-out is set.
    if (applying.complete && applying.identities.length === 0 && applying.objects.length === 0) {
      ctx.log.decide(`${tokenVariable} is not set on the default branch: no approval record can be read; the plans change no access and no object, so the apply jobs apply them (nothing to bind; ${setIt}: docs/pipelines.md §13)`);
      return finish({ ...unbound, appliesUnbound: 'no-change' });
    }
    if (env[APPLY_UNBOUND_VARIABLE] === 'true') {
      ctx.log.decide(`${tokenVariable} is not set on the default branch: no approval record can be read, and ${APPLY_UNBOUND_VARIABLE}=true: the apply jobs apply the plans NOT bound to what a merge request's note approved (the documented opt-out; ${setIt} to bind it: docs/pipelines.md §13)`);
      return finish({ ...unbound, appliesUnbound: 'opt-out' });
    }
    ctx.log.decide(
      `${tokenVariable} is not set on the default branch: no approval record can be read, so nothing is applied automatically (fail-closed); the manual job ${CONFIRM_APPLY_JOB} applies the plans once a person who has read them starts it. To bind the apply to the approvals, ${setIt}; to apply unbound plans automatically instead, set ${APPLY_UNBOUND_VARIABLE}=true (docs/pipelines.md §13)`,
    );
    return finish(unbound);
  }
  const commit = env.CI_COMMIT_SHA || execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ctx.dir, encoding: 'utf8' }).trim();
  const api: GitLabApiTarget = { apiUrl: env.CI_API_V4_URL ?? '', projectId: env.CI_PROJECT_ID ?? '', token };
  const branch = env.CI_COMMIT_BRANCH || env.CI_DEFAULT_BRANCH || '';
  const before = env.CI_COMMIT_BEFORE_SHA ?? '';
  ctx.log.decide(`comparing the plans with what the merge requests merged since ${before === '' || NO_COMMIT.test(before) ? 'the commit before the push' : before.slice(0, 12)} approved (their notes, through the GitLab API)`);
  const chain = before === '' || NO_COMMIT.test(before) ? [] : chainSince(ctx.dir, before, commit);
  if (chain.length === 0) ctx.log.decide(`no commit before the push (CI_COMMIT_BEFORE_SHA ${before === '' ? 'unset' : before.slice(0, 12)}): no merge request's approval covers this pipeline`);
  // Each merge request once, where it entered the chain (its oldest commit there): the merge's parent is that commit's first parent.
  const merged: { iid: number; sha: string; parent?: string }[] = [];
  for (const c of chain) {
    for (const mr of await gitlabCommitMergeRequests(api, c.sha)) {
      if (mr.state !== 'merged' || (branch !== '' && mr.target_branch !== branch) || merged.some((m) => m.iid === mr.iid)) continue;
      merged.push({ iid: mr.iid, sha: mr.sha, ...(c.parent !== undefined ? { parent: c.parent } : {}) });
    }
  }
  const user = merged.length > 0 ? await gitlabCurrentUser(api) : undefined;
  const approvals: MergedApproval[] = [];
  const untrusted: string[] = [];
  for (const m of merged) {
    const found = approvedRecordOf(await gitlabMergeRequestNotes(api, m.iid), user!, { iid: m.iid, sha: m.sha, state: 'merged', target_branch: branch });
    for (const why of found.refused) ctx.log.decide(`!${m.iid}: ${why}: refused`);
    if (found.record === undefined) {
      untrusted.push(`!${m.iid}`);
      ctx.log.decide(`!${m.iid}: no approval record of its merged head ${m.sha.slice(0, 12)} written by @${user!.username}: its change counts as approved by no note`);
      continue;
    }
    ctx.log.decide(`!${m.iid}: approval record of note ${found.noteId} (by @${user!.username}, head ${m.sha.slice(0, 12)}, computed against ${found.record.targetCommit.slice(0, 12)})`);
    approvals.push({ record: found.record, ...(m.parent !== undefined ? { mergeParent: m.parent } : {}) });
  }
  let comparison: ApprovalComparison = compareWithApprovals(applying, approvals);
  if (!comparison.equal) {
    // Only now the configuration applied before is read: it tells drift from a change of the configuration.
    const baseOutdir = path.join(ctx.dir, BASE_OUTPUT);
    const applied = fs.existsSync(path.join(baseOutdir, 'manifest.json')) ? await appliedConfiguration(baseOutdir) : undefined;
    if (applied === undefined) ctx.log.decide(`no ${BASE_OUTPUT}/ (the base's synthesis): drift cannot be told from a change of the configuration`);
    else comparison = compareWithApprovals(applying, approvals, applied);
  }
  const iids = merged.map((m) => m.iid);
  const reason = comparison.equal
    ? untrusted.length > 0
      ? `the plans change nothing, and ${untrusted.join(', ')} has no trusted approval record`
      : `the plans give exactly the change approved by ${iids.length > 0 ? iids.map((n) => `!${n}`).join(', ') : 'no note (and change nothing)'}`
    : `the plans differ from what ${iids.length > 0 ? `the notes of ${iids.map((n) => `!${n}`).join(', ')}` : 'any note'} approved`;
  const outcome: ApprovalOutcome = {
    status: comparison.equal ? 'equal' : 'differs',
    commit,
    reason,
    mergeRequests: iids,
    applying: accessChangeDigest(applying),
    differences: comparison.differences,
    stale: comparison.stale,
  };
  for (const s of comparison.stale) ctx.log.decide(`!${s.mergeRequest}: its note is stale: computed against ${s.targetCommit.slice(0, 12)}, not the merge's parent ${s.mergeParent.slice(0, 12)}`);
  for (const d of comparison.differences) ctx.log.decide(`${d.cause}: ${d.message}`);
  ctx.log.decide(comparison.equal ? `${reason}: the apply jobs apply them` : `${reason}: ${comparison.differences.length} difference(s): nothing is applied automatically; the manual job ${CONFIRM_APPLY_JOB} applies them once a person starts it`);
  finish(outcome);
  if (!comparison.equal || comparison.stale.length > 0) {
    const body = renderApprovalDifferenceNote(outcome, env.CI_PIPELINE_URL);
    try {
      if (iids.length === 0) await gitlabPostCommitComment(api, commit, body);
      for (const iid of iids) await gitlabPostMergeRequestNote(api, String(iid), body);
    } catch (e) {
      throw new Error(`posting the comparison to ${iids.length === 0 ? `the commit ${commit.slice(0, 12)}` : iids.map((n) => `!${n}`).join(', ')} failed (${(e as Error).message}): check ${tokenVariable}; nothing is applied`);
    }
    ctx.log.decide(`the comparison is posted to ${iids.length === 0 ? `the commit ${commit.slice(0, 12)}` : iids.map((n) => `!${n}`).join(', ')}`);
  }
  return outcome;
}

/** The note the default branch posts when its plans differ from the approval, or a record is stale. */
export function renderApprovalDifferenceNote(outcome: ApprovalOutcome, pipelineUrl?: string): string {
  const lines: string[] = [];
  const where = `${pipelineUrl ? `[The default branch's pipeline](${pipelineUrl})` : "The default branch's pipeline"} at ${mdCode(outcome.commit)}`;
  if (outcome.status === 'differs') {
    lines.push(
      '## Not applied: the default branch would apply a change no note approved',
      '',
      `${where}: ${outcome.reason}. Nothing was applied. A person who has read this starts the manual job ${mdCode(CONFIRM_APPLY_JOB)} to apply the plans as they are (recorded as the confirmation of record), or changes the configuration or the store and runs the pipeline again.`,
      '',
      mdTable(
        ['cause', 'where', 'approved', 'applying'],
        outcome.differences.map((d) => [d.cause, mdCode(d.where), d.approved ? `${mdCode(d.approved.change)} (${d.approved.by.map((n) => `!${n}`).join(', ')})` : 'nothing', d.applying !== undefined ? mdCode(d.applying) : 'nothing']),
      ),
      '',
      ...outcome.differences.map((d) => `- **${d.cause}**: ${mdCode(d.message)}`),
    );
  } else {
    lines.push('## Applied as approved', '', `${where}: ${outcome.reason}.`);
  }
  for (const s of outcome.stale) {
    lines.push('', `**Stale note** of !${s.mergeRequest}: computed against the target commit ${mdCode(s.targetCommit)}, not the merge's parent ${mdCode(s.mergeParent)}: it compared with a base the store may no longer have.`);
  }
  return `${lines.join('\n')}\n`;
}
