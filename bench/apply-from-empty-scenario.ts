/**
 * Apply from empty of the whole platform at N applications, by an administrator (the store's root
 * token, as every first deployment bootstraps the pipeline's own roles), with the engine run
 * directly in each stack's directory: `ci-access` (the JWT method and the pipeline roles) first, then
 * the application stacks, `app-roles` (the AppRole mount) and its hash shards, the shards
 * `PARALLEL_STACKS` at a time as the pipeline's parallel jobs would on the machine's two cores. The
 * application stacks write what the raw write scenario writes (N roles, N policies, plus the spec's
 * four applications and the mount): their time is compared with the store's own rate.
 */
import { processCpuSeconds, reapedChildrenCpuSeconds } from './process-cpu';
import { CI_ACCESS, PARALLEL_STACKS, seconds, StoreWorkspace } from './store-workspace';

/** Wall times of the apply from empty. */
export interface ApplyFromEmptyFigures {
  readonly stacks: number;
  readonly synthS: number;
  readonly initS: number;
  /** `ci-access` alone. */
  readonly ciAccessS: number;
  /** `app-roles`, then the shards two at a time. */
  readonly applicationStacksS: number;
  /** CPU seconds of every engine and provider process of the application stacks' applies. */
  readonly engineCpuS: number;
  /** CPU seconds the store spent meanwhile. */
  readonly storeCpuS: number;
  readonly parallel: number;
}

export async function measureApplyFromEmpty(ws: StoreWorkspace): Promise<ApplyFromEmptyFigures> {
  const synthS = await ws.synth();
  const stacks = ws.stacks();
  const initS = await ws.init(stacks);
  const apply = (s: string) => ws.engine(s, ['apply', '-auto-approve'], 'root');
  const ciAccessS = await seconds(() => apply(CI_ACCESS));
  const shards = stacks.filter((s) => s !== CI_ACCESS && s !== 'app-roles');
  const engineCpu0 = reapedChildrenCpuSeconds();
  const storeCpu0 = processCpuSeconds(ws.store.process.pid);
  const applicationStacksS = await seconds(async () => {
    await apply('app-roles');
    await ws.parallel(shards, apply);
  });
  const engineCpuS = reapedChildrenCpuSeconds() - engineCpu0;
  const storeCpuS = processCpuSeconds(ws.store.process.pid) - storeCpu0;
  return { stacks: stacks.length, synthS, initS, ciAccessS, applicationStacksS, engineCpuS, storeCpuS, parallel: PARALLEL_STACKS };
}

/**
 * For a quick run at a large size (`--touched-stacks-only`): only `ci-access`, `app-roles` and the
 * given shards applied from empty (the shards the add, change and remove scenarios touch); no figure
 * of its own. The scenarios' paths plan and apply only the stacks they select, so the shards left
 * unapplied are never planned by them.
 */
export async function applyOnly(ws: StoreWorkspace, shards: readonly string[]): Promise<void> {
  await ws.synth();
  const stacks = [CI_ACCESS, 'app-roles', ...shards];
  await ws.init(stacks);
  for (const s of stacks) await ws.engine(s, ['apply', '-auto-approve'], 'root');
}
