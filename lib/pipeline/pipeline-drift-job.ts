import { pipelineEngineArgs } from './pipeline-engine-steps';
import { PipelineJobContext, PipelineJobResult } from './pipeline-job-context';
import { stackInputEnvironment } from './stack-input-environment';
import { withStackToken } from './stack-token';

/**
 * A schedule's drift job: `plan -detailed-exitcode` of one stack (every stack, selected or not). The
 * engine's exit 2 (the store differs from the configuration) is a drift (the CLI's exit 1): the job fails and
 * its log shows the plan. Its required input variables must be set (a schedule runs protected).
 */
export async function runDriftJob(stack: string, ctx: PipelineJobContext): Promise<PipelineJobResult> {
  if (!ctx.description.stacks.includes(stack)) throw new Error(`stack ${JSON.stringify(stack)} is not one of the pipeline's stacks (${ctx.description.stacks.join(', ')})`);
  const inputs = stackInputEnvironment([stack], ctx.description.inputs, ctx.env, false);
  if (inputs.problems.length > 0) throw new Error(`input variables missing, nothing planned: ${inputs.problems.join('; ')}`);
  ctx.log.decide(`${stack}: checking for drift (a schedule checks every stack, changed or not)`, stack);
  let init = 0;
  const code = await withStackToken(ctx, stack, inputs.env, async (env) => {
    init = await ctx.engine(pipelineEngineArgs.init(stack), env);
    return init !== 0 ? init : ctx.engine(pipelineEngineArgs.drift(stack), env);
  });
  if (init !== 0) {
    ctx.log.decide(`init of ${stack} ended with exit ${init}: the job fails`, stack);
    return { exitCode: init, stacks: [] };
  }
  if (code === 2) {
    ctx.log.decide(`${stack}: drift: the store differs from the configuration (the plan above shows how); the job fails`, stack);
    return { exitCode: 0, attention: 'drift', stacks: [stack] };
  }
  ctx.log.decide(code === 0 ? `${stack}: no drift` : `plan of ${stack} ended with exit ${code}: the job fails`, stack);
  return { exitCode: code, stacks: [stack] };
}
