import { crudFor, StoreObjectKind } from './store-object-kind';

/** A policy name as the store keeps it: surrounding whitespace trimmed, lower-cased (both stores' sys/policies handler). */
export function storePolicyName(name: unknown): string {
  return String(name).trim().toLowerCase();
}

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
    const n = storePolicyName(f.name);
    return { name: n, storePath: `sys/policies/acl/${n}`, importId: String(f.name) };
  },
  name: (f) => ({ space: 'policy', key: storePolicyName(f.name) }),
  pipelineRules: (f, access) => [{ path: `sys/policies/acl/${storePolicyName(f.name)}`, capabilities: crudFor(access) }],
  readerRules: [
    { path: 'sys/policies/acl', capabilities: ['list'] },
    { path: 'sys/policies/acl/*', capabilities: ['read'] },
  ],
};
