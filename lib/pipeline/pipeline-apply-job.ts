import * as fs from 'fs';
import { DESTROY_REMOVED_JOB, PLAN_DIR } from '../render/configuration-pipeline-yaml';
import { JobStacks } from './job-stacks';
import { pipelineEngineArgs, savedPlanPaths } from './pipeline-engine-steps';
import { automaticApplyRefusal } from './approval-outcome';
import { PipelineJobContext, PipelineJobResult } from './pipeline-job-context';
import { releaseRetiredGrants } from './released-grants-step';
import { stackInputEnvironment } from './stack-input-environment';
import { runStackEngineSteps } from './stack-token';

/** The objects a stack's saved plan destroys because the configuration removed them; undefined without. */
export function plannedRemovals(dir: string, stack: string): string[] | undefined {
  const file = savedPlanPaths(dir, stack).removals;
  if (!fs.existsSync(file)) return undefined;
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
}

/**
 * An apply job of the default branch: applies the reviewed saved plan of each of its stacks, one
 * after the other. A plan with removals is not applied here: it is left, with the stack's other
 * changes (one saved plan), to the manual job {@link DESTROY_REMOVED_JOB}, naming what it destroys;
 * the job goes on with the next stack. The input variables of every stack it applies are checked
 * before the first apply. The first engine failure ends the job with its exit code.
 */
export async function runApplyJob(job: JobStacks, ctx: PipelineJobContext): Promise<PipelineJobResult> {
  ctx.log.decide(job.reason);
  // Only plans that give what was approved are applied automatically (docs/pipelines.md §13).
  const refused = job.stacks.length > 0 ? automaticApplyRefusal(ctx.dir) : undefined;
  if (refused !== undefined) {
    ctx.log.decide(`${job.stacks.join(', ')}: ${refused}`);
    return { exitCode: 0, stacks: [] };
  }
  const applying: string[] = [];
  for (const stack of job.stacks) {
    const removals = plannedRemovals(ctx.dir, stack);
    if (removals === undefined) {
      applying.push(stack);
      continue;
    }
    ctx.log.decide(
      `${stack}: not applied here: its plan destroys objects this configuration declares nowhere any more (a revocation): ${removals.join('; ')}; the manual job ${DESTROY_REMOVED_JOB} applies it (with its other changes) once a person starts it`,
      stack,
    );
  }
  if (applying.length === 0) return { exitCode: 0, stacks: [] };
  const inputs = stackInputEnvironment(applying, ctx.description.inputs, ctx.env, false);
  if (inputs.problems.length > 0) throw new Error(`input variables missing, nothing applied: ${inputs.problems.join('; ')}`);
  return applyReviewedPlans(applying, false, inputs.env, ctx, (stack) => `${stack}: applied its reviewed plan ${PLAN_DIR}/${stack}.tfplan`);
}

/**
 * `init`, then the guarded apply of the reviewed saved plan, of each stack in order (`removals`: with
 * `--allow-removals`, the manual job only), logging `applied(stack)` after each. The first engine run
 * that fails ends it with its exit code, naming the stacks not applied.
 */
export async function applyReviewedPlans(
  stacks: readonly string[],
  removals: boolean,
  env: Readonly<Record<string, string>>,
  ctx: PipelineJobContext,
  applied: (stack: string) => string,
): Promise<PipelineJobResult> {
  const done: string[] = [];
  for (const stack of stacks) {
    const code = await runStackEngineSteps(ctx, stack, env, [pipelineEngineArgs.init(stack), pipelineEngineArgs.apply(ctx.dir, stack, removals)], (step, code) =>
      `${step} of ${stack} ended with exit ${code}: the job fails${done.length + 1 < stacks.length ? `, not applied: ${stacks.slice(done.length + 1).join(', ')}` : ''}`,
    );
    if (code !== 0) return { exitCode: code, stacks: done };
    done.push(stack);
    ctx.log.decide(applied(stack), stack);
  }
  return { exitCode: 0, stacks: done };
}

/**
 * The retired stacks' apply job: {@link runApplyJob} of every retired stack; then, when it applied
 * them all (none left to {@link DESTROY_REMOVED_JOB} with removals), their removal is complete and
 * the grants the other stacks' roles kept of them are released ({@link releaseRetiredGrants}). When
 * one is left to the manual job, the roles keep them until that job ends it.
 */
export async function runRetiredApplyJob(job: JobStacks, ctx: PipelineJobContext): Promise<PipelineJobResult> {
  const applied = await runApplyJob(job, ctx);
  if (applied.exitCode !== 0) return applied;
  // Not applied (the plans differ from the approval): nothing to release either.
  if (job.stacks.length > 0 && applied.stacks.length === 0 && automaticApplyRefusal(ctx.dir) !== undefined) return applied;
  const deferred = job.stacks.filter((stack) => plannedRemovals(ctx.dir, stack) !== undefined);
  if (deferred.length > 0) {
    ctx.log.decide(`the roles keep the retired stacks' grants until ${DESTROY_REMOVED_JOB} applies the removals of ${deferred.join(', ')}`);
    return applied;
  }
  const released = await releaseRetiredGrants(ctx);
  return { ...released, stacks: [...applied.stacks, ...released.stacks] };
}
