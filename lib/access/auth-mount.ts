import { BindingValue, Identity } from './identity';
import { compareStrings } from '../private/compare-strings';
import { namespacedLabel } from './namespaced-name';

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
  /** The store namespace it is mounted in, canonical; absent for the root namespace. */
  readonly namespace?: string;
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
 * list its mounts: one per namespace and mount path, its type the identities' method, its settings the method
 * fields read onto its roles.
 */
export function authMountsOfIdentities(identities: readonly Identity[], methodFields: readonly string[]): AuthMount[] {
  const byPath = new Map<string, AuthMount>();
  for (const identity of identities) {
    // One mount per namespace and path: `approle/` of `ns1` is not the root's.
    const key = namespacedLabel(identity.mount, identity.namespace);
    if (byPath.has(key)) continue;
    const settings = Object.fromEntries(methodFields.filter((f) => identity.bindings[f] !== undefined).map((f) => [f, identity.bindings[f]]));
    const namespace = identity.namespace === undefined ? {} : { namespace: identity.namespace };
    byPath.set(key, { path: identity.mount, type: identity.method, stack: identity.stack, ...namespace, settings });
  }
  return [...byPath.values()].sort(compareAuthMounts);
}

/** Auth mounts by path, then namespace (the root namespace's first). */
export function compareAuthMounts(a: AuthMount, b: AuthMount): number {
  return compareStrings(a.path, b.path) || compareStrings(a.namespace ?? '', b.namespace ?? '');
}
