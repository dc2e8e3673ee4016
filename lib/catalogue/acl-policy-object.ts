import { storePolicyName } from '../model/store-policy-name';
import { crudFor, listingRules, StoreObjectKind } from './store-object-kind';

/**
 * `vault_policy`: an ACL policy. Policies share one name space in the store, whatever stack or auth
 * method declares them.
 */
export const ACL_POLICY_OBJECT: StoreObjectKind = {
  resourceType: 'vault_policy',
  kind: 'policy',
  description: 'an ACL policy',
  identityFields: ['name'],
  replacedWhenChanged: ['name'],
  writtenInPlace: true,
  locate: (f) => {
    const n = storePolicyName(String(f.name));
    return { name: n, storePath: `sys/policies/acl/${n}`, importId: String(f.name) };
  },
  name: (f) => ({ space: 'policy', key: storePolicyName(String(f.name)) }),
  nameFields: ['name'],
  nameComparison: 'policy names are one name space for the whole store, trimmed and lower-cased',
  // The provider's id of a policy is its name as given.
  derivedAttribute: (f, a) => (a === 'id' ? f.name : undefined),
  // The provider requests the policy under its name as given (`PUT sys/policies/acl/Upper-Case`), and
  // ACL paths are case-sensitive: a grant of the stored (lower-cased) name only was refused with 403
  // (OpenBao 2.4.0, pipeline-stack-grants.store.test.ts); the library's own reads use the stored name (`locate`).
  pipelineRules: (f, access) => [
    ...[...new Set([String(f.name), storePolicyName(String(f.name))])].map((name) => ({ path: `sys/policies/acl/${name}`, capabilities: crudFor(access) })),
    ...listingRules('sys/policies/acl'),
  ],
  readerRules: [
    { path: 'sys/policies/acl', capabilities: ['list'] },
    { path: 'sys/policies/acl/*', capabilities: ['read'] },
  ],
};
