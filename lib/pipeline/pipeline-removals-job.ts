import { DESTROY_REMOVED_JOB, PLAN_DIR } from '../render/configuration-pipeline-yaml';
import { automaticApplyRefusal } from './approval-outcome';
import { applyReviewedPlans, plannedRemovals } from './pipeline-apply-job';
import { jobOutdir, PipelineJobContext, PipelineJobResult } from './pipeline-job-context';
import { PipelineSelection } from './pipeline-selection';
import { releaseRetiredGrants, stacksKeepingRetiredGrants } from './released-grants-step';
import { stackInputEnvironment } from './stack-input-environment';

/**
 * The manual job {@link DESTROY_REMOVED_JOB}, the one path that applies a destroy: a person starts
 * it. It applies, in the selection's dependency order and the retired stacks last, only the saved
 * plans that destroy removed objects (a removals list beside the plan), with `--allow-removals`: a
 * replacement or any other destroy is still refused, and only the reviewed plan is applied. Without
 * such a plan it says so. The input variables of every stack it applies are checked before the first
 * apply. Once every removal is applied, the grants the roles kept of retired stacks are released
 * ({@link releaseRetiredGrants}): the scheduled drift jobs are clean at once.
 */
export async function runRemovalsJob(selection: PipelineSelection, ctx: PipelineJobContext): Promise<PipelineJobResult> {
  const withRemovals = [...selection.selected, ...selection.retired].flatMap((stack) => {
    const removals = plannedRemovals(ctx.dir, stack);
    return removals === undefined ? [] : [{ stack, removals }];
  });
  // Plans that differ from the approval are applied, removals included, only by the confirmation job.
  const refused = withRemovals.length > 0 ? automaticApplyRefusal(ctx.dir) : undefined;
  if (refused !== undefined) {
    ctx.log.decide(`${withRemovals.map((r) => r.stack).join(', ')}: ${refused}, removals included`);
    return { exitCode: 0, stacks: [] };
  }
  if (withRemovals.length === 0) {
    ctx.log.decide(`no plan of this pipeline destroys a removed object (no ${PLAN_DIR}/<stack>.removals among the ${selection.selected.length} selected and ${selection.retired.length} retired stacks): nothing to destroy`);
    // The retired stacks' apply job released the kept grants when it applied them all.
    return { exitCode: 0, stacks: [] };
  }
  const person = ctx.env.GITLAB_USER_LOGIN || 'a person';
  ctx.log.decide(`started by ${person}: destroying what the configuration declares nowhere any more, in dependency order, retired stacks last: ${withRemovals.map((r) => r.stack).join(', ')}`);
  for (const r of withRemovals) ctx.log.decide(`${r.stack}: destroys ${r.removals.join('; ')}`, r.stack);
  const stacks = withRemovals.map((r) => r.stack);
  // The stacks whose kept grants it releases at the end too: a missing variable fails before any destroy.
  const releasing = stacksKeepingRetiredGrants(jobOutdir(ctx));
  const inputs = stackInputEnvironment([...stacks, ...releasing.filter((s) => !stacks.includes(s))], ctx.description.inputs, ctx.env, false);
  if (inputs.problems.length > 0) throw new Error(`input variables missing, nothing destroyed: ${inputs.problems.join('; ')}`);
  const applied = await applyReviewedPlans(stacks, true, inputs.env, ctx, (stack) => `${stack}: applied its reviewed plan with its removals`);
  if (applied.exitCode !== 0) return applied;
  const done = applied.stacks;
  const released = await releaseRetiredGrants(ctx);
  return { ...released, stacks: [...done, ...released.stacks] };
}
