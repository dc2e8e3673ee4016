import * as fs from 'fs';
import * as path from 'path';
import { GuardRefusal } from '../engine/guard-refusal';
import { readSynthOutput, SynthStack } from '../sources/synth-output';
import { PlanReview } from '../engine/replacement-guard';
import { declaredStorePaths, isPlannedRemoval } from '../reconcile/planned-removal';
import { ownGrantDestroys, readRetiredOwnGrants, RETIRED_OWN_GRANTS_FILE, retiredOwnGrantProblems } from '../reconcile/retired-stack-grants';
import { isRetiredStackDirectory } from '../reconcile/stack-moves';
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
  // Most plans destroy nothing: every stack's declarations (seconds at 20,000 applications, in each
  // plan job) are read only for a plan that destroys something.
  if (review.destructions.length === 0) return { review, removals: [] };
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

/** A reviewed plan of a retired stack without its own pipeline grants' destroys, which need no approval. */
export interface RetiredGrantDestroys {
  /** The review without those destroys: what `--refuse-replace` (and `--allow-removals`) still check. */
  readonly review: PlanReview;
  /** The grants destroyed, one line each: `<store path> (<resource address>)`, sorted. */
  readonly grants: readonly string[];
}

/**
 * `tf --refuse-replace` on a retired stack (its directory holds only what `moves` wrote): when every
 * destroy of the plan is one of the stack's own pipeline grants that `moves` recorded from BASE's
 * synthesis (`retired-own-grants.json`), they pass without `--allow-removals`: pipeline-internal
 * policies, whose objects moved to stacks whose grants cover them, giving no identity access to a
 * secret. Any other destroy in the plan, and the grants with it, stays in the review (a removal: the
 * manual job's `--allow-removals`). A stack HEAD still has passes nothing.
 * @param stackDir the stack's directory
 * @param outdir the synthesized output the stack belongs to (HEAD)
 */
export function approveRetiredGrants(review: PlanReview, stackDir: string, outdir: string): RetiredGrantDestroys {
  const recorded = isRetiredStackDirectory(stackDir) ? readRetiredOwnGrants(stackDir) : [];
  if (recorded.length === 0 || review.destructions.length === 0) return { review, grants: [] };
  // The record is a file: each entry is checked against HEAD's synthesis before it lets anything through.
  const stack = path.basename(stackDir);
  let head: SynthStack[];
  try {
    head = readSynthOutput(outdir);
  } catch (e) {
    throw new RetiredGrantsRecordRefused(stack, [`HEAD's synthesis (${outdir}) cannot be read to check it: ${(e as Error).message}`]);
  }
  const problems = retiredOwnGrantProblems(recorded, stack, head);
  if (problems.length > 0) throw new RetiredGrantsRecordRefused(stack, problems);
  const grants = ownGrantDestroys(review.destructions, recorded, declaredStorePaths(outdir));
  return {
    review: { ...review, destructions: review.destructions.filter((d) => !grants.includes(d)) },
    grants: grants.map((d) => `${d.storePath} (${d.address})`).sort(),
  };
}

/**
 * Thrown when a retired stack's `retired-own-grants.json` records what is no pipeline role's grant in
 * that stack by HEAD's synthesis (an edited record): nothing applied; the CLI exits with
 * `ExitCode.destructionRefused` (4).
 */
export class RetiredGrantsRecordRefused extends GuardRefusal {
  constructor(
    /** The retired stack. */
    readonly stack: string,
    /** One line per entry that fails. */
    readonly problems: readonly string[],
  ) {
    super(
      `${stack}: nothing applied: its ${RETIRED_OWN_GRANTS_FILE} records what is not a configuration pipeline role's own grant in ${stack} by HEAD's synthesis; a destroy it names would pass without approval:\n  ${problems.map(terminalLine).join('\n  ')}\nFix: remove the file and run \`secretstore-iac moves BASE HEAD\` again (it writes the record from BASE's synthesis); a removal of anything else is approved with --allow-removals (docs/pipelines.md §8)`,
    );
    this.name = 'RetiredGrantsRecordRefused';
  }
}

/** Reports the retired stack's own grants a plan or apply destroys without approval, on standard error. */
export function reportRetiredGrants(grants: readonly string[], stack: string, stderr: (line: string) => void): void {
  if (grants.length === 0) return;
  stderr(
    `secretstore-iac tf: ${terminalLine(stack)}: ${grants.length} pipeline grant${grants.length === 1 ? '' : 's'} of this retired stack destroyed without approval (pipeline-internal: the objects ${grants.length === 1 ? 'it' : 'they'} covered moved to stacks whose grants cover them; no identity loses access to a secret):`,
  );
  grants.forEach((g) => stderr(`  ${terminalLine(g)}`));
}
