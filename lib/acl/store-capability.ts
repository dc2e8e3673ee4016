import { CAPABILITIES, CAPABILITIES_BY_STORE } from '../model/capability';
import { StoreKind } from '../model/store-target';

/**
 * A capability one of the stores accepts in an ACL rule: `scan` is OpenBao's only, `subscribe` and
 * `recover` are Vault's only (each store refuses a policy naming the other's: Vault with
 * `invalid capability "scan"`). Which store's set applies is {@link capabilitiesOf}.
 */
export type StoreCapability =
  | 'create'
  | 'read'
  | 'update'
  | 'patch'
  | 'delete'
  | 'list'
  | 'scan'
  | 'sudo'
  | 'deny'
  | 'subscribe'
  | 'recover';

/**
 * Capability bits, the same values as OpenBao's `cap2Int` table up to `scan`, so a mask printed
 * while debugging reads like the store's own; Vault's `subscribe` and `recover` follow (Vault
 * numbers them 1<<8 and 1<<9, where OpenBao has `scan`).
 */
export const CAPABILITY_BITS: Readonly<Record<StoreCapability, number>> = {
  deny: 1 << 0,
  create: 1 << 1,
  read: 1 << 2,
  update: 1 << 3,
  delete: 1 << 4,
  list: 1 << 5,
  sudo: 1 << 6,
  patch: 1 << 7,
  scan: 1 << 8,
  subscribe: 1 << 9,
  recover: 1 << 10,
};

const BY_STORE = CAPABILITIES_BY_STORE;

/** The capabilities `kind` accepts in a policy. */
export function capabilitiesOf(kind: StoreKind): ReadonlySet<string> {
  return BY_STORE[kind];
}

/** True when `word` is a capability the store `kind` accepts (default: OpenBao). */
export function isStoreCapability(word: string, kind: StoreKind = 'openbao'): word is StoreCapability {
  return BY_STORE[kind].has(word);
}

/** Capabilities in documentation order, the library's rendering order (every store's words). */
export const STORE_CAPABILITIES: readonly StoreCapability[] = CAPABILITIES.filter((c) => BY_STORE.openbao.has(c) || BY_STORE.vault.has(c));

/** The mask of a list of capabilities; `deny` anywhere makes the mask `deny` alone. */
export function capabilityMask(capabilities: Iterable<StoreCapability>): number {
  let mask = 0;
  for (const c of capabilities) {
    if (c === 'deny') return CAPABILITY_BITS.deny;
    mask |= CAPABILITY_BITS[c];
  }
  return mask;
}

/** True when the mask is an explicit `deny`. */
export function isDenyMask(mask: number): boolean {
  return (mask & CAPABILITY_BITS.deny) !== 0;
}

/** True when the mask carries `capability` (a `deny` mask carries none). */
export function maskHas(mask: number, capability: StoreCapability): boolean {
  if (capability === 'deny') return isDenyMask(mask);
  return !isDenyMask(mask) && (mask & CAPABILITY_BITS[capability]) !== 0;
}

/** The capabilities of a mask in documentation order (`deny` alone for a deny mask). */
export function capabilityNames(mask: number): StoreCapability[] {
  if (isDenyMask(mask)) return ['deny'];
  return STORE_CAPABILITIES.filter((c) => c !== 'deny' && (mask & CAPABILITY_BITS[c]) !== 0);
}

/**
 * The answer `sys/capabilities` gives for a governing mask: names sorted alphabetically, and
 * `["deny"]` for an explicit deny or for no capability at all (no rule, or an empty rule).
 */
export function storeCapabilityAnswer(mask: number): string[] {
  const names = capabilityNames(mask);
  if (names.length === 0 || isDenyMask(mask)) return ['deny'];
  return [...names].sort();
}
