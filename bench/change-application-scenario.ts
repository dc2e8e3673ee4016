/**
 * Changing one application (its token TTL, 12 h to 6 h) through the pipeline's critical path
 * (pipeline-path.ts): only its shard should be selected, planned and applied.
 */
import { measurePipelinePath, PipelinePathFigures } from './pipeline-path';
import { StoreWorkspace } from './store-workspace';

export function measureChangeApplication(ws: StoreWorkspace): Promise<PipelinePathFigures> {
  return measurePipelinePath(ws, () => {
    ws.applications[ws.applications.length >> 1].tokenTtlHours = 6;
  });
}
