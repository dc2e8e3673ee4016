import { AccessChangeRecord, canonicalJson, RecordedObjectChange } from '../access/access-change-record';
import { BindingValue } from '../access/identity';
import { STORE_CAPABILITIES } from '../acl/store-capability';
import { compareStrings } from '../private/compare-strings';
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
 * changes differ: an identity's capabilities on a path pattern (`[]`: no rule, or no such identity),
 * a binding's value (`null`: unset), and whether a resource is declared the same in base and head.
 */
export interface AppliedConfiguration {
  capabilities(identity: string, kind: string, path: string): readonly string[];
  binding(identity: string, field: string): BindingValue | null;
  /** True: declared the same in both; false: declared differently (or only in one); undefined: cannot tell. */
  sameDeclaration(stack: string, address: string): boolean | undefined;
}

/** One comparable row: a key, a display, a state before and after (canonical text). */
interface Row {
  readonly key: string;
  readonly identity?: string;
  readonly rule?: { readonly kind: string; readonly path: string };
  readonly field?: string;
  readonly object?: RecordedObjectChange;
  readonly before: string;
  readonly after: string;
}

/** Each capability's place in the store's documentation order (as `capabilityNames` gives them). */
const CAPABILITY_ORDER = new Map<string, number>(STORE_CAPABILITIES.map((c, i) => [c, i]));
const capabilityOrder = (c: string) => CAPABILITY_ORDER.get(c) ?? STORE_CAPABILITIES.length;

/** Capabilities as one text per set: in documentation order (unknown words last), comma-separated (no capability holds a comma). */
const capsText = (caps: readonly string[]) => {
  let ordered = true;
  for (let i = 1; i < caps.length && ordered; i++) ordered = capabilityOrder(caps[i - 1]) < capabilityOrder(caps[i]);
  return (ordered ? caps : [...new Set(caps)].sort((a, b) => capabilityOrder(a) - capabilityOrder(b) || compareStrings(a, b))).join(',');
};
const valueText = (v: BindingValue | null) => (v !== null && typeof v === 'object' ? canonicalJson(v) : JSON.stringify(v));

/** The rows of a record; each key one flat string (`join`), which a Map hashes once. */
function rows(change: AccessChangeRecord): Row[] {
  const out: Row[] = [];
  for (const i of change.identities) {
    for (const r of i.rules) {
      out.push({ key: ['rule', i.identity, r.kind, r.path].join('\0'), identity: i.identity, rule: r, before: capsText(r.before), after: capsText(r.after) });
    }
    for (const b of i.bindings) out.push({ key: ['binding', i.identity, b.field].join('\0'), identity: i.identity, field: b.field, before: valueText(b.before), after: valueText(b.after) });
  }
  // An object has no "before" in the record: its action is the change.
  for (const o of change.objects) out.push({ key: ['object', o.stack, o.address].join('\0'), object: o, before: '', after: o.action });
  return out;
}

/** Where a row is, as the messages name it (computed only for a difference). */
function whereOf(row: Row): string {
  if (row.object !== undefined) return `object ${row.object.stack}: ${row.object.address}`;
  return row.rule !== undefined ? `${row.identity} ${row.rule.path}` : `${row.identity} binding ${row.field}`;
}

/** A state as the messages show it. */
function shown(row: Row, state: string): string {
  if (row.object !== undefined) return state;
  if (row.rule !== undefined) return state === '' ? 'none' : state.split(',').join(', ');
  return state === 'null' ? 'unset' : state;
}
const changeText = (row: Row, before: string, after: string) => (row.object !== undefined ? after : `${shown(row, before)} → ${shown(row, after)}`);

/** What the configuration applied before says of a row (canonical text), undefined when it cannot tell. */
function appliedState(row: Row, applied: AppliedConfiguration | undefined): string | undefined {
  if (applied === undefined || row.identity === undefined) return undefined;
  if (row.rule !== undefined) return capsText(applied.capabilities(row.identity, row.rule.kind, row.rule.path));
  return valueText(applied.binding(row.identity, row.field!));
}

interface Expected {
  readonly row: Row;
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
    for (const row of rows(record.change)) {
      const e = expected.get(row.key);
      if (e === undefined) expected.set(row.key, { row, before: row.before, after: row.after, by: [record.mergeRequest], conflict: false });
      else {
        if (row.object === undefined && e.after !== row.before) e.conflict = true;
        e.after = row.after;
        e.by.push(record.mergeRequest);
      }
    }
  }
  const actual = new Map(rows(applying).map((r) => [r.key, r]));
  const differences: ApprovalDifference[] = [];
  const note = (by: readonly number[]) => by.map((n) => `!${n}`).join(' and ');
  for (const key of [...new Set([...expected.keys(), ...actual.keys()])].sort(compareStrings)) {
    const e = expected.get(key);
    const a = actual.get(key);
    if (e !== undefined && a !== undefined && !e.conflict && e.before === a.before && e.after === a.after) continue;
    const row = (a ?? e!.row) as Row;
    const where = whereOf(row);
    const approved = e === undefined ? undefined : { change: changeText(row, e.before, e.after), by: [...e.by] };
    const applyingText = a === undefined ? undefined : changeText(row, a.before, a.after);
    const base = { where, ...(approved ? { approved } : {}), ...(applyingText !== undefined ? { applying: applyingText } : {}) };
    const lastApplied = appliedState(row, applied);
    const drifted = a !== undefined && lastApplied !== undefined && lastApplied !== a.before;
    const objectDrift = a?.object !== undefined && a.object.action === 'update' && applied?.sameDeclaration(a.object.stack, a.object.address) === true;
    const driftText = (state: string) => `drift: the store has ${shown(row, state)} where the configuration applied before has ${shown(row, lastApplied!)}`;
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
          ? { ...base, cause: 'drift', message: `${where}: ${objectDrift ? 'drift: the store differs from the configuration, which declares it the same as before' : driftText(a.before)}; applying reverts it (${applyingText})` }
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
