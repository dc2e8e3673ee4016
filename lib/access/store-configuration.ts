import { AuthMethod, BindingValue, Identity } from './identity';
import { ReferenceResolver } from '../sources/terraform-reference';
import { ResourceBlock, STORE_TARGET_METADATA_KEY, SynthStack, readSynthOutput } from '../sources/synth-output';
import { compareStrings } from '../private/compare-strings';
import { StoreTarget } from '../model/store-target';
import { canonicalStoreNamespace } from '../model/store-namespace';
import { storePolicyName } from '../model/store-policy-name';
import { AuthMount, compareAuthMounts } from './auth-mount';
import { labelOf, namespacedLabel } from './namespaced-name';
import { MachinePathReasons, readMachinePathReasons } from './machine-path-reason';

/** A policy declared by a `vault_policy` resource. */
export interface DeclaredPolicy {
  /** Name in the store, lower case. */
  readonly name: string;
  /** Policy text. */
  readonly text: string;
  /** Declaring stack. */
  readonly stack: string;
  /**
   * The store namespace it is written in (its stack's `settings.namespace`), canonical; absent for
   * the root namespace. Only the identities of that namespace get it.
   */
  readonly namespace?: string;
  /** Construct path, when recorded. */
  readonly declaredAt?: string;
}

/**
 * What a synthesized configuration declares for one store: identities (auth roles) and policies.
 * All stacks of an output are taken to target the same store, as the platform's stacks do.
 */
export interface StoreConfiguration {
  /** Identities sorted by name (then namespace, the root namespace's first). */
  readonly identities: readonly Identity[];
  /**
   * Policies by name in the root namespace, by `namespacedLabel(name, namespace)` in another
   * (`app-x (namespace ns1)`): a namespace's policies are its own ({@link declaredPolicyIn}).
   */
  readonly policies: ReadonlyMap<string, DeclaredPolicy>;
  /** Names of the stacks read, sorted. */
  readonly stacks: readonly string[];
  /** True when read from a live store (a policy it lacks is missing there, not undeclared). */
  readonly liveStore?: boolean;
  /**
   * The store the configuration targets (its built-in `default` policy, capabilities and LIST
   * semantics); OpenBao with its version unknown when undefined.
   */
  readonly store?: StoreTarget;
  /**
   * The auth methods (login methods) declared or mounted, sorted by path; when undefined, the mounts
   * the identities log in through stand for them.
   */
  readonly authMounts?: readonly AuthMount[];
  /** The stated reasons of people rules that reach CI or application paths (`machinePathReason`). */
  readonly machinePathReasons?: MachinePathReasons;
  /**
   * The store namespaces the identities are in, canonical (`ns1`; `''` the root namespace), sorted:
   * the stacks' `settings.namespace`, or the live store's namespace read. Absent: the root namespace.
   */
  readonly namespaces?: readonly string[];
}

/** The policy `name` of namespace `namespace` (`''` or undefined: the root) a configuration declares, if any. */
export function declaredPolicyIn(configuration: Pick<StoreConfiguration, 'policies'>, namespace: string | undefined, name: string): DeclaredPolicy | undefined {
  return configuration.policies.get(namespacedLabel(name, namespace));
}

/** Identities by name, then namespace (the root namespace's first): the order of {@link StoreConfiguration.identities}. */
export function compareIdentities(a: Identity, b: Identity): number {
  return compareStrings(a.name, b.name) || compareStrings(a.namespace ?? '', b.namespace ?? '');
}

/** Provider defaults for fields left unset (so that unset and default compare equal). */
const JWT_DEFAULTS: Readonly<Record<string, BindingValue>> = {
  role_type: 'oidc',
  bound_claims_type: 'string',
  token_type: 'default',
};
const APPROLE_DEFAULTS: Readonly<Record<string, BindingValue>> = {
  bind_secret_id: true,
  token_type: 'default',
};

/** Role fields that are bindings, per method (token_policies and the default policy are kept apart). */
const TOKEN_FIELDS = [
  'token_ttl',
  'token_max_ttl',
  'token_explicit_max_ttl',
  'token_period',
  'token_num_uses',
  'token_type',
  'token_bound_cidrs',
];
const JWT_FIELDS = ['role_type', 'bound_audiences', 'bound_subject', 'bound_claims', 'bound_claims_type', 'user_claim', ...TOKEN_FIELDS];
/**
 * An OIDC role's fields besides the JWT ones: where the provider may send the login's code (a
 * redirect URI added is a place a code can leak to), which claim holds the groups, and the scopes.
 */
export const OIDC_ROLE_FIELDS: readonly string[] = ['allowed_redirect_uris', 'groups_claim', 'oidc_scopes'];
/**
 * JWT auth method fields that decide whose tokens are accepted, read onto each role of the mount:
 * the issuer, and the key source (OIDC discovery URL, JWKS URL, or static public keys) with the CA
 * certificates that verify its TLS.
 */
export const JWT_METHOD_FIELDS: readonly string[] = [
  'bound_issuer',
  'oidc_discovery_url',
  'oidc_discovery_ca_pem',
  'jwks_url',
  'jwks_ca_pem',
  'jwt_validation_pubkeys',
  'oidc_client_id',
];
/**
 * A JWT method field as a binding: strings trimmed (the store keeps PEM keys without their final
 * newline), lists trimmed and sorted; empty values are unset.
 */
export function jwtMethodBinding(value: unknown): BindingValue | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (Array.isArray(value)) {
    const list = [...new Set(value.map((v) => String(v).trim()).filter((v) => v !== ''))].sort(compareStrings);
    return list.length === 0 ? undefined : list;
  }
  return undefined;
}

const APPROLE_FIELDS = ['bind_secret_id', 'secret_id_ttl', 'secret_id_num_uses', 'secret_id_bound_cidrs', ...TOKEN_FIELDS];
/** Role fields read besides the bindings: where it logs in, its name, its policies. */
const ROLE_FIELDS = ['backend', 'role_name', 'token_policies', 'token_no_default_policy', 'disable_bound_claims_parsing'];

/**
 * Per resource type the access analysis reads, every attribute it reads: the review of a saved plan
 * reports a value unknown until apply on one of them (lib/sources/saved-plan.ts), and a change to a
 * resource of another type as one it cannot read. The readers below read no other attribute
 * ({@link fieldReader} refuses one), so this list cannot fall behind them.
 */
export const REVIEWED_ATTRIBUTES: ReadonlyMap<string, readonly string[]> = new Map([
  ['vault_policy', ['name', 'policy']],
  ['vault_auth_backend', ['path', 'type']],
  ['vault_jwt_auth_backend', ['path', 'type', ...JWT_METHOD_FIELDS]],
  ['vault_jwt_auth_backend_role', [...ROLE_FIELDS, ...JWT_FIELDS, ...OIDC_ROLE_FIELDS]],
  ['vault_approle_auth_backend_role', [...ROLE_FIELDS, ...APPROLE_FIELDS]],
]);

/**
 * Reads the identities and policies of a synthesized output directory.
 * @throws Error naming the stack and resource for an unresolvable reference, a role without a
 *   name, or a name declared twice (with different contents for a policy)
 */
export function readStoreConfiguration(dir: string): StoreConfiguration {
  const { overridden: _none, ...configuration } = storeConfigurationOf(readSynthOutput(dir));
  return configuration;
}

/**
 * A policy or identity two stacks declare differently, of which the preferred stack's was kept:
 * a stack read from its saved plan writes over the synthesized declaration of another stack.
 */
export interface OverriddenDeclaration {
  /** What it is. */
  readonly kind: 'policy' | 'identity';
  /** Its name (`registry-ci`, `jwt/registry-ci`). */
  readonly name: string;
  /** The preferred stack, whose declaration was kept. */
  readonly stack: string;
  /** The stack whose declaration was set aside. */
  readonly over: string;
}

/**
 * The identities and policies of stacks already read: a synthesized output's, or stacks made from
 * saved plans (lib/access/plan-store-configuration.ts), whose values are literals.
 * @param preferred stacks whose declaration wins over another stack's of the same name (the
 *   stacks read from saved plans: their apply writes over it); each such case is listed in `overridden`
 * @param readings each stack's mounts, policies and identities as read before: the review of saved
 *   plans reads both sides, whose unplanned stacks are the same objects (read once)
 * @throws Error as {@link readStoreConfiguration}; a name declared differently by two stacks of which
 *   not exactly one is preferred
 */
export function storeConfigurationOf(
  stacks: readonly SynthStack[],
  preferred: ReadonlySet<string> = new Set(),
  readings: StackReadings = new StackReadings(),
): StoreConfiguration & { readonly overridden: readonly OverriddenDeclaration[] } {
  const policies = new Map<string, DeclaredPolicy>();
  const identities = new Map<string, Identity>();
  const mounts = new Map<string, AuthMount>();
  const overridden: OverriddenDeclaration[] = [];
  /** Which of two declarations of one name to keep: the preferred stack's, when only one is preferred. */
  const keep = <T extends { readonly stack: string }>(kind: OverriddenDeclaration['kind'], name: string, existing: T, next: T): T | undefined => {
    if (preferred.has(existing.stack) === preferred.has(next.stack)) return undefined;
    const [kept, other] = preferred.has(next.stack) ? [next, existing] : [existing, next];
    overridden.push({ kind, name, stack: kept.stack, over: other.stack });
    return kept;
  };
  for (const stack of stacks) {
    const read = readings.of(stack);
    // Mounts, policies and identities are keyed by namespace and name: two namespaces' never meet.
    for (const mount of read('mounts')) {
      const key = namespacedLabel(mount.path, mount.namespace);
      if (!mounts.has(key)) mounts.set(key, mount);
    }
    for (const policy of read('policies')) {
      const key = labelOf(policy);
      const existing = policies.get(key);
      if (existing && existing.text !== policy.text) {
        const kept = keep('policy', key, existing, policy);
        if (kept === undefined && existing.stack === policy.stack) {
          const at = [existing, policy].map((p) => p.declaredAt ?? 'a resource without construct path').join(' and ');
          throw new Error(
            `stack ${policy.stack}: policy "${key}" is written twice with different texts (${at}); ` +
              'the store would keep whichever text the engine writes last: declare each policy name once',
          );
        }
        if (kept === undefined) {
          throw new Error(
            `policy "${key}" is declared with different texts in stacks ${existing.stack} and ${policy.stack}; ` +
              'the access analysis takes all stacks to target one store',
          );
        }
        policies.set(key, kept);
        continue;
      }
      policies.set(key, policy);
    }
    for (const identity of read('identities')) {
      const key = labelOf(identity);
      const existing = identities.get(key);
      if (existing) {
        const kept = keep('identity', key, existing, identity);
        if (kept === undefined) {
          throw new Error(
            `identity ${key} is declared in stacks ${existing.stack} and ${identity.stack}; ` +
              'the access analysis takes all stacks to target one store',
          );
        }
        identities.set(key, kept);
        continue;
      }
      identities.set(key, identity);
    }
  }
  const store = recordedStoreTarget(stacks);
  const namespaces = [...new Set(stacks.map((s) => canonicalStoreNamespace(s.namespace ?? '')))].sort(compareStrings);
  return {
    identities: [...identities.values()].sort(compareIdentities),
    policies,
    stacks: stacks.map((s) => s.name),
    ...(store ? { store } : {}),
    // Only when a stack applies in a namespace: a root-namespace configuration reads as before.
    ...(namespaces.some((n) => n !== '') ? { namespaces } : {}),
    authMounts: [...mounts.values()].sort(compareAuthMounts),
    machinePathReasons: readMachinePathReasons(stacks),
    overridden: overridden.sort((a, b) => compareStrings(a.kind, b.kind) || compareStrings(a.name, b.name)),
  };
}

/**
 * The auth mounts, policies and identities of stacks, each read once per stack object (a
 * {@link SynthStack} is not changed once read): {@link storeConfigurationOf} of both sides of a
 * review shares one, so that the thousands of stacks without a plan are not read twice. Each kind is
 * read when first asked for, in the order a single reading asks (its errors come in the same order).
 */
export class StackReadings {
  private readonly read = new WeakMap<SynthStack, { resolver: ReferenceResolver; mounts?: AuthMount[]; policies?: DeclaredPolicy[]; identities?: Identity[] }>();

  /** The reader of one stack's mounts, policies or identities, each read once. */
  of(stack: SynthStack): <K extends 'mounts' | 'policies' | 'identities'>(kind: K) => NonNullable<StackReadingsOf[K]> {
    let entry = this.read.get(stack);
    if (entry === undefined) {
      entry = { resolver: new ReferenceResolver(stack) };
      this.read.set(stack, entry);
    }
    const e = entry;
    return (kind) => {
      if (kind === 'mounts') return (e.mounts ??= readAuthMounts(stack, e.resolver)) as never;
      if (kind === 'policies') return (e.policies ??= readPolicies(stack, e.resolver)) as never;
      return (e.identities ??= readIdentities(stack, e.resolver)) as never;
    };
  }
}

/** What {@link StackReadings} keeps of a stack. */
interface StackReadingsOf {
  readonly mounts: AuthMount[];
  readonly policies: DeclaredPolicy[];
  readonly identities: Identity[];
}

/**
 * The store the stacks record in `//.metadata["secretstore-iac-store"]` (written when
 * `settings.store` is given), or undefined when none records one.
 * @throws Error naming the stacks when two record different stores, or a record is not what the synthesis writes
 */
function recordedStoreTarget(stacks: readonly SynthStack[]): StoreTarget | undefined {
  let found: { stack: string; target: StoreTarget } | undefined;
  for (const stack of stacks) {
    const record = stack.metadata[STORE_TARGET_METADATA_KEY] as { kind?: unknown; version?: unknown } | undefined;
    if (record === undefined) continue;
    const version = typeof record?.version === 'string' ? record.version : undefined;
    if (!StoreTarget.isKind(record?.kind) || (record.version !== undefined && version === undefined)) {
      throw new Error(`stack ${stack.name}: //.metadata["${STORE_TARGET_METADATA_KEY}"] is not what the synthesis writes: synthesize again`);
    }
    const target = new StoreTarget(record.kind, version);
    if (found && String(found.target) !== String(target)) {
      throw new Error(
        `stacks ${found.stack} and ${stack.name} target different stores (${found.target}, ${target}): ` +
          'the access analysis takes all stacks to target one store; give every stack the same settings.store',
      );
    }
    found ??= { stack: stack.name, target };
  }
  return found?.target;
}

function readPolicies(stack: SynthStack, resolver: ReferenceResolver): DeclaredPolicy[] {
  return Object.entries(stack.resources.vault_policy ?? {}).map(([id, block]) => {
    const where = `vault_policy.${id}`;
    const name = resolver.resolve(block.name, `${where}.name`);
    const text = resolver.resolve(block.policy, `${where}.policy`);
    if (typeof name !== 'string' || typeof text !== 'string') {
      throw new Error(`${stack.name}: ${where}: "name" and "policy" must be strings`);
    }
    return { name: storePolicyName(name), text, stack: stack.name, ...namespaceOf(stack), declaredAt: declaredAt(block) };
  });
}

/** The auth methods a stack mounts: `vault_auth_backend` (path defaults to the type) and `vault_jwt_auth_backend` (path and type default to `jwt`). */
function readAuthMounts(stack: SynthStack, resolver: ReferenceResolver): AuthMount[] {
  const out: AuthMount[] = [];
  for (const [id, block] of Object.entries(stack.resources.vault_auth_backend ?? {})) {
    const field = fieldReader(resolver, block, 'vault_auth_backend', `vault_auth_backend.${id}`);
    const type = String(field('type') ?? '');
    out.push({ path: mountPath(field('path') ?? type), type, stack: stack.name, ...namespaceOf(stack), declaredAt: declaredAt(block), settings: {} });
  }
  for (const [id, block] of Object.entries(stack.resources.vault_jwt_auth_backend ?? {})) {
    const field = fieldReader(resolver, block, 'vault_jwt_auth_backend', `vault_jwt_auth_backend.${id}`);
    const settings: Record<string, BindingValue> = {};
    for (const name of JWT_METHOD_FIELDS) {
      const value = jwtMethodBinding(field(name));
      if (value !== undefined) settings[name] = value;
    }
    out.push({ path: mountPath(field('path') ?? 'jwt'), type: String(field('type') ?? 'jwt'), stack: stack.name, ...namespaceOf(stack), declaredAt: declaredAt(block), settings });
  }
  return out;
}

function readIdentities(stack: SynthStack, resolver: ReferenceResolver): Identity[] {
  const jwtMounts = new Map<string, ResourceBlock>();
  for (const [id, block] of Object.entries(stack.resources.vault_jwt_auth_backend ?? {})) {
    jwtMounts.set(mountPath(resolver.resolve(block.path ?? 'jwt', `vault_jwt_auth_backend.${id}.path`)), block);
  }
  const out: Identity[] = [];
  for (const [id, raw] of Object.entries(stack.resources.vault_jwt_auth_backend_role ?? {})) {
    const field = fieldReader(resolver, raw, 'vault_jwt_auth_backend_role', `vault_jwt_auth_backend_role.${id}`);
    const mount = mountPath(field('backend') ?? 'jwt');
    // A role declared with role_type "oidc" is a people's login (single sign-on), bound by group.
    const method: AuthMethod = field('role_type') === 'oidc' ? 'oidc' : 'jwt';
    const bindings = roleBindings(method, field);
    const backend = jwtMounts.get(mount);
    if (backend) {
      // The method's issuer and key source decide whose tokens log in as every role of the mount.
      const methodField = fieldReader(resolver, backend, 'vault_jwt_auth_backend', `vault_jwt_auth_backend(${mount})`);
      for (const name of JWT_METHOD_FIELDS) {
        const value = jwtMethodBinding(methodField(name));
        if (value !== undefined) bindings[name] = value;
      }
    }
    out.push(identity(stack, raw, field, method, mount, bindings, `vault_jwt_auth_backend_role.${id}`));
  }
  for (const [id, raw] of Object.entries(stack.resources.vault_approle_auth_backend_role ?? {})) {
    const field = fieldReader(resolver, raw, 'vault_approle_auth_backend_role', `vault_approle_auth_backend_role.${id}`);
    const mount = mountPath(field('backend') ?? 'approle');
    const bindings = roleBindings('approle', field);
    out.push(identity(stack, raw, field, 'approle', mount, bindings, `vault_approle_auth_backend_role.${id}`));
  }
  return out;
}

/** Reads one attribute of a resource, references resolved; only the attributes used are resolved. */
type FieldReader = (name: string) => unknown;

function fieldReader(resolver: ReferenceResolver, block: ResourceBlock, type: string, where: string): FieldReader {
  const read = REVIEWED_ATTRIBUTES.get(type) ?? [];
  return (name) => {
    // A field read here and missing from REVIEWED_ATTRIBUTES would escape the plan review's unknown-value check.
    if (!read.includes(name)) throw new Error(`internal: ${where}.${name} is read but not listed in REVIEWED_ATTRIBUTES`);
    return resolver.resolve(block[name], `${where}.${name}`);
  };
}

function identity(
  stack: SynthStack,
  raw: ResourceBlock,
  field: FieldReader,
  method: AuthMethod,
  mount: string,
  bindings: Record<string, BindingValue>,
  where: string,
): Identity {
  const role = field('role_name');
  if (typeof role !== 'string' || role === '') throw new Error(`${stack.name}: ${where}: no role_name`);
  const policies = field('token_policies');
  return {
    name: `${mount}/${role}`,
    method,
    mount,
    role,
    stack: stack.name,
    ...namespaceOf(stack),
    declaredAt: declaredAt(raw),
    tokenPolicies: [...new Set((Array.isArray(policies) ? policies : []).map((p) => storePolicyName(String(p))).filter((p) => p !== ''))].sort(),
    noDefaultPolicy: field('token_no_default_policy') === true,
    bindings: sortKeys(bindings),
  };
}

/** Reads binding fields, normalised; empty values are left out, unset ones take the defaults. */
function readBindings(
  field: FieldReader,
  fields: readonly string[],
  defaults: Readonly<Record<string, BindingValue>>,
  splitClaims: boolean,
): Record<string, BindingValue> {
  const out: Record<string, BindingValue> = { ...defaults };
  for (const name of fields) {
    const value = normalise(name, field(name), splitClaims);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function normalise(field: string, value: unknown, splitClaims: boolean): BindingValue | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (field === 'bound_claims') {
    if (typeof value !== 'object' || Array.isArray(value)) return undefined;
    // The provider takes comma-separated alternatives in one string and sends them as a list; the
    // store matches a string it holds as one value, commas included.
    const values = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : splitClaims ? String(v).split(',') : [String(v)]);
    const claims = Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string[]] => [k, [...new Set(values(v))].sort()]);
    return claims.length === 0 ? undefined : sortKeys(Object.fromEntries(claims));
  }
  if (Array.isArray(value)) {
    return value.length === 0 ? undefined : [...new Set(value.map(String))].sort();
  }
  if (typeof value === 'string' && /^\d+$/.test(value) && (field.endsWith('_ttl') || field.endsWith('_uses') || field.endsWith('period'))) {
    return Number(value);
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}

/** `{ namespace }` of a stack applied in a namespace (`settings.namespace`), `{}` for the root namespace. */
function namespaceOf(stack: SynthStack): { namespace?: string } {
  const namespace = canonicalStoreNamespace(stack.namespace ?? '');
  return namespace === '' ? {} : { namespace };
}

function declaredAt(block: ResourceBlock): string | undefined {
  const meta = block['//'] as { metadata?: { path?: unknown } } | undefined;
  return typeof meta?.metadata?.path === 'string' ? meta.metadata.path : undefined;
}

function mountPath(value: unknown): string {
  return String(value).replace(/^\/+|\/+$/g, '');
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compareStrings(a, b)));
}

/**
 * The normalised bindings of a role from its fields, as the provider names them (a synthesized
 * resource or a role read from the store): unset fields take the provider's defaults, lists are
 * sorted, bound claims become claim → sorted values: a string is split on commas as the provider
 * does (`source` `provider`), or is one value as the store matches it (`store`). Shared with the live-store reader so both sides compare equal when they mean the same.
 */
export function roleBindings(method: AuthMethod, field: (name: string) => unknown, source: 'provider' | 'store' = 'provider'): Record<string, BindingValue> {
  // The provider splits bound-claim strings on commas unless disable_bound_claims_parsing is set.
  const split = source === 'provider' && field('disable_bound_claims_parsing') !== true;
  if (method === 'oidc') return readBindings(field, [...JWT_FIELDS, ...OIDC_ROLE_FIELDS], JWT_DEFAULTS, split);
  return method === 'jwt' ? readBindings(field, JWT_FIELDS, JWT_DEFAULTS, split) : readBindings(field, APPROLE_FIELDS, APPROLE_DEFAULTS, split);
}
