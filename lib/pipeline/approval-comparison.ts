import { AccessChangeRecord, RecordedObjectChange } from '../access/access-change-record';
import { BindingValue } from '../access/identity';
import { compareStrings } from '../private/compare-strings';
import { AccessChangeRow, accessChangeRows, capsText, changeText, driftText as driftWording, objectDriftText, shown, valueText, whereOf } from './access-change-rows';
import { ApprovalRecord } from './approval-record';

/**
 * Why what the default branch is about to apply differs from what was approved (docs/pipelines.md §13):
 * - `drift`: the store differs from the configuration applied before (a change made by hand, another
 *   tool): the drift job's finding; applying reverts it;
 * - `other-merge-request`: another merge request's change meets this one (two reviewed against one
 *   base, merged in turn): the result is one no note showed;
 * - `unapproved`: a change no note showed (a commit without a merge request, a change in the merge
 *   commit, commits pushed after the review, a merge request without a trusted record);
 * - `not-applied`: a change a note approved that this pipeline does not make.
 */
export type ApprovalDifferenceCause = 'drift' | 'other-merge-request' | 'unapproved' | 'not-applied';

/** One difference: where (identity and path, binding or object), what was approved, what is applied, and why. */
export interface ApprovalDifference {
  readonly cause: ApprovalDifferenceCause;
  /** `identity path (kind)`, `identity binding field` or `object stack: address`. */
  readonly where: string;
  /** The approved change (`before → after`), with the merge requests that approved it; absent when none did. */
  readonly approved?: { readonly change: string; readonly by: readonly number[] };
  /** The change this pipeline applies there; absent when it applies none. */
  readonly applying?: string;
  /** One sentence naming the difference by its cause. */
  readonly message: string;
}

/** A merge request whose record was computed against another target commit than the merge's parent. */
export interface StaleApproval {
  readonly mergeRequest: number;
  readonly targetCommit: string;
  readonly mergeParent: string;
}

/** The outcome of the comparison. */
export interface ApprovalComparison {
  /** True when the applied change is exactly the approved changes, composed in merge order. */
  readonly equal: boolean;
  /** Sorted by key: bindings, then objects, then rules; each by identity (stack), then field (address; kind and path). */
  readonly differences: readonly ApprovalDifference[];
  readonly stale: readonly StaleApproval[];
}

/** An approved record and, when known, the parent of its merge on the default branch. */
export interface MergedApproval {
  readonly record: ApprovalRecord;
  readonly mergeParent?: string;
}

/**
 * The configuration applied before this pipeline (the base's synthesis), asked only where the two
 * changes differ: an identity's capabilities on a path pattern (`[]`: no rule, or no such identity)
 * and a binding's value (`null`: unset). An object's drift is not asked here: the engine's own
 * refresh says it ({@link RecordedObjectChange.revertsDrift}).
 */
export interface AppliedConfiguration {
  capabilities(identity: string, kind: string, path: string): readonly string[];
  binding(identity: string, field: string): BindingValue | null;
}

/** What the configuration applied before says of a row (canonical text), undefined when it cannot tell. */
function appliedState(row: AccessChangeRow, applied: AppliedConfiguration | undefined): string | undefined {
  if (applied === undefined || row.identity === undefined) return undefined;
  if (row.rule !== undefined) return capsText(applied.capabilities(row.identity, row.rule.kind, row.rule.path));
  return valueText(applied.binding(row.identity, row.field!));
}

interface Expected {
  readonly row: AccessChangeRow;
  before: string;
  after: string;
  readonly by: number[];
  conflict: boolean;
}

/**
 * Compares the change the default branch is about to apply with the approved records of the merge
 * requests merged since the last applied commit, in merge order: each key's approved changes are
 * composed (one merge request's `after` is the next one's `before`; otherwise they conflict), and
 * the applied change must equal the composition key by key, before and after. `applied` (the
 * configuration applied before) tells drift from a change of the configuration where they differ.
 */
export function compareWithApprovals(applying: AccessChangeRecord, approvals: readonly MergedApproval[], applied?: AppliedConfiguration): ApprovalComparison {
  const expected = new Map<string, Expected>();
  for (const { record } of approvals) {
    for (const row of accessChangeRows(record.change)) {
      const e = expected.get(row.key);
      if (e === undefined) expected.set(row.key, { row, before: row.before, after: row.after, by: [record.mergeRequest], conflict: false });
      else {
        if (row.object === undefined && e.after !== row.before) e.conflict = true;
        e.after = row.after;
        e.by.push(record.mergeRequest);
      }
    }
  }
  const actual = new Map(accessChangeRows(applying).map((r) => [r.key, r]));
  const differences: ApprovalDifference[] = [];
  const note = (by: readonly number[]) => by.map((n) => `!${n}`).join(' and ');
  for (const key of [...new Set([...expected.keys(), ...actual.keys()])].sort(compareStrings)) {
    const e = expected.get(key);
    const a = actual.get(key);
    if (e !== undefined && a !== undefined && !e.conflict && e.before === a.before && e.after === a.after) continue;
    const row = (a ?? e!.row) as AccessChangeRow;
    const where = whereOf(row);
    const approved = e === undefined ? undefined : { change: changeText(row, e.before, e.after), by: [...e.by] };
    const applyingText = a === undefined ? undefined : changeText(row, a.before, a.after);
    const base = { where, ...(approved ? { approved } : {}), ...(applyingText !== undefined ? { applying: applyingText } : {}) };
    const lastApplied = appliedState(row, applied);
    const drifted = a !== undefined && lastApplied !== undefined && lastApplied !== a.before;
    // Told by the engine's refresh (resource_drift), not by comparing declarations: exact whatever the block's text.
    const objectDrift = a?.object?.revertsDrift === true;
    const driftText = (state: string) => driftWording(row, state, lastApplied!, 'the configuration applied before');
    if (e?.conflict) {
      differences.push({ ...base, cause: 'other-merge-request', message: `${where}: changed by ${note(e.by)}, each reviewed against another state: ${a === undefined ? 'this pipeline changes nothing there' : `this pipeline applies ${applyingText}`}, which no note showed` });
    } else if (e !== undefined && a !== undefined && e.after === a.after) {
      differences.push(
        drifted
          ? { ...base, cause: 'drift', message: `${where}: ${driftText(a.before)} (changed after the review of ${note(e.by)}, which saw ${shown(row, e.before)}); applying sets ${shown(row, a.after)}` }
          : { ...base, cause: 'other-merge-request', message: `${where}: the store changed after the review of ${note(e.by)} by a change applied since (the configuration applied before has it: another merge request's): the note showed ${approved!.change}, this pipeline applies ${applyingText}` },
      );
    } else if (e !== undefined && a !== undefined && !drifted && lastApplied !== undefined && e.before !== a.before) {
      // The review saw another state than the store has now, and the configuration applied since has it: another merge request's change, applied first.
      differences.push({ ...base, cause: 'other-merge-request', message: `${where}: the store changed after the review of ${note(e.by)} by a change applied since (the configuration applied before has it: another merge request's): the note showed ${approved!.change}, this pipeline applies ${applyingText}, a change no note showed` });
    } else if (e !== undefined && a !== undefined) {
      differences.push({ ...base, cause: drifted ? 'drift' : 'unapproved', message: `${where}: this pipeline applies ${applyingText} where ${note(e.by)} approved ${approved!.change}${drifted ? ` (${driftText(a.before)})` : ': a change no note showed (the merge commit, or commits after the review)'}` });
    } else if (a !== undefined) {
      differences.push(
        drifted || objectDrift
          ? { ...base, cause: 'drift', message: `${where}: ${objectDrift ? `${objectDriftText(a.object!)} (${applyingText})` : `${driftText(a.before)}; applying reverts it (${applyingText})`}` }
          : { ...base, cause: 'unapproved', message: `${where}: ${applyingText}, a change no note showed (a commit without a merge request, a change in the merge commit, or a merge request without a trusted record)` },
      );
    } else {
      differences.push({ ...base, cause: 'not-applied', message: `${where}: ${note(e!.by)} approved ${approved!.change}; this pipeline does not change it (the store has it already, or the merge dropped it)` });
    }
  }
  const stale = approvals
    .filter((m) => m.mergeParent !== undefined && m.mergeParent !== m.record.targetCommit)
    .map((m) => ({ mergeRequest: m.record.mergeRequest, targetCommit: m.record.targetCommit, mergeParent: m.mergeParent! }));
  return { equal: differences.length === 0, differences, stale };
}
