import * as fs from 'fs';
import * as path from 'path';
import { PLAN_DIR } from '../render/configuration-pipeline-yaml';
import { JobStacks } from './job-stacks';
import { pipelineEngineArgs } from './pipeline-engine-steps';
import { PipelineJobContext, PipelineJobResult } from './pipeline-job-context';
import { stackInputEnvironment } from './stack-input-environment';
import { runStackEngineSteps } from './stack-token';

/**
 * A plan job: saves a plan of each of its stacks, one after the other, in {@link PLAN_DIR} (with the
 * removals list beside it). A merge request's plan gives a required input variable that is not set a
 * placeholder; a default-branch plan without one fails before the engine runs. The first engine
 * failure ends the job with its exit code (the next stacks are not planned).
 */
export async function runPlanJob(job: JobStacks, mergeRequest: boolean, ctx: PipelineJobContext): Promise<PipelineJobResult> {
  ctx.log.decide(job.reason);
  if (job.stacks.length === 0) return { exitCode: 0, stacks: [] };
  const inputs = stackInputEnvironment(job.stacks, ctx.description.inputs, ctx.env, mergeRequest);
  if (inputs.problems.length > 0) {
    inputs.problems.forEach((p) => ctx.log.decide(`not planned: ${p}`));
    throw new Error(`input variables missing, nothing planned: ${inputs.problems.join('; ')}`);
  }
  inputs.decisions.forEach((d) => ctx.log.decide(d));
  fs.mkdirSync(path.join(ctx.dir, PLAN_DIR), { recursive: true });
  const done: string[] = [];
  for (const stack of job.stacks) {
    const code = await runStackEngineSteps(ctx, stack, inputs.env, [pipelineEngineArgs.init(stack), pipelineEngineArgs.plan(ctx.dir, stack)], (step, code) =>
      `${step} of ${stack} ended with exit ${code}: the job fails${job.stacks.length > done.length + 1 ? `, the stacks after it (${job.stacks.slice(done.length + 1).join(', ')}) are not planned` : ''}`,
    );
    if (code !== 0) return { exitCode: code, stacks: done };
    done.push(stack);
    ctx.log.decide(`${stack}: plan saved as ${PLAN_DIR}/${stack}.tfplan (its artifact)`, stack);
  }
  return { exitCode: 0, stacks: done };
}
