import { createHash } from 'crypto';
import { compareStrings } from '../private/compare-strings';

/** One managed resource instance as a saved plan shows it on one side: its values, fully resolved. */
export interface PlannedResource {
  /** Full address (`vault_policy.registry-ci_policy_FD942459`, `module.m.vault_policy.p["k"]`). */
  readonly address: string;
  /** Resource type (`vault_policy`). */
  readonly type: string;
  /** Resource name in its block (`registry-ci_policy_FD942459`), without module or index. */
  readonly name: string;
  /** True when the address has no module and no index: the synthesized stack's `resource.<type>.<name>`. */
  readonly topLevel: boolean;
  /** Attribute values as the engine will write them (unknown ones left out). */
  readonly values: Readonly<Record<string, unknown>>;
}

/** An attribute the access review reads whose planned value the engine knows only after apply. */
export interface UnknownPlanValue {
  /** Resource address. */
  readonly address: string;
  /** Resource type. */
  readonly type: string;
  /** The top-level attribute (`token_policies`, `policy`). */
  readonly attribute: string;
}

/**
 * A planned change the access review does not read: to a resource of a type it has no attributes
 * for, or to an object written in a namespace of its own (the `namespace` attribute, which the
 * library never sets: the review models the stack's namespace only).
 */
export interface UnreviewedPlanChange {
  /** Resource address. */
  readonly address: string;
  /** Resource type (`vault_generic_endpoint`, `terraform_data`). */
  readonly type: string;
  /** The engine's actions (`["create"]`). */
  readonly actions: readonly string[];
  /** For an object given a namespace of its own: that namespace (`(unknown until apply)` when unknown). */
  readonly namespace?: string;
}

/** One configuration of the vault provider the plan was made with (`configuration.provider_config`). */
export interface PlannedProvider {
  /** `vault`, or `vault.<alias>` for an aliased one. */
  readonly key: string;
  /** Its arguments as the plan shows them: per argument, `{constant_value}` or `{references}`. */
  readonly expressions: Readonly<Record<string, unknown>>;
}

/** What the review reads from one stack's saved plan (`show -json PLANFILE`). */
export interface SavedPlan {
  /** The stack planned. */
  readonly stack: string;
  /** How the plan was given (the plan file, or the JSON file), for the note. */
  readonly file: string;
  /** SHA-256 of the plan file as given (hex), so that an apply can check it applies the reviewed plan. */
  readonly sha256: string;
  /** The engine's version the plan records (`terraform_version`), when given. */
  readonly engineVersion?: string;
  /** Managed resources before the change: the refreshed prior state, sorted by address. */
  readonly before: readonly PlannedResource[];
  /** Managed resources after the change (creates, updates, no-ops, replacements), sorted by address. */
  readonly after: readonly PlannedResource[];
  /** Addresses of objects the plan forgets (`removed` blocks): they stay on the store, out of state. */
  readonly forgotten: readonly string[];
  /**
   * Objects the engine's refresh found changed outside it since they were last applied (the plan's
   * `resource_drift`), each with the values it last applied (`change.before`): drift the engine
   * itself saw, sorted by address.
   */
  readonly lastApplied: readonly PlannedResource[];
  /** Attributes the review reads that are unknown until apply, sorted. */
  readonly unknowns: readonly UnknownPlanValue[];
  /** Changes the review does not read (other resource types, objects in a namespace of their own), sorted by address. */
  readonly unreviewed: readonly UnreviewedPlanChange[];
  /**
   * True when the engine marks the plan incomplete (`"complete": false`, Terraform: deferred
   * changes): applying it is not the end of the change, another plan follows.
   */
  readonly partial: boolean;
  /** The vault provider configurations of the plan (where the objects are written, with what), sorted by key. */
  readonly providers: readonly PlannedProvider[];
}

/** The SHA-256 digest of a plan file's bytes, hex. */
export function planDigest(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Actions that leave the object on the store with the change's `after` values. */
const KEEPS = new Set(['no-op', 'create', 'update', 'read']);

/**
 * Reads the JSON of `tofu show -json PLANFILE` (the same format on Terraform) for one stack.
 * "Before" is each resource change's `change.before` (the refreshed state), "after" its
 * `change.after` (absent for a delete); a resource of the prior state without a change (a `-target`
 * plan) is the same on both sides. Every value is the one the engine writes: no `${}` reference,
 * whatever file, variable or expression produced it. Only managed resources are read.
 * @param stack the stack the plan is of
 * @param file how the plan was given, for messages
 * @param sha256 the digest of the plan file ({@link planDigest})
 * @param reviewed per resource type the review reads, the attributes it reads: an unknown value
 *   there is reported, and a change to a resource of another type is reported as unreviewed
 * @throws Error naming the file when the document is not a saved plan's JSON, or the plan errored
 */
export function readSavedPlan(document: unknown, stack: string, file: string, sha256: string, reviewed: ReadonlyMap<string, readonly string[]>): SavedPlan {
  const bad = (why: string) => new Error(`${file} (stack ${stack}): not the JSON of \`show -json\` of a saved plan: ${why}`);
  if (!isRecord(document)) throw bad('not a JSON object');
  if (typeof document.format_version !== 'string' || !/^1\./.test(document.format_version)) {
    throw bad(`format_version ${JSON.stringify(document.format_version)} is not 1.x`);
  }
  if (!Array.isArray(document.resource_changes) && document.resource_changes !== undefined) throw bad('resource_changes is not a list');
  if (document.errored === true) throw new Error(`${file} (stack ${stack}): the plan errored: the engine cannot apply it; plan again`);
  const changes = (document.resource_changes ?? []) as unknown[];
  const before = new Map<string, PlannedResource>();
  const after = new Map<string, PlannedResource>();
  // The prior state first: resources a targeted plan leaves out are the same on both sides.
  for (const r of priorStateResources(document.prior_state)) {
    before.set(r.address, r);
    after.set(r.address, r);
  }
  const forgotten: string[] = [];
  const unknowns: UnknownPlanValue[] = [];
  const unreviewed: UnreviewedPlanChange[] = [];
  for (const rc of changes) {
    if (!isRecord(rc) || !isRecord(rc.change) || typeof rc.address !== 'string' || typeof rc.type !== 'string') throw bad('a resource change without address, type or change');
    if (rc.mode === 'data') continue;
    const address = rc.address;
    const type = rc.type;
    const name = typeof rc.name === 'string' ? rc.name : address;
    const change = rc.change;
    const actions = Array.isArray(change.actions) ? change.actions.map(String) : [];
    if (actions.length === 0) throw bad(`${address} has no actions`);
    const resource = (values: unknown): PlannedResource => plannedResource(address, type, name, values);
    before.delete(address);
    after.delete(address);
    if (isRecord(change.before)) before.set(address, resource(change.before));
    if (actions.includes('forget')) {
      // Out of state, still on the store: the store keeps it as it was.
      forgotten.push(address);
      if (isRecord(change.before)) after.set(address, resource(change.before));
      continue;
    }
    const kept = actions.some((a) => KEEPS.has(a)) && isRecord(change.after);
    if (kept) after.set(address, resource(change.after));
    const attributes = reviewed.get(type);
    if (attributes === undefined) {
      if (!(actions.length === 1 && actions[0] === 'no-op')) unreviewed.push({ address, type, actions });
      continue;
    }
    if (kept) {
      const after = change.after as Record<string, unknown>;
      const namespaceUnknown = isRecord(change.after_unknown) && containsUnknown(change.after_unknown.namespace);
      if (namespaceUnknown || (typeof after.namespace === 'string' && after.namespace !== '')) {
        unreviewed.push({ address, type, actions, namespace: namespaceUnknown ? '(unknown until apply)' : String(after.namespace) });
      }
      for (const attribute of attributes) {
        if (containsUnknown(isRecord(change.after_unknown) ? change.after_unknown[attribute] : undefined)) unknowns.push({ address, type, attribute });
      }
    }
  }
  if (!Array.isArray(document.resource_drift) && document.resource_drift !== undefined) throw bad('resource_drift is not a list');
  const lastApplied = new Map<string, PlannedResource>();
  for (const rd of (document.resource_drift ?? []) as unknown[]) {
    if (!isRecord(rd) || !isRecord(rd.change) || typeof rd.address !== 'string' || typeof rd.type !== 'string') throw bad('a resource drift without address, type or change');
    if (rd.mode === 'data' || !isRecord(rd.change.before)) continue;
    lastApplied.set(rd.address, plannedResource(rd.address, rd.type, typeof rd.name === 'string' ? rd.name : rd.address, rd.change.before));
  }
  const sorted = (m: Map<string, PlannedResource>) => [...m.values()].sort((a, b) => compareStrings(a.address, b.address));
  return {
    stack,
    file,
    sha256,
    ...(typeof document.terraform_version === 'string' ? { engineVersion: document.terraform_version } : {}),
    before: sorted(before),
    after: sorted(after),
    forgotten: forgotten.sort(compareStrings),
    lastApplied: sorted(lastApplied),
    unknowns: unknowns.sort((a, b) => compareStrings(a.address, b.address) || compareStrings(a.attribute, b.attribute)),
    unreviewed: unreviewed.sort((a, b) => compareStrings(a.address, b.address)),
    partial: document.complete === false,
    providers: vaultProviders(document.configuration),
  };
}

/** The `vault` and `vault.<alias>` entries of `configuration.provider_config`. */
function vaultProviders(configuration: unknown): PlannedProvider[] {
  const configs = isRecord(configuration) && isRecord(configuration.provider_config) ? configuration.provider_config : {};
  return Object.entries(configs)
    .filter(([key]) => key === 'vault' || key.startsWith('vault.'))
    .map(([key, config]) => ({ key, expressions: isRecord(config) && isRecord(config.expressions) ? config.expressions : {} }))
    .sort((a, b) => compareStrings(a.key, b.key));
}

/** One resource instance as a plan shows it: top level when its address is `<type>.<name>`; values that are no object read as none. */
function plannedResource(address: string, type: string, name: string, values: unknown): PlannedResource {
  return { address, type, name, topLevel: address === `${type}.${name}`, values: isRecord(values) ? values : {} };
}

/** The managed resources of `prior_state.values` (root module and child modules). */
function priorStateResources(priorState: unknown): PlannedResource[] {
  const out: PlannedResource[] = [];
  const walk = (module: unknown) => {
    if (!isRecord(module)) return;
    for (const r of Array.isArray(module.resources) ? module.resources : []) {
      if (!isRecord(r) || r.mode === 'data' || typeof r.address !== 'string' || typeof r.type !== 'string') continue;
      out.push(plannedResource(r.address, r.type, typeof r.name === 'string' ? r.name : r.address, r.values));
    }
    for (const child of Array.isArray(module.child_modules) ? module.child_modules : []) walk(child);
  };
  if (isRecord(priorState) && isRecord(priorState.values)) walk(priorState.values.root_module);
  return out;
}

/** True when an `after_unknown` value marks anything unknown (`true` anywhere inside). */
function containsUnknown(value: unknown): boolean {
  if (value === true) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (isRecord(value)) return Object.values(value).some(containsUnknown);
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
