import { createHash } from 'crypto';
import { compareStrings } from '../private/compare-strings';
import { PlannedResource, SavedPlan } from '../sources/saved-plan';
import { ReportIdentity } from './access-report';
import { BindingValue } from './identity';
import { PlanReview } from './plan-review';
import { labelOf } from './namespaced-name';
import { importedObjects, storeKey } from './plan-store-configuration';

/** The format name of an {@link AccessChangeRecord} (a new format is a new name, never a reinterpretation). */
export const ACCESS_CHANGE_FORMAT = 'secretstore-iac/access-change/1';

/**
 * One identity's capabilities on one path pattern, before and after (empty: no rule). `gained` and
 * `lost` are derived from the two, written out for the reader.
 */
export interface RecordedRuleChange {
  readonly path: string;
  readonly kind: string;
  readonly before: readonly string[];
  readonly after: readonly string[];
  readonly gained: readonly string[];
  readonly lost: readonly string[];
}

/** One identity's binding (or policy attachment), before and after; `null` for unset. */
export interface RecordedBindingChange {
  readonly field: string;
  readonly before: BindingValue | null;
  readonly after: BindingValue | null;
}

/** One identity's access change: added, removed, or its rules and bindings changed. */
export interface RecordedIdentityChange {
  /** The identity's name, with its namespace when not the root's (`approle/app (namespace ns1)`, `labelOf`). */
  readonly identity: string;
  /** Its store namespace; absent for the root namespace. */
  readonly namespace?: string;
  readonly method: string;
  readonly change: 'added' | 'removed' | 'changed';
  /** Sorted by path, then kind. */
  readonly rules: readonly RecordedRuleChange[];
  /** Sorted by field. */
  readonly bindings: readonly RecordedBindingChange[];
}

/** A store object a saved plan creates, changes, destroys or forgets (leaves on the store, out of state). */
export interface RecordedObjectChange {
  readonly stack: string;
  readonly address: string;
  readonly action: 'create' | 'update' | 'delete' | 'forget';
  /**
   * Present (true) when the change only sets the object back to what was last applied: the engine's
   * refresh found it changed outside the engine (the plan's `resource_drift`; for an object moved
   * between stacks, the forgetting plan's copy, its state, differs from what the import read from
   * the store), and every attribute the change sets equals
   * its last applied value (an update), or the object was deleted and is created again with them.
   * @default absent: the change is the configuration's, or more than a revert
   */
  readonly revertsDrift?: true;
}

/**
 * The access change of applying a set of saved plans, in one canonical, machine-readable form
 * (docs/pipelines.md §13): every list sorted, every object's keys sorted when serialized
 * ({@link canonicalJson}), so that two reviews of the same change give the same text and the same
 * {@link accessChangeDigest}. What it leaves out: the plans' file names and the identities' origin in
 * the configuration (construct paths), which differ between pipelines of one change.
 */
export interface AccessChangeRecord {
  readonly format: typeof ACCESS_CHANGE_FORMAT;
  /** Identities whose access changes, sorted by name. */
  readonly identities: readonly RecordedIdentityChange[];
  /** Objects the plans change, sorted by stack and address. */
  readonly objects: readonly RecordedObjectChange[];
  /** The plans read, with each file's SHA-256, sorted by stack. */
  readonly plans: ReadonlyArray<{ readonly stack: string; readonly sha256: string }>;
  /** False when the review could not read everything the plans do (a value unknown until apply, ...). */
  readonly complete: boolean;
}

/** The record of applying no plan: nothing changes. */
export const NO_ACCESS_CHANGE: AccessChangeRecord = { format: ACCESS_CHANGE_FORMAT, identities: [], objects: [], plans: [], complete: true };

/** `values` as JSON with every object's keys sorted and no spaces: one text for one value. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort(compareStrings)
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** SHA-256 (hex) of the canonical JSON of `value`. */
export function canonicalDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** SHA-256 (hex) of a record's canonical JSON. */
export function accessChangeDigest(record: AccessChangeRecord): string {
  return canonicalDigest(record);
}

const minus = (a: readonly string[], b: readonly string[]) => a.filter((c) => !b.includes(c));

/** Rules of a whole identity (added: before empty; removed: after empty), the built-in default's left out. */
function wholeIdentityRules(identity: ReportIdentity, side: 'before' | 'after'): RecordedRuleChange[] {
  return identity.rules
    .filter((r) => !r.builtinDefault)
    .map((r) => {
      const caps = [...r.capabilities];
      const before = side === 'before' ? caps : [];
      const after = side === 'after' ? caps : [];
      return { path: r.path, kind: r.kind, before, after, gained: minus(after, before), lost: minus(before, after) };
    });
}

/** Bindings of a whole identity, with its policy attachment (as the diff compares them). */
function wholeIdentityBindings(identity: ReportIdentity, side: 'before' | 'after'): RecordedBindingChange[] {
  const values: Record<string, BindingValue> = { ...identity.bindings, token_policies: identity.policies.filter((p) => p !== 'default'), token_no_default_policy: !identity.defaultPolicy };
  return Object.entries(values).map(([field, value]) => ({ field, before: side === 'before' ? value : null, after: side === 'after' ? value : null }));
}

/**
 * True when every attribute `after` sets (an update: that differs from `before`; a create: all it
 * knows) is the value last applied: the change reverts drift and nothing else.
 */
function revertsTo(lastApplied: PlannedResource | undefined, after: PlannedResource, before: PlannedResource | undefined): boolean {
  if (lastApplied === undefined) return false;
  for (const [attribute, value] of Object.entries(after.values)) {
    const text = canonicalJson(value);
    if (before !== undefined && text === canonicalJson(before.values[attribute])) continue;
    if (text !== canonicalJson(lastApplied.values[attribute])) return false;
  }
  // An attribute the update leaves unknown (absent after) but had before is not set back.
  return before === undefined || Object.keys(before.values).every((k) => k in after.values);
}

/**
 * The objects a saved plan changes: by its prior (refreshed) state and its planned values. `lastApplied`
 * holds, per store object, the values last applied where some plan's refresh found it drifted.
 */
function objectChanges(plan: SavedPlan, lastApplied: ReadonlyMap<string, PlannedResource>): RecordedObjectChange[] {
  const before = new Map(plan.before.map((r) => [r.address, r]));
  const after = new Map(plan.after.map((r) => [r.address, r]));
  const out: RecordedObjectChange[] = [];
  const reverts = (a: PlannedResource, b: PlannedResource | undefined) => (revertsTo(lastApplied.get(storeKey(a)), a, b) ? { revertsDrift: true as const } : {});
  for (const address of new Set([...before.keys(), ...after.keys()])) {
    const b = before.get(address);
    const a = after.get(address);
    if (plan.forgotten.includes(address)) out.push({ stack: plan.stack, address, action: 'forget' });
    else if (b === undefined) out.push({ stack: plan.stack, address, action: 'create', ...reverts(a!, undefined) });
    else if (a === undefined) out.push({ stack: plan.stack, address, action: 'delete' });
    else if (canonicalJson(b.values) !== canonicalJson(a.values)) out.push({ stack: plan.stack, address, action: 'update', ...reverts(a, b) });
  }
  return out;
}

/**
 * Per store object ({@link storeKey}), the values last applied, where it drifted: a plan's refresh
 * found it changed (`resource_drift`), or it moved between stacks and the forgetting plan's copy (its
 * state, which the engine may not refresh for a `removed` block: Terraform 1.11.4 does not) differs
 * from what the importing plan read from the store.
 */
function lastAppliedObjects(plans: readonly SavedPlan[]): Map<string, PlannedResource> {
  const out = new Map<string, PlannedResource>();
  const imported = importedObjects(plans);
  if (imported.size > 0) {
    for (const plan of plans) {
      const forgotten = new Set(plan.forgotten);
      for (const copy of forgotten.size === 0 ? [] : plan.before) {
        if (!forgotten.has(copy.address)) continue;
        const key = storeKey(copy);
        const read = imported.get(key);
        if (read !== undefined && canonicalJson(copy.values) !== canonicalJson(read.values)) out.set(key, copy);
      }
    }
  }
  for (const plan of plans) for (const r of plan.lastApplied) out.set(storeKey(r), r);
  return out;
}

const namespaceOf = (i: { readonly namespace?: string }) => (i.namespace === undefined ? {} : { namespace: i.namespace });

const byPathKind = (x: { path: string; kind: string }, y: { path: string; kind: string }) => compareStrings(x.path, y.path) || compareStrings(x.kind, y.kind);

/**
 * The canonical record of a review of saved plans: the access diff's identities (added, removed,
 * changed: per path pattern the capabilities before and after; per binding the values), the objects
 * each plan creates, changes, destroys or forgets, and the plans' digests.
 */
export function accessChangeRecord(review: PlanReview, plans: readonly SavedPlan[]): AccessChangeRecord {
  const identities: RecordedIdentityChange[] = [
    ...review.diff.added.map((i) => ({ identity: labelOf(i), ...namespaceOf(i), method: i.method, change: 'added' as const, rules: wholeIdentityRules(i, 'after'), bindings: wholeIdentityBindings(i, 'after') })),
    ...review.diff.removed.map((i) => ({ identity: labelOf(i), ...namespaceOf(i), method: i.method, change: 'removed' as const, rules: wholeIdentityRules(i, 'before'), bindings: wholeIdentityBindings(i, 'before') })),
    ...review.diff.changed.map((c) => ({
      identity: labelOf(c),
      ...namespaceOf(c),
      method: c.method,
      change: 'changed' as const,
      rules: c.rules.map((r) => ({ path: r.path, kind: r.kind, before: [...r.before], after: [...r.after], gained: [...r.gained], lost: [...r.lost] })),
      bindings: c.bindings.map((b) => ({ field: b.field, before: b.before ?? null, after: b.after ?? null })),
    })),
  ].map((i) => ({ ...i, rules: [...i.rules].sort(byPathKind), bindings: [...i.bindings].sort((x, y) => compareStrings(x.field, y.field)) }));
  identities.sort((a, b) => compareStrings(a.identity, b.identity));
  const drifted = lastAppliedObjects(plans);
  return {
    format: ACCESS_CHANGE_FORMAT,
    identities,
    objects: plans.flatMap((p) => objectChanges(p, drifted)).sort((a, b) => compareStrings(a.stack, b.stack) || compareStrings(a.address, b.address)),
    plans: [...plans].map((p) => ({ stack: p.stack, sha256: p.sha256 })).sort((a, b) => compareStrings(a.stack, b.stack)),
    complete: review.complete,
  };
}

/**
 * Reads a record (the JSON `access-diff --access-change` writes).
 * @throws Error naming what is wrong when it is not one of this format
 */
export function parseAccessChangeRecord(value: unknown, source: string): AccessChangeRecord {
  const r = value as AccessChangeRecord;
  const strings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === 'string');
  const problems: string[] = [];
  if (r?.format !== ACCESS_CHANGE_FORMAT) problems.push(`format: must be ${JSON.stringify(ACCESS_CHANGE_FORMAT)}`);
  if (!Array.isArray(r?.identities) || !r.identities.every((i) => typeof i?.identity === 'string' && ['added', 'removed', 'changed'].includes(i.change) && Array.isArray(i.rules) && i.rules.every((x: RecordedRuleChange) => typeof x?.path === 'string' && typeof x.kind === 'string' && strings(x.before) && strings(x.after)) && Array.isArray(i.bindings) && i.bindings.every((b: RecordedBindingChange) => typeof b?.field === 'string'))) {
    problems.push('identities: must be a list of {identity, change, rules, bindings}');
  }
  if (!Array.isArray(r?.objects) || !r.objects.every((o) => typeof o?.stack === 'string' && typeof o.address === 'string' && ['create', 'update', 'delete', 'forget'].includes(o.action) && (o.revertsDrift === undefined || o.revertsDrift === true))) problems.push('objects: must be a list of {stack, address, action, revertsDrift?: true}');
  if (!Array.isArray(r?.plans) || !r.plans.every((p) => typeof p?.stack === 'string' && typeof p.sha256 === 'string')) problems.push('plans: must be a list of {stack, sha256}');
  if (typeof r?.complete !== 'boolean') problems.push('complete: must be true or false');
  if (problems.length > 0) throw new Error(`${source}: not an access-change record: ${problems.join('; ')}`);
  return r;
}
