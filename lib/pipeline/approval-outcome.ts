import * as fs from 'fs';
import * as path from 'path';
import { APPLY_UNBOUND_VARIABLE, APPROVAL_COMPARISON_FILE, CONFIRM_APPLY_JOB, DEFAULT_BRANCH_REVIEW_JOB } from '../render/configuration-pipeline-yaml';
import { ApprovalDifference, StaleApproval } from './approval-comparison';

/**
 * The default branch's review's verdict ({@link APPROVAL_COMPARISON_FILE}), read by every job that
 * applies before it applies:
 * - `equal`: the plans give exactly the approved change: the apply jobs apply;
 * - `differs`: they do not (or no approval could be read): nothing is applied automatically; only
 *   {@link CONFIRM_APPLY_JOB}, started by a person, applies;
 * - `unbound`: the note token is not set on the default branch, so no record can be read. Fail-closed:
 *   the apply jobs apply nothing (only {@link CONFIRM_APPLY_JOB}, started by a person, applies), unless
 *   {@link ApprovalOutcome.appliesUnbound} says why they may (the plans change nothing, or the
 *   documented opt-out {@link APPLY_UNBOUND_VARIABLE} is `true`).
 */
export interface ApprovalOutcome {
  readonly status: 'equal' | 'differs' | 'unbound';
  /** The commit of the pipeline. */
  readonly commit: string;
  /** Why (one sentence): what was compared, or why nothing could be. */
  readonly reason: string;
  /** The merge requests merged since the commit before the push, oldest first. */
  readonly mergeRequests: readonly number[];
  /** SHA-256 of the canonical access change this pipeline applies. */
  readonly applying?: string;
  readonly differences: readonly ApprovalDifference[];
  readonly stale: readonly StaleApproval[];
  /**
   * With `unbound` only: why the apply jobs may apply all the same: `no-change` (the plans change no
   * access and no object: nothing to bind) or `opt-out` ({@link APPLY_UNBOUND_VARIABLE} is `true`).
   * Absent: they may not.
   */
  readonly appliesUnbound?: 'no-change' | 'opt-out';
}

/** Writes the verdict into the job directory. */
export function writeApprovalOutcome(dir: string, outcome: ApprovalOutcome): void {
  fs.writeFileSync(path.join(dir, APPROVAL_COMPARISON_FILE), `${JSON.stringify(outcome, null, 2)}\n`);
}

/**
 * Reads the verdict the review job left.
 * @throws Error naming the file when it is missing or not a verdict: a job that applies must not go on without it
 */
export function readApprovalOutcome(dir: string): ApprovalOutcome {
  const file = path.join(dir, APPROVAL_COMPARISON_FILE);
  if (!fs.existsSync(file)) throw new Error(`${APPROVAL_COMPARISON_FILE} is missing: the artifact of ${DEFAULT_BRANCH_REVIEW_JOB}, which compares the plans with what was approved; nothing is applied without it`);
  let value: ApprovalOutcome;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8')) as ApprovalOutcome;
  } catch (e) {
    throw new Error(`${file}: not JSON (${(e as Error).message}); nothing is applied`);
  }
  if (!['equal', 'differs', 'unbound'].includes(value?.status) || !Array.isArray(value.differences) || !Array.isArray(value.mergeRequests)) {
    throw new Error(`${file}: not the verdict ${DEFAULT_BRANCH_REVIEW_JOB} writes; nothing is applied`);
  }
  return value;
}

/** True when the verdict leaves the apply to {@link CONFIRM_APPLY_JOB}: the plans differ, or the apply is unbound without a reason to apply it. */
export function needsConfirmation(outcome: ApprovalOutcome): boolean {
  return outcome.status === 'differs' || (outcome.status === 'unbound' && outcome.appliesUnbound === undefined);
}

/**
 * Whether an automatic apply job may apply: undefined when it may, else the sentence saying why not
 * (the plans differ from what was approved, or no approval could be read and nothing opts out: only
 * {@link CONFIRM_APPLY_JOB} applies them).
 */
export function automaticApplyRefusal(dir: string): string | undefined {
  const outcome = readApprovalOutcome(dir);
  if (!needsConfirmation(outcome)) return undefined;
  if (outcome.status === 'unbound') {
    return `not applied: ${outcome.reason}: no approval record can be read, so the default branch applies nothing automatically (fail-closed); the manual job ${CONFIRM_APPLY_JOB} applies the plans as they are once a person who has read them starts it (docs/pipelines.md §13; ${APPLY_UNBOUND_VARIABLE}=true on the default branch applies unbound plans automatically, the documented opt-out)`;
  }
  return `not applied: ${outcome.reason} (${outcome.differences.length} difference(s), named in the log of ${DEFAULT_BRANCH_REVIEW_JOB} and posted to ${outcome.mergeRequests.length > 0 ? outcome.mergeRequests.map((n) => `!${n}`).join(', ') : 'the commit'}); the manual job ${CONFIRM_APPLY_JOB} applies the plans as they are once a person who has read them starts it`;
}
