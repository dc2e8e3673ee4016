import { AccessChangeRecord, canonicalJson, RecordedObjectChange } from '../access/access-change-record';
import { BindingValue } from '../access/identity';
import { STORE_CAPABILITIES } from '../acl/store-capability';
import { compareStrings } from '../private/compare-strings';

/**
 * One comparable row of an access change: a key, what it names, and its state before and after as
 * canonical text. The approval comparison and the scheduled drift job both read a record as rows, so
 * that a drift reads the same in both (docs/pipelines.md §13).
 */
export interface AccessChangeRow {
  /** One flat string (`identity`, `kind`, `path` or `field`, joined by NUL), which a Map hashes once. */
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
export function capsText(caps: readonly string[]): string {
  let ordered = true;
  for (let i = 1; i < caps.length && ordered; i++) ordered = capabilityOrder(caps[i - 1]) < capabilityOrder(caps[i]);
  return (ordered ? caps : [...new Set(caps)].sort((a, b) => capabilityOrder(a) - capabilityOrder(b) || compareStrings(a, b))).join(',');
}

/** A binding's value as one canonical text (`null`: unset). */
export function valueText(v: BindingValue | null): string {
  return v !== null && typeof v === 'object' ? canonicalJson(v) : JSON.stringify(v);
}

/** The rows of a record: every rule and binding of every identity, then every object (whose action is its change). */
export function accessChangeRows(change: AccessChangeRecord): AccessChangeRow[] {
  const out: AccessChangeRow[] = [];
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

/** Where a row is, as messages name it: `identity path`, `identity binding field` or `object stack: address`. */
export function whereOf(row: AccessChangeRow): string {
  if (row.object !== undefined) return `object ${row.object.stack}: ${row.object.address}`;
  return row.rule !== undefined ? `${row.identity} ${row.rule.path}` : `${row.identity} binding ${row.field}`;
}

/** A state of a row as messages show it (`none` for no capability, `unset` for no value). */
export function shown(row: AccessChangeRow, state: string): string {
  if (row.object !== undefined) return state;
  if (row.rule !== undefined) return state === '' ? 'none' : state.split(',').join(', ');
  return state === 'null' ? 'unset' : state;
}

/** A change of a row as messages show it: `before → after`, or an object's action. */
export function changeText(row: AccessChangeRow, before: string, after: string): string {
  return row.object !== undefined ? after : `${shown(row, before)} → ${shown(row, after)}`;
}

/**
 * The one wording of a drift (the store differs from a configuration): `drift: the store has X where
 * <configuration> has Y`. `configuration` names which: `the configuration` (the drift job's plan) or
 * `the configuration applied before` (the default branch's comparison).
 */
export function driftText(row: AccessChangeRow, storeHas: string, configurationHas: string, configuration: string): string {
  return `drift: the store has ${shown(row, storeHas)} where ${configuration} has ${shown(row, configurationHas)}`;
}

/** What a drift plan's action on an object says of the store. */
const OBJECT_DRIFT: Readonly<Record<RecordedObjectChange['action'], string>> = {
  create: 'the store does not have it; applying creates it',
  update: 'the store differs from the configuration; applying changes it back',
  delete: 'the configuration does not declare it; applying destroys it',
  forget: 'applying forgets it (leaves it on the store, out of state)',
};

/**
 * What a change that only sets an object back to what was last applied says of the store (the
 * engine's refresh found it changed: {@link RecordedObjectChange.revertsDrift}).
 */
const REVERTED_DRIFT: Readonly<Partial<Record<RecordedObjectChange['action'], string>>> = {
  create: "the store no longer has it since it was last applied (the engine's refresh); applying creates it again as applied",
  update: "the store changed it since it was last applied (the engine's refresh); applying sets back what was applied",
};

/**
 * The one wording of an object's drift (`drift: ...`), in the drift job and the comparison alike: what
 * the engine's refresh saw where the change reverts it, else what applying would do to it.
 */
export function objectDriftText(object: RecordedObjectChange): string {
  return `drift: ${(object.revertsDrift === true ? REVERTED_DRIFT[object.action] : undefined) ?? OBJECT_DRIFT[object.action]}`;
}

/**
 * The drift a plan of the configuration against the store shows, one line per row, sorted by key: in a
 * drift plan "before" is what the store has and "after" what the configuration declares, so applying
 * reverts every line. An object's line names what applying would do to it.
 */
export function driftLines(record: AccessChangeRecord): string[] {
  return accessChangeRows(record)
    .sort((a, b) => compareStrings(a.key, b.key))
    .map((row) =>
      row.object !== undefined
        ? `${whereOf(row)}: ${objectDriftText(row.object)}`
        : `${whereOf(row)}: ${driftText(row, row.before, row.after, 'the configuration')}; applying reverts it`,
    );
}
