/**
 * Removing one application through the pipeline's critical path (pipeline-path.ts): its shard's
 * plan destroys its role and policy (`--allow-removals`, listed in the removals file), and the
 * saved plan is applied with `--allow-removals` as the manual job of docs/pipelines.md §8 applies it
 * (the person's decision itself is not timed).
 */
import { measurePipelinePath, PipelinePathFigures } from './pipeline-path';
import { GeneratedApplication, StoreWorkspace } from './store-workspace';

/** The change: the application a third of the way down the list is gone. */
export function removeOne(applications: GeneratedApplication[]): void {
  applications.splice(Math.floor(applications.length / 3), 1);
}

export function measureRemoveApplication(ws: StoreWorkspace): Promise<PipelinePathFigures> {
  return measurePipelinePath(ws, () => removeOne(ws.applications));
}
