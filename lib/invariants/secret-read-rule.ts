import { AclRule } from '../acl/acl';
import { DEFAULT_POLICY_NAME } from '../acl/default-policy';
import { maskHas } from '../acl/store-capability';

/**
 * Paths that are not shared secrets: per-token storage (`cubbyhole/`) and the store's own
 * endpoints. A read rule there never counts as an application's own secret path.
 */
const NOT_SECRETS = ['cubbyhole/', 'sys/', 'auth/', 'identity/'];

/**
 * True when `rule` is a read of secrets an application owns: it grants `read`, comes from a policy
 * other than `default` alone, and lies outside per-token storage and the store's endpoints. The
 * paths an application reads this way are its own (the shared-read flag of the review and the
 * `@other-applications` path of an invariant both start from them).
 */
export function isSecretReadRule(rule: AclRule): boolean {
  return maskHas(rule.mask, 'read') && !rule.policies.every((p) => p === DEFAULT_POLICY_NAME) && !NOT_SECRETS.some((prefix) => rule.path.key.startsWith(prefix));
}
