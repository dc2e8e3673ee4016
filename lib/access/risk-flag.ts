import { AclRule, outranksRulePath } from '../acl/acl';
import { covers } from '../acl/rule-coverage';
import { StoreCapability, capabilityNames, isDenyMask, maskHas } from '../acl/store-capability';
import { IdentityChange } from './identity-change';
import { AccessModel, IdentityAccess } from './access-model';
import { formatBinding } from './binding-format';
import { BindingValue } from './identity';
import { JWT_METHOD_FIELDS } from './store-configuration';
import { SharedRead, findSharedReads } from './shared-read';
import { compareStrings } from '../private/compare-strings';
import { MACHINE_PATH_KIND_LABEL } from '../model/machine-path-kind';
import { MachinePathReached } from './machine-path-reason';
import { AuthMount } from './auth-mount';
import { labelOf, namespacedLabel } from './namespaced-name';

/** Kinds of risk a change can bring, in the order a review reads them. */
export type RiskKind =
  | 'invariant-broken'
  | 'plan-unknown'
  | 'plan-unreviewed'
  | 'plan-overrides'
  | 'people-gained'
  | 'used-access-removed'
  | 'trust-changed'
  | 'login-method-added'
  | 'default-policy-changed'
  | 'wildcard-broadened'
  | 'shared-read'
  | 'sudo'
  | 'deny'
  | 'ttl-raised'
  | 'binding-loosened';

/** Headline of each kind. */
export const RISK_LABEL: Readonly<Record<RiskKind, string>> = {
  'invariant-broken': 'access invariant broken',
  'plan-unknown': 'value unknown until apply',
  'plan-unreviewed': 'change the access review cannot read',
  'plan-overrides': "written over another stack's declaration",
  'people-gained': 'people gain a path',
  'used-access-removed': 'access in use removed',
  'trust-changed': 'login method changed',
  'login-method-added': 'login method added',
  'default-policy-changed': 'default policy changed',
  'wildcard-broadened': 'wildcard broadened',
  'shared-read': 'path readable by two applications',
  sudo: 'sudo changed',
  deny: 'deny changed',
  'ttl-raised': 'TTL raised',
  'binding-loosened': 'binding loosened',
};

const KIND_ORDER = Object.keys(RISK_LABEL) as RiskKind[];

/** One risk a change introduces: on one identity, on several sharing one changed setting, or on an auth method. */
export interface RiskFlag {
  readonly kind: RiskKind;
  /**
   * The identity concerned: the first of {@link identities}; for a flag on an auth method, its
   * path with a final `/` (`jwt/`); `default` for the default policy.
   */
  readonly identity: string;
  /**
   * Every identity concerned, sorted: the one of a rule flag, every identity a changed setting
   * (one field, one old → new value) affects, or the roles of an auth method (empty when it has none).
   */
  readonly identities: readonly string[];
  /** For a login method flag: the auth method's mount path (`jwt`, `oidc`). */
  readonly authMethod?: string;
  /**
   * For a login method or `default` policy flag: the store namespace of that auth method or policy;
   * absent for the root namespace. (Identities of a namespace are named as `labelOf` gives them.)
   */
  readonly namespace?: string;
  /** What happened, with paths and values in backticks. */
  readonly message: string;
  /** For a "people gain a path" flag: the CI and application paths the rule reaches, as the configuration records them. */
  readonly machinePaths?: readonly MachinePathReached[];
  /** For a "people gain a path" flag: the reason the configuration states for it (`machinePathReason`). */
  readonly reason?: string;
}

/** A flag on one identity, before flags of one changed setting are grouped. */
type OneFlag = Omit<RiskFlag, 'identities'>;

/** A binding change of one identity that is a risk, before grouping. */
interface SettingRisk {
  readonly kind: RiskKind;
  readonly identity: string;
  readonly field: string;
  /** `old → new`, as the reports format the field. */
  readonly change: string;
}

/** TTL fields where 0 means "unbounded" (the store's default or no expiry), so 0 is the largest value. */
const ZERO_IS_UNBOUNDED = new Set(['token_ttl', 'token_max_ttl', 'token_explicit_max_ttl', 'secret_id_ttl']);
/** Fields where 0 means "unlimited uses". */
const USE_LIMITS = new Set(['token_num_uses', 'secret_id_num_uses']);
/** List bindings where a new value admits more callers. */
const ALLOW_LISTS = new Set(['bound_audiences', 'token_bound_cidrs', 'secret_id_bound_cidrs', 'allowed_redirect_uris']);

/**
 * The risk flags of a change from `base` to `head`, one per risk: a changed setting (a binding
 * field going from one value to another) is one flag listing every identity it affects, and fields
 * changed alike on the same identities (a job timeout raising three TTLs of three roles) are one:
 * - a wildcard rule of an existing identity granting more (new, or covering narrower rules);
 * - a path newly readable by two applications (AppRole identities);
 * - `sudo` or `deny` gained or lost (and `sudo` on a new identity);
 * - a TTL raised (0, "store default" or "no expiry", counts as the largest value);
 * - a binding loosened: audiences or CIDRs widened or dropped, bound claims or subject dropped or
 *   widened, claims compared as globs, Secret IDs no longer required, use limits raised;
 * - a login method added (an auth mount new in head, or of another type), or a JWT/OIDC method's
 *   issuer, key source or client id changed (whoever holds the new keys can log in as every role
 *   of the mount): one flag per auth method and changed field, listing its roles;
 * - any change to the `default` policy, which every token without `token_no_default_policy` carries;
 * - people (an `oidc` identity, new or changed) gaining a capability on a path they did not have,
 *   with the kind of machine path it is and the stated reason when the configuration records one.
 * @returns flags sorted by kind, identity, message
 */
export function riskFlags(base: AccessModel, head: AccessModel, changed: readonly IdentityChange[]): RiskFlag[] {
  const flags: OneFlag[] = [];
  const settings: SettingRisk[] = [];
  for (const change of changed) {
    const label = labelOf(change);
    const before = base.get(label)!;
    const after = head.get(label)!;
    flags.push(...ruleFlags(base, before, head, after));
    // The method's fields are the auth method's: flagged once per method (loginMethodFlags).
    for (const b of change.bindings) if (!JWT_METHOD_FIELDS.includes(b.field)) settings.push(...bindingFlags(label, b.field, b.before, b.after));
  }
  for (const access of head.identities) {
    if (base.get(labelOf(access.identity))) continue;
    for (const rule of access.acl.rules) {
      if (maskHas(rule.mask, 'sudo')) {
        flags.push({ kind: 'sudo', identity: labelOf(access.identity), message: `new identity has \`sudo\` on \`${rule.path.display}\`` });
      }
    }
  }
  flags.push(...peopleFlags(base, head));
  flags.push(...sharedReadFlags(base, head));
  const all: RiskFlag[] = flags.map((f) => ({ ...f, identities: [f.identity] }));
  all.push(...groupSettings(settings), ...loginMethodFlags(base, head));
  // Each namespace has its own `default`, on every token of that namespace.
  for (const namespace of [...new Set([...base.namespaces, ...head.namespaces])].sort(compareStrings)) {
    if (base.defaultPolicyTextIn(namespace) === head.defaultPolicyTextIn(namespace)) continue;
    const how = head.builtinDefaultIn(namespace) ? 'back to the built-in text' : base.builtinDefaultIn(namespace) ? 'rewritten by the configuration' : 'changed';
    const where = namespace === '' ? 'the store' : `the namespace \`${namespace}\``;
    all.push({
      kind: 'default-policy-changed',
      identity: namespacedLabel('default', namespace),
      identities: [],
      ...(namespace === '' ? {} : { namespace }),
      message: `the \`default\` policy${namespace === '' ? '' : ` of the namespace \`${namespace}\``} is ${how}: it is on every token of ${where}, not only on the identities listed here`,
    });
  }
  return sortRiskFlags(all);
}

/** Flags in the order a review reads them: by kind ({@link RISK_LABEL}'s order), identity, message. */
export function sortRiskFlags(flags: readonly RiskFlag[]): RiskFlag[] {
  return [...flags].sort(
    (a, b) =>
      KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || compareStrings(a.identity, b.identity) || compareStrings(a.message, b.message),
  );
}

/**
 * One flag per changed setting: the same field going from the same old to the same new value is one
 * flag listing every identity; then fields changed alike on the same identities are one flag.
 */
function groupSettings(settings: readonly SettingRisk[]): RiskFlag[] {
  const byChange = new Map<string, { kind: RiskKind; field: string; change: string; identities: string[] }>();
  for (const s of settings) {
    const key = `${s.kind}\u0000${s.field}\u0000${s.change}`;
    const entry = byChange.get(key) ?? { kind: s.kind, field: s.field, change: s.change, identities: [] };
    entry.identities.push(s.identity);
    byChange.set(key, entry);
  }
  const byIdentities = new Map<string, { kind: RiskKind; change: string; identities: string[]; fields: string[] }>();
  for (const e of byChange.values()) {
    const identities = [...new Set(e.identities)].sort(compareStrings);
    const key = `${e.kind}\u0000${e.change}\u0000${identities.join('\u0000')}`;
    const entry = byIdentities.get(key) ?? { kind: e.kind, change: e.change, identities, fields: [] };
    entry.fields.push(e.field);
    byIdentities.set(key, entry);
  }
  return [...byIdentities.values()].map((e) => ({
    kind: e.kind,
    identity: e.identities[0],
    identities: e.identities,
    message: `${e.fields.sort(compareStrings).map((f) => `\`${f}\``).join(', ')} ${e.change}`,
  }));
}

/**
 * A login method added (a mount of head that base does not have, or has with another type), and
 * each trust setting of a JWT/OIDC method that changed (issuer, discovery URL, JWKS URL, static
 * keys, CA certificates, client id): whoever the method accepts logs in as each of its roles.
 */
function loginMethodFlags(base: AccessModel, head: AccessModel): RiskFlag[] {
  // A mount is one namespace's: `jwt/` of `ns1` is not the root's.
  const before = new Map(base.authMounts.map((m) => [namespacedLabel(m.path, m.namespace), m]));
  const flags: RiskFlag[] = [];
  for (const mount of head.authMounts) {
    const roles = head.identities.filter((i) => i.identity.mount === mount.path && i.identity.namespace === mount.namespace).map((i) => labelOf(i.identity));
    const who = roles.length > 0 ? `; whoever it accepts can log in as ${roles.map((r) => `\`${r}\``).join(', ')}` : '; no role uses it yet';
    const at = mount.namespace === undefined ? {} : { namespace: mount.namespace };
    const flag = (kind: RiskKind, message: string): RiskFlag => ({ kind, identity: namespacedLabel(`${mount.path}/`, mount.namespace), identities: roles, authMethod: mount.path, ...at, message: `${message}${who}` });
    const old = before.get(namespacedLabel(mount.path, mount.namespace));
    if (!old || old.type !== mount.type) {
      const settings = settingsText(mount);
      const what = old ? `the auth method at \`${mount.path}/\` is now \`${mount.type}\` (was \`${old.type}\`)` : `new \`${mount.type}\` auth method at \`${mount.path}/\``;
      flags.push(flag('login-method-added', `${what}${settings === '' ? '' : `: ${settings}`}`));
      continue;
    }
    for (const field of JWT_METHOD_FIELDS) {
      const b = old.settings[field];
      const a = mount.settings[field];
      if (JSON.stringify(b) === JSON.stringify(a)) continue;
      flags.push(flag('trust-changed', `\`${field}\` ${formatBinding(field, b)} → ${formatBinding(field, a)}`));
    }
  }
  return flags;
}

/** A mount's trust settings as text: `` `bound_issuer` https://..., `oidc_discovery_url` https://... ``. */
function settingsText(mount: AuthMount): string {
  return JWT_METHOD_FIELDS.filter((f) => mount.settings[f] !== undefined)
    .map((f) => `\`${f}\` ${formatBinding(f, mount.settings[f])}`)
    .join(', ');
}

function ruleFlags(base: AccessModel, before: IdentityAccess, head: AccessModel, after: IdentityAccess): OneFlag[] {
  const identity = labelOf(after.identity);
  const own = (model: AccessModel, access: IdentityAccess) => access.acl.rules.filter((r) => !model.isBuiltinDefaultOnly(r, access.identity.namespace));
  const beforeRules = own(base, before);
  const beforeBySlot = new Map(beforeRules.map((r) => [r.path.slot, r]));
  const afterRules = own(head, after);
  const flags: OneFlag[] = [];
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
): OneFlag {
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

function bindingFlags(identity: string, field: string, before: BindingValue | undefined, after: BindingValue | undefined): SettingRisk[] {
  const flag = (kind: RiskKind): SettingRisk[] => [{ kind, identity, field, change: `${formatBinding(field, before)} → ${formatBinding(field, after)}` }];
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
function peopleFlags(base: AccessModel, head: AccessModel): OneFlag[] {
  const flags: OneFlag[] = [];
  for (const after of head.identities) {
    if (after.identity.method !== 'oidc' || after.loginRefused) continue;
    const namespace = after.identity.namespace;
    const before = base.get(labelOf(after.identity));
    const old = new Map((before && !before.loginRefused ? before.acl.rules.filter((r) => !base.isBuiltinDefaultOnly(r, namespace)) : []).map((r) => [r.path.slot, r]));
    for (const rule of after.acl.rules.filter((r) => !head.isBuiltinDefaultOnly(r, namespace))) {
      const gained = gainedCapabilities(old.get(rule.path.slot), rule);
      if (gained.length === 0) continue;
      const who = before ? 'gain' : 'new people role gets';
      const stated = head.machinePathReasons.get(after.identity.name)?.get(rule.path.display);
      const what = stated && stated.reaches.length > 0 ? `; it is ${stated.reaches.map(machinePathText).join(', ')}` : '';
      const why = stated ? `; stated reason (machinePathReason): ${JSON.stringify(stated.reason)}` : '';
      flags.push({
        kind: 'people-gained',
        identity: labelOf(after.identity),
        message: `${who} ${gained.map((c) => `\`${c}\``).join(', ')} on \`${rule.path.display}\`: a person can now use a path they could not${what}${why}`,
        ...(stated ? { machinePaths: stated.reaches, reason: stated.reason } : {}),
      });
    }
  }
  return flags;
}

/** A machine path for a reviewer: `the CI registry credential of \`svc-x\` (\`secret/data/registry/svc-x\`, ci-access/svc-x)`. */
function machinePathText(m: MachinePathReached): string {
  const whose = m.kind === 'ci-secret' ? `the ${MACHINE_PATH_KIND_LABEL[m.kind]} \`${m.owner}\`` : `${m.kind === 'application-secret' ? 'an' : 'the'} ${MACHINE_PATH_KIND_LABEL[m.kind]} of \`${m.owner}\``;
  return `${whose} (\`${m.path}\`, ${m.declaredAt})`;
}

/**
 * New (reader, owner) pairs of {@link findSharedReads}. A path two applications can both read is
 * usually found from both sides; when both directions are new, the one that tells the change is
 * shown: the one whose reader changed its rules over one whose reader did not (that one gained
 * nothing), then the one whose reader reads into the owner's narrower rule (a wildcard reaching
 * into another application's own path) over its reverse (that application reading its own path);
 * both when neither tells more.
 */
function sharedReadFlags(base: AccessModel, head: AccessModel): OneFlag[] {
  const pair = (s: SharedRead) => `${s.reader}\u0000${s.owner}`;
  const before = new Set(findSharedReads(base).map(pair));
  const added = new Map(findSharedReads(head).filter((s) => !before.has(pair(s))).map((s) => [pair(s), s]));
  const rulesOf = (model: AccessModel, label: string) => {
    const identity = model.get(label);
    return identity === undefined ? undefined : identity.acl.rules.map((r) => `${r.path.slot}=${r.mask}`).sort(compareStrings).join('\u0000');
  };
  // Once per application: a wildcard over a thousand applications makes a thousand pairs with it.
  const changedRules = new Map<string, boolean>();
  const changed = (label: string) => {
    let answer = changedRules.get(label);
    if (answer === undefined) changedRules.set(label, (answer = rulesOf(base, label) !== rulesOf(head, label)));
    return answer;
  };
  const governing = (label: string, path: string) => head.get(label)?.acl.check('read', path).rule?.path;
  const tells = (s: SharedRead): readonly number[] => {
    const [readerRule, ownerRule] = [governing(s.reader, s.path), governing(s.owner, s.path)];
    return [changed(s.reader) ? 1 : 0, readerRule && ownerRule && outranksRulePath(ownerRule, readerRule) ? 1 : 0];
  };
  const shown = [...added.values()].filter((s) => {
    const reverse = added.get(`${s.owner}\u0000${s.reader}`);
    if (reverse === undefined) return true;
    const [mine, theirs] = [tells(s), tells(reverse)];
    return mine[0] !== theirs[0] ? mine[0] > theirs[0] : mine[1] >= theirs[1];
  });
  const byReader = new Map<string, string[]>();
  for (const shared of shown) {
    const list = byReader.get(shared.reader) ?? [];
    list.push(`\`${shared.owner}\`'s \`${shared.ownerRule}\``);
    byReader.set(shared.reader, list);
  }
  return [...byReader.entries()].map(([reader, owners]) => {
    const listed = owners.slice(0, 5).join(', ');
    const more = owners.length > 5 ? ` and ${owners.length - 5} more applications' paths` : '';
    return { kind: 'shared-read', identity: reader, message: `can read ${listed}${more}` };
  });
}

function asList(value: BindingValue | undefined): readonly string[] {
  return Array.isArray(value) ? value : [];
}
