import { taintedInState } from '../../../lib/engine/engine-state';

// Issue 27: the objects an interrupted apply left tainted, read from `state pull` (state format 4, as
// OpenTofu and Terraform write it). A store killed mid-apply on a real store:
// test/store/interrupted-apply.store.test.ts.

describe('tainted objects in a state', () => {
  it('names each tainted instance with the address `state list` prints; untainted ones, deposed ones and data sources without a status are left out', () => {
    const state = {
      version: 4,
      resources: [
        { mode: 'managed', type: 'vault_approle_auth_backend_role', name: 'gen1_role_1', instances: [{ status: 'tainted', attributes: { role_name: 'gen1' } }] },
        { mode: 'managed', type: 'vault_policy', name: 'gen1_policy_2', instances: [{ attributes: { name: 'gen1' } }] },
        { mode: 'managed', type: 'vault_auth_backend', name: 'approle_backend_3', instances: [{ status: 'tainted', attributes: {} }] },
        { mode: 'managed', type: 'vault_policy', name: 'counted', instances: [{ index_key: 0 }, { index_key: 1, status: 'tainted' }] },
        { module: 'module.m', mode: 'managed', type: 'vault_policy', name: 'each', instances: [{ index_key: 'a', status: 'tainted' }] },
        { mode: 'data', type: 'vault_generic_secret', name: 'd', instances: [{ attributes: {} }] },
      ],
    };
    expect(taintedInState(JSON.stringify(state))).toEqual([
      'module.m.vault_policy.each["a"]',
      'vault_approle_auth_backend_role.gen1_role_1',
      'vault_auth_backend.approle_backend_3',
      'vault_policy.counted[1]',
    ]);
  });

  it('an empty state (never applied: `state pull` prints nothing) has none', () => {
    expect(taintedInState('')).toEqual([]);
    expect(taintedInState('{"version":4,"resources":[]}')).toEqual([]);
  });
});
