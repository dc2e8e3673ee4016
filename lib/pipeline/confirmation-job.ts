import * as fs from 'fs';
import * as path from 'path';
import { canonicalDigest } from '../access/access-change-record';
import { CONFIRM_APPLY_JOB, CONFIRMATION_FILE, PLAN_DIR } from '../render/configuration-pipeline-yaml';
import { needsConfirmation, readApprovalOutcome } from './approval-outcome';
import { gitlabPostCommitComment, gitlabPostMergeRequestNote } from './gitlab-api';
import { applyReviewedPlans, plannedRemovals } from './pipeline-apply-job';
import { savedPlanPaths } from './pipeline-engine-steps';
import { jobOutdir, PipelineJobContext, PipelineJobResult } from './pipeline-job-context';
import { PipelineSelection } from './pipeline-selection';
import { releaseRetiredGrants, stacksKeepingRetiredGrants } from './released-grants-step';
import { stackInputEnvironment } from './stack-input-environment';

/** Who confirmed applying plans that differ from the approval, and what exactly. */
export interface ApprovalConfirmation {
  readonly format: 'secretstore-iac/approval-confirmation/1';
  /** `GITLAB_USER_LOGIN`: the person who started the manual job. */
  readonly confirmedBy: string;
  /** `GITLAB_USER_ID`, when set. */
  readonly userId?: string;
  readonly commit: string;
  readonly pipeline?: string;
  readonly job?: string;
  /** SHA-256 of the canonical access change applied (the review's). */
  readonly applying?: string;
  /** SHA-256 of the canonical list of differences confirmed. */
  readonly differences: string;
  readonly mergeRequests: readonly number[];
  /** Present when no approval could be read (the verdict `unbound`): why; the person confirmed plans bound to no note. */
  readonly unbound?: string;
}

/**
 * The manual job {@link CONFIRM_APPLY_JOB}: when the default branch's plans differ from what the
 * merged merge requests' notes approved, or no approval could be read and nothing lets the apply jobs
 * apply them unbound (the review's verdict, {@link needsConfirmation}), a person who has read the
 * differences starts it; it records them as the confirmation of record (`GITLAB_USER_LOGIN`, in its
 * log, its artifact {@link CONFIRMATION_FILE} and a note to the merge requests or the commit) and
 * applies the reviewed plans as they are, in the selection's dependency order, retired stacks last,
 * each with its removals (a person started it, having read them), then releases the retired stacks'
 * kept grants. When the apply jobs could apply (equal, or unbound with a reason) it applies nothing.
 */
export async function runConfirmationJob(selection: PipelineSelection, ctx: PipelineJobContext): Promise<PipelineJobResult> {
  const outcome = readApprovalOutcome(ctx.dir);
  if (!needsConfirmation(outcome)) {
    ctx.log.decide(`nothing to confirm: ${outcome.status === 'equal' ? outcome.reason : `${outcome.reason}, and ${outcome.appliesUnbound === 'no-change' ? 'the plans change nothing' : 'the opt-out applies unbound plans'}`}; the apply jobs applied the plans`);
    return { exitCode: 0, stacks: [] };
  }
  const person = ctx.env.GITLAB_USER_LOGIN ?? '';
  if (person === '') throw new Error('GITLAB_USER_LOGIN is not set: a confirmation names the person who started this job (GitLab sets it); nothing applied');
  const stacks = [...selection.selected, ...selection.retired].filter((s) => fs.existsSync(savedPlanPaths(ctx.dir, s).plan));
  const confirmation: ApprovalConfirmation = {
    format: 'secretstore-iac/approval-confirmation/1',
    confirmedBy: person,
    ...(ctx.env.GITLAB_USER_ID ? { userId: ctx.env.GITLAB_USER_ID } : {}),
    commit: outcome.commit,
    ...(ctx.env.CI_PIPELINE_ID ? { pipeline: ctx.env.CI_PIPELINE_ID } : {}),
    ...(ctx.env.CI_JOB_ID ? { job: ctx.env.CI_JOB_ID } : {}),
    ...(outcome.applying !== undefined ? { applying: outcome.applying } : {}),
    differences: canonicalDigest(outcome.differences),
    mergeRequests: outcome.mergeRequests,
    ...(outcome.status === 'unbound' ? { unbound: outcome.reason } : {}),
  };
  fs.writeFileSync(path.join(ctx.dir, CONFIRMATION_FILE), `${JSON.stringify(confirmation, null, 2)}\n`);
  const what = outcome.status === 'unbound' ? `bound to no approval (${outcome.reason}: no note could be read)` : `${outcome.differences.length} difference(s) from what was approved`;
  ctx.log.decide(`confirmed by ${person}: applying the plans as they are, ${what} (the confirmation of record, ${CONFIRMATION_FILE}): ${stacks.length === 0 ? 'no saved plan' : stacks.join(', ')}`);
  for (const d of outcome.differences) ctx.log.decide(`confirmed ${d.cause}: ${d.message}`);
  const token = ctx.env[ctx.description.noteTokenVariable] ?? '';
  if (token !== '') {
    const api = { apiUrl: ctx.env.CI_API_V4_URL ?? '', projectId: ctx.env.CI_PROJECT_ID ?? '', token };
    const body = `## Confirmed by @${person}\n\n@${person} started \`${CONFIRM_APPLY_JOB}\` at \`${outcome.commit}\`: the plans are applied as they are, with the ${outcome.differences.length} difference(s) from what was approved posted before (SHA-256 of the differences \`${confirmation.differences}\`, of the change applied \`${confirmation.applying ?? 'none'}\`).\n`;
    if (outcome.mergeRequests.length === 0) await gitlabPostCommitComment(api, outcome.commit, body);
    for (const iid of outcome.mergeRequests) await gitlabPostMergeRequestNote(api, String(iid), body);
    ctx.log.decide(`the confirmation is posted to ${outcome.mergeRequests.length === 0 ? `the commit ${outcome.commit.slice(0, 12)}` : outcome.mergeRequests.map((n) => `!${n}`).join(', ')}`);
  }
  if (stacks.length === 0) return { exitCode: 0, stacks: [] };
  const releasing = selection.retired.some((s) => stacks.includes(s)) ? stacksKeepingRetiredGrants(jobOutdir(ctx)) : [];
  const inputs = stackInputEnvironment([...stacks, ...releasing.filter((s) => !stacks.includes(s))], ctx.description.inputs, ctx.env, false);
  if (inputs.problems.length > 0) throw new Error(`input variables missing, nothing applied: ${inputs.problems.join('; ')}`);
  const done: string[] = [];
  for (const stack of stacks) {
    const removals = plannedRemovals(ctx.dir, stack) !== undefined;
    const applied = await applyReviewedPlans([stack], removals, inputs.env, ctx, (s) => `${s}: applied its reviewed plan ${PLAN_DIR}/${s}.tfplan${removals ? ' with its removals' : ''}, confirmed by ${person}`);
    if (applied.exitCode !== 0) return { exitCode: applied.exitCode, stacks: done };
    done.push(stack);
  }
  if (releasing.length === 0) return { exitCode: 0, stacks: done };
  const released = await releaseRetiredGrants(ctx);
  return { ...released, stacks: [...done, ...released.stacks] };
}
