import * as fs from 'fs';
import * as path from 'path';
import { EngineIo, runEngine } from './engine-process';
import { GuardRefusal } from './guard-refusal';
import { GuardedInvocation } from './invocation-guard';
import { GuardContext, refuseReview } from './plan-guards';
import { PlanReview, reviewSavedPlan, withReviewedPlan } from './replacement-guard';

/** One engine run of `tf --refuse-replace`: which engine, where, with what. */
export interface GuardedEngineRun {
  /** The engine binary. */
  readonly engine: string;
  /** The stack directory it runs in. */
  readonly stackDir: string;
  /** Its environment (`VAULT_ADDR` set). */
  readonly env: NodeJS.ProcessEnv;
  /** The stack's name, for messages. */
  readonly stack: string;
  /** The store address the guards look objects up at. */
  readonly address: string;
  /** The operator's engine arguments, as given. */
  readonly args: readonly string[];
  /** What of a review a person approved beforehand (`--allow-removals`): the rest is guarded. */
  readonly approve?: (review: PlanReview) => PlanReview;
}

/**
 * Runs the engine as {@link guardInvocation} decided: reviews the plan the command applies (or the
 * plan it saved) before anything reaches the store, and applies exactly the reviewed plan when
 * nobody reads it (`-auto-approve`).
 * @returns the engine's exit code
 * @throws GuardRefusal subclasses (exit 4): nothing applied; a refused saved plan is removed
 */
export async function runGuardedEngine(guarded: GuardedInvocation, run: GuardedEngineRun, context: GuardContext & EngineIo): Promise<number> {
  const { engine, stackDir, env, stack, address, args } = run;
  const approve = run.approve ?? ((review: PlanReview) => review);
  switch (guarded.kind) {
    case 'unchecked':
      return runEngine(engine, args, stackDir, env, context);
    case 'saved-plan':
      await refuseReview(approve(reviewSavedPlan(engine, stackDir, env, guarded.planFile)), stack, address, `${stack}: nothing applied`, context);
      return runEngine(engine, args, stackDir, env, context);
    case 'planned': {
      const code = await runEngine(engine, args, stackDir, env, context);
      if (code !== 0 && code !== 2) return code;
      try {
        await refuseReview(approve(reviewSavedPlan(engine, stackDir, env, guarded.planFile)), stack, address, `${stack}: the saved plan ${guarded.planFile} was removed`, context, false);
      } catch (e) {
        // A refused plan file is not left for an apply without the guard to pick up.
        if (e instanceof GuardRefusal) fs.rmSync(path.resolve(stackDir, guarded.planFile), { force: true });
        throw e;
      }
      return code;
    }
    case 'plan-then-apply':
      return withReviewedPlan(engine, stackDir, env, guarded.planArgs, async (review, planFile) => {
        await refuseReview(approve(review), stack, address, `${stack}: nothing applied`, context);
        context.stderr(`secretstore-iac tf: reviewed \`${guarded.planArgs.join(' ')}\`: nothing destroyed, replaced or taken over`);
        return runEngine(engine, guarded.applyArgs ? [...guarded.applyArgs, planFile] : args, stackDir, env, context);
      });
  }
}
