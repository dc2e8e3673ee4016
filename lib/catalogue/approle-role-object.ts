import { goLowerCase } from '../model/go-unicode';
import { crudFor, listingRules, mountPathOf, NO_DERIVED_ATTRIBUTE, StoreObjectKind } from './store-object-kind';

/**
 * `vault_approle_auth_backend_role`: an application's AppRole role. The AppRole method lower-cases
 * role names (roles created since Vault 0.9 and on every OpenBao), so `Billing` and `billing` are
 * one role. The provider reads the Role ID back, which is not a secret (a login also needs a Secret ID).
 */
export const APPROLE_ROLE_OBJECT: StoreObjectKind = {
  resourceType: 'vault_approle_auth_backend_role',
  kind: 'approle-role',
  description: 'an AppRole role',
  identityFields: ['backend', 'role_name'],
  replacedWhenChanged: ['backend', 'role_name'],
  writtenInPlace: true,
  locate: (f) => {
    const m = mountPathOf(f.backend, 'approle');
    const r = String(f.role_name);
    return { mount: m, name: r, storePath: `auth/${m}/role/${r}`, importId: `auth/${m}/role/${r}` };
  },
  name: (f) => ({ space: `role of auth/${mountPathOf(f.backend, 'approle')}`, key: goLowerCase(String(f.role_name)) }),
  nameFields: ['role_name'],
  nameComparison: 'AppRole role names are lower-cased by the store, unique within their mount',
  derivedAttribute: NO_DERIVED_ATTRIBUTE,
  pipelineRules: (f, access) => {
    const role = `auth/${mountPathOf(f.backend, 'approle')}/role/${String(f.role_name)}`;
    return [
      { path: role, capabilities: crudFor(access) },
      { path: `${role}/role-id`, capabilities: ['read'] },
      ...listingRules(`auth/${mountPathOf(f.backend, 'approle')}/role`),
    ];
  },
  readerRules: [
    { path: 'auth/+/role', capabilities: ['list'] },
    { path: 'auth/+/role/+', capabilities: ['read'] },
    { path: 'auth/+/role/+/role-id', capabilities: ['read'] },
  ],
};
