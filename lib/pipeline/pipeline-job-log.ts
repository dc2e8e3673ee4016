/** One decision of a pipeline job: what it decided and why, in one line. */
export interface PipelineDecision {
  /** The stack it concerns, when it concerns one. */
  readonly stack?: string;
  /** The line, as the job log shows it after `secretstore-iac pipeline <job>: `. */
  readonly message: string;
}

/**
 * The log of a `secretstore-iac pipeline` job: every decision in one line as it is made (a platform
 * team reads these logs daily), kept for the `--format json` summary.
 */
export class PipelineJobLog {
  private readonly kept: PipelineDecision[] = [];

  /**
   * @param job the subcommand (`plan`, `apply`, ...), the lines' prefix
   * @param write where each line goes as it is decided (the job log)
   */
  constructor(
    private readonly job: string,
    private readonly write: (line: string) => void,
  ) {}

  /** Logs one decision. */
  decide(message: string, stack?: string): void {
    this.kept.push(stack === undefined ? { message } : { stack, message });
    this.write(`secretstore-iac pipeline ${this.job}: ${message}`);
  }

  /** Shows a report (the review, an engine's output) in the job log as it is, not as a decision. */
  show(text: string): void {
    this.write(text);
  }

  /** Every decision so far, in order. */
  get decisions(): readonly PipelineDecision[] {
    return this.kept;
  }
}
