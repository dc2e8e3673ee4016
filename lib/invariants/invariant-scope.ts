import { Acl } from '../acl/acl';
import { RulePath } from '../acl/rule-path';
import { CAPABILITY_BITS, StoreCapability, capabilitiesOf, capabilityMask } from '../acl/store-capability';

/**
 * The request paths an invariant path pattern covers, decided by the store's evaluator: the
 * pattern as a one-rule ACL granting every capability of the store (`sudo` included, so that a
 * root-protected path is covered like any other), built once per store, LIST lookup and pattern.
 */
export class InvariantScopes {
  private readonly cache = new Map<string, Acl>();

  /**
   * True when `pattern` covers a request needing `capability` on `path`, matched as the store
   * matches the request against a rule of that path on a token's ACL like `like`.
   */
  covers(pattern: string, capability: StoreCapability, path: string, like: Pick<Acl, 'store' | 'listLookup'>): boolean {
    return this.scopeOf(pattern, like).check(capability, path).allowed;
  }

  private scopeOf(pattern: string, like: Pick<Acl, 'store' | 'listLookup'>): Acl {
    const key = `${like.store}\u0000${like.listLookup}\u0000${pattern}`;
    let acl = this.cache.get(key);
    if (!acl) {
      const all = [...capabilitiesOf(like.store)].filter((c): c is StoreCapability => c !== 'deny' && c in CAPABILITY_BITS);
      acl = Acl.fromPolicies([{ name: 'invariant', syntax: 'library', rules: [{ path: RulePath.parse(pattern), mask: capabilityMask(all), constraints: [] }] }], {
        store: like.store,
        listLookup: like.listLookup,
      });
      this.cache.set(key, acl);
    }
    return acl;
  }
}
