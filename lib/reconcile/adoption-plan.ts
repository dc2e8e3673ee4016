import { PolicyParser } from '../acl/policy-parser';
import { AccessDiff, diffAccess } from '../access/access-diff';
import { AccessModel } from '../access/access-model';
import { DeclaredObject } from './declared-object';
import { unconfiguredJwtMount } from './unconfigured-jwt-mount';
import { ImportBlock, importBlocks } from './import-blocks';
import { LiveStore, liveStoreConfiguration } from './live-store-reader';
import { StoreConfiguration } from '../access/store-configuration';
import { restrict, roleTypeConsequence } from './store-drift';
import { describeMountAttributeChange, mountAttributeChanges } from './mount-attribute-changes';
import { mountTypeMismatch } from './mount-type-mismatch';

/** What adopting one stack does: imports, creates, conflicts, and the access change of applying. */
export interface AdoptionPlan {
  /** The stack. */
  readonly stack: string;
  /** Resource addresses in the stack's state. */
  readonly inState: number;
  /** Import blocks for declared objects on the store but not in state, sorted by address. */
  readonly imports: readonly ImportBlock[];
  /** Declared objects neither in state nor on the store: the apply creates them. */
  readonly creates: readonly DeclaredObject[];
  /**
   * Objects an interrupted apply left tainted in state that the store has: untainted, so that the
   * next plan updates them in place (an AppRole role keeps its Role ID) instead of replacing them.
   */
  readonly untaints: readonly DeclaredObject[];
  /** Objects left tainted in state that the store does not have: forgotten, so that the apply creates them. */
  readonly forgets: readonly DeclaredObject[];
  /** Tainted addresses in state that the stack no longer declares (the plan destroys them; not touched). */
  readonly taintedUndeclared: readonly string[];
  /** Objects on the store an import cannot adopt (`address: why`). */
  readonly conflicts: readonly string[];
  /** Access of the stack's identities, the store as it is → the declarations. */
  readonly access: AccessDiff;
  /**
   * Attributes of imported objects the access report does not show (mount `local`, description,
   * tune), one line each with what the apply does: `approle/: description: declared ..., store ...: ...`.
   */
  readonly attributeChanges: readonly string[];
  /**
   * What applying the imports would destroy: an attribute that forces a replacement (a local
   * mount, an OIDC role where a JWT role is declared), one line each, with the declaration or the
   * hand fix that avoids it. Adopt's plan check refuses such a plan (exit 4).
   */
  readonly risks: readonly string[];
}

/**
 * Whether a declared object is on the store: `present`, `absent`, or why an import cannot adopt
 * what holds its place (a mount of another type at the declared path), its hand fix naming the live store's CLI.
 */
export function storePresence(o: DeclaredObject, live: LiveStore): 'present' | 'absent' | string {
  if (o.kind === 'auth-mount' || o.kind === 'jwt-auth-mount') {
    const mount = live.mounts.find((m) => m.path === o.name);
    if (!mount) return 'absent';
    const want = o.kind === 'jwt-auth-mount' ? String(o.fields.type ?? 'jwt') : String(o.fields.type);
    if (mount.type !== want) return mountTypeMismatch(o.name, mount.type, want, live.store?.cli, live.namespace);
    const unconfigured = unconfiguredJwtMount(o, live);
    if (unconfigured !== undefined) return unconfigured;
    return 'present';
  }
  if (o.kind === 'jwt-role' || o.kind === 'approle-role') return live.roles.some((r) => r.mount === o.mount && r.role === o.name) ? 'present' : 'absent';
  return live.policies.has(o.name) ? 'present' : 'absent';
}

/**
 * Plans the adoption of one stack: every declared object of the stack that is on the store but not
 * in its state is imported; the access report compares the stack's identities on the store with
 * their declarations.
 * @param declared the stack's declared objects
 * @param configuration the declared configuration (all stacks; restricted to the stack's identities here)
 * @param state resource addresses in the stack's state
 * @param tainted the addresses of `state` an interrupted apply left tainted: untainted when the store
 *   has the object, forgotten (and created) when it does not
 */
export async function planAdoption(
  stack: string,
  declared: readonly DeclaredObject[],
  configuration: StoreConfiguration,
  live: LiveStore,
  state: ReadonlySet<string>,
  parser: PolicyParser = new PolicyParser(),
  tainted: ReadonlySet<string> = new Set(),
): Promise<AdoptionPlan> {
  const toImport: DeclaredObject[] = [];
  const creates: DeclaredObject[] = [];
  const conflicts: string[] = [];
  const untaints: DeclaredObject[] = [];
  const forgets: DeclaredObject[] = [];
  for (const o of declared) {
    if (state.has(o.address)) {
      // A tainted object, or a JWT method in state whose configuration is gone: what the store has decides.
      if (!tainted.has(o.address) && o.kind !== 'jwt-auth-mount') continue;
      const where = storePresence(o, live);
      if (where !== 'present' && where !== 'absent') conflicts.push(`${o.address}: ${where}`);
      else if (!tainted.has(o.address)) continue;
      else if (where === 'present') untaints.push(o);
      else {
        forgets.push(o);
        creates.push(o);
      }
      continue;
    }
    const where = storePresence(o, live);
    if (where === 'present') toImport.push(o);
    else if (where === 'absent') creates.push(o);
    else conflicts.push(`${o.address}: ${where}`);
  }
  const attributeChanges: string[] = [];
  const risks: string[] = [];
  // Attributes that force a replacement matter as much for an untainted object as for an imported one.
  for (const o of [...toImport, ...untaints]) {
    if (o.kind === 'auth-mount' || o.kind === 'jwt-auth-mount') {
      const mount = live.mounts.find((m) => m.path === o.name)!;
      // An imported mount's TTLs are read by the import (the apply sets them); an untainted one's are not.
      for (const change of mountAttributeChanges(o, mount, live.store?.cli, { imported: toImport.includes(o), namespace: live.namespace })) {
        const line = `${o.name}/ (${o.address}): ${describeMountAttributeChange(change)}`;
        (change.effect === 'replace' ? risks : attributeChanges).push(line);
      }
    } else if (o.kind === 'jwt-role') {
      const role = live.roles.find((r) => r.mount === o.mount && r.role === o.name)!;
      // The store's default role_type is oidc: an unset field is an OIDC role.
      const have = typeof role.fields.role_type === 'string' && role.fields.role_type !== '' ? role.fields.role_type : 'oidc';
      const want = typeof o.fields.role_type === 'string' ? o.fields.role_type : 'oidc';
      if (have !== want) {
        risks.push(`${o.storePath} (${o.address}): role_type: declared ${want}, store ${have}: ${roleTypeConsequence(want, have)}`);
      }
    }
  }
  const names = new Set(declared.filter((o) => o.kind === 'jwt-role' || o.kind === 'approle-role').map((o) => `${o.mount}/${o.name}`));
  const before = await AccessModel.load(restrict(liveStoreConfiguration(live), (n) => names.has(n)), parser);
  const after = await AccessModel.load(restrict(configuration, (n) => names.has(n)), parser);
  const declaredAddresses = new Set(declared.map((o) => o.address));
  const taintedUndeclared = [...tainted].filter((a) => !declaredAddresses.has(a)).sort();
  return {
    stack,
    inState: state.size,
    imports: importBlocks(toImport),
    creates,
    untaints,
    forgets,
    taintedUndeclared,
    conflicts,
    access: diffAccess(before, after),
    attributeChanges,
    risks,
  };
}
