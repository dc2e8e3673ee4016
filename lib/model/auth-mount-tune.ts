import { Duration, DURATION_HINT } from './duration';
import { ValidationProblem } from './validation-problem';
import { expectEnum, expectInstance, expectShape, expectStringArray, fieldOf, optional, PropsSchema } from './props-check';

/** Token types an auth mount can be tuned to (`bao auth tune -token-type`). */
export const MOUNT_TOKEN_TYPES = ['default-service', 'default-batch', 'service', 'batch'] as const;

/**
 * The tune settings of an auth mount that the vault provider (5.9.0, `tune` block of
 * `vault_auth_backend` and `vault_jwt_auth_backend`) manages. None forces a replacement: a
 * difference is changed in place (`sys/auth/<path>/tune`).
 *
 * Left out, a setting is not declared: the provider leaves the store's value as it is, and `drift`
 * compares it with the store's default (0 = the system TTL, `hidden`, `default-service`, no keys).
 */
export interface AuthMountTune {
  /** Default lease TTL of tokens from this mount (0: the system default). */
  readonly defaultLeaseTtl?: Duration;
  /** Maximum lease TTL of tokens from this mount (0: the system maximum). */
  readonly maxLeaseTtl?: Duration;
  /** Whether the mount is listed by the unauthenticated UI listing (`unauth`) or not (`hidden`). */
  readonly listingVisibility?: 'unauth' | 'hidden';
  /** Type of tokens the mount issues. */
  readonly tokenType?: (typeof MOUNT_TOKEN_TYPES)[number];
  /** Request keys the audit devices log in clear (not HMAC'd). */
  readonly auditNonHmacRequestKeys?: readonly string[];
  /** Response keys the audit devices log in clear (not HMAC'd). */
  readonly auditNonHmacResponseKeys?: readonly string[];
}

/** The run-time checks of {@link AuthMountTune}. */
export const AUTH_MOUNT_TUNE_SCHEMA: PropsSchema = {
  defaultLeaseTtl: optional(expectInstance(Duration, DURATION_HINT)),
  maxLeaseTtl: optional(expectInstance(Duration, DURATION_HINT)),
  listingVisibility: optional(expectEnum(['unauth', 'hidden'])),
  tokenType: optional(expectEnum([...MOUNT_TOKEN_TYPES])),
  auditNonHmacRequestKeys: optional(expectStringArray),
  auditNonHmacResponseKeys: optional(expectStringArray),
};

/** The check of an optional `tune` prop. */
export const expectAuthMountTune = optional(expectShape(AUTH_MOUNT_TUNE_SCHEMA, 'an object of tune settings (AuthMountTune)'));

/**
 * Request and response keys that must stay HMAC-ed in the audit log, each with what it carries: a
 * key listed in `auditNonHmacRequestKeys` or `auditNonHmacResponseKeys` is written in clear to every
 * audit device, whose log more people and systems read than the store. What the AppRole, JWT and
 * OIDC methods (and the token endpoints) take and answer that is a credential, or completes one.
 * Keeping a value HMAC-ed costs nothing: the same value always has the same HMAC, so log lines stay
 * comparable, and an operator finds a known value's HMAC with `sys/audit-hash`.
 */
export const HMAC_ONLY_AUDIT_KEYS: Readonly<Record<string, string>> = {
  secret_id: 'an AppRole Secret ID, the secret half of a login (login and secret-id lookup requests, secret-id responses)',
  secret_id_accessor: 'the accessor of a Secret ID, which looks it up and destroys it (secret-id responses, accessor requests)',
  // The spec calls the Role ID non-sensitive, yet delivers it only through the deployment
  // automation (spec §5): in clear in the log it is one half of every application's login.
  role_id: 'an AppRole Role ID, half of a login: delivered only by the deployment automation (login requests, role-id responses)',
  jwt: 'a CI job token (JWT login requests), valid for the CI system\'s other relying parties until it expires',
  id_token: 'an OIDC ID token (callback requests of form_post logins)',
  code: 'an OIDC authorization code (callback requests): with the state it completes a person\'s login',
  state: 'the state of an OIDC login in progress (callback requests): with the code it completes the login',
  client_nonce: 'the CLI\'s nonce of an OIDC login (auth_url and callback requests), which binds the login to the CLI that began it',
  auth_url: 'the OIDC login URL of a login in progress (auth_url responses): it carries the state and nonce',
  oidc_client_secret: 'the OIDC client secret (auth/<mount>/config requests)',
  client_token: 'a store token',
  token: 'a store token (token endpoints, wrapped responses)',
  accessor: 'a token accessor, which looks up, renews and revokes the token',
};

/** Problems of the durations of a tune, its audit keys, and its default TTL against its maximum. */
export function authMountTuneProblems(field: string, tune: AuthMountTune | undefined): ValidationProblem[] {
  if (!tune) return [];
  const problems: ValidationProblem[] = [];
  for (const key of ['defaultLeaseTtl', 'maxLeaseTtl'] as const) {
    const d = tune[key];
    if (d instanceof Duration) problems.push(...d.problems(fieldOf(field, key)));
  }
  const { defaultLeaseTtl: def, maxLeaseTtl: max } = tune;
  // 0 means the system's value; the store compares two declared, non-zero TTLs (and refuses the tune).
  if (def instanceof Duration && max instanceof Duration && def.isValid && max.isValid && max.toSeconds() > 0 && def.toSeconds() > max.toSeconds()) {
    problems.push(
      new ValidationProblem(
        fieldOf(field, 'defaultLeaseTtl'),
        def.toString(),
        `must not exceed ${fieldOf(field, 'maxLeaseTtl')} (${max}): the store refuses a mount whose default lease TTL is above its maximum, so the apply would fail`,
      ),
    );
  }
  for (const key of ['auditNonHmacRequestKeys', 'auditNonHmacResponseKeys'] as const) {
    const keys = tune[key];
    if (!Array.isArray(keys)) continue;
    keys.forEach((k, i) => {
      // Compared without case: refusing `Secret_ID` too costs nothing.
      const name = typeof k === 'string' ? k.toLowerCase() : '';
      if (Object.prototype.hasOwnProperty.call(HMAC_ONLY_AUDIT_KEYS, name)) {
        const why = HMAC_ONLY_AUDIT_KEYS[name];
        problems.push(
          new ValidationProblem(
            `${fieldOf(field, key)}[${i}]`,
            k,
            `must stay HMAC-ed in the audit log: it is ${why}; a key listed here is written in clear to every audit device (keys that must stay HMAC-ed: ${Object.keys(HMAC_ONLY_AUDIT_KEYS).join(', ')})`,
          ),
        );
      }
    });
  }
  return problems;
}

/** A role of an auth mount, as far as the mount's token type concerns it. */
export interface TokenIssuingRole {
  /** The role's construct path (`app-roles/billing-dev`). */
  readonly constructPath: string;
  /** The role's name on the store. */
  readonly roleName: string;
  /** The token type the role declares (every role the library writes declares one). */
  readonly tokenType: 'service' | 'batch';
  /** How often the role's tokens are renewed (the agents' renewal interval), when they are. */
  readonly renewedEvery?: Duration;
}

/**
 * The token type the store issues on a mount tuned to `mountType` to a role that declares
 * `roleType`: `service` and `batch` on the mount override every role; `default-service` and
 * `default-batch` (and a mount left untuned) only choose for roles that declare `default`.
 */
export function issuedTokenType(mountType: AuthMountTune['tokenType'], roleType: 'service' | 'batch' | 'default'): 'service' | 'batch' {
  if (mountType === 'service' || mountType === 'batch') return mountType;
  if (roleType !== 'default') return roleType;
  return mountType === 'default-batch' ? 'batch' : 'service';
}

/**
 * Problems of a mount's `tune.tokenType` that overrides what its roles declare: the store would
 * issue every role of the mount tokens of the mount's type. A batch token cannot be renewed, so an
 * override to `batch` of a role whose tokens are renewed (the AppRole agents renew every 45 minutes,
 * spec §4.1) ends every application's token at its first TTL.
 */
export function mountTokenTypeProblems(field: string, tune: AuthMountTune | undefined, roles: readonly TokenIssuingRole[]): ValidationProblem[] {
  const mountType = tune?.tokenType;
  if (mountType !== 'service' && mountType !== 'batch') return [];
  const overridden = roles.filter((r) => issuedTokenType(mountType, r.tokenType) !== r.tokenType);
  if (overridden.length === 0) return [];
  const shown = overridden.slice(0, 3).map((r) => `${r.roleName} (${r.constructPath})`).join(', ');
  const more = overridden.length > 3 ? ` and ${overridden.length - 3} more` : '';
  const renewed = overridden.find((r) => r.renewedEvery !== undefined);
  const why =
    mountType === 'batch' && renewed
      ? `: batch tokens cannot be renewed, and the agents renew theirs every ${renewed.renewedEvery} (renew-self), so each application's token would end at its first TTL`
      : '';
  return [
    new ValidationProblem(
      fieldOf(field, 'tokenType'),
      mountType,
      `overrides the token type the roles of the mount declare: the store would issue ${mountType} tokens to ${shown}${more}, which declare "${overridden[0].tokenType}"${why}; leave tokenType out, or use "default-${mountType}", which only applies to roles that declare none`,
    ),
  ];
}

/** The store's (and the provider's) name of each tune setting. */
export const TUNE_FIELD_NAMES: Readonly<Record<keyof AuthMountTune, string>> = {
  defaultLeaseTtl: 'default_lease_ttl',
  maxLeaseTtl: 'max_lease_ttl',
  listingVisibility: 'listing_visibility',
  tokenType: 'token_type',
  auditNonHmacRequestKeys: 'audit_non_hmac_request_keys',
  auditNonHmacResponseKeys: 'audit_non_hmac_response_keys',
};

/**
 * The provider's `tune` block for a declared tune, or undefined when nothing is declared (no block:
 * the synthesized output stays as it was without tune). Durations as `<seconds>s`, which the
 * provider's duration check takes; `literal` makes each key a Terraform literal (the construct's encoder).
 */
export function renderAuthMountTune(tune: AuthMountTune | undefined, literal: (keys: readonly string[]) => string[]):
  | { defaultLeaseTtl?: string; maxLeaseTtl?: string; listingVisibility?: string; tokenType?: string; auditNonHmacRequestKeys?: string[]; auditNonHmacResponseKeys?: string[] }[]
  | undefined {
  if (!tune || Object.values(tune).every((v) => v === undefined)) return undefined;
  const ttl = (d: Duration | undefined) => (d instanceof Duration && d.isValid ? `${d.toSeconds()}s` : undefined);
  return [
    {
      defaultLeaseTtl: ttl(tune.defaultLeaseTtl),
      maxLeaseTtl: ttl(tune.maxLeaseTtl),
      listingVisibility: tune.listingVisibility,
      tokenType: tune.tokenType,
      auditNonHmacRequestKeys: tune.auditNonHmacRequestKeys ? literal(tune.auditNonHmacRequestKeys) : undefined,
      auditNonHmacResponseKeys: tune.auditNonHmacResponseKeys ? literal(tune.auditNonHmacResponseKeys) : undefined,
    },
  ];
}
