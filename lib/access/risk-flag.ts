import { AclRule } from '../acl/acl';
import { covers } from '../acl/rule-coverage';
import { StoreCapability, capabilityNames, isDenyMask, maskHas } from '../acl/store-capability';
import { IdentityChange } from './identity-change';
import { AccessModel, IdentityAccess } from './access-model';
import { formatBinding } from './binding-format';
import { BindingValue } from './identity';
import { JWT_METHOD_FIELDS } from './store-configuration';
import { findSharedReads } from './shared-read';
import { compareStrings } from '../private/compare-strings';

/** Kinds of risk a change can bring, in the order a review reads them. */
export type RiskKind =
  | 'people-gained'
  | 'trust-changed'
  | 'default-policy-changed'
  | 'wildcard-broadened'
  | 'shared-read'
  | 'sudo'
  | 'deny'
  | 'ttl-raised'
  | 'binding-loosened';

/** Headline of each kind. */
export const RISK_LABEL: Readonly<Record<RiskKind, string>> = {
  'people-gained': 'people gain a path',
  'trust-changed': 'key source or issuer changed',
  'default-policy-changed': 'default policy changed',
  'wildcard-broadened': 'wildcard broadened',
  'shared-read': 'path readable by two applications',
  sudo: 'sudo changed',
  deny: 'deny changed',
  'ttl-raised': 'TTL raised',
  'binding-loosened': 'binding loosened',
};

const KIND_ORDER = Object.keys(RISK_LABEL) as RiskKind[];

/** One risk a change introduces, on one identity. */
export interface RiskFlag {
  readonly kind: RiskKind;
  /** The identity concerned. */
  readonly identity: string;
  /** What happened, with paths and values in backticks. */
  readonly message: string;
}

/** TTL fields where 0 means "unbounded" (the store's default or no expiry), so 0 is the largest value. */
const ZERO_IS_UNBOUNDED = new Set(['token_ttl', 'token_max_ttl', 'token_explicit_max_ttl', 'secret_id_ttl']);
/** Fields where 0 means "unlimited uses". */
const USE_LIMITS = new Set(['token_num_uses', 'secret_id_num_uses']);
/** List bindings where a new value admits more callers. */
const ALLOW_LISTS = new Set(['bound_audiences', 'token_bound_cidrs', 'secret_id_bound_cidrs', 'allowed_redirect_uris']);

/**
 * The risk flags of a change from `base` to `head`:
 * - a wildcard rule of an existing identity granting more (new, or covering narrower rules);
 * - a path newly readable by two applications (AppRole identities);
 * - `sudo` or `deny` gained or lost (and `sudo` on a new identity);
 * - a TTL raised (0, "store default" or "no expiry", counts as the largest value);
 * - a binding loosened: audiences or CIDRs widened or dropped, bound claims or subject dropped or
 *   widened, claims compared as globs, Secret IDs no longer required, use limits raised;
 * - the JWT method's issuer or key source changed (whoever holds the new keys can log in as every
 *   role of the mount);
 * - any change to the `default` policy, which every token without `token_no_default_policy` carries;
 * - people (an `oidc` identity, new or changed) gaining a capability on a path they did not have.
 * @returns flags sorted by kind, identity, message
 */
export function riskFlags(base: AccessModel, head: AccessModel, changed: readonly IdentityChange[]): RiskFlag[] {
  const flags: RiskFlag[] = [];
  for (const change of changed) {
    const before = base.get(change.name)!;
    const after = head.get(change.name)!;
    flags.push(...ruleFlags(base, before, head, after));
    for (const b of change.bindings) flags.push(...bindingFlags(change.name, b.field, b.before, b.after));
  }
  for (const access of head.identities) {
    if (base.get(access.identity.name)) continue;
    for (const rule of access.acl.rules) {
      if (maskHas(rule.mask, 'sudo')) {
        flags.push({ kind: 'sudo', identity: access.identity.name, message: `new identity has \`sudo\` on \`${rule.path.display}\`` });
      }
    }
  }
  flags.push(...peopleFlags(base, head));
  flags.push(...sharedReadFlags(base, head));
  if (base.defaultPolicyText !== head.defaultPolicyText) {
    const how = head.builtinDefault ? 'back to the built-in text' : base.builtinDefault ? 'rewritten by the configuration' : 'changed';
    flags.push({
      kind: 'default-policy-changed',
      identity: 'default',
      message: `the \`default\` policy is ${how}: it is on every token of the store, not only on the identities listed here`,
    });
  }
  return flags.sort(
    (a, b) =>
      KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || compareStrings(a.identity, b.identity) || compareStrings(a.message, b.message),
  );
}

function ruleFlags(base: AccessModel, before: IdentityAccess, head: AccessModel, after: IdentityAccess): RiskFlag[] {
  const identity = after.identity.name;
  const own = (model: AccessModel, access: IdentityAccess) => access.acl.rules.filter((r) => !model.isBuiltinDefaultOnly(r));
  const beforeRules = own(base, before);
  const beforeBySlot = new Map(beforeRules.map((r) => [r.path.slot, r]));
  const afterRules = own(head, after);
  const flags: RiskFlag[] = [];
  for (const rule of afterRules) {
    const old = beforeBySlot.get(rule.path.slot);
    const gained = gainedCapabilities(old, rule);
    if (rule.path.isWildcard && gained.length > 0) flags.push(wildcardFlag(identity, rule, old, gained, beforeRules));
  }
  const afterBySlot = new Map(afterRules.map((r) => [r.path.slot, r]));
  for (const slot of new Set([...beforeBySlot.keys(), ...afterBySlot.keys()])) {
    const b = beforeBySlot.get(slot);
    const a = afterBySlot.get(slot);
    const path = (a ?? b)!.path.display;
    const had = (r: AclRule | undefined, c: StoreCapability) => r !== undefined && maskHas(r.mask, c);
    for (const capability of ['sudo', 'deny'] as const) {
      if (had(a, capability) && !had(b, capability)) {
        flags.push({ kind: capability, identity, message: `gains \`${capability}\` on \`${path}\`` });
      } else if (had(b, capability) && !had(a, capability)) {
        flags.push({ kind: capability, identity, message: `loses \`${capability}\` on \`${path}\`` });
      }
    }
  }
  return flags;
}

/** Capabilities other than `deny` that `after` grants and `before` did not. */
function gainedCapabilities(before: AclRule | undefined, after: AclRule): StoreCapability[] {
  if (isDenyMask(after.mask)) return [];
  const had = before && !isDenyMask(before.mask) ? capabilityNames(before.mask) : [];
  return capabilityNames(after.mask).filter((c) => !had.includes(c));
}

function wildcardFlag(
  identity: string,
  rule: AclRule,
  old: AclRule | undefined,
  gained: readonly StoreCapability[],
  beforeRules: readonly AclRule[],
): RiskFlag {
  const path = rule.path.display;
  const caps = gained.join(', ');
  const covered = beforeRules.filter(
    (b) =>
      b.path.slot !== rule.path.slot &&
      !isDenyMask(b.mask) &&
      (b.mask & rule.mask) !== 0 &&
      covers(rule.path, b.path),
  );
  let message: string;
  if (covered.length > 0) {
    const list = covered.map((b) => `\`${b.path.display}\``).join(', ');
    message = `\`${path}\` now grants ${caps}, covering ${list} granted before`;
  } else if (!old) {
    message = `new wildcard \`${path}\` grants ${caps}`;
  } else {
    message = `wildcard \`${path}\` gains ${caps}`;
  }
  return { kind: 'wildcard-broadened', identity, message };
}

function bindingFlags(identity: string, field: string, before: BindingValue | undefined, after: BindingValue | undefined): RiskFlag[] {
  const change = `${field} ${formatBinding(field, before)} → ${formatBinding(field, after)}`;
  const flag = (kind: RiskKind): RiskFlag[] => [{ kind, identity, message: change.replace(/^(\S+)/, '`$1`') }];
  if (JWT_METHOD_FIELDS.includes(field)) return flag('trust-changed');
  if (ZERO_IS_UNBOUNDED.has(field) || field === 'token_period') {
    const scale = (v: BindingValue | undefined) =>
      typeof v !== 'number' ? 0 : v === 0 && ZERO_IS_UNBOUNDED.has(field) ? Number.POSITIVE_INFINITY : v;
    return scale(after) > scale(before) ? flag('ttl-raised') : [];
  }
  if (USE_LIMITS.has(field)) {
    const scale = (v: BindingValue | undefined) => (typeof v !== 'number' || v === 0 ? Number.POSITIVE_INFINITY : v);
    return scale(after) > scale(before) ? flag('binding-loosened') : [];
  }
  if (ALLOW_LISTS.has(field)) {
    const b = asList(before);
    const a = asList(after);
    return a.length === 0 || a.some((v) => !b.includes(v)) ? flag('binding-loosened') : [];
  }
  switch (field) {
    case 'bound_claims': {
      const b = (before ?? {}) as Record<string, readonly string[]>;
      const a = (after ?? {}) as Record<string, readonly string[]>;
      const dropped = Object.keys(b).some((k) => !(k in a));
      const widened = Object.entries(a).some(([k, values]) => k in b && values.some((v) => !b[k].includes(v)));
      return dropped || widened ? flag('binding-loosened') : [];
    }
    case 'bound_claims_type':
      return after === 'glob' ? flag('binding-loosened') : [];
    case 'bound_subject':
      return before !== undefined ? flag('binding-loosened') : [];
    case 'bound_issuer':
      return flag('trust-changed');
    case 'bind_secret_id':
      return after === false ? flag('binding-loosened') : [];
    default:
      return [];
  }
}

/**
 * Paths people (OIDC identities) can use after the change with a capability they did not have
 * before: every non-deny rule of a new people identity, every capability gained by an existing one
 * (the built-in `default` policy left out: every token has it).
 */
function peopleFlags(base: AccessModel, head: AccessModel): RiskFlag[] {
  const flags: RiskFlag[] = [];
  for (const after of head.identities) {
    if (after.identity.method !== 'oidc' || after.loginRefused) continue;
    const before = base.get(after.identity.name);
    const old = new Map((before && !before.loginRefused ? before.acl.rules.filter((r) => !base.isBuiltinDefaultOnly(r)) : []).map((r) => [r.path.slot, r]));
    for (const rule of after.acl.rules.filter((r) => !head.isBuiltinDefaultOnly(r))) {
      const gained = gainedCapabilities(old.get(rule.path.slot), rule);
      if (gained.length === 0) continue;
      const who = before ? 'gain' : 'new people role gets';
      flags.push({
        kind: 'people-gained',
        identity: after.identity.name,
        message: `${who} ${gained.map((c) => `\`${c}\``).join(', ')} on \`${rule.path.display}\`: a person can now use a path they could not`,
      });
    }
  }
  return flags;
}

function sharedReadFlags(base: AccessModel, head: AccessModel): RiskFlag[] {
  const before = new Set(findSharedReads(base).map((s) => `${s.reader}\u0000${s.owner}`));
  const byReader = new Map<string, string[]>();
  for (const shared of findSharedReads(head)) {
    if (before.has(`${shared.reader}\u0000${shared.owner}`)) continue;
    const list = byReader.get(shared.reader) ?? [];
    list.push(`\`${shared.owner}\`'s \`${shared.ownerRule}\``);
    byReader.set(shared.reader, list);
  }
  return [...byReader.entries()].map(([reader, owners]) => {
    const shown = owners.slice(0, 5).join(', ');
    const more = owners.length > 5 ? ` and ${owners.length - 5} more applications' paths` : '';
    return { kind: 'shared-read', identity: reader, message: `can read ${shown}${more}` };
  });
}

function asList(value: BindingValue | undefined): readonly string[] {
  return Array.isArray(value) ? value : [];
}
