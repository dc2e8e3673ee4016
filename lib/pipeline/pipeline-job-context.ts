import * as path from 'path';
import { PipelineDescription } from './pipeline-description';
import { PipelineEngineRunner } from './pipeline-engine-steps';
import { PipelineJobLog } from './pipeline-job-log';
import type { PipelineStackTokens } from './stack-token';

/** What a `secretstore-iac pipeline` job works with: the same in a CI job and on a laptop. */
export interface PipelineJobContext {
  /** The project directory holding the job's artifacts (the selection, `secretstore-iac-plans/`, ...). */
  readonly dir: string;
  /** The synthesized output. @default `<dir>/cdktf.out` */
  readonly outdir?: string;
  /** The pipeline's description (synthesized beside the pipeline file). */
  readonly description: PipelineDescription;
  /** The job's environment (CI/CD variables); only whether an input variable is set is looked at. */
  readonly env: NodeJS.ProcessEnv;
  /** The decision log. */
  readonly log: PipelineJobLog;
  /** Runs the guarded engine (`secretstore-iac tf`). */
  readonly engine: PipelineEngineRunner;
  /**
   * The store calls that give each stack's engine runs a token of their own, narrowed to what the
   * stack needs (lib/pipeline/stack-token.ts); without them the engine uses the job's token as it is.
   */
  readonly tokens?: PipelineStackTokens;
}

/** Runs one of the tool's commands in this process (`access-diff`, `usage`) with the given arguments: its exit code and standard output. */
export type PipelineCommandRunner = (args: readonly string[]) => Promise<{ readonly exitCode: number; readonly stdout: string }>;

/**
 * The outcome of a job: the exit code of the engine (or review) run that failed it, the result that
 * needs a person's attention, and the stacks it worked on. The CLI turns it into its exit code.
 */
export interface PipelineJobResult {
  /** 0 when no run failed, else the exit code of the run that failed the job (the engine's 4: refused). */
  readonly exitCode: number;
  /** A result, not a failure, that fails the job: risk flags not acknowledged, or a drift. */
  readonly attention?: 'risk-flags' | 'drift';
  readonly stacks: readonly string[];
}

/** The synthesized output a job reads: {@link PipelineJobContext.outdir}, else `<dir>/cdktf.out`. */
export function jobOutdir(ctx: PipelineJobContext): string {
  return ctx.outdir ?? path.join(ctx.dir, 'cdktf.out');
}
