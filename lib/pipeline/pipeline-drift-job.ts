import * as fs from 'fs';
import * as path from 'path';
import { ACCESS_CHANGE_FILE } from '../render/configuration-pipeline-yaml';
import { driftLines } from './access-change-rows';
import { readJobAccessChange } from './job-access-change';
import { pipelineEngineArgs, savedPlanPaths } from './pipeline-engine-steps';
import { PipelineJobContext, PipelineJobResult } from './pipeline-job-context';
import { PipelineReviewRunner } from './pipeline-review-job';
import { stackInputEnvironment } from './stack-input-environment';
import { withStackToken } from './stack-token';

/**
 * A schedule's drift job: `plan -detailed-exitcode` of one stack (every stack, selected or not). The
 * engine's exit 2 (the store differs from the configuration) is a drift (the CLI's exit 1): the job fails and
 * its log shows the plan and, from the review of that saved plan (`review`), every drift per identity and
 * path (and object) in the words of the default branch's comparison (docs/pipelines.md §13). Nothing is
 * applied. Its required input variables must be set (a schedule runs protected).
 */
export async function runDriftJob(stack: string, ctx: PipelineJobContext, review?: PipelineReviewRunner): Promise<PipelineJobResult> {
  if (!ctx.description.stacks.includes(stack)) throw new Error(`stack ${JSON.stringify(stack)} is not one of the pipeline's stacks (${ctx.description.stacks.join(', ')})`);
  const inputs = stackInputEnvironment([stack], ctx.description.inputs, ctx.env, false);
  if (inputs.problems.length > 0) throw new Error(`input variables missing, nothing planned: ${inputs.problems.join('; ')}`);
  ctx.log.decide(`${stack}: checking for drift (a schedule checks every stack, changed or not)`, stack);
  const planFile = savedPlanPaths(ctx.dir, stack).plan;
  // Only this run's plan and access change are read.
  fs.mkdirSync(path.dirname(planFile), { recursive: true });
  fs.rmSync(planFile, { force: true });
  fs.rmSync(path.join(ctx.dir, ACCESS_CHANGE_FILE), { force: true });
  let init = 0;
  const code = await withStackToken(ctx, stack, inputs.env, async (env) => {
    init = await ctx.engine(pipelineEngineArgs.init(stack), env);
    return init !== 0 ? init : ctx.engine(pipelineEngineArgs.drift(ctx.dir, stack), env);
  });
  if (init !== 0) {
    ctx.log.decide(`init of ${stack} ended with exit ${init}: the job fails`, stack);
    return { exitCode: init, stacks: [] };
  }
  if (code === 2) {
    const named = review !== undefined && fs.existsSync(planFile) ? await driftByIdentity(stack, planFile, ctx, review) : false;
    ctx.log.decide(`${stack}: drift: the store differs from the configuration (${named ? 'each difference above' : 'the plan above shows how'}); nothing is applied; the job fails`, stack);
    return { exitCode: 0, attention: 'drift', stacks: [stack] };
  }
  ctx.log.decide(code === 0 ? `${stack}: no drift` : `plan of ${stack} ended with exit ${code}: the job fails`, stack);
  return { exitCode: code, stacks: [stack] };
}

/**
 * Logs the drift of the stack's saved plan per identity and path; false when the review could not give
 * it (the plan still shows it). Only this plan is reviewed (`--plan STACK=FILE`), not whatever else lies
 * in the plans directory: another stack's plan there (an artifact downloaded on a laptop) is no drift of this stack.
 */
async function driftByIdentity(stack: string, planFile: string, ctx: PipelineJobContext, review: PipelineReviewRunner): Promise<boolean> {
  const r = await review(['--plan', `${stack}=${planFile}`, '--format', 'json', '--access-change', ACCESS_CHANGE_FILE]);
  const record = r.exitCode > 1 ? undefined : readJobAccessChange(ctx.dir);
  if (record === undefined) {
    ctx.log.decide(`${stack}: the review of the drift plan failed (exit ${r.exitCode}): the plan above shows the drift`, stack);
    return false;
  }
  const lines = driftLines(record);
  for (const line of lines) ctx.log.decide(`${stack}: ${line}`, stack);
  if (!record.complete) ctx.log.decide(`${stack}: the plan holds values known only on apply: the plan above shows them`, stack);
  return lines.length > 0;
}
