import * as fs from 'fs';
import { PlanReview } from '../engine/replacement-guard';
import { declaredStorePaths, isPlannedRemoval } from '../reconcile/planned-removal';
import { terminalLine } from '../private/terminal-text';
import { writeFileAtomically } from './adopt-command';

/** A reviewed plan split into the removals `--allow-removals` lets through and the rest, still guarded. */
export interface ApprovedRemovals {
  /** The review without the removals: what `--refuse-replace` still checks. */
  readonly review: PlanReview;
  /** The removals, one line each: `<store path> (<resource address>)`, sorted. */
  readonly removals: readonly string[];
}

/**
 * `tf --refuse-replace --allow-removals`: the destroys of objects no stack of the output declares any
 * more (a removed application, group or stack: a revocation someone approved) go through; a
 * replacement, a destroy of a moved or renamed object, or of an unknown kind is still refused.
 * @param outdir the synthesized output the stack belongs to (HEAD)
 */
export function approveRemovals(review: PlanReview, outdir: string): ApprovedRemovals {
  const declared = declaredStorePaths(outdir);
  const removals = review.destructions.filter((d) => isPlannedRemoval(d, declared));
  return {
    review: { ...review, destructions: review.destructions.filter((d) => !removals.includes(d)) },
    removals: removals.map((d) => `${d.storePath} (${d.address})`).sort(),
  };
}

/**
 * Reports the approved removals on standard error, and writes them to `file` (one per line) when
 * given: the pipeline's apply jobs leave a stack with removals to the approval job. Without
 * removals the file is removed, so a stale one never holds back an apply.
 */
export function reportRemovals(removals: readonly string[], stack: string, file: string | undefined, stderr: (line: string) => void): void {
  if (removals.length > 0) {
    stderr(`secretstore-iac tf: ${terminalLine(stack)}: ${removals.length} object${removals.length === 1 ? '' : 's'} declared nowhere any more, destroyed by this ${file ? 'plan' : 'apply'} (--allow-removals):`);
    removals.forEach((r) => stderr(`  ${terminalLine(r)}`));
  }
  if (file === undefined) return;
  if (removals.length > 0) writeFileAtomically(file, `${removals.join('\n')}\n`);
  else fs.rmSync(file, { force: true });
}
