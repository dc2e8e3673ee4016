import { storeObjectKind } from '../catalogue/store-object-catalogue';
import { locateStoreObject } from '../reconcile/declared-object';
import { mapLimited } from '../private/map-limited';
import { StoreClient, StoreError } from '../store/store-client';

/**
 * One object a plan would create that the store may already have. The store writes a role or a policy
 * in place (a create is an update there), so applying such a plan takes the object over silently: two
 * states then hold it (one stack's apply without the import blocks `secretstore-iac moves` writes),
 * or the library overwrites an object it never managed (one `secretstore-iac adopt` should import).
 * Mounts are not among them: the store refuses to mount twice.
 */
export interface PlannedCreate {
  /** Resource address (`vault_approle_auth_backend_role.billing-dev_role_1A2B3C4D`). */
  readonly address: string;
  /** Where it lives on the store (`auth/approle/role/billing-dev`, `sys/policies/acl/billing-dev`). */
  readonly storePath: string;
}


/**
 * The objects a plan (`show -json` of a saved plan) would create, not import, of the types the store
 * writes in place, sorted by address. A role whose mount the same plan creates is left out: its mount
 * path is not known yet, and a new mount holds no role.
 */
export function plannedCreates(plan: unknown): PlannedCreate[] {
  const changes = (plan as { resource_changes?: unknown[] })?.resource_changes;
  if (!Array.isArray(changes)) return [];
  const out: PlannedCreate[] = [];
  for (const rc of changes as any[]) {
    const actions: string[] = Array.isArray(rc?.change?.actions) ? rc.change.actions.map(String) : [];
    if (actions.length !== 1 || actions[0] !== 'create' || rc.change.importing || storeObjectKind(String(rc.type))?.writtenInPlace !== true) continue;
    const after = rc.change.after;
    if (!after || typeof after !== 'object' || rc.change.after_unknown?.backend === true) continue;
    const located = locateStoreObject(String(rc.type), after);
    if (located) out.push({ address: String(rc.address), storePath: located.storePath });
  }
  return out.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

/** A planned create whose object the store has. */
export interface PlannedTakeover extends PlannedCreate {
  /** HTTP status of the store's answer (200). */
  readonly status: number;
}

/** What the store said about the planned creates. */
export interface TakeoverCheck {
  /** The creates whose object the store has: refused. */
  readonly takeovers: PlannedTakeover[];
  /**
   * The creates the token may not look up (403), with the status: let through, with a note. The
   * pipeline roles may read exactly the objects the applied configuration declares, so a new
   * application's role is one of these until its change is applied; an object that moved between
   * stacks was declared before, and is readable.
   */
  readonly unchecked: (PlannedCreate & { readonly status: number })[];
}

/**
 * Looks up each planned create on the store (GET of its path with the engine's token, eight at a time):
 * 200 is a takeover, 404 a create, 403 unchecked.
 * @throws StoreError for any other answer (the store unreachable, sealed, failing)
 */
export async function checkPlannedCreates(creates: readonly PlannedCreate[], client: StoreClient): Promise<TakeoverCheck> {
  const answers = await mapLimited(creates, 8, async (create) => {
    try {
      return { create, status: (await client.request('GET', create.storePath)).status };
    } catch (e) {
      if (e instanceof StoreError && (e.status === 404 || e.status === 403)) return { create, status: e.status };
      throw e;
    }
  });
  return {
    takeovers: answers.filter((a) => a.status < 300).map((a) => ({ ...a.create, status: a.status })),
    unchecked: answers.filter((a) => a.status === 403).map((a) => ({ ...a.create, status: a.status })),
  };
}

/** Thrown when a plan would create objects the store has; the CLI exits with `ExitCode.destructionRefused` (4). */
export class TakeoverRefused extends Error {
  constructor(
    readonly takeovers: readonly PlannedTakeover[],
    what: string,
  ) {
    super(
      `${what}: the plan would create ${takeovers.length} object${takeovers.length === 1 ? '' : 's'} the store already has, refused ` +
        '(the store writes a role or a policy in place, so the apply would take it over silently):\n' +
        takeovers.map((t) => `  ${describeTakeover(t)}`).join('\n'),
    );
    this.name = 'TakeoverRefused';
  }
}

/** One line: the object, where the store has it, and the fix. */
export function describeTakeover(t: PlannedCreate): string {
  return (
    `${t.address} would be created, but ${t.storePath} exists on the store. Fix: if it moved from another stack, ` +
    'run `secretstore-iac moves BASE HEAD` (BASE: the configuration last applied) so that this stack imports it ' +
    '(docs/sharding.md); if the store had it before this configuration, import it with `secretstore-iac adopt`'
  );
}

/** The note for creates the token may not look up: they go through. */
export function describeUnchecked(unchecked: readonly PlannedCreate[]): string {
  return (
    'could not check whether the store already has these created objects (HTTP 403: the token may not read them; ' +
    `new in this change, or outside what the applied configuration declares): ${unchecked.map((u) => u.storePath).join(', ')}`
  );
}
