/**
 * Removing one application through the pipeline's critical path (pipeline-path.ts): its shard's
 * plan destroys its role and policy (`--allow-removals`, listed in the removals file), and the
 * saved plan is applied with `--allow-removals` as the manual job of docs/pipelines.md §8 applies it
 * (the person's decision itself is not timed).
 */
import { measurePipelinePath, PipelinePathFigures } from './pipeline-path';
import { StoreWorkspace } from './store-workspace';

export function measureRemoveApplication(ws: StoreWorkspace): Promise<PipelinePathFigures> {
  return measurePipelinePath(ws, () => {
    ws.applications.splice(Math.floor(ws.applications.length / 3), 1);
  });
}
