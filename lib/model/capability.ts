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
