import { PipelineDescription } from './pipeline-description';
import { PipelineEngineRunner } from './pipeline-engine-steps';
import { PipelineJobLog } from './pipeline-job-log';

/** What a `secretstore-iac pipeline` job works with: the same in a CI job and on a laptop. */
export interface PipelineJobContext {
  /** The project directory holding the job's artifacts (the selection, `secretstore-iac-plans/`, ...). */
  readonly dir: string;
  /** The pipeline's description (synthesized beside the pipeline file). */
  readonly description: PipelineDescription;
  /** The job's environment (CI/CD variables); only whether an input variable is set is looked at. */
  readonly env: NodeJS.ProcessEnv;
  /** The decision log. */
  readonly log: PipelineJobLog;
  /** Runs the guarded engine (`secretstore-iac tf`). */
  readonly engine: PipelineEngineRunner;
}

/** The outcome of a job: its exit code and the stacks it worked on. */
export interface PipelineJobResult {
  readonly exitCode: number;
  readonly stacks: readonly string[];
}
