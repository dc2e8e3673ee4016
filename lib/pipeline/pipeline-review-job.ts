import * as fs from 'fs';
import * as path from 'path';
import { terminalLine } from '../private/terminal-text';
import { ACCEPT_RISK_VARIABLE, ACCESS_CHANGE_FILE, CHANGED_STACKS_NOTE, PLAN_DIR, REVIEWED_PLANS_FILE } from '../render/configuration-pipeline-yaml';
import { REVIEW_SECRET_VARIABLE, sealReview } from '../engine/reviewed-plan-check';
import { compareWithApprovedNotes } from './default-branch-approval-step';
import { defaultBranchUsageFile } from './default-branch-usage';
import { mergeRequestApprovalSection } from './merge-request-approval-step';
import { postMergeRequestNote } from './merge-request-note';
import { pipelineEngineArgs } from './pipeline-engine-steps';
import { PipelineCommandRunner, PipelineJobContext, PipelineJobResult } from './pipeline-job-context';

/** The merge request's note (artifact) and the number of its risk flags (artifact). */
export const ACCESS_DIFF_NOTE = 'access-diff.md';
/** The number of risk flags of the merge request's review, one line (artifact). */
export const RISK_FLAG_COUNT_FILE = 'access-risk-flags.txt';

/** Runs `secretstore-iac access-diff` with the given arguments: its exit code and standard output. */
export type PipelineReviewRunner = PipelineCommandRunner;

/** The stacks with a saved plan in the job's {@link PLAN_DIR} (the plan jobs' artifacts), sorted. */
export function plannedStacks(dir: string): string[] {
  const plans = path.join(dir, PLAN_DIR);
  if (!fs.existsSync(plans)) return [];
  return fs
    .readdirSync(plans)
    .filter((f) => f.endsWith('.tfplan'))
    .map((f) => f.slice(0, -'.tfplan'.length))
    .sort();
}

/** The note when nothing is planned. */
const NOTHING_PLANNED = '## Access changes: none\n\nNo stack is planned (no saved plan in this pipeline): applying this merge request changes nothing on the store.\n';

/**
 * A review job: the review of this pipeline's saved plans (what the engine will apply, whatever file,
 * variable or expression produced it), each planned stack initialised first (the engine shows a plan
 * only there).
 * - default branch: {@link REVIEWED_PLANS_FILE}, the plans the apply jobs may apply with each one's
 *   SHA-256 (none when nothing is planned, so no apply applies one);
 * - merge request: the note ({@link ACCESS_DIFF_NOTE}: the access part, then the synth job's
 *   stacks and moves), posted to the merge request when the note token is set (a failed post fails
 *   the job: a review must not pass on a note nobody sees), and the risk-flag gate: flags fail the
 *   job unless the merge request has the acknowledgement label or {@link ACCEPT_RISK_VARIABLE} is `true`.
 * An error of the review itself (exit above 1) fails the job with its code.
 */
export async function runReviewJob(kind: 'merge-request' | 'default-branch', ctx: PipelineJobContext, review: PipelineReviewRunner): Promise<PipelineJobResult> {
  const stacks = plannedStacks(ctx.dir);
  // Only this run's review writes the access change its note or comparison reads.
  fs.rmSync(path.join(ctx.dir, ACCESS_CHANGE_FILE), { force: true });
  ctx.log.decide(stacks.length === 0 ? `no saved plan in ${PLAN_DIR}/ (the synth job selected no stack)` : `reviewing the saved plans of ${stacks.join(', ')} (${PLAN_DIR}/, the plan jobs' artifacts)`);
  for (const stack of stacks) {
    const code = await ctx.engine(pipelineEngineArgs.init(stack), {});
    if (code !== 0) {
      ctx.log.decide(`init of ${stack} ended with exit ${code}: the job fails, no review`, stack);
      return { exitCode: code, stacks: [] };
    }
  }
  const write = (name: string, text: string) => fs.writeFileSync(path.join(ctx.dir, name), text);
  if (kind === 'default-branch') {
    if (stacks.length === 0) {
      write(REVIEWED_PLANS_FILE, sealReview('{"plans":[]}\n', ctx.env));
      ctx.log.decide(`${REVIEWED_PLANS_FILE} records no plan: no apply job applies one`);
      await compareWithApprovedNotes(ctx);
      return { exitCode: 0, stacks };
    }
    const r = await review(['--plans', PLAN_DIR, '--format', 'json', '--access-change', ACCESS_CHANGE_FILE]);
    // access-diff: 0 no access change, 1 access changed (or a value unknown until apply); above, an error.
    if (r.exitCode > 1) {
      write(REVIEWED_PLANS_FILE, r.stdout.endsWith('\n') ? r.stdout : `${r.stdout}\n`);
      ctx.log.show(r.stdout);
      ctx.log.decide(`the review failed (exit ${r.exitCode}): no plan is recorded, no apply job applies one`);
      return { exitCode: r.exitCode, stacks: [] };
    }
    // Keyed with the review secret when the job holds it: an edited file is refused by every apply.
    write(REVIEWED_PLANS_FILE, sealReview(r.stdout.endsWith('\n') ? r.stdout : `${r.stdout}\n`, ctx.env));
    const secret = ctx.env[REVIEW_SECRET_VARIABLE];
    ctx.log.decide(
      secret !== undefined && secret !== ''
        ? `${REVIEWED_PLANS_FILE} is sealed with ${REVIEW_SECRET_VARIABLE} (HMAC-SHA256, this pipeline and commit): an apply refuses it edited`
        : `${REVIEWED_PLANS_FILE} is not sealed (${REVIEW_SECRET_VARIABLE} is not set: a protected, masked CI/CD variable, docs/pipelines.md §6): each apply binds its plan to the stack's synthesis by the plan's own configuration`,
    );
    ctx.log.decide(`${REVIEWED_PLANS_FILE} records the saved plans of ${stacks.join(', ')} with their SHA-256: the apply jobs apply only these (${r.exitCode === 0 ? 'no access change' : 'access changes or values unknown until apply'})`);
    ctx.log.show(r.stdout.trimEnd());
    // Before any apply: the plans against what the merged merge requests' notes approved (docs/pipelines.md §13).
    await compareWithApprovedNotes(ctx);
    return { exitCode: 0, stacks };
  }
  let note: string;
  let flags: number;
  if (stacks.length === 0) {
    note = NOTHING_PLANNED;
    flags = 0;
    write(RISK_FLAG_COUNT_FILE, '0\n');
  } else {
    // The default branch's usage file, when its pipeline keeps one: each removed or narrowed grant's last use (docs/usage.md §9).
    const usage = await defaultBranchUsageFile(ctx);
    const r = await review(['--plans', PLAN_DIR, '--risk-flag-count', RISK_FLAG_COUNT_FILE, '--access-change', ACCESS_CHANGE_FILE, ...(usage !== undefined ? ['--usage', usage] : [])]);
    if (r.exitCode > 1) {
      write(ACCESS_DIFF_NOTE, r.stdout);
      ctx.log.show(r.stdout);
      ctx.log.decide(`the review failed (exit ${r.exitCode}): no note`);
      return { exitCode: r.exitCode, stacks: [] };
    }
    note = r.stdout.endsWith('\n') ? r.stdout : `${r.stdout}\n`;
    flags = Number.parseInt(fs.readFileSync(path.join(ctx.dir, RISK_FLAG_COUNT_FILE), 'utf8').trim(), 10);
    if (!Number.isInteger(flags)) throw new Error(`${RISK_FLAG_COUNT_FILE}: not a number of risk flags`);
  }
  // The note shows which stacks the merge request plans, with their digests (the synth job's).
  const stacksNote = path.join(ctx.dir, CHANGED_STACKS_NOTE);
  if (fs.existsSync(stacksNote)) note += `\n${fs.readFileSync(stacksNote, 'utf8')}`;
  // Last, the approval record: what the default branch compares its plans with (docs/pipelines.md §13).
  const approval = mergeRequestApprovalSection(ctx);
  if (approval !== undefined) note += `\n${approval}`;
  write(ACCESS_DIFF_NOTE, note);
  ctx.log.show(note.trimEnd());
  const tokenVariable = ctx.description.noteTokenVariable;
  const token = ctx.env[tokenVariable] ?? '';
  const iid = ctx.env.CI_MERGE_REQUEST_IID ?? '';
  if (token === '') {
    ctx.log.decide(`${tokenVariable} is not set: the note is not posted; it is in the job log above and in the artifact ${ACCESS_DIFF_NOTE}`);
  } else {
    try {
      await postMergeRequestNote({ apiUrl: ctx.env.CI_API_V4_URL ?? '', projectId: ctx.env.CI_PROJECT_ID ?? '', mergeRequestIid: iid, token }, note);
    } catch (e) {
      // A review must not pass on a note nobody sees: the job fails (the CLI's exit 3).
      throw new Error(
        terminalLine(`posting the note to !${iid} failed (${(e as Error).message}); the note is in the job log above and in the artifact ${ACCESS_DIFF_NOTE}: check ${tokenVariable} (a project access token with scope api, of a role that may comment)`),
      );
    }
    ctx.log.decide(`the note is posted to !${iid}`);
  }
  if (flags === 0) {
    ctx.log.decide('no risk flag: the review passes');
    return { exitCode: 0, stacks };
  }
  const label = ctx.description.acknowledgeLabel;
  const labels = (ctx.env.CI_MERGE_REQUEST_LABELS ?? '').split(',').map((l) => l.trim());
  const ack = labels.includes(label) ? `the label ${label}` : ctx.env[ACCEPT_RISK_VARIABLE] === 'true' ? `${ACCEPT_RISK_VARIABLE}=true` : undefined;
  if (ack === undefined) {
    ctx.log.decide(`${flags} risk flag(s) in the access diff: review them, then add the label ${label} to the merge request (or set ${ACCEPT_RISK_VARIABLE}=true) and re-run this job`);
    return { exitCode: 0, attention: 'risk-flags', stacks };
  }
  ctx.log.decide(`${flags} risk flag(s) acknowledged by ${ack}`);
  return { exitCode: 0, stacks };
}
