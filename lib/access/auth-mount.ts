import { BindingValue, Identity } from './identity';
import { compareStrings } from '../private/compare-strings';

/**
 * An auth method mounted on the store (a login method): where, of which type, and for JWT/OIDC
 * methods the settings that decide whose tokens it accepts (issuer, key source, client id).
 */
export interface AuthMount {
  /** Mount path without slashes (`jwt`, `approle`, `oidc`). */
  readonly path: string;
  /** The method's type (`jwt`, `oidc`, `approle`). */
  readonly type: string;
  /** Declaring stack (or the live store's label). */
  readonly stack: string;
  /** Construct path of the mount resource, when recorded. */
  readonly declaredAt?: string;
  /**
   * The JWT/OIDC method's trust settings that are set (`bound_issuer`, `oidc_discovery_url`,
   * `jwks_url`, `jwt_validation_pubkeys`, their CA certificates, `oidc_client_id`), normalised as
   * the roles' bindings; empty for other methods.
   */
  readonly settings: Readonly<Record<string, BindingValue>>;
}

/**
 * The auth mounts a configuration's identities log in through, for a configuration that does not
 * list its mounts: one per mount path, its type the identities' method, its settings the method
 * fields read onto its roles.
 */
export function authMountsOfIdentities(identities: readonly Identity[], methodFields: readonly string[]): AuthMount[] {
  const byPath = new Map<string, AuthMount>();
  for (const identity of identities) {
    if (byPath.has(identity.mount)) continue;
    const settings = Object.fromEntries(methodFields.filter((f) => identity.bindings[f] !== undefined).map((f) => [f, identity.bindings[f]]));
    byPath.set(identity.mount, { path: identity.mount, type: identity.method, stack: identity.stack, settings });
  }
  return [...byPath.values()].sort((a, b) => compareStrings(a.path, b.path));
}
