import { crudFor, mountPathOf, StoreObjectKind } from './store-object-kind';

/**
 * `vault_jwt_auth_backend_role`: a role of a JWT or OIDC method (CI roles, the pipeline's roles,
 * people's group roles). The JWT plugin keeps role names as given: unique within their method.
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
  name: (f) => ({ space: `role of auth/${mountPathOf(f.backend, 'jwt')}`, key: String(f.role_name) }),
  pipelineRules: (f, access) => [{ path: `auth/${mountPathOf(f.backend, 'jwt')}/role/${String(f.role_name)}`, capabilities: crudFor(access) }],
  readerRules: [
    { path: 'auth/+/role', capabilities: ['list'] },
    { path: 'auth/+/role/+', capabilities: ['read'] },
  ],
};
