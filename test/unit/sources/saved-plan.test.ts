import * as path from 'path';
import { REVIEWED_ATTRIBUTES } from '../../../lib/access/store-configuration';
import { planDigest, readSavedPlan } from '../../../lib/sources/saved-plan';
import { readSynthOutput } from '../../../lib/sources/synth-output';
import { ACCESS_FIXTURES } from '../../support/paths';
import { appliedValues, planDocument } from '../../support/saved-plan-document';

// Issue 36: the review reads the values of the engine's saved plan, as `show -json` prints them.
describe('readSavedPlan: a stack as the saved plan shows it (show -json)', () => {
  const appRoles = readSynthOutput(path.join(ACCESS_FIXTURES, 'base')).find((s) => s.name === 'app-roles')!;
  const applied = appliedValues(appRoles);
  const ROLE = 'vault_approle_auth_backend_role.orchestrator-dev_role_125D2539';
  const POLICY = 'vault_policy.orchestrator-dev_policy_125D2537';
  const read = (document: unknown) => readSavedPlan(document, 'app-roles', 'app-roles.tfplan', 'abc', REVIEWED_ATTRIBUTES);
  const addresses = (list: readonly { address: string }[]) => list.map((r) => r.address);

  it('before is each change\'s before, after its after; a delete is absent after, a create absent before', () => {
    const plan = read(
      planDocument(appRoles, [
        { address: ROLE, actions: ['delete'], before: applied.get(ROLE)!, after: null },
        { address: 'vault_policy.new', actions: ['create'], before: null, after: { name: 'new', policy: 'path "a" {}', namespace: null }, afterUnknown: { id: true } },
        { address: POLICY, actions: ['update'], before: applied.get(POLICY)!, after: { ...applied.get(POLICY)!, policy: 'path "x" { capabilities = ["read"] }' } },
      ]),
    );
    expect(addresses(plan.before)).toContain(ROLE);
    expect(addresses(plan.after)).not.toContain(ROLE);
    expect(addresses(plan.before)).not.toContain('vault_policy.new');
    expect(plan.after.find((r) => r.address === 'vault_policy.new')!.values).toEqual({ name: 'new', policy: 'path "a" {}', namespace: null });
    expect(plan.before.find((r) => r.address === POLICY)!.values.policy).toBe(applied.get(POLICY)!.policy);
    expect(plan.after.find((r) => r.address === POLICY)!.values.policy).toBe('path "x" { capabilities = ["read"] }');
    // No-ops: the whole stack on both sides.
    expect(plan.after.length).toBe(applied.size);
    expect(plan.before.length).toBe(applied.size);
    // `id` unknown on a create is not a field the review reads.
    expect(plan.unknowns).toEqual([]);
    expect(plan.sha256).toBe('abc');
    expect(plan.engineVersion).toBe('1.12.6');
  });

  it('a replacement (either order) is on both sides with its own values; a forgotten object stays after with its before values', () => {
    const renamed = { ...applied.get(ROLE)!, role_name: 'orchestrator-two' };
    const plan = read(
      planDocument(appRoles, [
        { address: ROLE, actions: ['delete', 'create'], before: applied.get(ROLE)!, after: renamed, afterUnknown: { id: true, role_id: true }, actionReason: 'replace_because_cannot_update' },
        { address: POLICY, actions: ['forget'], before: applied.get(POLICY)!, after: null },
      ]),
    );
    expect(plan.after.find((r) => r.address === ROLE)!.values.role_name).toBe('orchestrator-two');
    expect(plan.before.find((r) => r.address === ROLE)!.values.role_name).toBe('orchestrator-dev');
    expect(plan.forgotten).toEqual([POLICY]);
    expect(plan.after.find((r) => r.address === POLICY)!.values).toEqual(applied.get(POLICY));
    const reversed = read(planDocument(appRoles, [{ address: ROLE, actions: ['create', 'delete'], before: applied.get(ROLE)!, after: renamed }]));
    expect(reversed.after.find((r) => r.address === ROLE)!.values.role_name).toBe('orchestrator-two');
  });

  it('a value the review reads that is unknown until apply is reported (a list element too); other unknowns are not', () => {
    const plan = read(
      planDocument(appRoles, [
        { address: ROLE, actions: ['update'], before: applied.get(ROLE)!, after: { ...applied.get(ROLE)!, token_policies: ['orchestrator-dev'] }, afterUnknown: { token_policies: [false, true], role_id: true } },
        { address: 'vault_policy.later', actions: ['create'], before: null, after: { namespace: null, policy: 'path "a" {}' }, afterUnknown: { id: true, name: true } },
      ]),
    );
    expect(plan.unknowns).toEqual([
      { address: ROLE, type: 'vault_approle_auth_backend_role', attribute: 'token_policies' },
      { address: 'vault_policy.later', type: 'vault_policy', attribute: 'name' },
    ]);
  });

  it('a change to a resource the review does not read is reported, a no-op of one is not; an object in a namespace of its own is reported; data sources are skipped', () => {
    const plan = read(
      planDocument(appRoles, [
        { address: 'vault_generic_endpoint.x', actions: ['create'], before: null, after: { path: 'sys/policies/acl/registry-ci', data_json: '{}' } },
        { address: 'terraform_data.quiet', actions: ['no-op'], before: { input: 'x' }, after: { input: 'x' } },
        { address: 'vault_policy.elsewhere', actions: ['create'], before: null, after: { name: 'x', policy: '', namespace: 'other' } },
        { address: 'data.vault_policy_document.d', mode: 'data', actions: ['read'], before: null, after: { hcl: 'x' } },
      ]),
    );
    expect(plan.unreviewed).toEqual([
      { address: 'vault_generic_endpoint.x', type: 'vault_generic_endpoint', actions: ['create'] },
      { address: 'vault_policy.elsewhere', type: 'vault_policy', actions: ['create'], namespace: 'other' },
    ]);
    expect(addresses(plan.after)).not.toContain('data.vault_policy_document.d');
  });

  it('a resource of the prior state without a change (a -target plan) is the same on both sides', () => {
    const document = planDocument(appRoles, [{ address: POLICY, actions: ['update'], before: applied.get(POLICY)!, after: { ...applied.get(POLICY)!, policy: 'x' } }]);
    // A targeted plan lists only the targeted change; the prior state keeps every resource.
    (document as any).resource_changes = (document as any).resource_changes.filter((rc: any) => rc.address === POLICY);
    const plan = read(document);
    expect(plan.before.find((r) => r.address === ROLE)!.values).toEqual(applied.get(ROLE));
    expect(plan.after.find((r) => r.address === ROLE)!.values).toEqual(applied.get(ROLE));
    expect(plan.after.find((r) => r.address === POLICY)!.values.policy).toBe('x');
  });

  it('lastApplied: each managed object the refresh found changed outside the engine (resource_drift), with the values last applied; data sources left out', () => {
    const handGranted = { ...applied.get(ROLE)!, token_policies: ['orchestrator-dev', 'hand'] };
    const drift = (address: string, before: unknown, after: unknown, mode = 'managed') => ({ address, mode, type: address.split('.')[0], name: address.split('.')[1], provider_name: 'registry.opentofu.org/hashicorp/vault', change: { actions: [after === null ? 'delete' : 'update'], before, after } });
    const plan = read(
      planDocument(appRoles, [{ address: ROLE, actions: ['update'], before: handGranted, after: applied.get(ROLE)! }], {
        resource_drift: [drift(ROLE, applied.get(ROLE)!, handGranted), drift(POLICY, applied.get(POLICY)!, null), drift('data.vault_generic_secret.x', {}, {}, 'data')],
      }),
    );
    expect(plan.lastApplied.map((r) => [r.address, r.values])).toEqual([
      [ROLE, applied.get(ROLE)],
      [POLICY, applied.get(POLICY)],
    ]);
    expect(read(planDocument(appRoles, [])).lastApplied).toEqual([]);
    expect(() => read(planDocument(appRoles, [], { resource_drift: {} }))).toThrow('resource_drift is not a list');
  });

  it('refuses what is not a saved plan\'s JSON, and an errored plan, naming the file and stack', () => {
    expect(() => read([])).toThrow('app-roles.tfplan (stack app-roles): not the JSON of `show -json` of a saved plan: not a JSON object');
    expect(() => read({ format_version: '2.0', resource_changes: [] })).toThrow('format_version "2.0" is not 1.x');
    expect(() => read({ format_version: '1.2', resource_changes: [{ address: 'x' }] })).toThrow('a resource change without address, type or change');
    expect(() => read(planDocument(appRoles, [], { errored: true }))).toThrow('app-roles.tfplan (stack app-roles): the plan errored');
  });

  it('a plan the engine marks incomplete (Terraform\'s "complete": false) is partial', () => {
    expect(read(planDocument(appRoles, [], { applyable: true, complete: false })).partial).toBe(true);
    expect(read(planDocument(appRoles, [], { applyable: true, complete: true })).partial).toBe(false);
    expect(read(planDocument(appRoles, [])).partial).toBe(false);
  });

  it('planDigest is the SHA-256 of the bytes', () => {
    expect(planDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
