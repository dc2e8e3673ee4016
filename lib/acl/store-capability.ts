import { CAPABILITIES } from '../model/capability';

/**
 * A capability the store (OpenBao 2.x) accepts in an ACL rule. Vault's `subscribe` and `recover`
 * are not among them: OpenBao refuses a policy naming them, so the evaluator does too.
 */
export type StoreCapability = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list' | 'scan' | 'sudo' | 'deny';

/**
 * Capability bits, the same values as the store's `cap2Int` table, so a mask printed while
 * debugging reads like the store's own.
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
};

/** True when `word` is a capability the store accepts. */
export function isStoreCapability(word: string): word is StoreCapability {
  return Object.prototype.hasOwnProperty.call(CAPABILITY_BITS, word);
}

/** Capabilities in documentation order, the library's rendering order less Vault-only words. */
export const STORE_CAPABILITIES: readonly StoreCapability[] = CAPABILITIES.filter(isStoreCapability);

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
