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

/** Problems of the durations of a tune (the other fields are checked by {@link AUTH_MOUNT_TUNE_SCHEMA}). */
export function authMountTuneProblems(field: string, tune: AuthMountTune | undefined): ValidationProblem[] {
  if (!tune) return [];
  const problems: ValidationProblem[] = [];
  for (const key of ['defaultLeaseTtl', 'maxLeaseTtl'] as const) {
    const d = tune[key];
    if (d instanceof Duration) problems.push(...d.problems(fieldOf(field, key)));
  }
  return problems;
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
