import { crudFor, mountPathOf, PipelineAccess, StoreAccessRule, StoreObjectKind } from './store-object-kind';

/**
 * The rules every auth mount needs, whatever its type: enabling or disabling needs sudo on
 * `sys/auth/PATH`; the provider reads the mount back through `sys/mounts/auth/PATH` and tunes it
 * through either tune path (checked on the real stores).
 */
export function authMountPipelineRules(path: string, access: PipelineAccess): StoreAccessRule[] {
  const tune = access === 'plan' ? (['read'] as const) : (['read', 'update'] as const);
  return [
    { path: `sys/auth/${path}`, capabilities: access === 'plan' ? ['read'] : [...crudFor(access), 'sudo'] },
    { path: `sys/auth/${path}/tune`, capabilities: [...tune] },
    { path: `sys/mounts/auth/${path}/tune`, capabilities: [...tune] },
    { path: `sys/mounts/auth/${path}`, capabilities: ['read'] },
  ];
}

/**
 * The reader's rules for auth mounts: the mount table, each mount and its tune settings through
 * `sys/mounts/auth/` (`sys/auth/<mount>` and its tune are sudo-only on both stores).
 */
export const AUTH_MOUNT_READER_RULES: readonly StoreAccessRule[] = [
  { path: 'sys/auth', capabilities: ['read'] },
  { path: 'sys/mounts/auth/+', capabilities: ['read'] },
  { path: 'sys/mounts/auth/+/tune', capabilities: ['read'] },
];

/** The name space of every auth mount, whatever its type: what marks a catalogue kind as a mount. */
export const AUTH_MOUNT_NAME_SPACE = 'auth mount';

/** How the store compares auth mount paths, whatever the method type. */
export const AUTH_MOUNT_NAME_COMPARISON = 'auth mounts share one name space whatever their type, paths compared as given without surrounding slashes';

/**
 * `vault_auth_backend`: an auth method of any type (the AppRole method). Mount paths are compared
 * as given (the store's router is case-sensitive), slashes trimmed.
 */
export const AUTH_MOUNT_OBJECT: StoreObjectKind = {
  resourceType: 'vault_auth_backend',
  kind: 'auth-mount',
  description: 'an auth method mount',
  identityFields: ['path', 'type'],
  replacedWhenChanged: ['local', 'type'],
  writtenInPlace: false,
  locate: (f) => {
    const p = mountPathOf(f.path ?? f.type, '');
    return { mount: p, name: p, storePath: `sys/auth/${p}`, importId: p };
  },
  name: (f) => ({ space: AUTH_MOUNT_NAME_SPACE, key: mountPathOf(f.path ?? f.type, '') }),
  nameFields: ['path', 'type'],
  nameComparison: AUTH_MOUNT_NAME_COMPARISON,
  // The provider's id of a mount is its path, which defaults to the method's type.
  derivedAttribute: (f, a) => (a === 'id' || a === 'path' ? (f.path ?? f.type) : undefined),
  pipelineRules: (f, access) => authMountPipelineRules(mountPathOf(f.path ?? f.type, ''), access),
  readerRules: AUTH_MOUNT_READER_RULES,
};
