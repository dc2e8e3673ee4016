import { goLowerCase } from '../model/go-unicode';
import { crudFor, listingRules, mountPathOf, NO_DERIVED_ATTRIBUTE, StoreObjectKind } from './store-object-kind';

/**
 * `vault_jwt_auth_backend_role`: a role of a JWT or OIDC method (CI roles, the pipeline's roles,
 * people's group roles). Both stores lower-case JWT role names (`Admins` and `admins` are one role,
 * the later write replacing the earlier: test/store/store-names.store.test.ts on OpenBao 2.4.0 and
 * Vault 1.21.1), so names are unique within their method as lower-cased.
 */
export const JWT_ROLE_OBJECT: StoreObjectKind = {
  resourceType: 'vault_jwt_auth_backend_role',
  kind: 'jwt-role',
  description: 'a role of a JWT/OIDC auth method',
  identityFields: ['backend', 'role_name'],
  replacedWhenChanged: ['backend', 'role_name', 'role_type'],
  writtenInPlace: true,
  locate: (f) => {
    const m = mountPathOf(f.backend, 'jwt');
    const r = String(f.role_name);
    return { mount: m, name: r, storePath: `auth/${m}/role/${r}`, importId: `auth/${m}/role/${r}` };
  },
  name: (f) => ({ space: `role of auth/${mountPathOf(f.backend, 'jwt')}`, key: goLowerCase(String(f.role_name)) }),
  nameFields: ['role_name'],
  nameComparison: 'JWT/OIDC role names are lower-cased by the store, unique within their mount',
  derivedAttribute: NO_DERIVED_ATTRIBUTE,
  pipelineRules: (f, access) => [
    { path: `auth/${mountPathOf(f.backend, 'jwt')}/role/${String(f.role_name)}`, capabilities: crudFor(access) },
    ...listingRules(`auth/${mountPathOf(f.backend, 'jwt')}/role`),
  ],
  readerRules: [
    { path: 'auth/+/role', capabilities: ['list'] },
    { path: 'auth/+/role/+', capabilities: ['read'] },
  ],
};
