import { AclPolicy, ParsedPolicyRule, PolicySyntax } from './acl-policy';
import { PolicyItem, PolicyValue, isPolicyObject } from './policy-item';
import { RulePath } from './rule-path';
import { CAPABILITY_BITS, StoreCapability, isStoreCapability } from './store-capability';
import { StoreKind } from '../model/store-target';

/** Top-level keys the store accepts in a policy. */
const POLICY_KEYS = new Set(['name', 'path']);

/** Keys the store accepts inside a `path` block (OpenBao `parsePaths`). */
const RULE_KEYS = new Set([
  'comment',
  'policy',
  'capabilities',
  'allowed_parameters',
  'denied_parameters',
  'required_parameters',
  'min_wrapping_ttl',
  'max_wrapping_ttl',
  'mfa_methods',
  'pagination_limit',
  'expiration',
  'list_scan_response_keys_filter_path',
  'control_group',
]);

/** Capabilities of the legacy `policy = "..."` form (the store's backwards compatibility table). */
const LEGACY_POLICY: Readonly<Record<string, readonly StoreCapability[]>> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
};

/**
 * Turns a policy's top-level items (from the HCL parser, the HCL 1 JSON emulation or the library
 * reader) into rules, applying the store's validation and normalisation (OpenBao `vault/policy.go`,
 * `parseACLPolicyWithTemplating` and `parsePaths`).
 *
 * @param now the time against which `expiration` is checked: the store drops expired rules
 * @param kind the store whose capability words apply (`scan` is OpenBao's, `subscribe`/`recover` Vault's)
 * @throws Error naming the policy and the rule for anything the store would refuse
 */
export function decodePolicy(
  name: string,
  items: readonly PolicyItem[],
  syntax: PolicySyntax,
  now: Date = new Date(),
  kind: StoreKind = 'openbao',
): AclPolicy {
  const fail = (message: string): never => {
    throw new Error(`policy "${name}": ${message}`);
  };
  const rules: ParsedPolicyRule[] = [];
  for (const item of items) {
    const [key] = item.keys;
    if (key === undefined) fail('does not contain a root object');
    if (!POLICY_KEYS.has(key)) fail(`invalid key "${key}" at the top level`);
    if (key !== 'path') continue;
    // A path item without a label is the rule for the literal path "path", as in the store.
    const written = item.keys[1] ?? 'path';
    if (!isPolicyObject(item.value)) fail(`path "${written}": the rule must be a block`);
    const rule = decodeRule(written, item.value as Record<string, PolicyValue>, now, kind, (m) => fail(`path "${written}": ${m}`));
    if (rule) rules.push(rule);
  }
  return { name: name.toLowerCase(), rules, syntax };
}

/** One block to a rule, or undefined when the store would drop it (expired). */
function decodeRule(
  written: string,
  block: Record<string, PolicyValue>,
  now: Date,
  kind: StoreKind,
  fail: (m: string) => never,
): ParsedPolicyRule | undefined {
  for (const key of Object.keys(block)) {
    if (!RULE_KEYS.has(key)) fail(`invalid key "${key}"`);
  }
  if (block.expiration !== undefined) {
    const at = typeof block.expiration === 'string' ? new Date(block.expiration) : undefined;
    if (!at || Number.isNaN(at.getTime())) fail(`invalid expiration time ${JSON.stringify(block.expiration)}`);
    if (now.getTime() > at!.getTime()) return undefined;
  }
  let path: RulePath;
  try {
    path = RulePath.parse(written);
  } catch (e) {
    return fail((e as Error).message.replace(/^path "[^"]*": /, ''));
  }
  const words = capabilityWords(block, fail);
  return {
    path,
    mask: maskOf(words, kind, fail),
    constraints: Object.keys(block)
      .filter((k) => k !== 'capabilities' && k !== 'policy' && k !== 'comment')
      .sort(),
  };
}

/** The capability words of a block: `capabilities`, then the legacy `policy` word's expansion. */
function capabilityWords(block: Record<string, PolicyValue>, fail: (m: string) => never): string[] {
  const words: string[] = [];
  const caps = block.capabilities;
  if (caps !== undefined) {
    if (!Array.isArray(caps) || caps.some((c) => typeof c !== 'string')) fail('capabilities must be a list of strings');
    words.push(...(caps as string[]));
  }
  if (block.policy !== undefined && block.policy !== '') {
    const legacy = typeof block.policy === 'string' ? LEGACY_POLICY[block.policy] : undefined;
    if (!legacy) fail(`invalid policy ${JSON.stringify(block.policy)}`);
    // The store replaces the list for "deny" and appends for the others.
    if (block.policy === 'deny') return ['deny'];
    words.push(...legacy!);
  }
  return words;
}

/**
 * The mask of capability words, as the store computes it: words are read in order and `deny`
 * stops the reading, so an unknown word after `deny` is never looked at (the store accepts
 * `["deny", "bogus"]` and refuses `["bogus", "deny"]`).
 */
function maskOf(words: readonly string[], kind: StoreKind, fail: (m: string) => never): number {
  let mask = 0;
  for (const word of words) {
    if (word === 'deny') return CAPABILITY_BITS.deny;
    if (!isStoreCapability(word, kind)) fail(`invalid capability "${word}"`);
    mask |= CAPABILITY_BITS[word as StoreCapability];
  }
  return mask;
}

