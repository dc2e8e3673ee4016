/**
 * Issue 27: renaming an application's construct id within its stack (same role name, same stack)
 * changes the resource addresses of its role and policy, not the store objects. Planned as it is, the
 * engine would create the new addresses and destroy the old ones: a new Role ID, every issued Secret
 * ID refused. `secretstore-iac moves BASE HEAD` compares the objects by store identity and writes
 * `moved` blocks: the plan shows only moves (and the policy's comment naming the construct, updated
 * in place), the Role ID stays and issued Secret IDs still log in.
 */
import * as path from 'path';
import { SecretStoreApp } from '../../lib';
import { MOVES_FILE } from '../../lib/reconcile/stack-moves';
import { definePlatform, Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, firstError, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import * as fs from 'fs';

/** The billing application under a given construct id: role and policy `billing-dev` either way. */
const billing = (id: string) => (p: Platform) => {
  p.appRoles.addApplication(id, { name: 'billing', environment: 'dev' });
};

describe('renaming an application\'s construct id never recreates its role', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let config: PlatformConfig;
  let roleId: string;
  let secretId: string;
  const cli = (args: string[]) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken });

  beforeAll(async () => {
    store = await startStore();
    config = testPlatformConfig(generateSigningKey().publicKeyPem);
    fixture = PlatformFixture.create(store, 'rename');
    fixture.synthPlatform(config, billing('billing-dev'));
    await fixture.apply();
    // Deployment automation issued a Secret ID before the rename.
    roleId = (await storeRequest(store, 'GET', 'auth/approle/role/billing-dev/role-id')).body.data.role_id;
    const issued = await storeRequest(store, 'POST', 'auth/approle/role/billing-dev/secret-id', {});
    expect(issued.status).toBe(200);
    secretId = issued.body.data.secret_id;
    // BASE: the configuration applied, kept for `moves`.
    const app = new SecretStoreApp({ outdir: path.join(fixture.dir, 'base') });
    billing('billing-dev')(definePlatform(app, config));
    app.synth();
  });

  afterAll(async () => {
    fixture?.cleanup();
    await store?.stop();
  });

  it('without moves: the plan would create the new addresses and destroy the old ones; --refuse-replace refuses it, even with --allow-removals', async () => {
    fixture.synthPlatform(config, billing('billing-application'));
    const plan = await fixture.planChanges('app-roles');
    const billingChanges = plan.changes.filter((c) => /billing/.test(c.address)).map((c) => `${c.address.replace(/_[0-9A-F]{8}$/, '')}: ${c.actions.join(',')}`).sort();
    expect(billingChanges).toEqual([
      'vault_approle_auth_backend_role.billing-application_role: create',
      'vault_approle_auth_backend_role.billing-dev_role: delete',
      'vault_policy.billing-application_policy: create',
      'vault_policy.billing-dev_policy: delete',
    ]);
    // The destroyed objects are still declared (renamed): no removal a person could approve.
    const refused = await cli(['tf', 'app-roles', '--refuse-replace', '--allow-removals', '--', 'apply', '-input=false', '-auto-approve']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('app-roles: nothing applied');
    expect(refused.stderr).not.toContain('destroyed by this apply');
  });

  it('moves writes moved blocks; the plan shows only moves; the apply keeps the Role ID and the issued Secret ID logs in', async () => {
    const moved = await cli(['moves', 'base', 'cdktf.out']);
    expect(moved).toMatchObject({ code: 0, stderr: '' });
    expect(moved.stdout).toContain('2 objects renamed within a stack (moved blocks):');
    expect(moved.stdout).toContain('approle-role auth/approle/role/billing-dev in app-roles: vault_approle_auth_backend_role.billing-dev_role_');
    const file = JSON.parse(fs.readFileSync(path.join(fixture.stackDir('app-roles'), MOVES_FILE), 'utf8'));
    expect(file.moved).toHaveLength(2);

    const plan = await fixture.planChanges('app-roles');
    const changed = plan.raw.resource_changes.filter((rc: any) => rc.change.actions.join(',') !== 'no-op' || rc.previous_address);
    // Only the two moves: nothing created or destroyed. The role is a no-op at its new address; the
    // policy's text names the construct that asked for each rule (`# app-roles/billing-application`),
    // so its comment lines change in place, and nothing else of it.
    expect(changed.map((rc: any) => `${rc.previous_address.replace(/_[0-9A-F]{8}$/, '')} -> ${rc.address.replace(/_[0-9A-F]{8}$/, '')}: ${rc.change.actions.join(',')}`).sort()).toEqual([
      'vault_approle_auth_backend_role.billing-dev_role -> vault_approle_auth_backend_role.billing-application_role: no-op',
      'vault_policy.billing-dev_policy -> vault_policy.billing-application_policy: update',
    ]);
    const policy = changed.find((rc: any) => rc.type === 'vault_policy');
    const rules = (text: string) => text.split('\n').filter((l) => !l.trim().startsWith('#'));
    expect(rules(policy.change.after.policy)).toEqual(rules(policy.change.before.policy));
    expect(policy.change.after.policy).toContain('app-roles/billing-application');
    expect(Object.keys(policy.change.after).filter((k) => JSON.stringify(policy.change.after[k]) !== JSON.stringify(policy.change.before[k]))).toEqual(['policy']);

    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-input=false', '-auto-approve']);
    expect(applied.code).toBe(0);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev/role-id')).body.data.role_id).toBe(roleId);
    const login = await appRoleLogin(store, roleId, secretId);
    expect({ status: login.status, error: login.status === 200 ? '' : firstError(login) }).toEqual({ status: 200, error: '' });
    expect(clientToken(login)).toBeTruthy();
    // Applied: no change left, with the moves file still in place (a no-op once applied).
    expect((await fixture.plan('app-roles')).code).toBe(0);
    expect(`${applied.stdout}${applied.stderr}`).not.toContain(secretId);
  });
});
