import { describeUnchecked, plannedCreates, TakeoverRefused } from '../../../lib/engine/takeover-guard';

/** One `resource_changes` entry of `show -json`. */
const change = (address: string, actions: string[], after: Record<string, unknown> | null, extra: Record<string, unknown> = {}) => ({
  address,
  type: address.split('.')[0],
  change: { actions, after, ...extra },
});

describe('--refuse-replace, creates: the roles and policies a plan would create, to look up on the store', () => {
  it('finds created roles and policies with their store paths, sorted by address', () => {
    const plan = {
      resource_changes: [
        change('vault_policy.b_policy_1', ['create'], { name: 'Billing-Dev' }),
        change('vault_approle_auth_backend_role.b_role_1', ['create'], { backend: 'approle', role_name: 'billing-dev' }),
        change('vault_jwt_auth_backend_role.r_role_1', ['create'], { backend: 'jwt', role_name: 'registry-ci' }),
      ],
    };
    expect(plannedCreates(plan)).toEqual([
      { address: 'vault_approle_auth_backend_role.b_role_1', storePath: 'auth/approle/role/billing-dev' },
      { address: 'vault_jwt_auth_backend_role.r_role_1', storePath: 'auth/jwt/role/registry-ci' },
      // The store lowercases policy names.
      { address: 'vault_policy.b_policy_1', storePath: 'sys/policies/acl/billing-dev' },
    ]);
  });

  it('leaves out imports, updates, replacements, mounts (the store refuses to mount twice) and a role whose mount the plan creates', () => {
    const plan = {
      resource_changes: [
        change('vault_policy.imported', ['create'], { name: 'x' }, { importing: { id: 'x' } }),
        change('vault_policy.updated', ['update'], { name: 'y' }),
        change('vault_policy.replaced', ['delete', 'create'], { name: 'z' }),
        change('vault_auth_backend.approle', ['create'], { path: 'approle', type: 'approle' }),
        change('vault_approle_auth_backend_role.new_mount', ['create'], { role_name: 'a' }, { after_unknown: { backend: true } }),
        change('vault_policy.deleted', ['delete'], null),
      ],
    };
    expect(plannedCreates(plan)).toEqual([]);
    expect(plannedCreates({})).toEqual([]);
    expect(plannedCreates(undefined)).toEqual([]);
  });
});

describe('TakeoverRefused: what the store has, and the fix', () => {
  it('names each object, where the store has it, and moves or adopt', () => {
    const error = new TakeoverRefused(
      [
        { address: 'vault_policy.p', storePath: 'sys/policies/acl/p', status: 200 },
        { address: 'vault_approle_auth_backend_role.r', storePath: 'auth/approle/role/r', status: 200 },
      ],
      'app-roles-01: nothing applied',
    );
    expect(error.message).toBe(
      'app-roles-01: nothing applied: the plan would create 2 objects the store already has, refused (the store writes a role or a policy in place, so the apply would take it over silently):\n' +
        '  vault_policy.p would be created, but sys/policies/acl/p exists on the store. Fix: if it moved from another stack, run `secretstore-iac moves BASE HEAD` (BASE: the configuration last applied) so that this stack imports it (docs/sharding.md); if the store had it before this configuration, import it with `secretstore-iac adopt`\n' +
        '  vault_approle_auth_backend_role.r would be created, but auth/approle/role/r exists on the store. Fix: if it moved from another stack, run `secretstore-iac moves BASE HEAD` (BASE: the configuration last applied) so that this stack imports it (docs/sharding.md); if the store had it before this configuration, import it with `secretstore-iac adopt`',
    );
    expect(new TakeoverRefused([{ address: 'a', storePath: 'b', status: 200 }], 'x').message).toMatch(/^x: the plan would create 1 object the store already has, refused/);
  });

  it('the creates the token may not look up are named in a note, and go through', () => {
    expect(describeUnchecked([{ address: 'vault_policy.n', storePath: 'sys/policies/acl/new-app' }])).toBe(
      'could not check whether the store already has these created objects (HTTP 403: the token may not read them; new in this change, or outside what the applied configuration declares): sys/policies/acl/new-app',
    );
  });
});
