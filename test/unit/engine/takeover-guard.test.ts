import { StoreError, StoreResponse } from '../../../lib/store/store-client';
import { checkPlannedCreates, describeUnreadable, plannedCreates, TakeoverRefused, UnreadableCreatesRefused } from '../../../lib/engine/takeover-guard';

/** One `resource_changes` entry of `show -json`. */
const change = (address: string, actions: string[], after: Record<string, unknown> | null, extra: Record<string, unknown> = {}) => ({
  address,
  type: address.split('.')[0],
  change: { actions, after, ...extra },
});

describe('--refuse-replace, creates: the mounts, roles and policies a plan would create, to look up on the store', () => {
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

  it('finds created auth mounts too (AppRole, JWT, OIDC), by their sys/auth path', () => {
    const plan = {
      resource_changes: [
        change('vault_auth_backend.approle', ['create'], { path: 'approle', type: 'approle' }),
        change('vault_jwt_auth_backend.jwt', ['create'], { path: 'jwt', type: 'jwt' }),
        change('vault_jwt_auth_backend.oidc', ['create'], { path: '/oidc/', type: 'oidc' }),
      ],
    };
    expect(plannedCreates(plan)).toEqual([
      { address: 'vault_auth_backend.approle', storePath: 'sys/auth/approle' },
      { address: 'vault_jwt_auth_backend.jwt', storePath: 'sys/auth/jwt' },
      { address: 'vault_jwt_auth_backend.oidc', storePath: 'sys/auth/oidc' },
    ]);
  });

  it('leaves out imports, updates, replacements, deletes, types it cannot locate and a role whose mount the plan creates', () => {
    const plan = {
      resource_changes: [
        change('vault_policy.imported', ['create'], { name: 'x' }, { importing: { id: 'x' } }),
        change('vault_policy.updated', ['update'], { name: 'y' }),
        change('vault_policy.replaced', ['delete', 'create'], { name: 'z' }),
        change('vault_approle_auth_backend_role.new_mount', ['create'], { role_name: 'a' }, { after_unknown: { backend: true } }),
        change('vault_policy.deleted', ['delete'], null),
        change('null_resource.n', ['create'], {}),
      ],
    };
    expect(plannedCreates(plan)).toEqual([]);
    expect(plannedCreates({})).toEqual([]);
    expect(plannedCreates(undefined)).toEqual([]);
  });
});

/** A store answering GET paths from a table (status, body); anything else 404. Records the requests. */
function fakeStore(answers: Record<string, [number, unknown]>) {
  const asked: string[] = [];
  return {
    asked,
    async request(method: string, apiPath: string): Promise<StoreResponse> {
      asked.push(`${method} ${apiPath}`);
      const [status, body] = answers[apiPath] ?? [404, { errors: [] }];
      if (status >= 400) throw new StoreError(status === 403 ? 'permission-denied' : status === 404 ? 'not-found' : 'server-error', `${method} ${apiPath}: HTTP ${status}`, status);
      return { status, body };
    },
  };
}

describe('--refuse-replace looks each created object up on the store', () => {
  const creates = [
    { address: 'vault_jwt_auth_backend.jwt', storePath: 'sys/auth/jwt' },
    { address: 'vault_auth_backend.approle', storePath: 'sys/auth/approle' },
    { address: 'vault_policy.a', storePath: 'sys/policies/acl/team-a' },
    { address: 'vault_policy.b', storePath: 'sys/policies/acl/team-b' },
    { address: 'vault_approle_auth_backend_role.r', storePath: 'auth/approle/role/billing-dev' },
  ];

  it('a mount the mount table holds, a role or policy GET answers 200: takeovers; 404: creates', async () => {
    const store = fakeStore({
      'sys/auth': [200, { data: { 'jwt/': { type: 'jwt' }, 'token/': { type: 'token' } } }],
      'sys/policies/acl/team-a': [200, { data: { policy: '' } }],
    });
    expect(await checkPlannedCreates(creates, store)).toEqual({
      takeovers: [
        { address: 'vault_jwt_auth_backend.jwt', storePath: 'sys/auth/jwt', status: 200 },
        { address: 'vault_policy.a', storePath: 'sys/policies/acl/team-a', status: 200 },
      ],
      unreadable: [],
    });
    // The mount table is read once for both mounts.
    expect(store.asked.filter((a) => a === 'GET sys/auth')).toHaveLength(1);
  });

  it('a 403 on GET falls back to the listing of the parent (names only), read once', async () => {
    const store = fakeStore({
      'sys/auth': [200, { data: {} }],
      'sys/policies/acl/team-a': [403, {}],
      'sys/policies/acl/team-b': [403, {}],
      'sys/policies/acl?list=true': [200, { data: { keys: ['default', 'team-a'] } }],
      'auth/approle/role/billing-dev': [403, {}],
      'auth/approle/role?list=true': [404, {}],
    });
    expect(await checkPlannedCreates(creates, store)).toEqual({
      takeovers: [{ address: 'vault_policy.a', storePath: 'sys/policies/acl/team-a', status: 200 }],
      unreadable: [],
    });
    expect(store.asked.filter((a) => a === 'GET sys/policies/acl?list=true')).toHaveLength(1);
  });

  it('403 on both: unreadable, with the policy rule the token lacks', async () => {
    const store = fakeStore({
      'sys/auth': [403, {}],
      'sys/policies/acl/team-a': [403, {}],
      'sys/policies/acl/team-b': [404, {}],
      'sys/policies/acl?list=true': [403, {}],
      'auth/approle/role/billing-dev': [403, {}],
      'auth/approle/role?list=true': [403, {}],
    });
    const checked = await checkPlannedCreates(creates, store);
    expect(checked.takeovers).toEqual([]);
    expect(checked.unreadable.map((u) => [u.storePath, u.missingGrant])).toEqual([
      ['sys/auth/jwt', 'path "sys/auth" { capabilities = ["read"] }'],
      ['sys/auth/approle', 'path "sys/auth" { capabilities = ["read"] }'],
      ['sys/policies/acl/team-a', 'path "sys/policies/acl/team-a" { capabilities = ["read"] } (or path "sys/policies/acl" { capabilities = ["list"] }, and path "sys/policies/acl/" { capabilities = ["list"] } from OpenBao 2.6.0 / Vault 2.0.3)'],
      ['auth/approle/role/billing-dev', 'path "auth/approle/role/billing-dev" { capabilities = ["read"] } (or path "auth/approle/role" { capabilities = ["list"] }, and path "auth/approle/role/" { capabilities = ["list"] } from OpenBao 2.6.0 / Vault 2.0.3)'],
    ]);
  });

  it('any other answer stops the check', async () => {
    await expect(checkPlannedCreates([creates[2]], fakeStore({ 'sys/policies/acl/team-a': [500, {}] }))).rejects.toThrow('HTTP 500');
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
      'app-roles-01',
    );
    expect(error.message).toBe(
      'app-roles-01: nothing applied: the plan would create 2 objects the store already has, refused (the store writes a role or a policy in place, so the apply would take it over silently; it refuses a mount whose path is in use, half-way through the apply):\n' +
        '  vault_policy.p would be created, but sys/policies/acl/p exists on the store. Fix: if it moved from another stack, run `secretstore-iac moves BASE HEAD` (BASE: the configuration last applied) so that this stack imports it (docs/sharding.md); if the store had it before this configuration, import it with `secretstore-iac adopt app-roles-01`\n' +
        '  vault_approle_auth_backend_role.r would be created, but auth/approle/role/r exists on the store. Fix: if it moved from another stack, run `secretstore-iac moves BASE HEAD` (BASE: the configuration last applied) so that this stack imports it (docs/sharding.md); if the store had it before this configuration, import it with `secretstore-iac adopt app-roles-01`',
    );
    expect(new TakeoverRefused([{ address: 'a', storePath: 'b', status: 200 }], 'x').message).toMatch(/^x: the plan would create 1 object the store already has, refused/);
  });

  it('names a mount the store has, and adopt for the stack', () => {
    expect(new TakeoverRefused([{ address: 'vault_jwt_auth_backend.jwt_1', storePath: 'sys/auth/jwt', status: 200 }], 'ci-access: nothing applied', 'ci-access').message).toBe(
      'ci-access: nothing applied: the plan would create 1 object the store already has, refused (the store writes a role or a policy in place, so the apply would take it over silently; it refuses a mount whose path is in use, half-way through the apply):\n' +
        '  vault_jwt_auth_backend.jwt_1 would mount jwt/, but the store has an auth method there (sys/auth/jwt). Fix: run `secretstore-iac adopt ci-access`: it imports the mount with the objects under it, ' +
        'or says what to do when it cannot (a mount a failed first apply left never configured: disable it, then apply); if it moved from another stack, run `secretstore-iac moves BASE HEAD` (docs/sharding.md)',
    );
  });
});

describe('UnreadableCreatesRefused: never written blind', () => {
  it('names each object the token may not look up and the policy rule it lacks', () => {
    const error = new UnreadableCreatesRefused(
      [{ address: 'vault_policy.n', storePath: 'sys/policies/acl/team-b', status: 403, missingGrant: 'path "sys/policies/acl/team-b" { capabilities = ["read"] } (or path "sys/policies/acl" { capabilities = ["list"] }, and path "sys/policies/acl/" { capabilities = ["list"] } from OpenBao 2.6.0 / Vault 2.0.3)' }],
      'app-roles: nothing applied',
    );
    expect(error.message).toBe(
      'app-roles: nothing applied: cannot check whether the store already has 1 object the plan creates: the token (VAULT_TOKEN, as the vault provider reads it) may not read them (HTTP 403), ' +
        'and --refuse-replace never writes over what it cannot see. Fix: add the rule to the token\'s policy, then run again (the configuration pipeline\'s roles get it from the stacks that declare the object: apply ci-access first):\n' +
        '  vault_policy.n (sys/policies/acl/team-b): path "sys/policies/acl/team-b" { capabilities = ["read"] } (or path "sys/policies/acl" { capabilities = ["list"] }, and path "sys/policies/acl/" { capabilities = ["list"] } from OpenBao 2.6.0 / Vault 2.0.3)',
    );
    expect(describeUnreadable([])).toContain('0 objects');
  });
});
