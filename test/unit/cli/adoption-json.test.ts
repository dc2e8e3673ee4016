import * as path from 'path';
import { adoptionJsonStack, planCheckRefusals } from '../../../lib/cli/adoption-json';
import { describeDestruction } from '../../../lib/engine/replacement-guard';
import { planAdoption } from '../../../lib/reconcile/adoption-plan';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { appliedLiveStore } from '../../support/applied-live-store';
import { ACCESS_FIXTURES } from '../../support/paths';

// `adopt --format json`: per stack what would be imported, created, untainted and forgotten, what is
// refused (with the fix the text report gives) and the access report; the real command on a real
// store is checked in test/store/adoption.store.test.ts.

const BASE = path.join(ACCESS_FIXTURES, 'base');
const configuration = readStoreConfiguration(BASE);
const ci = readDeclaredObjects(BASE, 'ci-access');
const apps = readDeclaredObjects(BASE, 'app-roles');

describe('adopt --format json: one stack', () => {
  it('imports as address and id, creates with their store path, the access report as access-diff --format json has it', async () => {
    const live = appliedLiveStore([...ci, ...apps], (s) => {
      s.roles = s.roles.filter((r) => r.role !== 'authentik-role');
    });
    const plan = await planAdoption('app-roles', apps, configuration, live, new Set());
    const json = adoptionJsonStack(plan);
    expect(Object.keys(json)).toEqual(['stack', 'inState', 'imports', 'creates', 'untaints', 'forgets', 'taintedUndeclared', 'refused', 'risks', 'attributeChanges', 'access', 'files']);
    expect(json.stack).toBe('app-roles');
    expect(json.imports).toContainEqual({ address: expect.stringMatching(/^vault_approle_auth_backend_role\.orchestrator-dev/), id: 'auth/approle/role/orchestrator-dev' });
    expect(json.creates).toEqual([{ address: expect.stringMatching(/^vault_approle_auth_backend_role\./), storePath: 'auth/approle/role/authentik-role' }]);
    expect(json.refused).toEqual([]);
    expect(json.access).toBe(plan.access);
    expect(json.files).toEqual([]);
  });

  it('an object an import cannot adopt is refused with the text report\'s reason and fix', async () => {
    const live = appliedLiveStore([...ci, ...apps], (s) => {
      s.mounts.find((m) => m.path === 'jwt')!.type = 'oidc';
    });
    const plan = await planAdoption('ci-access', ci, configuration, live, new Set());
    const json = adoptionJsonStack(plan);
    expect(json.refused).toEqual([{ address: 'vault_jwt_auth_backend.jwt_backend_B86C4D3E', why: 'conflict', message: expect.stringMatching(/^jwt\/ is a oidc method on the store .*Fix: /) }]);
    // The text report's line is the address and this message.
    expect(plan.conflicts).toEqual([`${json.refused[0].address}: ${json.refused[0].message}`]);
  });

  it('a destruction found by the plan check is refused with the fix the refusal message gives', () => {
    const destruction = { address: 'vault_auth_backend.approle_backend_7D2C0F1A', actions: ['delete', 'create'], attributes: ['local'], values: { local: 'true → false' } };
    expect(planCheckRefusals([destruction], 'app-roles')).toEqual([
      { address: destruction.address, why: 'plan-check', message: describeDestruction(destruction, 'app-roles') },
    ]);
    expect(describeDestruction(destruction, 'app-roles')).toContain('local');
  });
});
