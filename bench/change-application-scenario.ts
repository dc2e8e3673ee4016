/**
 * Changing one application (its token TTL, 12 h to 6 h) through the pipeline's critical path
 * (pipeline-path.ts): only its shard should be selected, planned and applied.
 */
import { measurePipelinePath, PipelinePathFigures } from './pipeline-path';
import { GeneratedApplication, StoreWorkspace } from './store-workspace';

/** The change: the middle application's token TTL, 12 h to 6 h. */
export function changeOne(applications: GeneratedApplication[]): void {
  applications[applications.length >> 1].tokenTtlHours = 6;
}

export function measureChangeApplication(ws: StoreWorkspace): Promise<PipelinePathFigures> {
  return measurePipelinePath(ws, () => changeOne(ws.applications));
}
