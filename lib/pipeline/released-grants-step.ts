import * as fs from 'fs';
import * as path from 'path';
import { RETIRED_GRANTS_FILE } from '../model/retired-grants-file';
import { PLAN_DIR } from '../render/configuration-pipeline-yaml';
import { pipelineEngineArgs, savedPlanPaths } from './pipeline-engine-steps';
import { jobOutdir, PipelineJobContext, PipelineJobResult } from './pipeline-job-context';
import { stackInputEnvironment } from './stack-input-environment';
import { runStackEngineSteps } from './stack-token';

/** The stacks of the synthesized output whose roles kept a retired stack's grants (`moves`' override in them), sorted. */
export function stacksKeepingRetiredGrants(outdir: string): string[] {
  const stacksDir = path.join(outdir, 'stacks');
  if (!fs.existsSync(stacksDir)) return [];
  return fs
    .readdirSync(stacksDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(stacksDir, e.name, RETIRED_GRANTS_FILE)))
    .map((e) => e.name)
    .sort();
}

/**
 * The step that ends what the roles kept of retired stacks once every retired stack's removal is
 * applied (the retired stacks' apply job when none was left to the manual job, and the manual job):
 * each stack holding `moves`' {@link RETIRED_GRANTS_FILE} is planned again without it, exactly as this
 * commit declares it (what the access diff reviewed), and applied with `tf --released-grants`, which
 * lets that plan through only when all it does is take away, in place, what the override (sealed by
 * `moves`) kept (lib/engine/released-grants-check.ts). So the roles lose the destroyed grants and the
 * stack's drift job is clean at once, not after some later change to it. That plan is the one apply
 * of the pipeline no review read; the check is why it may be.
 */
export async function releaseRetiredGrants(ctx: PipelineJobContext): Promise<PipelineJobResult> {
  const outdir = jobOutdir(ctx);
  const stacks = stacksKeepingRetiredGrants(outdir);
  if (stacks.length === 0) {
    ctx.log.decide(`no stack keeps a retired stack's grants (no ${RETIRED_GRANTS_FILE}): nothing to release`);
    return { exitCode: 0, stacks: [] };
  }
  // The stacks are planned as declared: their input variables too (checked before the first plan).
  const inputs = stackInputEnvironment(stacks, ctx.description.inputs, ctx.env, false);
  if (inputs.problems.length > 0) throw new Error(`input variables missing, no grant released: ${inputs.problems.join('; ')}`);
  const done: string[] = [];
  for (const stack of stacks) {
    ctx.log.decide(`${stack}: its roles kept grants of the retired stacks until their removal, now applied: planned and applied again without them (tf --released-grants)`, stack);
    const released = savedPlanPaths(ctx.dir, stack).released;
    fs.mkdirSync(path.join(ctx.dir, PLAN_DIR), { recursive: true });
    fs.renameSync(path.join(outdir, 'stacks', stack, RETIRED_GRANTS_FILE), released.grants);
    const steps = [pipelineEngineArgs.init(stack), pipelineEngineArgs.releasePlan(ctx.dir, stack), pipelineEngineArgs.releaseApply(ctx.dir, stack)];
    const code = await runStackEngineSteps(ctx, stack, inputs.env, steps, (step, code) => `${step} of ${stack} (release of kept grants) ended with exit ${code}: the job fails`);
    if (code !== 0) return { exitCode: code, stacks: done };
    done.push(stack);
    ctx.log.decide(`${stack}: released the retired stacks' grants`, stack);
  }
  return { exitCode: 0, stacks: done };
}
