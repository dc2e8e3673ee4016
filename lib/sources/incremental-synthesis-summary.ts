/**
 * What an incremental synthesis did, as one log line: written by the synthesis (lib/app), read back
 * by the pipeline's synth step, which must not load cdktf (the CLI loads no synthesis dependency).
 */

/** What an incremental synthesis did: the line the synth job's log shows. */
export interface IncrementalSynthesisSummary {
  /** Stacks whose `cdk.tf.json` was rendered (token resolution), by name, sorted. */
  readonly rendered: readonly string[];
  /** Stacks whose `cdk.tf.json` came from the earlier synthesis, by name, sorted. */
  readonly reused: readonly string[];
  /** The cache entry reused from (its first 12 hex digits), or why none was. */
  readonly from: string;
}

/** The log line of an incremental synthesis, which the synth job reads back ({@link parseIncrementalSummary}). */
export function incrementalSummaryLine(summary: IncrementalSynthesisSummary): string {
  return `secretstore-iac: incremental synthesis: ${summary.rendered.length} stacks rendered, ${summary.reused.length} reused from ${summary.from}`;
}

/** The stacks rendered and reused a line of {@link incrementalSummaryLine} gives, or undefined for another line. */
export function parseIncrementalSummary(line: string): { rendered: number; reused: number } | undefined {
  const m = /^secretstore-iac: incremental synthesis: (\d+) stacks rendered, (\d+) reused from /.exec(line);
  return m ? { rendered: Number(m[1]), reused: Number(m[2]) } : undefined;
}
