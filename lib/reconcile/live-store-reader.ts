import { DEFAULT_POLICY_NAME, ROOT_POLICY_NAME, defaultPolicyText, isBuiltinDefaultPolicyText } from '../acl/default-policy';
import { RESERVED_POLICY_NAMES } from '../model/reserved-store-names';
import { StoreTarget } from '../model/store-target';
import { storePolicyName } from '../model/store-policy-name';
import { ListLookup, listLookupOf } from '../acl/acl';
import { compareStrings } from '../private/compare-strings';
import { StoreClient, StoreError } from '../store/store-client';
import { AuthMethod, Identity } from '../access/identity';
import { DeclaredPolicy, JWT_METHOD_FIELDS, StoreConfiguration, jwtMethodBinding, roleBindings } from '../access/store-configuration';
import { mapLimited } from '../private/map-limited';
import { STORE_OBJECT_CATALOGUE } from '../catalogue/store-object-catalogue';
import { canonicalStoreNamespace } from '../model/store-namespace';
import { namespacedLabel } from '../access/namespaced-name';

/** Policies every store has that no stack creates: never reported as unmanaged (the store's built-ins, one list with SSI-R9's). */
export const BUILTIN_POLICIES: readonly string[] = RESERVED_POLICY_NAMES;

/**
 * Types of the token auth method every store and every namespace has built in and that cannot be
 * disabled: `token` at the root, `ns_token` inside a namespace (OpenBao 2.4 and Vault Enterprise list
 * a namespace's `token/` with that type). Never a login method a configuration adds or leaves unmanaged.
 */
export const BUILTIN_AUTH_TYPES: readonly string[] = ['token', 'ns_token'];

/** Whether an auth method is the store's (or a namespace's) built-in token method. */
export function isBuiltinAuthMount(mount: { readonly type: string }): boolean {
  return BUILTIN_AUTH_TYPES.includes(mount.type);
}

/** An auth method mounted on the store (`GET sys/auth`). */
export interface LiveAuthMount {
  /** Mount path without slashes (`jwt`). */
  readonly path: string;
  /** Method type (`jwt`, `approle`, `token`, ...). */
  readonly type: string;
  /** Mount accessor (`auth_jwt_2f01f156`): what entity aliases and templated policies refer to. */
  readonly accessor: string;
  /** Description. */
  readonly description: string;
  /** Local to this cluster (not replicated); fixed when mounting. */
  readonly local: boolean;
  /** Seal-wrapped; fixed when mounting (the vault provider 5.9.0 neither declares nor changes it). */
  readonly sealWrap: boolean;
  /**
   * Tune settings as `GET sys/auth` returns them in `config`: TTLs in seconds (0: the system's),
   * `listing_visibility` (`''` when never set), `token_type`, the audit key lists (sorted).
   */
  readonly tune: LiveMountTune;
}

/** An auth mount's tune settings read from the store (see {@link LiveAuthMount.tune}). */
export interface LiveMountTune {
  readonly default_lease_ttl: number;
  readonly max_lease_ttl: number;
  readonly listing_visibility: string;
  readonly token_type: string;
  readonly audit_non_hmac_request_keys: readonly string[];
  readonly audit_non_hmac_response_keys: readonly string[];
}

/** The tune settings of a mount, from the `config` object of its `GET sys/auth` entry. */
function parseMountTune(config: any): LiveMountTune {
  const c = config && typeof config === 'object' ? config : {};
  const seconds = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const keys = (v: unknown) => (Array.isArray(v) ? v.map(String).filter((k) => k !== '').sort(compareStrings) : []);
  return {
    default_lease_ttl: seconds(c.default_lease_ttl),
    max_lease_ttl: seconds(c.max_lease_ttl),
    listing_visibility: typeof c.listing_visibility === 'string' ? c.listing_visibility : '',
    token_type: typeof c.token_type === 'string' ? c.token_type : '',
    audit_non_hmac_request_keys: keys(c.audit_non_hmac_request_keys),
    audit_non_hmac_response_keys: keys(c.audit_non_hmac_response_keys),
  };
}

/** Fields of a JWT method's configuration the constructs set (`GET auth/<mount>/config`). */
export const JWT_CONFIG_FIELDS = [
  'bound_issuer',
  'default_role',
  'jwks_ca_pem',
  'jwks_url',
  'jwt_supported_algs',
  'jwt_validation_pubkeys',
  'oidc_discovery_ca_pem',
  'oidc_discovery_url',
  'oidc_client_id',
] as const;

/** A JWT method's configuration: issuer and key source. Strings trimmed, lists sorted, unset as `''`/`[]`. */
export interface LiveJwtConfig {
  /** Mount path. */
  readonly mount: string;
  /** {@link JWT_CONFIG_FIELDS} by name. */
  readonly fields: Readonly<Record<string, string | readonly string[]>>;
  /**
   * False for a method mounted but never configured (`GET auth/<mount>/config` answers 404): an
   * apply that stopped between the mount and its configuration (OIDC discovery failing) leaves it so.
   */
  readonly configured?: boolean;
}

/** A role read from the store, all fields as the store returns them. */
export interface LiveRole {
  /** Mount path. */
  readonly mount: string;
  /** Auth method of the mount. */
  readonly method: AuthMethod;
  /** Role name. */
  readonly role: string;
  /** The `data` of `GET auth/<mount>/role/<role>`. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** What the store holds that the access analysis and the reconciliation need. */
export interface LiveStore {
  /** The store's address. */
  readonly address: string;
  /** Auth mounts sorted by path. */
  readonly mounts: readonly LiveAuthMount[];
  /** JWT method configurations, sorted by mount. */
  readonly jwtConfigs: readonly LiveJwtConfig[];
  /** JWT and AppRole roles, sorted by mount and name. */
  readonly roles: readonly LiveRole[];
  /** ACL policy texts by name (`root` included, with an empty text), sorted by name. */
  readonly policies: ReadonlyMap<string, string>;
  /**
   * The store's kind and version as `sys/seal-status` reports them (unauthenticated); undefined
   * when that answer could not be read or names no version.
   */
  readonly store?: StoreTarget;
  /** The namespace read (the client's), undefined for the root namespace: fix texts name it. */
  readonly namespace?: string;
}

/** The store kind and version from `GET sys/seal-status`, or undefined when it cannot be read. */
export async function readStoreTarget(client: StoreClient): Promise<StoreTarget | undefined> {
  try {
    return StoreTarget.fromSealStatus((await client.request('GET', 'sys/seal-status')).body);
  } catch {
    return undefined;
  }
}

/** The live store could not be read (unreachable, token refused, a path the token may not read). */
export class LiveStoreReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LiveStoreReadError';
  }
}

/** The `data` object of a store answer (the answer itself for `sys/auth` of old servers). */
function dataOf(body: any, what: string): Record<string, any> {
  const data = body && typeof body === 'object' ? body.data ?? body : undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new LiveStoreReadError(`${what}: the store's answer has no "data" object`);
  return data;
}

/** Parses `GET sys/auth`: the mounts, sorted by path. */
export function parseAuthMounts(body: unknown): LiveAuthMount[] {
  const data = dataOf(body, 'GET sys/auth');
  return Object.entries(data)
    .filter(([, m]) => m && typeof m === 'object' && typeof (m as any).type === 'string')
    .map(([p, m]: [string, any]) => ({
      path: p.replace(/^\/+|\/+$/g, ''),
      type: String(m.type),
      accessor: String(m.accessor ?? ''),
      description: String(m.description ?? ''),
      local: m.local === true,
      sealWrap: m.seal_wrap === true,
      tune: parseMountTune(m.config),
    }))
    .sort((a, b) => compareStrings(a.path, b.path));
}

/** Parses a `LIST` answer: the keys, sorted. */
export function parseList(body: unknown, what: string): string[] {
  const keys = dataOf(body, what).keys;
  if (!Array.isArray(keys)) throw new LiveStoreReadError(`${what}: the store's answer has no "keys" list`);
  return keys.map(String).sort(compareStrings);
}

/** Parses `GET auth/<mount>/config` of a JWT method. */
export function parseJwtConfig(mount: string, body: unknown): LiveJwtConfig {
  const data = dataOf(body, `GET auth/${mount}/config`);
  const fields: Record<string, string | readonly string[]> = {};
  for (const name of JWT_CONFIG_FIELDS) fields[name] = normaliseConfigValue(data[name]);
  return { mount, fields };
}

/**
 * A JWT configuration value in comparable form: strings trimmed (the store keeps PEMs without
 * their final newline), lists trimmed and sorted, unset as `''` or `[]`.
 */
export function normaliseConfigValue(value: unknown): string | readonly string[] {
  if (Array.isArray(value)) return value.map((v) => String(v).trim()).filter((v) => v !== '').sort(compareStrings);
  if (value === undefined || value === null) return '';
  return String(value).trim();
}

/** Parses `GET auth/<mount>/role/<role>`. */
export function parseRole(mount: string, method: AuthMethod, role: string, body: unknown): LiveRole {
  return { mount, method, role, fields: dataOf(body, `GET auth/${mount}/role/${role}`) };
}

/** The method of a role of the JWT plugin: `oidc` for `role_type = "oidc"` (people), else `jwt`. */
function roleMethod(body: any): AuthMethod {
  return body?.data?.role_type === 'oidc' ? 'oidc' : 'jwt';
}

/** Parses `GET sys/policies/acl/<name>`: the policy text (`root` has an empty one). */
export function parsePolicy(name: string, body: unknown): string {
  const text = dataOf(body, `GET sys/policies/acl/${name}`).policy;
  if (typeof text !== 'string') throw new LiveStoreReadError(`GET sys/policies/acl/${name}: the store's answer has no "policy" text`);
  return text;
}

/** One rule of the reader's policy: read and list only. */
export interface ReaderPolicyRule {
  /** Store API path or ACL pattern. */
  readonly path: string;
  /** `read` and/or `list`. */
  readonly capabilities: readonly ('read' | 'list')[];
}

/**
 * The reads the reader makes beyond the store objects the catalogue knows, each with why: the
 * reader's own needs, not a kind of object a stack declares.
 */
export const READER_OWN_RULES: readonly (ReaderPolicyRule & { readonly why: string })[] = [
  {
    path: 'auth/token/lookup-self',
    capabilities: ['read'],
    why: "adopt's plan check: the vault provider looks its own token up first when it plans",
  },
  {
    path: 'sys/mounts',
    capabilities: ['read'],
    why: 'the KV mount check drift and adopt run first: the stacks rely on KV mounts they never create',
  },
];

/**
 * The reader's rules before they are written for a store's LIST lookup: the union of every
 * catalogue entry's reader rules (what it takes to see every object of each kind the library can
 * synthesize: auth mounts and their settings, JWT configurations, roles with their Role IDs, which
 * are not secrets since a login also needs a Secret ID, policies), and {@link READER_OWN_RULES};
 * sorted by path, capabilities merged per path. A new kind of store object brings its reader rules
 * with its catalogue entry.
 */
export const READER_DERIVED_RULES: readonly ReaderPolicyRule[] = derivedReaderRules();

function derivedReaderRules(): ReaderPolicyRule[] {
  const byPath = new Map<string, Set<string>>();
  const objectRules = [...STORE_OBJECT_CATALOGUE.values()].flatMap((k) => k.readerRules);
  for (const rule of [...objectRules, ...READER_OWN_RULES]) {
    const capabilities = byPath.get(rule.path) ?? new Set<string>();
    rule.capabilities.forEach((c) => capabilities.add(c));
    byPath.set(rule.path, capabilities);
  }
  return [...byPath]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([path, capabilities]) => {
      const more = [...capabilities].filter((c) => c !== 'read' && c !== 'list');
      // The reader reads: a catalogue entry asking it for more is a defect of that entry.
      if (more.length > 0) throw new Error(`the reader's rule for ${path} asks for ${more.join(', ')}: the live-store reader reads and lists only`);
      return { path, capabilities: [...capabilities].sort(compareStrings) as ('read' | 'list')[] };
    });
}

/** One rule as policy text, in the form the store prints it back. */
const renderReaderRule = (r: ReaderPolicyRule): string => `path "${r.path}" {\n  capabilities = [${r.capabilities.map((c) => `"${c}"`).join(', ')}]\n}\n`;

/** The derived rule that lists the roles of every auth mount: written per LIST lookup by {@link readerPolicy}. */
const ROLE_LIST_PATH = 'auth/+/role';

/**
 * The rule that lets the reader list the roles of every auth mount (`LIST auth/<mount>/role/`; the
 * store adds the `/` to every LIST), for each LIST lookup ({@link ListLookup}):
 * - `trimmed-first` (OpenBao before 2.6.0, Vault before 2.0.3): the path without its `/` is tried
 *   first, so `auth/+/role` governs it;
 * - `path-first` (OpenBao 2.6.0+, Vault 2.0.3+): the path with its `/` is tried first, and there
 *   `auth/+/role/+` (the `read` of role definitions, whose `+` also matches the empty last segment)
 *   governs it and grants no `list`: `auth/+/role/`, with one `+` fewer, outranks it.
 */
const ROLE_LIST_RULES: Readonly<Record<ListLookup, string>> = {
  'trimmed-first': `path "${ROLE_LIST_PATH}" {\n  capabilities = ["list"]\n}\n`,
  'path-first': `path "${ROLE_LIST_PATH}/" {\n  capabilities = ["list"]\n}\n`,
};

/**
 * The LIST lookups the reader policy must work under for `target`: its own when the kind and version
 * are known, both when the version is not (or no store is given), since the rule changed with a patch
 * release of either store.
 */
export function readerPolicyLookups(target?: StoreTarget): ListLookup[] {
  return target?.version !== undefined && target.atLeast('0.0.0') !== undefined ? [listLookupOf(target)] : ['trimmed-first', 'path-first'];
}

/**
 * The least-privilege policy of the live-store reader (docs/adoption.md): the rules of
 * {@link READER_DERIVED_RULES}, each of the reader's own reads saying why, written for the store it
 * will run against, so that listing the roles works under that store's LIST lookup; for a store of
 * unknown version, a text that works under both lookups.
 * @param target the store kind and version (`settings.store`); undefined when not given
 */
export function readerPolicy(target?: StoreTarget): string {
  const lookups = readerPolicyLookups(target);
  const roleList =
    lookups.length > 1
      ? '# Listing the roles: the first rule for stores before OpenBao 2.6.0 / Vault 2.0.3, the second\n' +
        '# for those versions and later (a LIST is looked up with its trailing "/" first).\n' +
        lookups.map((l) => ROLE_LIST_RULES[l]).join('')
      : ROLE_LIST_RULES[lookups[0]];
  return [
    '# secretstore-iac live-store reader: read and list only. The store objects the library can\n',
    '# synthesize (auth mounts, roles, policies: lib/catalogue/), and what the reader itself needs.\n',
    ...READER_DERIVED_RULES.map((r) => {
      if (r.path === ROLE_LIST_PATH && r.capabilities.join() === 'list') return roleList;
      const own = READER_OWN_RULES.find((o) => o.path === r.path);
      return `${own ? `# ${own.why}.\n` : ''}${renderReaderRule(r)}`;
    }),
  ].join('');
}

/** The rules of {@link readerPolicy} for `target`, in its order. */
export function readerPolicyRules(target?: StoreTarget): readonly ReaderPolicyRule[] {
  return [...readerPolicy(target).matchAll(/^path "([^"]+)" \{\n  capabilities = \[([^\]]*)\]\n\}$/gm)].map((m) => ({
    path: m[1],
    capabilities: [...m[2].matchAll(/"(read|list)"/g)].map((c) => c[1] as 'read' | 'list'),
  }));
}

/** {@link readerPolicy} for a store of unknown kind and version: works under both LIST lookups. */
export const READER_POLICY = readerPolicy();

/** The rules of {@link READER_POLICY}, in its order. */
export const READER_POLICY_RULES: readonly ReaderPolicyRule[] = readerPolicyRules();

/** What the reader takes for the answer of a JWT method's configuration that does not exist. */
const UNCONFIGURED = Object.freeze({ data: {} });

/**
 * Reads what the access analysis and the reconciliation need from a live store: auth mounts, JWT
 * configurations, every JWT and AppRole role, every ACL policy. Read and list only (the policy is
 * {@link readerPolicy}).
 * @throws LiveStoreReadError naming the address, the call that failed and the fix
 */
export async function readLiveStore(client: StoreClient): Promise<LiveStore> {
  const call = async (method: 'GET' | 'LIST', apiPath: string, absent?: unknown): Promise<any> => {
    try {
      // LIST as `GET ?list=true`, which the store treats the same (list capability): the LIST verb
      // is refused by some proxies and HTTP stacks.
      return (await client.request('GET', method === 'LIST' ? `${apiPath}?list=true` : apiPath)).body;
    } catch (e) {
      // An empty LIST answers 404 with no errors.
      if (method === 'LIST' && e instanceof StoreError && e.kind === 'not-found' && e.storeErrors.length === 0) return { data: { keys: [] } };
      // A JWT method mounted but never configured (an apply stopped between the mount and its
      // config) answers 404: read as "nothing configured", so drift and adopt can repair it.
      if (absent !== undefined && e instanceof StoreError && e.kind === 'not-found') return absent;
      if (e instanceof StoreError && e.kind === 'permission-denied') {
        const capability = method === 'LIST' ? 'list' : 'read';
        throw new LiveStoreReadError(
          `cannot read the live store at ${client.address}: permission denied: ${method} /v1/${apiPath} (HTTP 403): ` +
            `the token may not ${capability} ${apiPath}. The reader needs read/list only: give it the least-privilege policy ` +
            'of docs/adoption.md (secretstore-iac drift --print-reader-policy)',
        );
      }
      if (e instanceof StoreError) throw new LiveStoreReadError(`cannot read the live store at ${client.address}: ${e.message}`);
      throw e;
    }
  };
  const mounts = parseAuthMounts(await call('GET', 'sys/auth'));
  // The JWT plugin serves both `jwt` and `oidc` mounts (people's single sign-on).
  const roleMounts = mounts.filter((m) => m.type === 'jwt' || m.type === 'oidc' || m.type === 'approle');
  const jwtConfigs = await mapLimited(
    roleMounts.filter((m) => m.type !== 'approle'),
    4,
    async (m) => {
      const body = await call('GET', `auth/${m.path}/config`, UNCONFIGURED);
      return body === UNCONFIGURED ? { ...parseJwtConfig(m.path, { data: {} }), configured: false } : parseJwtConfig(m.path, body);
    },
  );
  const roles: LiveRole[] = [];
  for (const m of roleMounts) {
    const names = parseList(await call('LIST', `auth/${m.path}/role`), `LIST auth/${m.path}/role`);
    roles.push(
      ...(await mapLimited(names, 8, async (role) => {
        const body = await call('GET', `auth/${m.path}/role/${role}`);
        return parseRole(m.path, m.type === 'approle' ? 'approle' : roleMethod(body), role, body);
      })),
    );
  }
  const policyNames = parseList(await call('LIST', 'sys/policies/acl'), 'LIST sys/policies/acl');
  const texts = await mapLimited(policyNames, 8, async (name) => parsePolicy(name, await call('GET', `sys/policies/acl/${name}`)));
  const store = await readStoreTarget(client);
  return {
    ...(store ? { store } : {}),
    ...(client.namespace !== undefined ? { namespace: client.namespace } : {}),
    address: client.address,
    mounts,
    jwtConfigs,
    roles,
    policies: new Map(policyNames.map((name, i) => [name, texts[i]])),
  };
}

/**
 * The live store as the configuration model the access report, diff and who-can use: one
 * identity per role (named `<mount>/<role>`, the JWT method's issuer and key source as bindings
 * as for a declared role), in the namespace read (`LiveStore.namespace`), and every policy except `root` and an unchanged built-in `default` (kept out
 * so that the model treats it as the built-in, as it does for a synthesized output).
 * @param label the "stack" the identities and policies are attributed to
 */
export function liveStoreConfiguration(store: LiveStore, label = 'store'): StoreConfiguration {
  const configs = new Map(store.jwtConfigs.map((c) => [c.mount, c.fields]));
  // Everything read is of the namespace read: its roles get its policies only.
  const namespace = store.namespace === undefined || store.namespace === '' ? {} : { namespace: canonicalStoreNamespace(store.namespace) };
  const identities: Identity[] = store.roles.map((r) => {
    const field = (name: string) => r.fields[name];
    const bindings = roleBindings(r.method, field, 'store');
    // The method's issuer and key source, on each of its roles as for a declared role.
    const config = r.method !== 'approle' ? configs.get(r.mount) : undefined;
    for (const name of config ? JWT_METHOD_FIELDS : []) {
      const value = jwtMethodBinding(config![name]);
      if (value !== undefined) bindings[name] = value;
    }
    const policies = Array.isArray(r.fields.token_policies) ? r.fields.token_policies : [];
    return {
      name: `${r.mount}/${r.role}`,
      method: r.method,
      mount: r.mount,
      role: r.role,
      stack: label,
      ...namespace,
      tokenPolicies: [...new Set(policies.map((p) => storePolicyName(String(p))).filter((p) => p !== ''))].sort(compareStrings),
      noDefaultPolicy: r.fields.token_no_default_policy === true,
      bindings: Object.fromEntries(Object.entries(bindings).sort(([a], [b]) => compareStrings(a, b))),
    };
  });
  const policies = new Map<string, DeclaredPolicy>();
  for (const [listed, text] of store.policies) {
    // The store lists names as it files them; normalised again so that lookups never depend on it.
    const name = storePolicyName(listed);
    if (name === ROOT_POLICY_NAME) continue;
    if (name === DEFAULT_POLICY_NAME && isUnchangedDefault(store, text)) continue;
    policies.set(namespacedLabel(name, namespace.namespace), { name, text, stack: label, ...namespace });
  }
  // The token method is every store's (and namespace's) own: not a login method a configuration adds.
  const authMounts = store.mounts
    .filter((m) => !isBuiltinAuthMount(m))
    .map((m) => {
      const config = m.type === 'jwt' || m.type === 'oidc' ? configs.get(m.path) : undefined;
      const settings = Object.fromEntries(JWT_METHOD_FIELDS.flatMap((name) => {
        const value = config ? jwtMethodBinding(config[name]) : undefined;
        return value === undefined ? [] : [[name, value]];
      }));
      return { path: m.path, type: m.type, stack: label, ...namespace, settings };
    })
    .sort((a, b) => compareStrings(a.path, b.path));
  return {
    identities: identities.sort((a, b) => compareStrings(a.name, b.name)),
    policies,
    stacks: [label],
    liveStore: true,
    ...(store.store ? { store: store.store } : {}),
    authMounts,
    ...(store.namespace !== undefined ? { namespaces: [store.namespace] } : {}),
  };
}

/**
 * True when `text` is the live store's built-in `default` as shipped: that store's text when its
 * kind is known, either store's otherwise.
 */
export function isUnchangedDefault(store: Pick<LiveStore, 'store'>, text: string): boolean {
  return store.store ? text === defaultPolicyText(store.store.kind) : isBuiltinDefaultPolicyText(text);
}
