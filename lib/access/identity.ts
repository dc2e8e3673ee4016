/**
 * The auth methods whose roles the access analysis reads: `oidc` is a role of the JWT/OIDC plugin
 * with `role_type = "oidc"`, the login of people through single sign-on (bound by group).
 */
export type AuthMethod = 'jwt' | 'approle' | 'oidc';

/**
 * A binding value, normalised for comparison: lists sorted, bound claims as claim → sorted values,
 * TTLs in seconds.
 */
export type BindingValue = string | number | boolean | readonly string[] | Readonly<Record<string, readonly string[]>>;

/**
 * Who can log in and under which conditions: a JWT role, an AppRole role or a people's OIDC role,
 * as declared in the synthesized stacks.
 *
 * Identities are named `<auth mount path>/<role name>` (`jwt/registry-ci`,
 * `approle/orchestrator-dev`), the name the library's constructs use and the path prefix under
 * which the store addresses the role (`auth/jwt/role/registry-ci`) in its namespace. An identity
 * of a namespace is told apart by {@link Identity.namespace} (`labelOf`: `approle/app (namespace ns1)`).
 */
export interface Identity {
  /** `<mount>/<role>`. */
  readonly name: string;
  /** Auth method of the mount. */
  readonly method: AuthMethod;
  /** Mount path, without slashes (`jwt`). */
  readonly mount: string;
  /** Role name. */
  readonly role: string;
  /** Stack that declares the role. */
  readonly stack: string;
  /**
   * The store namespace the role is in (`ns1`, canonical), absent for the root namespace. Its tokens
   * get the policies of that namespace only: `app-x` of `ns1` is not `app-x` of the root.
   */
  readonly namespace?: string;
  /** Construct path of the role resource, when cdktf recorded it. */
  readonly declaredAt?: string;
  /** `token_policies`, lower-cased as the store stores them, sorted, without duplicates. */
  readonly tokenPolicies: readonly string[];
  /** `token_no_default_policy`. */
  readonly noDefaultPolicy: boolean;
  /**
   * Everything else that decides who gets a token and for how long: audiences, bound claims,
   * subject, issuer, TTLs, CIDRs, token type, Secret ID settings. Keys are the provider's field
   * names; unset fields take the provider's default so that "unset" and "default" compare equal.
   */
  readonly bindings: Readonly<Record<string, BindingValue>>;
}

/** Binding fields holding durations in seconds. 0 means "the store's default" or "no expiry". */
export const TTL_FIELDS: readonly string[] = [
  'token_ttl',
  'token_max_ttl',
  'token_explicit_max_ttl',
  'token_period',
  'secret_id_ttl',
];
