import { Acl } from '../acl/acl';
import { DEFAULT_POLICY_NAME, defaultPolicyText } from '../acl/default-policy';
import { PolicyParser } from '../acl/policy-parser';
import { capabilityNames, maskHas } from '../acl/store-capability';
import { compareStrings } from '../private/compare-strings';
import { AccessDiff, diffAccess } from '../access/access-diff';
import { AccessModel } from '../access/access-model';
import { formatBinding, isPemField, pemFingerprint } from '../access/binding-format';
import { DeclaredObject } from './declared-object';
import { mountTypeMismatch } from './mount-type-mismatch';
import { describeMountAttributeChange, mountAttributeChanges } from './mount-attribute-changes';
import { unconfiguredJwtMount } from './unconfigured-jwt-mount';
import { BUILTIN_POLICIES, JWT_CONFIG_FIELDS, LiveStore, isBuiltinAuthMount, isUnchangedDefault, liveStoreConfiguration, normaliseConfigValue } from './live-store-reader';
import { JWT_METHOD_FIELDS, StoreConfiguration, declaredPolicyIn } from '../access/store-configuration';

/** Kinds of drift, in the order a report lists them. */
export type DriftKind = 'missing' | 'changed' | 'builtin-changed' | 'unmanaged';

/** One object on which the store and the declarations disagree. */
export interface DriftFinding {
  /** What kind of disagreement. */
  readonly kind: DriftKind;
  /** Where on the store (`auth/jwt/role/registry-ci`, `sys/policies/acl/registry-ci`). */
  readonly storePath: string;
  /** Identities whose access it concerns (the role itself, or the roles using a policy), sorted. */
  readonly identities: readonly string[];
  /** Declaring stack, for declared objects. */
  readonly stack?: string;
  /** Declaring resource address, for declared objects. */
  readonly address?: string;
  /** One line saying what differs. */
  readonly summary: string;
  /** Field by field or rule by rule: declared → store. */
  readonly details: readonly string[];
}

/** The store compared with the declarations. */
export interface DriftReport {
  /** Findings sorted by kind, then store path. */
  readonly findings: readonly DriftFinding[];
  /** Effective access, declarations → store, for the declared identities (and unmanaged ones, as added). */
  readonly access: AccessDiff;
}

/** Options of {@link detectDrift}. */
export interface DriftOptions {
  /** Only objects of this stack (unmanaged objects are then not reported: they belong to no stack). */
  readonly stack?: string;
  /** Shared parser. */
  readonly parser?: PolicyParser;
}

/**
 * Compares the live store with what the stacks declare: declared objects missing from the store or
 * whose live value differs (mounts, JWT configuration, role fields, policy texts); a changed
 * built-in `default`; and, across all stacks, roles and policies on the store no stack manages,
 * with the access they give. Built-in policies (`root`, `default`, `response-wrapping`) are never
 * unmanaged.
 * @param declared every declared object of every stack (unmanaged means: declared by none)
 * @param configuration the declared configuration (all stacks)
 */
export async function detectDrift(
  declared: readonly DeclaredObject[],
  configuration: StoreConfiguration,
  live: LiveStore,
  options: DriftOptions = {},
): Promise<DriftReport> {
  const parser = options.parser ?? new PolicyParser(undefined, live.store?.kind ?? configuration.store?.kind);
  const inScope = declared.filter((o) => options.stack === undefined || o.stack === options.stack);
  const liveConfiguration = liveStoreConfiguration(live);
  const liveModel = await AccessModel.load(liveConfiguration, parser);
  const findings: DriftFinding[] = [];
  const mounts = new Map(live.mounts.map((m) => [m.path, m]));
  const jwtConfigs = new Map(live.jwtConfigs.map((c) => [c.mount, c]));
  const liveRoles = new Map(live.roles.map((r) => [`${r.mount}/${r.role}`, r]));
  const usersOf = (policy: string) => liveModel.identities.filter((i) => i.tokenPolicies.includes(policy)).map((i) => i.identity.name);
  const declaredUsersOf = (policy: string) =>
    configuration.identities.filter((i) => i.tokenPolicies.includes(policy)).map((i) => i.name);
  const at = (o: DeclaredObject) => ({ stack: o.stack, address: o.address, storePath: o.storePath });

  for (const o of inScope) {
    if (o.kind === 'auth-mount' || o.kind === 'jwt-auth-mount') {
      const wantType = o.kind === 'jwt-auth-mount' ? String(o.fields.type ?? 'jwt') : String(o.fields.type);
      const mount = mounts.get(o.name);
      if (!mount) {
        findings.push({ kind: 'missing', ...at(o), identities: [], summary: `auth method ${o.name}/ (${wantType}) is not mounted`, details: [] });
        continue;
      }
      if (mount.type !== wantType) {
        findings.push({ kind: 'changed', ...at(o), identities: [], summary: `auth method ${o.name}/ is of type ${mount.type}, declared ${wantType}`, details: [mountTypeMismatch(o.name, mount.type, wantType, live.store?.cli, live.namespace)] });
        continue;
      }
      // local (forces a replacement), description, tune: each with what applying does.
      const attributes = mountAttributeChanges(o, mount, live.store?.cli, { namespace: live.namespace });
      if (attributes.length > 0) {
        const replace = attributes.some((a) => a.effect === 'replace');
        findings.push({
          kind: 'changed',
          ...at(o),
          identities: live.roles.filter((r) => r.mount === o.name).map((r) => `${r.mount}/${r.role}`),
          summary: `auth method ${o.name}/ settings differ${replace ? ' (applying would replace the mount and every role under it: refused by the plan check)' : ''}`,
          details: attributes.map(describeMountAttributeChange),
        });
      }
      const config = jwtConfigs.get(o.name);
      const unconfigured = unconfiguredJwtMount(o, live);
      if (unconfigured !== undefined) {
        // Named with its fix from the first run after the failed apply: comparing fields with nothing would not say why.
        const identities = configuration.identities.filter((i) => i.method !== 'approle' && i.mount === o.name).map((i) => i.name);
        findings.push({ kind: 'changed', storePath: `auth/${o.name}/config`, stack: o.stack, address: o.address, identities, summary: `${wantType === 'oidc' ? 'OIDC' : 'JWT'} method not configured: ${unconfigured}`, details: [] });
      } else if (o.kind === 'jwt-auth-mount' && config) {
        const details: string[] = [];
        for (const field of JWT_CONFIG_FIELDS) {
          // A field the store's answer leaves out (an older server) is unset.
          const have = config.fields[field] ?? '';
          // An unset list field is the empty list the store returns for it.
          const declaredValue = normaliseConfigValue(o.fields[field]);
          const want = Array.isArray(have) && declaredValue === '' ? [] : declaredValue;
          if (JSON.stringify(want) !== JSON.stringify(have)) details.push(`${field}: declared ${show(field, want)}, store ${show(field, have)}`);
        }
        if (details.length > 0) {
          const identities = configuration.identities.filter((i) => i.method !== 'approle' && i.mount === o.name).map((i) => i.name);
          const label = wantType === 'oidc' ? 'OIDC' : 'JWT';
          findings.push({ kind: 'changed', storePath: `auth/${o.name}/config`, stack: o.stack, address: o.address, identities, summary: `${label} method configuration differs`, details });
        }
      }
    } else if (o.kind === 'jwt-role' || o.kind === 'approle-role') {
      const name = `${o.mount}/${o.name}`;
      if (!liveRoles.has(name)) {
        findings.push({ kind: 'missing', ...at(o), identities: [name], summary: `role ${name} is not on the store`, details: [] });
      }
    } else if (o.kind === 'policy') {
      const text = live.policies.get(o.name);
      // The stacks' policy of the namespace read (drift reads the one namespace the stacks apply in).
      const want = declaredPolicyIn(configuration, live.namespace, o.name)?.text ?? '';
      if (text === undefined) {
        findings.push({ kind: 'missing', ...at(o), identities: declaredUsersOf(o.name), summary: `policy ${o.name} is declared but missing on the store: it grants nothing until its stack is applied`, details: [] });
      } else if (text !== want) {
        const details = await policyRuleChanges(parser, o.name, want, text);
        findings.push({
          kind: 'changed',
          ...at(o),
          identities: [...new Set([...declaredUsersOf(o.name), ...usersOf(o.name)])].sort(compareStrings),
          summary: details.length > 0 ? `policy ${o.name} grants different access than declared` : `policy ${o.name} text differs (same access)`,
          details,
        });
      }
    }
  }

  // Roles present on both sides whose fields differ: from the access diff (declared → store).
  const declaredNames = new Set(
    declared.filter((o) => o.kind === 'jwt-role' || o.kind === 'approle-role').map((o) => `${o.mount}/${o.name}`),
  );
  const scopeNames = new Set(inScope.filter((o) => o.kind === 'jwt-role' || o.kind === 'approle-role').map((o) => `${o.mount}/${o.name}`));
  const declaredScoped = restrict(configuration, (n) => scopeNames.has(n));
  const liveScoped = restrict(liveConfiguration, (n) => scopeNames.has(n) || (options.stack === undefined && !declaredNames.has(n)));
  const access = diffAccess(await AccessModel.load(declaredScoped, parser), await AccessModel.load(liveScoped, parser));
  const roleDetails = new Map<string, string[]>();
  for (const change of access.changed) {
    // The issuer and key source are the method's, reported once on auth/<mount>/config.
    const bindings = change.bindings.filter((b) => !JWT_METHOD_FIELDS.includes(b.field));
    roleDetails.set(
      change.name,
      bindings.map(
        (b) =>
          `${b.field}: declared ${formatBinding(b.field, b.before)}, store ${formatBinding(b.field, b.after)}` +
          // role_type is ForceNew in the provider: the apply would delete the store's role and create another.
          (b.field === 'role_type' ? `: ${roleTypeConsequence(String(b.before ?? 'oidc'), String(b.after ?? 'oidc'))}` : ''),
      ),
    );
  }
  // Fields the constructs set that decide nothing about access (leeways, claim mappings, ...).
  for (const o of inScope) {
    if (o.kind !== 'jwt-role' && o.kind !== 'approle-role') continue;
    const name = `${o.mount}/${o.name}`;
    const liveRole = liveRoles.get(name);
    if (!liveRole) continue;
    const other = otherFieldChanges(o.fields, liveRole.fields);
    if (other.length > 0) roleDetails.set(name, [...(roleDetails.get(name) ?? []), ...other]);
  }
  for (const [name, details] of [...roleDetails].sort(([a], [b]) => compareStrings(a, b))) {
    if (details.length === 0) continue;
    const object = declared.find((o) => `${o.mount}/${o.name}` === name && (o.kind === 'jwt-role' || o.kind === 'approle-role'))!;
    findings.push({ kind: 'changed', ...at(object), identities: [name], summary: `role ${name} differs`, details });
  }

  // The built-in default policy changed on the store while no stack declares it.
  const liveDefault = live.policies.get(DEFAULT_POLICY_NAME);
  // Compared with the live store's own built-in text (Vault's has a control-group rule OpenBao's lacks).
  if (declaredPolicyIn(configuration, live.namespace, DEFAULT_POLICY_NAME) === undefined && liveDefault !== undefined && !isUnchangedDefault(live, liveDefault)) {
    const builtin = defaultPolicyText(live.store?.kind ?? configuration.store?.kind);
    findings.push({
      kind: 'builtin-changed',
      storePath: `sys/policies/acl/${DEFAULT_POLICY_NAME}`,
      identities: usersOf(DEFAULT_POLICY_NAME),
      summary: 'the built-in default policy was changed on the store (every token without token_no_default_policy has it)',
      details: await policyRuleChanges(parser, DEFAULT_POLICY_NAME, builtin, liveDefault),
    });
  }

  if (options.stack === undefined) {
    for (const identity of access.added) {
      findings.push({
        kind: 'unmanaged',
        storePath: `auth/${identity.mount}/role/${identity.role}`,
        identities: [identity.name],
        summary: `role ${identity.name} is on the store but no stack declares it; its tokens get ${identity.policies.join(', ') || 'no policy'}`,
        details: identity.rules.map((r) => `${r.path}: ${r.capabilities.join(', ')} (from ${r.policies.join(', ')})`),
      });
    }
    // Auth methods no stack mounts (the token method is built in, in every namespace too).
    const declaredMounts = new Set(declared.filter((o) => o.kind === 'auth-mount' || o.kind === 'jwt-auth-mount').map((o) => o.name));
    for (const mount of live.mounts) {
      if (isBuiltinAuthMount(mount) || declaredMounts.has(mount.path)) continue;
      const roles = live.roles.filter((r) => r.mount === mount.path).map((r) => `${r.mount}/${r.role}`);
      findings.push({
        kind: 'unmanaged',
        storePath: `sys/auth/${mount.path}`,
        identities: roles,
        summary: `auth method ${mount.path}/ (${mount.type}, accessor ${mount.accessor}) is mounted but no stack declares it`,
        details: [],
      });
    }
    const declaredPolicies = new Set(declared.filter((o) => o.kind === 'policy').map((o) => o.name));
    for (const [name, text] of live.policies) {
      if (BUILTIN_POLICIES.includes(name) || declaredPolicies.has(name)) continue;
      // The store holds the text: what the parser cannot read marks it, it does not stop drift.
      const parsed = await parser.parse(name, text, { storeAccepted: true });
      const rules = Acl.fromPolicies([parsed], { templating: 'literal' }).rules;
      const risky = rules.filter((r) => maskHas(r.mask, 'sudo') || r.path.display.includes('*') || r.path.display.includes('+'));
      findings.push({
        kind: 'unmanaged',
        storePath: `sys/policies/acl/${name}`,
        identities: usersOf(name),
        summary:
          `policy ${name} is on the store but no stack declares it` +
          (risky.length > 0 ? `; it grants ${risky.map((r) => `${maskHas(r.mask, 'sudo') ? 'sudo' : 'wildcard'} on ${r.path.display}`).join(', ')}` : '') +
          (parsed.unevaluated ? `; not fully evaluated (${parsed.unevaluated.join('; ')}): it may grant more` : ''),
        details: rules.map((r) => `${r.path.display}: ${capabilityNames(r.mask).join(', ')}`),
      });
    }
  }

  const order: DriftKind[] = ['missing', 'changed', 'builtin-changed', 'unmanaged'];
  findings.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || compareStrings(a.storePath, b.storePath));
  return { findings, access };
}

/**
 * What a differing `role_type` means for the apply (the provider marks it ForceNew), and the hand
 * fix, in the direction the store has it: an OIDC role where CI's JWT role is declared, or a JWT
 * role where a people's OIDC role is declared.
 */
export function roleTypeConsequence(declared: string, store: string): string {
  const replaced =
    `forces a replacement: applying would delete the store's role and create ${declared === 'oidc' ? 'an OIDC' : 'a JWT'} role in its place; ` +
    "adopt's plan check and `tf --refuse-replace` refuse it (exit 4). No declaration keeps it: ";
  return declared === 'oidc'
    ? `${replaced}the store's role is a ${store.toUpperCase()} role (role_type ${store}), the declared one is a people's OIDC role (single sign-on); delete the store's role by hand if no CI job logs in with it, or rename the declared group`
    : `${replaced}the library declares JWT roles for CI, the store's is an ${store.toUpperCase()} role (role_type ${store}, for people); delete it by hand if no person logs in with it, or rename the declared role`;
}

/** Rule-by-rule difference of two texts of one policy, as `path: declared X, store Y` lines. */
async function policyRuleChanges(parser: PolicyParser, name: string, declaredText: string, liveText: string): Promise<string[]> {
  const rules = async (text: string, storeAccepted: boolean) =>
    new Map(Acl.fromPolicies([await parser.parse(name, text, { storeAccepted })], { templating: 'literal' }).rules.map((r) => [r.path.slot, r]));
  const want = await rules(declaredText, false);
  // The store's text was accepted by it: a gap of the parser must not stop drift.
  const have = await rules(liveText, true);
  const out: string[] = [];
  for (const slot of new Set([...want.keys(), ...have.keys()])) {
    const w = want.get(slot);
    const h = have.get(slot);
    if (w && h && w.mask === h.mask) continue;
    const path = (h ?? w)!.path.display;
    const caps = (r: typeof w) => (r ? capabilityNames(r.mask).join(', ') : 'none');
    out.push(`${path}: declared ${caps(w)}, store ${caps(h)}`);
  }
  return out.sort(compareStrings);
}

/** Role fields compared by {@link otherFieldChanges}: neither bindings nor the role's identity. */
const NOT_OTHER = new Set(['backend', 'role_name', 'token_policies', 'token_no_default_policy', 'bound_issuer', 'role_id']);

/**
 * Differences in the role fields a declaration sets that the access bindings do not cover
 * (`claim_mappings`, leeways, `groups_claim`, ...): unset, empty, 0 and false are the same, as
 * the store returns them for a field never set.
 */
export function otherFieldChanges(declaredFields: Readonly<Record<string, unknown>>, liveFields: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const [field, value] of Object.entries(declaredFields)) {
    if (NOT_OTHER.has(field) || BINDING_FIELDS.has(field)) continue;
    const want = comparable(value);
    const have = comparable(liveFields[field]);
    if (want !== have) out.push(`${field}: declared ${want ?? '(unset)'}, store ${have ?? '(unset)'}`);
  }
  return out.sort(compareStrings);
}

/** Fields the access model compares as bindings (reported from the access diff). */
const BINDING_FIELDS = new Set([
  'role_type', 'bound_audiences', 'bound_subject', 'bound_claims', 'bound_claims_type', 'user_claim',
  'token_ttl', 'token_max_ttl', 'token_explicit_max_ttl', 'token_period', 'token_num_uses', 'token_type', 'token_bound_cidrs',
  'bind_secret_id', 'secret_id_ttl', 'secret_id_num_uses', 'secret_id_bound_cidrs',
  'allowed_redirect_uris', 'groups_claim', 'oidc_scopes',
]);

function comparable(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : JSON.stringify([...value].map(String).sort(compareStrings));
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => compareStrings(a, b));
    return entries.length === 0 ? undefined : JSON.stringify(Object.fromEntries(entries));
  }
  return JSON.stringify(value);
}

/** The configuration with only the identities whose name passes, and the auth mounts they log in through. */
export function restrict(configuration: StoreConfiguration, keep: (name: string) => boolean): StoreConfiguration {
  const identities = configuration.identities.filter((i) => keep(i.name));
  const mounts = new Set(identities.map((i) => i.mount));
  return { ...configuration, identities, ...(configuration.authMounts ? { authMounts: configuration.authMounts.filter((m) => mounts.has(m.path)) } : {}) };
}

/** A JWT configuration value as text: PEM keys by fingerprint (two keys share every prefix), long values shortened. */
function show(field: string, value: string | readonly string[]): string {
  const one = (v: string) => (isPemField(field) ? pemFingerprint(v) : JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v));
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map(one).join(', ');
  return value === '' ? '(unset)' : one(value as string);
}
