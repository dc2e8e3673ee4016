import { AUTH_MOUNT_NAME_COMPARISON, AUTH_MOUNT_NAME_SPACE, AUTH_MOUNT_READER_RULES, authMountPipelineRules } from './auth-mount-object';
import { crudFor, mountPathOf, StoreObjectKind } from './store-object-kind';

/**
 * `vault_jwt_auth_backend`: a JWT or OIDC auth method with its configuration (issuer, keys or
 * discovery, OIDC client), which the store keeps at `auth/PATH/config`. It shares the auth mount
 * name space with every other auth method.
 */
export const JWT_AUTH_MOUNT_OBJECT: StoreObjectKind = {
  resourceType: 'vault_jwt_auth_backend',
  kind: 'jwt-auth-mount',
  description: 'a JWT/OIDC auth method mount and its configuration',
  identityFields: ['path', 'type'],
  replacedWhenChanged: ['local', 'type'],
  writtenInPlace: false,
  locate: (f) => {
    const p = mountPathOf(f.path, 'jwt');
    return { mount: p, name: p, storePath: `sys/auth/${p}`, importId: p };
  },
  name: (f) => ({ space: AUTH_MOUNT_NAME_SPACE, key: mountPathOf(f.path, 'jwt') }),
  nameFields: ['path'],
  nameComparison: AUTH_MOUNT_NAME_COMPARISON,
  // The provider's id of a mount is its path, `jwt` when none is given.
  derivedAttribute: (f, a) => (a === 'id' || a === 'path' ? (f.path ?? 'jwt') : undefined),
  pipelineRules: (f, access) => {
    const p = mountPathOf(f.path, 'jwt');
    return [...authMountPipelineRules(p, access), { path: `auth/${p}/config`, capabilities: crudFor(access) }];
  },
  readerRules: [...AUTH_MOUNT_READER_RULES, { path: 'auth/+/config', capabilities: ['read'] }],
};
