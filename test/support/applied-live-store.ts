import { DeclaredObject } from '../../lib/reconcile/declared-object';
import { LiveAuthMount, LiveMountTune, LiveRole, LiveStore } from '../../lib/reconcile/live-store-reader';
import { DEFAULT_POLICY_TEXT } from '../../lib/acl/default-policy';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A live store under construction: every part editable. */
export interface AppliedStore {
  mounts: Mutable<LiveAuthMount>[];
  jwtConfigs: any[];
  roles: Mutable<LiveRole>[];
  policies: Map<string, string>;
}

/** The tune settings `GET sys/auth` shows for a mount never tuned (OpenBao 2.4.0). */
export function storeTune(): Mutable<LiveMountTune> {
  return { default_lease_ttl: 0, max_lease_ttl: 0, listing_visibility: '', token_type: 'default-service', audit_non_hmac_request_keys: [], audit_non_hmac_response_keys: [] };
}

/** The store as applying `declared` leaves it (field values as declared). */
function appliedStore(declared: readonly DeclaredObject[]): AppliedStore {
  const mounts: Mutable<LiveAuthMount>[] = [{ path: 'token', type: 'token', accessor: 'auth_token_1', description: 'token based credentials', local: false, sealWrap: false, tune: storeTune() }];
  const jwtConfigs: any[] = [];
  const roles: Mutable<LiveRole>[] = [];
  const policies = new Map<string, string>([
    ['default', DEFAULT_POLICY_TEXT],
    ['root', ''],
  ]);
  for (const o of declared) {
    if (o.kind === 'auth-mount' || o.kind === 'jwt-auth-mount') {
      // As the apply leaves it: the declared description and local; tune as the store has it by default.
      mounts.push({
        path: o.name,
        type: String(o.fields.type ?? 'jwt'),
        accessor: `auth_${o.name}_1`,
        description: String(o.fields.description ?? ''),
        local: o.fields.local === true,
        sealWrap: false,
        tune: storeTune(),
      });
      if (o.kind === 'jwt-auth-mount') {
        jwtConfigs.push({
          mount: o.name,
          fields: {
            bound_issuer: String(o.fields.bound_issuer ?? ''),
            default_role: '',
            jwks_ca_pem: '',
            jwks_url: '',
            jwt_supported_algs: [],
            jwt_validation_pubkeys: [],
            oidc_discovery_ca_pem: '',
            oidc_discovery_url: String(o.fields.oidc_discovery_url ?? ''),
          },
        });
      }
    } else if (o.kind === 'jwt-role' || o.kind === 'approle-role') {
      // The provider sends a comma-separated bound-claim string as a list; the store then holds the list.
      const claims = o.fields.bound_claims as Record<string, unknown> | undefined;
      const bound = claims && Object.fromEntries(Object.entries(claims).map(([k, v]) => [k, typeof v === 'string' ? v.split(',') : v]));
      roles.push({ mount: o.mount!, method: o.kind === 'jwt-role' ? 'jwt' : 'approle', role: o.name, fields: { ...o.fields, ...(bound ? { bound_claims: bound } : {}) } });
    } else {
      policies.set(o.name, String(o.fields.policy));
    }
  }
  return { mounts, jwtConfigs, roles, policies };
}

/**
 * A LiveStore as applying `declared` leaves it, changed by `edit` the way an operator changes a
 * store, for drift and adoption tests without a store (the real store is in test/store/).
 */
export function appliedLiveStore(declared: readonly DeclaredObject[], edit: (s: AppliedStore) => void = () => undefined): LiveStore {
  const s = appliedStore(declared);
  edit(s);
  return { address: 'https://store.example', ...s, mounts: s.mounts.sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

