import * as path from 'path';
import { PLAN_DIR, REMOVALS_SUFFIX, REVIEWED_PLANS_FILE } from '../render/configuration-pipeline-yaml';

/**
 * Runs `secretstore-iac tf` with the given arguments and extra environment, returning its exit code.
 * The CLI calls the `tf` command's function (no second process); tests record the calls.
 */
export type PipelineEngineRunner = (args: readonly string[], env: Readonly<Record<string, string>>) => Promise<number>;

/**
 * Where a job keeps a stack's saved plan and its removals list, under the project directory `dir`;
 * and, for the release of kept retired grants, the override taken out of the stack and its plan.
 */
export function savedPlanPaths(
  dir: string,
  stack: string,
): { readonly plan: string; readonly removals: string; readonly released: { readonly grants: string; readonly plan: string } } {
  const plans = path.join(dir, PLAN_DIR);
  return {
    plan: path.join(plans, `${stack}.tfplan`),
    removals: path.join(plans, `${stack}${REMOVALS_SUFFIX}`),
    released: { grants: path.join(plans, `${stack}.released-grants.json`), plan: path.join(plans, `${stack}.released.tfplan`) },
  };
}

/** The guarded `tf` invocations of the pipeline's jobs: every plan, apply and drift check it runs. */
export const pipelineEngineArgs = {
  /** Installs the providers (every job that runs the engine). */
  init: (stack: string): string[] => ['tf', stack, '--', 'init', '-input=false'],
  /**
   * The saved plan of a stack, outside `cdktf.out` (a synthesis replaces that directory).
   * --refuse-replace: a plan that destroys or replaces an object fails (exit 4), in review;
   * --allow-removals: but for objects the configuration removed, listed in the removals file.
   */
  plan: (dir: string, stack: string): string[] => {
    const p = savedPlanPaths(dir, stack);
    return ['tf', stack, '--refuse-replace', '--allow-removals', '--removals-file', p.removals, '--', 'plan', '-input=false', '-lock-timeout=10m', `-out=${p.plan}`];
  },
  /**
   * The apply of a stack's saved plan, guarded, and only the plan whose SHA-256 this pipeline's review
   * recorded; `removals` (the manual job only) lets the recorded removals through.
   */
  apply: (dir: string, stack: string, removals: boolean): string[] => [
    'tf',
    stack,
    '--refuse-replace',
    ...(removals ? ['--allow-removals'] : []),
    '--reviewed-plans',
    path.join(dir, REVIEWED_PLANS_FILE),
    '--',
    'apply',
    '-input=false',
    '-lock-timeout=10m',
    savedPlanPaths(dir, stack).plan,
  ],
  /** The plan of a stack without the kept retired grants' override (lib/pipeline/released-grants-step.ts). */
  releasePlan: (dir: string, stack: string): string[] => ['tf', stack, '--refuse-replace', '--', 'plan', '-input=false', '-lock-timeout=10m', `-out=${savedPlanPaths(dir, stack).released.plan}`],
  /** Its apply: only a plan that takes away, in place, what the override kept (`--released-grants`). */
  releaseApply: (dir: string, stack: string): string[] => {
    const r = savedPlanPaths(dir, stack).released;
    return ['tf', stack, '--refuse-replace', '--released-grants', r.grants, '--', 'apply', '-input=false', '-lock-timeout=10m', r.plan];
  },
  /**
   * The schedule's drift check: exit 2 when the store differs from the configuration. The plan is saved
   * where the review reads plans, so that the job can name the drift per identity and path.
   */
  drift: (dir: string, stack: string): string[] => ['tf', stack, '--', 'plan', '-input=false', '-lock-timeout=10m', '-detailed-exitcode', `-out=${savedPlanPaths(dir, stack).plan}`],
};
