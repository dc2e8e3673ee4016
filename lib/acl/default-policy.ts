import { StoreKind } from '../model/store-target';

/** Name of the store's built-in policy attached to tokens unless `token_no_default_policy`. */
export const DEFAULT_POLICY_NAME = 'default';

/** Name of the store's all-powerful built-in policy; auth methods refuse to issue tokens with it. */
export const ROOT_POLICY_NAME = 'root';

/**
 * The text of the `default` policy as OpenBao 2.x ships it (`vault/policy_store.go`), verified
 * byte for byte against `GET sys/policies/acl/default` of a fresh store by the real-store tests.
 *
 * Its two `identity/entity/...` rules are templated: the store keeps them only for tokens that
 * have an identity entity (every JWT or AppRole login does; a bare `auth/token/create` token does
 * not).
 */
export const DEFAULT_POLICY_TEXT = `
# Allow tokens to look up their own properties
path "auth/token/lookup-self" {
    capabilities = ["read"]
}

# Allow tokens to renew themselves
path "auth/token/renew-self" {
    capabilities = ["update"]
}

# Allow tokens to revoke themselves
path "auth/token/revoke-self" {
    capabilities = ["update"]
}

# Allow a token to look up its own capabilities on a path
path "sys/capabilities-self" {
    capabilities = ["update"]
}

# Allow a token to look up its own entity by id or name
path "identity/entity/id/{{identity.entity.id}}" {
  capabilities = ["read"]
}
path "identity/entity/name/{{identity.entity.name}}" {
  capabilities = ["read"]
}


# Allow a token to look up its resultant ACL from all policies. This is useful
# for UIs. It is an internal path because the format may change at any time
# based on how the internal ACL features and capabilities change.
path "sys/internal/ui/resultant-acl" {
    capabilities = ["read"]
}

# Allow a token to renew a lease via lease_id in the request body; old path for
# old clients, new path for newer
path "sys/renew" {
    capabilities = ["update"]
}
path "sys/leases/renew" {
    capabilities = ["update"]
}

# Allow looking up lease properties. This requires knowing the lease ID ahead
# of time and does not divulge any sensitive information.
path "sys/leases/lookup" {
    capabilities = ["update"]
}

# Allow a token to manage its own cubbyhole
path "cubbyhole/*" {
    capabilities = ["create", "read", "update", "delete", "list"]
}

# Allow a token to wrap arbitrary values in a response-wrapping token
path "sys/wrapping/wrap" {
    capabilities = ["update"]
}

# Allow a token to look up the creation time and TTL of a given
# response-wrapping token
path "sys/wrapping/lookup" {
    capabilities = ["update"]
}

# Allow a token to unwrap a response-wrapping token. This is a convenience to
# avoid client token swapping since this is also part of the response wrapping
# policy.
path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}

# Allow general purpose tools
path "sys/tools/hash" {
    capabilities = ["update"]
}
path "sys/tools/hash/*" {
    capabilities = ["update"]
}

# Allow a token to make requests to the Authorization Endpoint for OIDC providers.
path "identity/oidc/provider/+/authorize" {
    capabilities = ["read", "update"]
}
`;

/** The rule HashiCorp Vault's `default` policy has and OpenBao's lacks (Enterprise control groups). */
const VAULT_CONTROL_GROUP_RULE = `# Allow checking the status of a Control Group request if the user has the
# accessor
path "sys/control-group/request" {
    capabilities = ["update"]
}

`;

const OIDC_COMMENT = '# Allow a token to make requests to the Authorization Endpoint for OIDC providers.';

/**
 * The text of the `default` policy as HashiCorp Vault 1.21 ships it (`vault/policy_store.go`):
 * OpenBao's with one more rule, `sys/control-group/request` (update), before the OIDC rule.
 * Verified byte for byte against `GET sys/policies/acl/default` of a fresh Vault by the store tests.
 */
export const VAULT_DEFAULT_POLICY_TEXT = DEFAULT_POLICY_TEXT.replace(OIDC_COMMENT, VAULT_CONTROL_GROUP_RULE + OIDC_COMMENT);

/** The built-in `default` policy text of a store kind. */
export function defaultPolicyText(kind: StoreKind = 'openbao'): string {
  return kind === 'vault' ? VAULT_DEFAULT_POLICY_TEXT : DEFAULT_POLICY_TEXT;
}

/** True when `text` is the built-in `default` policy of either store, as shipped. */
export function isBuiltinDefaultPolicyText(text: string): boolean {
  return text === DEFAULT_POLICY_TEXT || text === VAULT_DEFAULT_POLICY_TEXT;
}
