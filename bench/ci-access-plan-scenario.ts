/**
 * The pipeline roles' stack at N applications: the size of its synthesized JSON and the time of a
 * no-change plan of it, as the default-branch plan job runs it (`secretstore-iac tf ci-access
 * --refuse-replace -- plan -out=...` with the apply role's token, after a fresh `init`). The target
 * is a figure flat in N: adding an application should not make the pipeline roles' stack cost more.
 */
import { reapedChildrenCpuSeconds } from './process-cpu';
import { CI_ACCESS, StoreWorkspace } from './store-workspace';

/** The `ci-access` figures at one size. */
export interface CiAccessPlanFigures {
  readonly bytes: number;
  readonly initS: number;
  readonly planS: number;
  /** CPU seconds of that plan (the CLI, the engine and the provider): comparable under any load. */
  readonly planCpuS: number;
}

export async function measureCiAccessPlan(ws: StoreWorkspace): Promise<CiAccessPlanFigures> {
  const initS = await ws.init([CI_ACCESS]);
  const cpu0 = reapedChildrenCpuSeconds();
  const run = await ws.tf(CI_ACCESS, ['--refuse-replace'], ['plan', '-lock-timeout=10m', '-out=no-change.tfplan'], 'apply');
  return { bytes: ws.stackBytes(CI_ACCESS), initS, planS: run.ms / 1000, planCpuS: reapedChildrenCpuSeconds() - cpu0 };
}
