import { describeDestruction, DestructionRefused, plannedDestructions } from '../../../lib/engine/replacement-guard';

// Issue 15: adoption and pipeline applies never destroy. The plan JSON as OpenTofu 1.12 writes it
// (`show -json`): resource_changes with actions and replace_paths.
const plan = {
  resource_changes: [
    { address: 'vault_policy.p', change: { actions: ['update'], before: {}, after: {} } },
    { address: 'vault_auth_backend.approle_backend_1', action_reason: 'replace_because_cannot_update', change: { actions: ['delete', 'create'], before: { local: true, path: 'approle' }, after: { local: null, path: 'approle' }, replace_paths: [['local']] } },
    { address: 'vault_jwt_auth_backend_role.registry-ci_role_2', change: { actions: ['create', 'delete'], before: { role_type: 'oidc' }, after: { role_type: 'jwt' }, replace_paths: [['role_type']] } },
    { address: 'vault_policy.gone', change: { actions: ['delete'], before: { name: 'gone' }, after: null } },
    { address: 'vault_policy.new', change: { actions: ['create'], before: null, after: { name: 'new' } } },
    { address: 'vault_policy.same', change: { actions: ['no-op'] } },
  ],
};

describe('A plan that destroys or replaces an object is refused (issue 15)', () => {
  it('finds deletes and both orders of replacement, with the forcing attributes and their values; not updates, creates or no-ops', () => {
    const found = plannedDestructions(plan);
    expect(found.map((d) => [d.address, d.actions.join(','), d.attributes, d.values])).toEqual([
      ['vault_auth_backend.approle_backend_1', 'delete,create', ['local'], { local: 'true → null' }],
      ['vault_jwt_auth_backend_role.registry-ci_role_2', 'create,delete', ['role_type'], { role_type: '"oidc" → "jwt"' }],
      ['vault_policy.gone', 'delete', [], {}],
    ]);
  });

  it('names the object, its declaration, the attribute and the declaration that keeps the store\'s object', () => {
    const [local, oidc, gone] = plannedDestructions(plan).map((d) => ({ ...d, declaredAt: `app-roles/${d.address.split('.')[1]}` }));
    expect(describeDestruction(local)).toBe(
      'vault_auth_backend.approle_backend_1 declared at app-roles/approle_backend_1 would be replaced (destroyed, then created again); forced by local (true → null). ' +
        'Fix: the mount is local (not replicated) on the store: declare `local: true` on the AppRoleAuth construct, or remount it by hand',
    );
    expect(describeDestruction(oidc)).toContain('forced by role_type ("oidc" → "jwt"). Fix: the store\'s role is an OIDC role (role_type oidc)');
    // Still declared, yet deleted: only the destroy mode does that.
    expect(describeDestruction(gone, 'app-roles')).toBe(
      'vault_policy.gone declared at app-roles/gone would be destroyed. Fix: the destroy mode (`destroy`, `-destroy`) asked for it; a person decides that: run it without --refuse-replace (the engine shows the plan and asks), with --allow-destroy',
    );
    // No longer declared.
    expect(describeDestruction({ ...gone, declaredAt: undefined })).toBe(
      'vault_policy.gone would be destroyed. Fix: declare the object again; if a person decided to delete it, run the apply without --refuse-replace (the engine shows the plan and asks)',
    );
  });

  it('the fix follows the direction of the difference: the store\'s value, not the declared one', () => {
    const [notLocal, jwtMethod, jwtForPeople] = plannedDestructions({
      resource_changes: [
        { address: 'vault_auth_backend.a', change: { actions: ['delete', 'create'], before: { local: false }, after: { local: true }, replace_paths: [['local']] } },
        { address: 'vault_jwt_auth_backend_role.people', change: { actions: ['delete', 'create'], before: { role_type: 'jwt' }, after: { role_type: 'oidc' }, replace_paths: [['role_type']] } },
        { address: 'vault_jwt_auth_backend.oidc', change: { actions: ['delete', 'create'], before: { type: 'jwt' }, after: { type: 'oidc' }, replace_paths: [['type']] } },
      ],
    });
    expect(describeDestruction(notLocal)).toContain('forced by local (false → true). Fix: the store\'s mount is not local (it is replicated), the declaration says `local: true`: remove `local: true`');
    expect(describeDestruction(jwtForPeople)).toContain(
      'Fix: the store\'s role is a JWT role (role_type jwt) where an OIDC role (people\'s single sign-on) is declared',
    );
    expect(describeDestruction(jwtMethod)).toContain('forced by type ("jwt" → "oidc")');
  });

  it('a replacement the operator asked for (-replace=), or of a tainted object, names its own fix', () => {
    const [requested, tainted] = plannedDestructions({
      resource_changes: [
        { address: 'vault_policy.a', action_reason: 'replace_by_request', change: { actions: ['delete', 'create'], before: {}, after: {} } },
        { address: 'vault_policy.b', action_reason: 'replace_because_tainted', change: { actions: ['delete', 'create'], before: {}, after: {} } },
      ],
    });
    expect(describeDestruction(requested)).toBe(
      'vault_policy.a would be replaced (destroyed, then created again); replace_by_request. Fix: -replace= asked for it; a person decides that: run it without --refuse-replace (the engine shows the plan and asks)',
    );
    expect(describeDestruction(tainted, 'app-roles')).toBe(
      'vault_policy.b would be replaced (destroyed, then created again); replace_because_tainted. Fix: the object is tainted (an interrupted apply created it, then could not read it back): run `secretstore-iac adopt app-roles`, which untaints what the store has (kept, updated in place) and forgets what it does not (created again)',
    );
  });

  it('the fix follows the store: a mount that is not local where `local: true` is declared, a JWT role where a people\'s OIDC role is declared (issue 27)', () => {
    const [notLocal, jwtRole] = plannedDestructions({
      resource_changes: [
        { address: 'vault_auth_backend.approle_backend_1', change: { actions: ['delete', 'create'], before: { local: false, path: 'approle' }, after: { local: true, path: 'approle' }, replace_paths: [['local']] } },
        { address: 'vault_jwt_auth_backend_role.admins_role_2', change: { actions: ['delete', 'create'], before: { role_type: 'jwt' }, after: { role_type: 'oidc' }, replace_paths: [['role_type']] } },
      ],
    });
    expect(describeDestruction(notLocal)).toBe(
      'vault_auth_backend.approle_backend_1 would be replaced (destroyed, then created again); forced by local (false → true). ' +
        "Fix: the store's mount is not local (it is replicated), the declaration says `local: true`: remove `local: true` (or declare `local: false`) on the AppRoleAuth construct, or remount it by hand as a local mount",
    );
    expect(describeDestruction(notLocal)).not.toContain('declare `local: true`');
    expect(describeDestruction(jwtRole)).toBe(
      'vault_jwt_auth_backend_role.admins_role_2 would be replaced (destroyed, then created again); forced by role_type ("jwt" → "oidc"). ' +
        "Fix: the store's role is a JWT role (role_type jwt) where an OIDC role (people's single sign-on) is declared: delete the store's role by hand if no CI job logs in with it, or rename the declared group",
    );
  });

  it('a mount of another type: the fix says what the store has and what to declare, in both directions (issue 27)', () => {
    const [oidcWhereJwt, jwtWhereOidc] = plannedDestructions({
      resource_changes: [
        { address: 'vault_jwt_auth_backend.oidc_backend_1', type: 'vault_jwt_auth_backend', change: { actions: ['delete', 'create'], before: { type: 'jwt', path: 'oidc' }, after: { type: 'oidc', path: 'oidc' }, replace_paths: [['type']] } },
        { address: 'vault_jwt_auth_backend.jwt_backend_2', type: 'vault_jwt_auth_backend', change: { actions: ['delete', 'create'], before: { type: 'oidc', path: 'jwt' }, after: { type: 'jwt', path: 'jwt' }, replace_paths: [['type']] } },
      ],
    });
    expect(describeDestruction(jwtWhereOidc)).toBe(
      'vault_jwt_auth_backend.oidc_backend_1 would be replaced (destroyed, then created again); forced by type ("jwt" → "oidc"). ' +
        "Fix: the store's method at oidc/ is of type jwt, the declared one of type oidc: declare the people's OIDC method at another path (`people.path` (OidcAuth `path`)), " +
        'or, if no CI job logs in with the store\'s jwt method, disable it by hand (`bao auth disable oidc`, or `vault auth disable oidc` on Vault) and run adopt again',
    );
    expect(describeDestruction(oidcWhereJwt)).toBe(
      'vault_jwt_auth_backend.jwt_backend_2 would be replaced (destroyed, then created again); forced by type ("oidc" → "jwt"). ' +
        "Fix: the store's method at jwt/ is of type oidc, the declared one of type jwt: declare CI's JWT method at another path (CiJwtAuth `path`), " +
        'or, if no person logs in with the store\'s oidc method, disable it by hand (`bao auth disable jwt`, or `vault auth disable jwt` on Vault) and run adopt again',
    );
    // The old text said "an OIDC method (type oidc) is mounted at this path" whatever the store had.
    expect(describeDestruction(jwtWhereOidc)).not.toContain('an OIDC method (type oidc) is mounted');
  });

  it('a replacement because an interrupted apply left the object tainted names adopt, not "declare what the store has" (issue 27)', () => {
    const [tainted] = plannedDestructions({
      resource_changes: [{ address: 'vault_approle_auth_backend_role.gen1_role_1', action_reason: 'replace_because_tainted', change: { actions: ['delete', 'create'], before: { role_name: 'gen1', backend: 'approle' }, after: { role_name: 'gen1' } } }],
    });
    const text = describeDestruction(tainted);
    expect(text).toMatch(/would be replaced \(destroyed, then created again\); replace_because_tainted\. Fix: the object is tainted .*run `secretstore-iac adopt STACK`, which untaints what the store has/);
    expect(text).not.toContain('declare what the store has');
  });

  it('a role whose mount path, or a role or policy whose name, changed after it was applied: the fix names the store\'s value and where to declare it (issue 27)', () => {
    // The plan JSON as OpenTofu writes it for ApplicationStacks `auth: { path: 'apps' }` over roles applied under approle/.
    const [approleRole, renamed, jwtRole, policy] = plannedDestructions({
      resource_changes: [
        { address: 'vault_approle_auth_backend_role.orchestrator-dev_role_1', action_reason: 'replace_because_cannot_update', change: { actions: ['delete', 'create'], before: { backend: 'approle', role_name: 'orchestrator-dev' }, after: { backend: 'apps', role_name: 'orchestrator-dev' }, replace_paths: [['backend']] } },
        { address: 'vault_jwt_auth_backend_role.registry-ci_role_2', change: { actions: ['delete', 'create'], before: { backend: 'jwt' }, after: { backend: 'ci' }, replace_paths: [['backend']] } },
        { address: 'vault_approle_auth_backend_role.ziggy_role_3', change: { actions: ['delete', 'create'], before: { backend: 'approle', role_name: 'ziggy-dev' }, after: { backend: 'approle', role_name: 'ziggy-role' }, replace_paths: [['role_name']] } },
        { address: 'vault_policy.zz_policy_4', change: { actions: ['delete', 'create'], before: { name: 'zz-dev' }, after: { name: 'zz-new' }, replace_paths: [['name']] } },
      ],
    });
    expect(describeDestruction(approleRole)).toBe(
      'vault_approle_auth_backend_role.orchestrator-dev_role_1 would be replaced (destroyed, then created again); forced by backend ("approle" → "apps"). ' +
        "Fix: the role is under the mount approle/ on the store, declared under apps/ (the mount's declared path changed after it was applied): " +
        'declare the store\'s path again (ApplicationStacks `auth: { path: "approle" }`, AppRoleAuth `path`) and synthesize; applying would delete the role and create another under apps/ (a new Role ID, every Secret ID issued for it refused)',
    );
    expect(describeDestruction(jwtRole)).toContain('Fix: the role is under the mount jwt/ on the store, declared under ci/ (the mount\'s declared path changed after it was applied): declare the store\'s path again (CiJwtAuth `path: "jwt"`, or `people.path: "jwt"` for the people\'s OIDC method)');
    expect(describeDestruction(renamed)).toContain(
      'forced by role_name ("ziggy-dev" → "ziggy-role"). Fix: the role is named ziggy-dev on the store, declared ziggy-role: declare the store\'s name again (the application\'s `roleName`); applying would delete ziggy-dev and create ziggy-role (a new Role ID, every Secret ID issued for it refused)',
    );
    expect(describeDestruction(policy)).toContain('Fix: the policy is named zz-dev on the store, declared zz-new: declare the store\'s name again');
    for (const d of [approleRole, jwtRole, renamed, policy]) expect(describeDestruction(d)).not.toContain('declare what the store has');
  });

  it('another forcing attribute: "declare what the store has" names each attribute with the store\'s value', () => {
    const [other] = plannedDestructions({
      resource_changes: [{ address: 'vault_generic_endpoint.x', change: { actions: ['delete', 'create'], before: { path: 'sys/a' }, after: { path: 'sys/b' }, replace_paths: [['path']] } }],
    });
    expect(describeDestruction(other)).toBe('vault_generic_endpoint.x would be replaced (destroyed, then created again); forced by path ("sys/a" → "sys/b"). Fix: declare what the store has (path "sys/a")');
  });

  it('the refusal lists every object in one message', () => {
    const error = new DestructionRefused(plannedDestructions(plan), 'nothing written');
    expect(error.message.split('\n')).toHaveLength(4);
    expect(error.message.split('\n')[0]).toBe('nothing written: the plan would destroy or replace 3 objects, refused:');
  });

  it('a plan without resource changes, or not a plan, destroys nothing', () => {
    expect(plannedDestructions({})).toEqual([]);
    expect(plannedDestructions(null)).toEqual([]);
    expect(plannedDestructions({ resource_changes: [{ address: 'x', change: { actions: ['update'] } }] })).toEqual([]);
  });
});
