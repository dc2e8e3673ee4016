import { DEFAULT_POLICY_NAME, defaultPolicyText } from '../acl/default-policy';
import { StoreKind } from '../model/store-target';
import { storePolicyName } from '../model/store-policy-name';

/**
 * The policies on a role's tokens as the store computes them at login: its `token_policies` as the
 * store files them (trimmed, lower-cased, empty names dropped), plus `default` unless
 * `token_no_default_policy` is true (an explicitly listed `default` stays); sorted, each once.
 * The one rule every reader of roles uses: the access model (`access-diff`, `invariants check`,
 * `who-can`, the live model) and rule SSI-R16.
 */
export function loginTokenPolicies(tokenPolicies: Iterable<string>, noDefaultPolicy: boolean): string[] {
  const names = new Set([...tokenPolicies].map(storePolicyName).filter((n) => n !== ''));
  if (!noDefaultPolicy) names.add(DEFAULT_POLICY_NAME);
  return [...names].sort();
}

/**
 * The text the store holds for policy `name`: the text the configuration writes, else, for
 * `default` (which every store has from the start), the stock text of the target store; undefined
 * for any other policy nobody writes (the store ignores a name it does not have).
 */
export function storeHeldPolicyText(name: string, written: string | undefined, kind: StoreKind): string | undefined {
  if (written !== undefined) return written;
  return name === DEFAULT_POLICY_NAME ? defaultPolicyText(kind) : undefined;
}
