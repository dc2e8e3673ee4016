/**
 * The configuration pipeline's critical path for one change, step by step, with the commands its
 * jobs run (lib/render/configuration-pipeline-yaml.ts), on the applied store of a
 * {@link StoreWorkspace}:
 *
 * - merge request, "from MR to note": synthesis, `moves BASE HEAD`, `changed-stacks BASE HEAD`,
 *   `access-diff BASE HEAD` (BASE and HEAD synthesized directories), a fresh `init` and the plan of
 *   each selected stack with the plan role's token (`tf --refuse-replace --allow-removals
 *   --removals-file`, the plan jobs `PARALLEL_STACKS` at a time);
 * - default branch, "from merge to applied": the same synthesis, moves and selection (the same
 *   trees: measured once, counted in both), the plans again with the apply role's token, then the
 *   applies of the saved plans (`tf --refuse-replace`, `--allow-removals` for a plan with removals,
 *   as the manual job of docs/pipelines.md §8 applies it): `ci-access` first when it is selected, then
 *   the others `PARALLEL_STACKS` at a time.
 *
 * The steps are summed as if one ran after the other: the pipeline runs `access-diff` beside the
 * plans, so its own path is at most this sum (plus its jobs' start-up, which the gitlab-ci-local
 * scenario measures).
 */
import * as fs from 'fs';
import * as path from 'path';
import { CI_ACCESS, seconds, StoreWorkspace } from './store-workspace';

/** The figures of one change through both paths. */
export interface PipelinePathFigures {
  readonly synthS: number;
  readonly movesS: number;
  readonly selectS: number;
  readonly selected: readonly string[];
  readonly accessDiffS: number;
  readonly initS: number;
  readonly mrPlanS: number;
  /** The slowest plan of the merge request's plans, and its stack. */
  readonly mrSlowest: { readonly stack: string; readonly s: number };
  readonly mergePlanS: number;
  readonly ciAccessApplyS?: number;
  readonly applyS: number;
  /** Stacks whose apply the apply role was refused (403), then planned and applied with the root token in `rootRetryS`. */
  readonly refused: readonly string[];
  readonly rootRetryS?: number;
  /** What the default branch's plans plan, summed over the selected stacks (`Plan: ...` lines). */
  readonly planned: string;
  readonly mrToNoteS: number;
  readonly mergeToAppliedS: number;
}

/** The `Plan: a to add, c to change, d to destroy` counts of an engine's output, or `no changes`. */
function planSummary(stdout: string): [number, number, number] {
  const m = /Plan: (\d+) to add, (\d+) to change, (\d+) to destroy/.exec(stdout);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
}

/**
 * Runs `change` on the workspace's applications, then both paths.
 * @param change what the merge request changes (add, change or remove an application)
 */
export async function measurePipelinePath(ws: StoreWorkspace, change: () => void): Promise<PipelinePathFigures> {
  const base = ws.snapshot('base.out');
  change();
  const synthS = await ws.synth();
  const moves = await ws.cli(['moves', base, ws.outdir, '--markdown-file', path.join(ws.work, 'moves.md')]);
  const select = await ws.cli(['changed-stacks', base, ws.outdir, '--markdown-file', path.join(ws.work, 'changed-stacks.md')]);
  const selected = select.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  const accessDiff = await ws.cli(['access-diff', base, ws.outdir, '--risk-flag-count', path.join(ws.work, 'risk-flags.txt')], 'root', [0, 1]);
  const initS = await ws.init(selected);
  const planFile = 'pipeline.tfplan';
  const plan = (who: 'plan' | 'apply') => async (stack: string) => {
    const removals = path.join(ws.work, `${stack}.removals`);
    return ws.tf(stack, ['--refuse-replace', '--allow-removals', '--removals-file', removals], ['plan', '-lock-timeout=10m', `-out=${planFile}`], who);
  };
  let mrSlowest = { stack: '-', s: 0 };
  const mrPlanS = await ws.parallel(selected, async (stack) => {
    const run = await plan('plan')(stack);
    if (run.ms / 1000 > mrSlowest.s) mrSlowest = { stack, s: run.ms / 1000 };
  });
  const counts = [0, 0, 0];
  const mergePlanS = await ws.parallel(selected, async (stack) => {
    const run = await plan('apply')(stack);
    planSummary(run.stdout).forEach((n, i) => (counts[i] += n));
  });
  // A stack whose apply the apply role may not do (403) is recorded, then planned and applied again
  // with the root token, so that the next scenario starts from an applied store.
  const refused: string[] = [];
  const apply = async (stack: string) => {
    const removals = fs.existsSync(path.join(ws.work, `${stack}.removals`)) ? ['--allow-removals'] : [];
    try {
      await ws.tf(stack, ['--refuse-replace', ...removals], ['apply', '-lock-timeout=10m', planFile], 'apply');
    } catch (error) {
      if (!/permission denied|Code: 403/.test((error as Error).message)) throw error;
      refused.push(stack);
    }
  };
  const ciAccessApplyS = selected.includes(CI_ACCESS) ? await seconds(() => apply(CI_ACCESS)) : undefined;
  const applyRestS = await ws.parallel(selected.filter((s) => s !== CI_ACCESS), apply);
  const rootRetryS = refused.length === 0 ? undefined : await ws.parallel(refused, async (stack) => {
    await ws.tf(stack, ['--refuse-replace', '--allow-removals'], ['plan', '-lock-timeout=10m', `-out=${planFile}`], 'root');
    await ws.tf(stack, ['--refuse-replace', '--allow-removals'], ['apply', '-lock-timeout=10m', planFile], 'root');
  });
  const applyS = (ciAccessApplyS ?? 0) + applyRestS;
  const common = synthS + moves.s + select.s + initS;
  return {
    synthS,
    movesS: moves.s,
    selectS: select.s,
    selected,
    accessDiffS: accessDiff.s,
    initS,
    mrPlanS,
    mrSlowest,
    mergePlanS,
    ciAccessApplyS,
    applyS,
    refused,
    rootRetryS,
    planned: `${counts[0]} to add, ${counts[1]} to change, ${counts[2]} to destroy`,
    mrToNoteS: common + accessDiff.s + mrPlanS,
    mergeToAppliedS: common + mergePlanS + applyS + (rootRetryS ?? 0),
  };
}
