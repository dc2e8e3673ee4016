import { AclPolicy, ParsedPolicyRule, PolicySyntax } from './acl-policy';
import { PolicyItem, PolicyValue, isPolicyObject } from './policy-item';
import { storePolicyName } from '../model/store-policy-name';
import { RulePath } from './rule-path';
import { CAPABILITY_BITS, StoreCapability, isStoreCapability } from './store-capability';
import { parseDurationSeconds, parseExpiration } from './store-value';
import { StoreKind } from '../model/store-target';

/** Top-level keys the store accepts in a policy. */
const POLICY_KEYS = new Set(['name', 'path']);

/** Keys both stores accept inside a `path` block. */
const COMMON_RULE_KEYS = [
  'comment',
  'policy',
  'capabilities',
  'allowed_parameters',
  'denied_parameters',
  'required_parameters',
  'min_wrapping_ttl',
  'max_wrapping_ttl',
  'mfa_methods',
];

/**
 * Keys each store accepts inside a `path` block (`parsePaths` of `vault/policy.go`: OpenBao 2.4,
 * HashiCorp Vault 1.21); any other key makes the store refuse the policy (`invalid key`). OpenBao
 * has `pagination_limit`, `expiration` and `list_scan_response_keys_filter_path`; Vault has
 * `control_group` and `subscribe_event_types`. The differential store test writes each of them to
 * both stores.
 */
export const RULE_KEYS_BY_STORE: Readonly<Record<StoreKind, ReadonlySet<string>>> = {
  openbao: new Set([...COMMON_RULE_KEYS, 'pagination_limit', 'expiration', 'list_scan_response_keys_filter_path']),
  vault: new Set([...COMMON_RULE_KEYS, 'control_group', 'subscribe_event_types']),
};

/**
 * Keys that only narrow the requests a rule allows (parameters, wrapping TTLs, MFA, approvals,
 * page size, listed keys): the identity can use the capability, but only within them. Reported as
 * "constrained"; they never add a capability.
 */
export const CONSTRAINT_KEYS: ReadonlySet<string> = new Set([
  'allowed_parameters',
  'denied_parameters',
  'required_parameters',
  'min_wrapping_ttl',
  'max_wrapping_ttl',
  'mfa_methods',
  'control_group',
  'pagination_limit',
  'list_scan_response_keys_filter_path',
]);

/** Keys whose whole effect the evaluator reproduces (`expiration` drops an expired rule). */
const MODELLED_KEYS = new Set(['comment', 'policy', 'capabilities', 'expiration', ...CONSTRAINT_KEYS]);

/** Capabilities of the legacy `policy = "..."` form (the store's backwards compatibility table). */
const LEGACY_POLICY: Readonly<Record<string, readonly StoreCapability[]>> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
};

/** How a policy text is decoded. */
export interface DecodeOptions {
  /** The time against which `expiration` is checked: the store drops expired rules. @default now */
  readonly now?: Date;
  /** The store whose keys and capability words apply. @default 'openbao' */
  readonly kind?: StoreKind;
  /**
   * True for a text the store already holds (read from a live store): the store accepted it, so
   * whatever this decoder would refuse, or does not model, is a gap of the model, not an error.
   * Such a rule is kept with what could be read of it, and the gap is listed in
   * {@link AclPolicy.unevaluated} instead of failing the whole analysis. @default false
   */
  readonly storeAccepted?: boolean;
}

/**
 * Turns a policy's top-level items (from the HCL parser, the HCL 1 JSON emulation or the library
 * reader) into rules, applying the store's validation and normalisation (`vault/policy.go`,
 * `parseACLPolicyWithTemplating` and `parsePaths`).
 *
 * Keys the target store accepts but the evaluator does not model (Vault's `subscribe_event_types`)
 * never fail: the rule counts with its capabilities, and the key is listed in
 * {@link AclPolicy.unevaluated} so that reports say the policy is not fully evaluated.
 *
 * @param now the time against which `expiration` is checked: the store drops expired rules
 * @param kind the store whose keys and capability words apply (`scan` is OpenBao's, `subscribe`/`recover` Vault's)
 * @throws Error naming the policy and the rule for anything the store would refuse (unless `storeAccepted`)
 */
export function decodePolicy(
  name: string,
  items: readonly PolicyItem[],
  syntax: PolicySyntax,
  now: Date = new Date(),
  kind: StoreKind = 'openbao',
  storeAccepted = false,
): AclPolicy {
  const unevaluated: string[] = [];
  const refuse = (message: string): void => {
    if (!storeAccepted) throw new Error(`policy "${name}": ${message}`);
    unevaluated.push(message);
  };
  const rules: ParsedPolicyRule[] = [];
  for (const item of items) {
    const [key] = item.keys;
    if (key === undefined) {
      refuse('does not contain a root object');
      continue;
    }
    if (!POLICY_KEYS.has(key)) {
      refuse(`invalid key "${key}" at the top level`);
      continue;
    }
    if (key === 'name') {
      // The store decodes `name` into a string: a quoted string or an integer literal, not a block.
      if (item.keys.length > 1 || !isStringLike(item.value)) refuse(`"name" must be a string, not ${describe(item.value)}`);
      continue;
    }
    // A path item without a label is the rule for the literal path "path", as in the store.
    const written = item.keys[1] ?? 'path';
    if (!isPolicyObject(item.value)) {
      refuse(`path "${written}": the rule must be a block`);
      continue;
    }
    const rule = decodeRule(written, item.value, now, kind, storeAccepted, (m) => refuse(`path "${written}": ${m}`), unevaluated);
    if (rule) rules.push(rule);
  }
  return { name: storePolicyName(name), rules, syntax, ...(unevaluated.length > 0 ? { unevaluated } : {}) };
}

/** True for what the store's HCL 1 decoder turns into a string: a string or an integer. */
function isStringLike(value: PolicyValue): boolean {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}

function describe(value: PolicyValue): string {
  if (Array.isArray(value)) return value.length > 0 && value.every(isPolicyObject) ? 'a block' : 'a list';
  if (isPolicyObject(value)) return 'a block';
  return JSON.stringify(value);
}

/** The body of a nested block (`control_group { ... }` or `control_group = { ... }`), if it is one. */
function blockBody(value: PolicyValue | undefined): Record<string, PolicyValue> | undefined {
  if (isPolicyObject(value)) return value;
  if (Array.isArray(value) && value.length === 1 && isPolicyObject(value[0])) return value[0];
  return undefined;
}

const isStringList = (value: PolicyValue | undefined): boolean =>
  Array.isArray(value) && value.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)));

/**
 * One block to a rule, or undefined when the store would drop it (expired) or the path cannot be
 * read at all. `refuse` throws, or records the problem when the store is known to accept the text.
 */
function decodeRule(
  written: string,
  block: Record<string, PolicyValue>,
  now: Date,
  kind: StoreKind,
  storeAccepted: boolean,
  refuse: (m: string) => void,
  unevaluated: string[],
): ParsedPolicyRule | undefined {
  const accepted = RULE_KEYS_BY_STORE[kind];
  const unmodelled: string[] = [];
  for (const key of Object.keys(block)) {
    if (!accepted.has(key)) {
      // A key the store holds in a policy it accepted, but this model does not know of.
      if (storeAccepted) unmodelled.push(key);
      else refuse(`invalid key "${key}"`);
    } else if (!MODELLED_KEYS.has(key)) {
      unmodelled.push(key);
    }
  }
  for (const key of unmodelled) unevaluated.push(`path "${written}": key "${key}" is not evaluated`);
  // Types the store's decoder insists on, before anything else.
  for (const key of ['required_parameters', 'mfa_methods', 'subscribe_event_types'] as const) {
    if (block[key] !== undefined && accepted.has(key) && !isStringList(block[key])) refuse(`${key} must be a list of strings`);
  }
  for (const key of ['allowed_parameters', 'denied_parameters'] as const) {
    if (block[key] !== undefined && !isPolicyObject(block[key])) refuse(`${key} must be a map of parameter names to lists of values`);
  }
  if (block.pagination_limit !== undefined && accepted.has('pagination_limit') && !isInteger(block.pagination_limit)) {
    refuse(`pagination_limit must be an integer, not ${describe(block.pagination_limit)}`);
  }
  if (block.list_scan_response_keys_filter_path !== undefined && accepted.has('list_scan_response_keys_filter_path') && !isStringLike(block.list_scan_response_keys_filter_path)) {
    refuse('list_scan_response_keys_filter_path must be a string');
  }
  if (block.expiration !== undefined && accepted.has('expiration')) {
    const at = isStringLike(block.expiration) ? parseExpiration(String(block.expiration)) : undefined;
    if (at === undefined) refuse(`invalid expiration time ${JSON.stringify(block.expiration)}`);
    // An expired rule is dropped by the store; one whose time could not be read is kept (upper bound).
    else if (at !== null && now.getTime() > at.getTime()) return undefined;
  }
  let path: RulePath;
  try {
    path = RulePath.parse(written);
  } catch (e) {
    refuse((e as Error).message.replace(/^path "[^"]*": /, ''));
    return undefined;
  }
  const words = capabilityWords(block, refuse);
  const mask = maskOf(words, kind, refuse);
  // A `deny` rule ends the store's reading of the block: the checks below never run for it.
  if ((mask & CAPABILITY_BITS.deny) === 0) checkNarrowingKeys(block, words, mask, kind, refuse);
  return {
    path,
    mask,
    constraints: (mask & CAPABILITY_BITS.deny) !== 0 ? [] : Object.keys(block).filter((k) => CONSTRAINT_KEYS.has(k)).sort(),
    ...(unmodelled.length > 0 ? { unmodelled: unmodelled.sort() } : {}),
  };
}

function isInteger(value: PolicyValue): boolean {
  return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^[+-]?\d+$/.test(value));
}

/**
 * The store's checks of the narrowing keys of a non-deny rule: wrapping TTLs that parse and a
 * minimum not above the maximum; a listing filter only with `list`; Vault's control group with
 * its factors' approvals, groups and controlled capabilities.
 */
function checkNarrowingKeys(
  block: Record<string, PolicyValue>,
  words: readonly string[],
  mask: number,
  kind: StoreKind,
  refuse: (m: string) => void,
): void {
  const ttl = (key: 'min_wrapping_ttl' | 'max_wrapping_ttl'): number => {
    if (block[key] === undefined) return 0;
    const seconds = parseDurationSeconds(block[key]);
    if (seconds === undefined) {
      refuse(`error parsing ${key}: ${JSON.stringify(block[key])} is not a duration`);
      return 0;
    }
    return seconds;
  };
  const min = ttl('min_wrapping_ttl');
  const max = ttl('max_wrapping_ttl');
  if (min !== 0 && max !== 0 && max < min) refuse(`max_wrapping_ttl cannot be less than min_wrapping_ttl (${max} s < ${min} s)`);
  if (kind === 'openbao' && block.list_scan_response_keys_filter_path !== undefined && block.list_scan_response_keys_filter_path !== '') {
    if ((mask & CAPABILITY_BITS.list) === 0) refuse('list_scan_response_keys_filter_path needs to be used on a path with the list capability');
  }
  if (kind === 'vault' && block.control_group !== undefined) checkControlGroup(block.control_group, words, refuse);
}

/** Vault's checks of a `control_group` block (`parsePaths`). */
function checkControlGroup(value: PolicyValue, words: readonly string[], refuse: (m: string) => void): void {
  const group = blockBody(value);
  if (!group) {
    refuse('control_group must be a block');
    return;
  }
  if (group.ttl !== undefined && parseDurationSeconds(group.ttl) === undefined) refuse('error parsing control group max ttl');
  const factors = group.factor === undefined ? {} : isPolicyObject(group.factor) ? group.factor : undefined;
  if (!factors) {
    refuse('control_group: each factor must be a labelled block (factor "name" { ... })');
    return;
  }
  if (Object.keys(factors).length === 0) refuse('no control group factors provided');
  for (const raw of Object.values(factors)) {
    const factor = blockBody(raw);
    const identity = blockBody(factor?.identity);
    if (!factor || !identity) {
      refuse('no control_group factor provided');
      continue;
    }
    const approvals = typeof identity.approvals === 'number' ? identity.approvals : Number(identity.approvals ?? 0);
    const groups = [identity.group_ids, identity.group_names].filter((g) => Array.isArray(g) && g.length > 0);
    if (!(approvals > 0) || groups.length === 0) refuse('must provide more than one identity group and approvals > 0');
    const controlled = factor.controlled_capabilities;
    if (Array.isArray(controlled) && controlled.some((c) => !words.includes(String(c)))) {
      refuse("control group factor capabilities must be a subset of the policy's capabilities");
    }
  }
}

/** The capability words of a block: `capabilities`, then the legacy `policy` word's expansion. */
function capabilityWords(block: Record<string, PolicyValue>, refuse: (m: string) => void): string[] {
  const words: string[] = [];
  const caps = block.capabilities;
  if (caps !== undefined) {
    if (!Array.isArray(caps) || caps.some((c) => typeof c !== 'string')) refuse('capabilities must be a list of strings');
    else words.push(...(caps as string[]));
  }
  if (block.policy !== undefined && block.policy !== '') {
    const legacy = typeof block.policy === 'string' ? LEGACY_POLICY[block.policy] : undefined;
    if (!legacy) {
      refuse(`invalid policy ${JSON.stringify(block.policy)}`);
      return words;
    }
    // The store replaces the list for "deny" and appends for the others.
    if (block.policy === 'deny') return ['deny'];
    words.push(...legacy);
  }
  return words;
}

/**
 * The mask of capability words, as the store computes it: words are read in order and `deny`
 * stops the reading, so an unknown word after `deny` is never looked at (the store accepts
 * `["deny", "bogus"]` and refuses `["bogus", "deny"]`).
 */
function maskOf(words: readonly string[], kind: StoreKind, refuse: (m: string) => void): number {
  let mask = 0;
  for (const word of words) {
    if (word === 'deny') return CAPABILITY_BITS.deny;
    if (!isStoreCapability(word, kind)) refuse(`invalid capability "${word}"`);
    else mask |= CAPABILITY_BITS[word as StoreCapability];
  }
  return mask;
}
