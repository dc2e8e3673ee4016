/**
 * A store object under an auth mount its own stack enables waits for that mount
 * (lib/constructs/mount-dependencies.ts): a raw role written with the mount's path as text gets the
 * mount's address in its `depends_on` (kept with its own), read back from the synthesized output; a
 * role that refers to the mount's resource (the library's), a role under a mount of another stack,
 * of another namespace or of another path (paths compare as given, case-sensitive) gets nothing.
 * The store's side (the first apply without the order is a 404) is test/store/mount-ordering.store.test.ts.
 */
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { JwtAuthBackendRole } from '@cdktf/provider-vault/lib/jwt-auth-backend-role';
import { Platform } from '../../../lib/platform/platform';
import { platformConfig } from '../../support/platform-config';
import { resources, synthesizePlatform } from '../../support/synthesized-platform';

/** The address of the stack's one resource of `type` whose `path` (or default) is `mount`. */
const mountAddress = (stack: any, type: string, mount: string) => {
  const found = Object.entries(stack.resource?.[type] ?? {}).filter(([, r]: [string, any]) => (r.path ?? (type === 'vault_jwt_auth_backend' ? 'jwt' : r.type)) === mount);
  expect(found).toHaveLength(1);
  return `${type}.${found[0][0]}`;
};
const raw = (stack: any, type: string, id: string) => stack.resource[type][id];

describe('a store object waits for the auth mount of its own stack it lives under', () => {
  const declare = (p: Platform) => {
    const approle = (id: string, props: Partial<ConstructorParameters<typeof ApproleAuthBackendRole>[2]>) =>
      new ApproleAuthBackendRole(p.appRoles, id, { backend: 'approle', roleName: id.replace(/_/g, '-'), tokenPolicies: ['default'], ...props });
    approle('user_text', {});
    approle('user_own_order', { dependsOn: [p.appRoles.node.findAll().find((c) => (c as any).terraformResourceType === 'vault_policy')! as any] });
    approle('user_other_mount', { backend: 'approle-other' });
    approle('user_other_case', { backend: 'AppRole' });
    approle('user_other_namespace', { namespace: 'team-a' });
    new JwtAuthBackendRole(p.ciAccess, 'user_jwt', { backend: 'jwt', roleName: 'user-jwt', roleType: 'jwt', userClaim: 'sub', boundAudiences: ['x'], tokenPolicies: ['default'] });
    // The AppRole mount is app-roles': a role of ci-access under it is ordered by the pipeline's stages.
    new ApproleAuthBackendRole(p.ciAccess, 'user_elsewhere', { backend: 'approle', roleName: 'user-elsewhere', tokenPolicies: ['default'] });
  };
  const { stacks } = synthesizePlatform(platformConfig, declare);
  const appRoles = stacks['app-roles'];
  const ciAccess = stacks['ci-access'];
  const approleMount = mountAddress(appRoles, 'vault_auth_backend', 'approle');

  it('a raw role naming the mount by text depends on the mount', () => {
    expect(raw(appRoles, 'vault_approle_auth_backend_role', 'user_text').depends_on).toEqual(expect.arrayContaining([approleMount]));
    expect(raw(ciAccess, 'vault_jwt_auth_backend_role', 'user_jwt').depends_on).toEqual(expect.arrayContaining([mountAddress(ciAccess, 'vault_jwt_auth_backend', 'jwt')]));
  });

  it('its own depends_on is kept, the mount added once, after it', () => {
    const given = raw(appRoles, 'vault_approle_auth_backend_role', 'user_own_order').depends_on as string[];
    expect(given[0]).toMatch(/^vault_policy\./);
    expect(given.filter((d) => d === approleMount)).toHaveLength(1);
  });

  it('the library\'s roles refer to the mount\'s resource: no depends_on on the mount is added', () => {
    const own = resources(appRoles, 'vault_approle_auth_backend_role').filter((r: any) => r.backend === `\${${approleMount}.path}`);
    expect(own.length).toBeGreaterThan(0);
    for (const r of own) expect(r.depends_on ?? []).not.toContain(approleMount);
  });

  it('another path (also by case), another namespace, or a mount of another stack: nothing', () => {
    for (const id of ['user_other_mount', 'user_other_case', 'user_other_namespace']) {
      expect([id, raw(appRoles, 'vault_approle_auth_backend_role', id).depends_on ?? []]).toEqual([id, expect.not.arrayContaining([approleMount])]);
    }
    expect((raw(ciAccess, 'vault_approle_auth_backend_role', 'user_elsewhere').depends_on ?? []).filter((d: string) => d.startsWith('vault_auth_backend.'))).toEqual([]);
  });

  it('deterministic: the same declarations synthesize the same documents', () => {
    expect(JSON.stringify(synthesizePlatform(platformConfig, declare).stacks)).toBe(JSON.stringify(stacks));
  });
});
