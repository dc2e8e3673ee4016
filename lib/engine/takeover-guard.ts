import { goLowerCase } from '../model/go-unicode';
import { storeObjectKind } from '../catalogue/store-object-catalogue';
import { locateStoreObject } from '../reconcile/declared-object';
import { parseAuthMounts, parseList } from '../reconcile/live-store-reader';
import { mapLimited } from '../private/map-limited';
import { StoreClient, StoreError } from '../store/store-client';
import { GuardRefusal } from './guard-refusal';

/**
 * One object a plan would create that the store may already have. The store writes a role or a policy
 * in place (a create is an update there), so applying such a plan takes the object over silently: two
 * states then hold it (one stack's apply without the import blocks `secretstore-iac moves` writes),
 * or the library overwrites an object it never managed (one `secretstore-iac adopt` should import).
 * An auth mount the store has makes the apply fail on "path is already in use" half-way, after the
 * objects before it were written (a first apply that failed after mounting `jwt/` leaves one).
 */
export interface PlannedCreate {
  /** Resource address (`vault_approle_auth_backend_role.billing-dev_role_1A2B3C4D`). */
  readonly address: string;
  /** Where it lives on the store (`auth/approle/role/billing-dev`, `sys/policies/acl/billing-dev`, `sys/auth/jwt`). */
  readonly storePath: string;
}

/**
 * The objects a plan (`show -json` of a saved plan) would create, not import, of every type the
 * store object catalogue holds (mounts, roles, policies), sorted by address. A role whose
 * mount the same plan creates is left out: its mount path is not known yet, and the mount is
 * looked up itself.
 */
export function plannedCreates(plan: unknown): PlannedCreate[] {
  const changes = (plan as { resource_changes?: unknown[] })?.resource_changes;
  if (!Array.isArray(changes)) return [];
  const out: PlannedCreate[] = [];
  for (const rc of changes as any[]) {
    const actions: string[] = Array.isArray(rc?.change?.actions) ? rc.change.actions.map(String) : [];
    // Every kind the catalogue knows: roles and policies are written in place, a mount fails half-way.
    if (actions.length !== 1 || actions[0] !== 'create' || rc.change.importing || storeObjectKind(String(rc.type)) === undefined) continue;
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

/** A planned create the token may not look up (403), with the policy rule that would let it. */
export interface UnreadableCreate extends PlannedCreate {
  /** HTTP status of the store's answer (403). */
  readonly status: number;
  /** The ACL rules of which one is missing, as policy text (`path "sys/policies/acl/x" { capabilities = ["read"] }`). */
  readonly missingGrant: string;
}

/** What the store said about the planned creates. */
export interface TakeoverCheck {
  /** The creates whose object the store has: refused. */
  readonly takeovers: PlannedTakeover[];
  /**
   * The creates the token may neither read nor find in a listing (403): refused before an apply
   * (never written blind), a note on a saved plan (its apply checks again with the applying token).
   */
  readonly unreadable: UnreadableCreate[];
}

const rule = (apiPath: string, capability: 'read' | 'list') => `path "${apiPath}" { capabilities = ["${capability}"] }`;

/** How a store path is looked up: where the object is, and the listing that names it. */
function lookupOf(storePath: string): { mount?: string; listing?: string; key: string } {
  const mount = /^sys\/auth\/(.+)$/.exec(storePath);
  if (mount) return { mount: mount[1], key: `${mount[1]}/` };
  const slash = storePath.lastIndexOf('/');
  // Listings are compared without case: the store folds AppRole role and policy names to lower case (Go's tables).
  return { listing: storePath.slice(0, slash), key: goLowerCase(storePath.slice(slash + 1)) };
}

/**
 * Looks up each planned create on the store with the engine's token (eight at a time). A role or
 * policy: GET of its path (200 the store has it, 404 not); 403 falls back to the listing of its
 * parent (`LIST sys/policies/acl`, `LIST auth/approle/role`: names only), 403 there too is
 * unreadable. A mount: `GET sys/auth` (the mount table the provider reads too).
 * @throws StoreError for any other answer (the store unreachable, sealed, failing)
 */
export async function checkPlannedCreates(creates: readonly PlannedCreate[], client: Pick<StoreClient, 'request'>): Promise<TakeoverCheck> {
  const status = (e: unknown): number | undefined => (e instanceof StoreError && (e.status === 404 || e.status === 403) ? e.status : undefined);
  // One request per listing (the mount table, a role listing) however many creates it answers.
  const listings = new Map<string, Promise<Set<string> | 403>>();
  const listing = (apiPath: string, read: () => Promise<string[]>): Promise<Set<string> | 403> => {
    if (!listings.has(apiPath)) {
      listings.set(
        apiPath,
        read().then(
          (keys) => new Set(keys),
          (e) => {
            const s = status(e);
            if (s === 404) return new Set<string>();
            if (s === 403) return 403 as const;
            throw e;
          },
        ),
      );
    }
    return listings.get(apiPath)!;
  };
  const answers = await mapLimited(creates, 8, async (create): Promise<{ create: PlannedCreate; status: number; missingGrant?: string }> => {
    const how = lookupOf(create.storePath);
    if (how.mount !== undefined) {
      const mounts = await listing('sys/auth', async () => parseAuthMounts((await client.request('GET', 'sys/auth')).body).map((m) => `${m.path}/`));
      if (mounts === 403) return { create, status: 403, missingGrant: rule('sys/auth', 'read') };
      return { create, status: mounts.has(how.key) ? 200 : 404 };
    }
    try {
      return { create, status: (await client.request('GET', create.storePath)).status };
    } catch (e) {
      const s = status(e);
      if (s === undefined) throw e;
      if (s === 404) return { create, status: 404 };
    }
    const keys = await listing(how.listing!, async () =>
      parseList((await client.request('GET', `${how.listing}?list=true`)).body, `LIST ${how.listing}`).map((k) => goLowerCase(k)),
    );
    // The listing's rule as both LIST lookups read it (docs/stores.md): without the `/` before OpenBao 2.6.0 / Vault 2.0.3, with it from those.
    if (keys === 403) {
      return { create, status: 403, missingGrant: `${rule(create.storePath, 'read')} (or ${rule(how.listing!, 'list')}, and ${rule(`${how.listing}/`, 'list')} from OpenBao 2.6.0 / Vault 2.0.3)` };
    }
    return { create, status: keys.has(how.key) ? 200 : 404 };
  });
  return {
    takeovers: answers.filter((a) => a.status < 300).map((a) => ({ ...a.create, status: a.status })),
    unreadable: answers.filter((a) => a.status === 403).map((a) => ({ ...a.create, status: a.status, missingGrant: a.missingGrant! })),
  };
}

/** Thrown when a plan would create objects the store has; the CLI exits with `ExitCode.destructionRefused` (4). */
export class TakeoverRefused extends GuardRefusal {
  constructor(
    readonly takeovers: readonly PlannedTakeover[],
    what: string,
    /** The stack, named in the fix's commands (`STACK` when not given). */
    stack = 'STACK',
  ) {
    super(
      `${what}: the plan would create ${takeovers.length} object${takeovers.length === 1 ? '' : 's'} the store already has, refused ` +
        '(the store writes a role or a policy in place, so the apply would take it over silently; it refuses a mount whose path is in use, half-way through the apply):\n' +
        takeovers.map((t) => `  ${describeTakeover(t, stack)}`).join('\n'),
    );
    this.name = 'TakeoverRefused';
  }
}

/** One line: the object, where the store has it, and the fix. */
export function describeTakeover(t: PlannedCreate, stack = 'STACK'): string {
  const mount = /^sys\/auth\/(.+)$/.exec(t.storePath)?.[1];
  if (mount !== undefined) {
    return (
      `${t.address} would mount ${mount}/, but the store has an auth method there (${t.storePath}). Fix: run \`secretstore-iac adopt ${stack}\`: it imports the mount ` +
      'with the objects under it, or says what to do when it cannot (a mount a failed first apply left never configured: disable it, then apply); ' +
      'if it moved from another stack, run `secretstore-iac moves BASE HEAD` (docs/sharding.md)'
    );
  }
  return (
    `${t.address} would be created, but ${t.storePath} exists on the store. Fix: if it moved from another stack, ` +
    'run `secretstore-iac moves BASE HEAD` (BASE: the configuration last applied) so that this stack imports it ' +
    `(docs/sharding.md); if the store had it before this configuration, import it with \`secretstore-iac adopt ${stack}\``
  );
}

/**
 * Thrown before an apply when the token may not look up objects the plan creates: the apply could
 * overwrite an object it cannot see. The CLI exits with `ExitCode.destructionRefused` (4).
 */
export class UnreadableCreatesRefused extends GuardRefusal {
  constructor(
    readonly unreadable: readonly UnreadableCreate[],
    what: string,
  ) {
    super(`${what}: ${describeUnreadable(unreadable)}`);
    this.name = 'UnreadableCreatesRefused';
  }
}

/** The objects the token may not look up, and for each the policy rule the token lacks. */
export function describeUnreadable(unreadable: readonly UnreadableCreate[]): string {
  return (
    `cannot check whether the store already has ${unreadable.length} object${unreadable.length === 1 ? '' : 's'} the plan creates: the token ` +
    '(VAULT_TOKEN, as the vault provider reads it) may not read them (HTTP 403), and --refuse-replace never writes over what it cannot see. ' +
    'Fix: add the rule to the token\'s policy, then run again (the configuration pipeline\'s roles get it from the stacks that declare the object: apply ci-access first):\n' +
    unreadable.map((u) => `  ${u.address} (${u.storePath}): ${u.missingGrant}`).join('\n')
  );
}
