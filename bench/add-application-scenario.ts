/**
 * Adding one application, the change users make most often, through the pipeline's critical path
 * (pipeline-path.ts): a new application `bench<N>-prod`, in the shard its role name hashes to.
 * Targets (issue 30): under 60 s from merge request to note, and under 60 s from merge to applied,
 * at 5,000 applications on the 2-core machine.
 */
import { measurePipelinePath, PipelinePathFigures } from './pipeline-path';
import { GeneratedApplication, StoreWorkspace } from './store-workspace';

/** The target of both paths, in seconds. */
export const ADD_ONE_TARGET_S = 60;

/** The change: one application more, numbered after the `size` generated ones. */
export function addOne(applications: GeneratedApplication[], size: number): void {
  applications.push({ index: size, tokenTtlHours: 12 });
}

export function measureAddApplication(ws: StoreWorkspace): Promise<PipelinePathFigures> {
  return measurePipelinePath(ws, () => addOne(ws.applications, ws.size));
}
