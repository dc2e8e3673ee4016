import { storeObjectKind } from '../catalogue/store-object-catalogue';
import { compareStrings } from '../private/compare-strings';
import { terraformString } from '../render/text-encoders';
import { PlannedResource, SavedPlan, UnknownPlanValue } from '../sources/saved-plan';
import { ResourceBlock, SynthStack } from '../sources/synth-output';
import { OverriddenDeclaration, StackReadings, StoreConfiguration, storeConfigurationOf } from './store-configuration';

/** The two sides of a review computed from saved plans, and where each stack was read from. */
export interface PlanStoreConfigurations {
  /** Before: each planned stack's refreshed prior state, the other stacks as synthesized. */
  readonly base: StoreConfiguration;
  /** After: each planned stack's planned values, the other stacks as synthesized. */
  readonly head: StoreConfiguration;
  /** Stacks read from a saved plan, sorted. */
  readonly planned: readonly string[];
  /** Stacks of the synthesized output without a plan, read from the synthesis on both sides (unchanged), sorted. */
  readonly unplanned: readonly string[];
  /** After the change, each policy or identity a plan writes over another stack's different declaration. */
  readonly overridden: readonly OverriddenDeclaration[];
}

/**
 * The store configurations before and after applying saved plans. A planned stack is read from its
 * plan alone (its values as the engine writes them: an override file, a user's raw resource or an
 * input variable is seen like any other source); only its `//` metadata (the store target, the
 * stated machine-path reasons, construct paths) comes from the synthesized stack of the same name.
 * A stack without a plan is read from the synthesized output on both sides, so that identities and
 * policies declared across stacks still meet; a planned stack's object wins over another stack's
 * different declaration of the same name (listed in `overridden`). An object one plan forgets (it stays on the store)
 * and another plan keeps is counted once: after, as the keeping plan has it; before, as the keeping
 * plan's import read it from the store (the engine shows an import's `before` as the object read
 * from the store; the forgetting plan's copy may be its state, not refreshed).
 * @throws Error naming the stack when two plans are given for one stack, or as {@link storeConfigurationOf}
 *   (two planned stacks, or one, declaring one name differently)
 */
export function planStoreConfigurations(synthesized: readonly SynthStack[], plans: readonly SavedPlan[]): PlanStoreConfigurations {
  const byStack = new Map<string, SavedPlan>();
  for (const plan of plans) {
    const other = byStack.get(plan.stack);
    if (other) throw new Error(`stack ${plan.stack} has two plans (${other.file}, ${plan.file}): give one plan per stack`);
    byStack.set(plan.stack, plan);
  }
  const synthByName = new Map(synthesized.map((s) => [s.name, s]));
  const unplanned = synthesized.filter((s) => !byStack.has(s.name));
  // Objects some plan keeps (not forgotten) after the change, by store name: a forgotten copy elsewhere is the same object.
  const keptAfter = new Set(plans.flatMap((p) => p.after.filter((r) => !p.forgotten.includes(r.address)).map(storeKey)));
  const side = (pick: (plan: SavedPlan) => readonly PlannedResource[], after: boolean) => [
    ...unplanned,
    ...[...byStack.values()].map((plan) => planStack(plan, pick(plan), synthByName.get(plan.stack), after ? plan.unknowns : [])),
  ].sort((a, b) => compareStrings(a.name, b.name));
  const afterResources = (plan: SavedPlan) => plan.after.filter((r) => !(plan.forgotten.includes(r.address) && keptAfter.has(storeKey(r))));
  // Before, an object one plan forgets and another imports is the import's: read from the store at
  // the plan, where the forgetting plan's copy may be its state unrefreshed (Terraform 1.11.4 does not
  // refresh an object a `removed` block forgets), so a change made by hand since the last apply shows.
  const imported = importedObjects(plans);
  const beforeResources = (plan: SavedPlan) => plan.before.filter((r) => !(plan.forgotten.includes(r.address) && imported.has(storeKey(r))));
  // A planned stack's objects win over another stack's synthesized declaration of the same name:
  // before, its refreshed state is what the store has; after, its apply writes them.
  const preferred = new Set(byStack.keys());
  // The unplanned stacks are the same objects on both sides: read once (most of the review's time at 20,000 applications).
  const readings = new StackReadings();
  const { overridden: _before, ...base } = storeConfigurationOf(side(beforeResources, false), preferred, readings);
  const { overridden, ...head } = storeConfigurationOf(side(afterResources, true), preferred, readings);
  return { base, head, planned: [...preferred].sort(compareStrings), unplanned: unplanned.map((s) => s.name), overridden };
}

/**
 * The store objects ({@link storeKey}) one plan forgets and another holds before without forgetting
 * them (moved between stacks, imported by that plan), each with the import's reading of it from the
 * store. Without a forgotten object no key is computed: most reviews move nothing.
 */
export function importedObjects(plans: readonly SavedPlan[]): Map<string, PlannedResource> {
  const forgottenOf = new Map(plans.map((p) => [p, new Set(p.forgotten)]));
  const forgotten = new Set<string>();
  for (const p of plans) for (const r of p.before) if (forgottenOf.get(p)!.has(r.address)) forgotten.add(storeKey(r));
  const imported = new Map<string, PlannedResource>();
  if (forgotten.size === 0) return imported;
  for (const p of plans) {
    for (const r of p.before) {
      if (forgottenOf.get(p)!.has(r.address)) continue;
      const key = storeKey(r);
      if (forgotten.has(key)) imported.set(key, r);
    }
  }
  return imported;
}

/** What an attribute unknown until apply reads as: a name that says so, no rule, no policy, no binding. */
const UNKNOWN_TEXT = '(unknown until apply)';
const UNKNOWN_VALUE: Readonly<Record<string, unknown>> = {
  policy: `# ${UNKNOWN_TEXT}\n`,
  token_policies: [],
  token_no_default_policy: false,
};

/**
 * The store object a resource is, as its catalogue entry names it (`role of auth/approle` + `billing`);
 * its address otherwise: one key for one object whichever stack's plan shows it.
 */
export function storeKey(r: PlannedResource): string {
  const kind = storeObjectKind(r.type);
  if (kind === undefined) return `address\0${r.address}`;
  try {
    const { space, key } = kind.name(r.values);
    return `${r.type}\0${space}\0${key}`;
  } catch {
    return `address\0${r.address}`;
  }
}

/**
 * One side of a planned stack as a synthesized stack: every value a Terraform JSON literal (so that
 * the reference resolver reads back exactly the engine's value, `${` included), the synthesized
 * stack's metadata, and each top-level resource's construct path where the synthesis has the same address.
 */
function planStack(plan: SavedPlan, resources: readonly PlannedResource[], synthesized: SynthStack | undefined, unknowns: readonly UnknownPlanValue[]): SynthStack {
  const byType: Record<string, Record<string, ResourceBlock>> = {};
  for (const r of resources) {
    const declared = r.topLevel ? synthesized?.resources[r.type]?.[r.name]?.['//'] : undefined;
    const key = r.topLevel ? r.name : r.address;
    const values: Record<string, unknown> = { ...(literal(r.values) as Record<string, unknown>) };
    // Never guessed: a placeholder that grants nothing and names itself; the review flags the value.
    for (const u of unknowns) if (u.address === r.address) values[u.attribute] = UNKNOWN_VALUE[u.attribute] ?? UNKNOWN_TEXT;
    (byType[r.type] ??= {})[key] = { ...values, ...(declared !== undefined ? { '//': declared } : {}) };
  }
  return {
    name: plan.stack,
    file: plan.file,
    resources: byType,
    metadata: synthesized?.metadata ?? {},
    namespace: synthesized?.namespace ?? '',
  };
}

/** A resolved value as a Terraform JSON literal: strings escaped (`${` → `$${`), keys kept. */
function literal(value: unknown): unknown {
  if (typeof value === 'string') return terraformString(value);
  if (Array.isArray(value)) return value.map(literal);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v)]));
  return value;
}
