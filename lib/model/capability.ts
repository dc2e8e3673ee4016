import { StoreKind } from './store-target';

/**
 * ACL capabilities of Vault and OpenBao, in the order the stores document them. `scan` is OpenBao's;
 * `subscribe` and `recover` are Vault's. Rendering sorts capabilities in this order.
 */
export const CAPABILITIES = [
  'create',
  'read',
  'update',
  'patch',
  'delete',
  'list',
  'scan',
  'sudo',
  'deny',
  'subscribe',
  'recover',
] as const;

/** One ACL capability. */
export type Capability = (typeof CAPABILITIES)[number];

const COMMON: readonly Capability[] = ['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo', 'deny'];

/**
 * The capabilities each store accepts in a policy (both stores' `vault/policy.go`): `scan` is
 * OpenBao's only, `subscribe` and `recover` HashiCorp Vault's only. A store refuses a whole policy
 * naming a word it does not know (Vault: `invalid capability "scan"`).
 */
export const CAPABILITIES_BY_STORE: Readonly<Record<StoreKind, ReadonlySet<string>>> = {
  openbao: new Set<string>([...COMMON, 'scan']),
  vault: new Set<string>([...COMMON, 'subscribe', 'recover']),
};

/** The capabilities of `capabilities` that the store `kind` does not know, in documentation order. */
export function unknownToStore(kind: StoreKind, capabilities: Iterable<string>): string[] {
  const set = new Set(capabilities);
  return [...CAPABILITIES, ...[...set].filter((c) => !isCapability(c))].filter((c) => set.has(c) && !CAPABILITIES_BY_STORE[kind].has(c));
}

/** True when `value` is a capability word the stores know. */
export function isCapability(value: string): value is Capability {
  return (CAPABILITIES as readonly string[]).includes(value);
}

/**
 * Normalises a capability set as the store evaluates one rule: duplicates removed, sorted in
 * documentation order, and `deny` discarding every other capability of the rule.
 */
export function normalizeCapabilities(capabilities: Iterable<Capability>): Capability[] {
  const set = new Set(capabilities);
  if (set.has('deny')) return ['deny'];
  return CAPABILITIES.filter((c) => set.has(c));
}
