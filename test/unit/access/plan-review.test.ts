import * as path from 'path';
import { hasAccessChange } from '../../../lib/access/access-diff';
import { AccessModel, IdentityAccessMemo } from '../../../lib/access/access-model';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { planReviewNeedsAttention, reviewSavedPlans } from '../../../lib/access/plan-review';
import { renderPlanReviewMarkdown } from '../../../lib/access/plan-review-markdown';
import { REVIEWED_ATTRIBUTES, StackReadings, storeConfigurationOf } from '../../../lib/access/store-configuration';
import { readSavedPlan } from '../../../lib/sources/saved-plan';
import { readSynthOutput } from '../../../lib/sources/synth-output';
import { ACCESS_FIXTURES } from '../../support/paths';
import { appliedValues, ChangeSpec, planDocument } from '../../support/saved-plan-document';

// Issue 36: the note is computed from the saved plans: what an override file, a name written as an
// expression or an input variable makes the engine write is reviewed like any other change.
describe('reviewSavedPlans: access before (refreshed state) and after (planned values)', () => {
  const synthesized = readSynthOutput(path.join(ACCESS_FIXTURES, 'base'));
  const stack = (name: string) => synthesized.find((s) => s.name === name)!;
  const applied = new Map([...appliedValues(stack('app-roles')), ...appliedValues(stack('ci-access'))]);
  const ORCH_ROLE = 'vault_approle_auth_backend_role.orchestrator-dev_role_125D2539';
  const ORCH_POLICY = 'vault_policy.orchestrator-dev_policy_125D2537';
  const REGISTRY_ROLE = 'vault_approle_auth_backend_role.registry-shared_role_55A57924';
  const CI_POLICY = 'vault_policy.registry-ci_policy_FD942459';
  const plan = (name: string, changes: ChangeSpec[], file = `${name}.tfplan`) =>
    readSavedPlan(planDocument(stack(name), changes), name, file, `sha-of-${name}`, REVIEWED_ATTRIBUTES);
  const update = (address: string, edit: Record<string, unknown>, afterUnknown: Record<string, unknown> = {}): ChangeSpec => ({
    address,
    actions: ['update'],
    before: applied.get(address)!,
    after: { ...applied.get(address)!, ...edit },
    afterUnknown,
  });
  const rules = (review: Awaited<ReturnType<typeof reviewSavedPlans>>, identity: string) =>
    review.diff.changed.find((c) => c.name === identity)?.rules.map((r) => `${r.path} +${r.gained.join(',')} -${r.lost.join(',')}`);

  it('a plan of no-ops: no access change, every identity unchanged, complete', async () => {
    const review = await reviewSavedPlans(synthesized, [plan('app-roles', []), plan('ci-access', [])]);
    expect(hasAccessChange(review.diff)).toBe(false);
    expect(review.diff.unchanged).toBe(6);
    expect(review.complete).toBe(true);
    expect(planReviewNeedsAttention(review)).toBe(false);
    expect(review.unplanned).toEqual([]);
    expect(review.plans.map((p) => [p.stack, p.file, p.sha256])).toEqual([
      ['app-roles', 'app-roles.tfplan', 'sha-of-app-roles'],
      ['ci-access', 'ci-access.tfplan', 'sha-of-ci-access'],
    ]);
  });

  it('a policy text an override file changed is an access change of the identities holding it (the synthesis says nothing changed)', async () => {
    const review = await reviewSavedPlans(synthesized, [
      plan('app-roles', [update(ORCH_POLICY, { policy: 'path "secret/data/acme/dev/orchestrator/*" { capabilities = ["read"] }\npath "secret/data/*" { capabilities = ["read", "list"] }\n' })]),
    ]);
    expect(review.diff.changed.map((c) => c.name)).toEqual(['approle/orchestrator-dev']);
    expect(rules(review, 'approle/orchestrator-dev')).toEqual(['secret/data/* +read,list -']);
    expect(review.unplanned).toEqual(['ci-access']);
    expect(planReviewNeedsAttention(review)).toBe(true);
    const markdown = renderPlanReviewMarkdown(review);
    expect(markdown).toContain("Computed from the engine's saved plans");
    expect(markdown).toContain('| `app-roles` | `app-roles.tfplan` | `sha-of-app-roles` | 1.12.6 |');
    expect(markdown).toContain('Read from the synthesized output on both sides (no plan given, taken as unchanged): `ci-access`.');
    expect(markdown).toContain('### Changed: `approle/orchestrator-dev`');
    expect(markdown).toContain('| `secret/data/*` (new) | read, list |  | read, list |');
  });

  it('a raw policy whose name the engine resolved to registry-ci (another stack\'s policy) is reviewed as registry-ci: its CI identity gains the raw text\'s paths', async () => {
    const review = await reviewSavedPlans(synthesized, [
      plan('app-roles', [
        // `name = "${lower("REGISTRY-CI")}"` in the configuration: the plan holds the name the engine writes.
        { address: 'vault_policy.raw', actions: ['create'], before: null, after: { name: 'registry-ci', namespace: null, policy: 'path "secret/data/acme/dev/orchestrator/*" { capabilities = ["read"] }' }, afterUnknown: { id: true } },
      ]),
    ]);
    expect(review.diff.changed.map((c) => c.name)).toEqual(['jwt/registry-ci']);
    expect(rules(review, 'jwt/registry-ci')).toContain('secret/data/acme/dev/orchestrator/* +read -');
    const flag = review.diff.flags.find((f) => f.kind === 'plan-overrides')!;
    expect(flag.identity).toBe('registry-ci');
    expect(flag.message).toContain('the plan of stack `app-roles` writes the policy `registry-ci` that stack `ci-access` declares differently');
    // Two texts for one name in one plan: which one the store keeps depends on the engine's order, refused.
    await expect(
      reviewSavedPlans(synthesized, [
        plan('ci-access', [{ address: 'vault_policy.raw', actions: ['create'], before: null, after: { name: 'registry-ci', namespace: null, policy: 'path "x" { capabilities = ["read"] }' } }]),
      ]),
    ).rejects.toThrow('stack ci-access: policy "registry-ci" is written twice with different texts');
  });

  it('a role added to token_policies by an override (root included): the binding changes and the store refuses the login', async () => {
    const review = await reviewSavedPlans(synthesized, [plan('app-roles', [update(REGISTRY_ROLE, { token_policies: ['registry', 'orchestrator-dev'] })])]);
    expect(rules(review, 'approle/registry')).toEqual(['secret/data/acme/dev/orchestrator/* +read -']);
    const root = await reviewSavedPlans(synthesized, [plan('app-roles', [update(REGISTRY_ROLE, { token_policies: ['registry', 'root'] })])]);
    expect(root.diff.changed.find((c) => c.name === 'approle/registry')!.bindings.map((b) => b.field)).toEqual(['token_policies']);
    expect(root.diff.problems).toContainEqual({ identity: 'approle/registry', problem: expect.stringContaining('lists the root policy') });
  });

  it('delete, create and replace of roles: removed, added, and a renamed replacement as one removed and one added', async () => {
    const review = await reviewSavedPlans(synthesized, [
      plan('app-roles', [
        { address: ORCH_ROLE, actions: ['delete'], before: applied.get(ORCH_ROLE)!, after: null },
        { address: 'vault_approle_auth_backend_role.new', actions: ['create'], before: null, after: { ...applied.get(ORCH_ROLE)!, role_name: 'billing', id: undefined }, afterUnknown: { id: true, role_id: true } },
        { address: REGISTRY_ROLE, actions: ['delete', 'create'], before: applied.get(REGISTRY_ROLE)!, after: { ...applied.get(REGISTRY_ROLE)!, role_name: 'registry-two' }, afterUnknown: { role_id: true } },
      ]),
    ]);
    expect(review.diff.removed.map((i) => i.name)).toEqual(['approle/orchestrator-dev', 'approle/registry']);
    expect(review.diff.added.map((i) => i.name)).toEqual(['approle/billing', 'approle/registry-two']);
    // Construct paths come from the synthesized stack where it has the same address; none for a resource it lacks.
    expect(review.diff.removed.map((i) => i.declaredAt)).toEqual(['app-roles/orchestrator-dev/role', 'app-roles/registry-shared/role']);
    expect(review.diff.added.map((i) => i.declaredAt)).toEqual([undefined, 'app-roles/registry-shared/role']);
    expect(review.complete).toBe(true);
    // A replacement with the same values: the same identity, no access change.
    const same = await reviewSavedPlans(synthesized, [plan('app-roles', [{ address: REGISTRY_ROLE, actions: ['create', 'delete'], before: applied.get(REGISTRY_ROLE)!, after: applied.get(REGISTRY_ROLE)! }])]);
    expect(hasAccessChange(same.diff)).toBe(false);
  });

  it('a value unknown until apply is never guessed: flagged, read as granting nothing, the review incomplete (exit 1) even without another change', async () => {
    const review = await reviewSavedPlans(synthesized, [plan('ci-access', [update(CI_POLICY, { policy: undefined }, { policy: true })])]);
    expect(review.complete).toBe(false);
    expect(planReviewNeedsAttention(review)).toBe(true);
    const flags = review.diff.flags.filter((f) => f.kind === 'plan-unknown');
    expect(flags.map((f) => [f.identity, f.message.split(' is known')[0]])).toEqual([[`ci-access: ${CI_POLICY}`, '`policy`']]);
    expect(rules(review, 'jwt/registry-ci')!.every((r) => r.endsWith('-read'))).toBe(true);
    expect(renderPlanReviewMarkdown(review)).toContain('**The review is incomplete:**');
    // Unknown token_policies on a role that otherwise does not change: still incomplete.
    const roleOnly = await reviewSavedPlans(synthesized, [plan('app-roles', [update(ORCH_ROLE, {}, { token_policies: true })])]);
    expect(roleOnly.complete).toBe(false);
    expect(roleOnly.diff.flags.map((f) => f.kind)).toContain('plan-unknown');
  });

  it('a plan the engine marks incomplete is flagged and the review incomplete', async () => {
    const partial = readSavedPlan(planDocument(stack('app-roles'), [], { complete: false }), 'app-roles', 'p.tfplan', 'x', REVIEWED_ATTRIBUTES);
    const review = await reviewSavedPlans(synthesized, [partial]);
    expect(review.complete).toBe(false);
    expect(review.diff.flags.map((f) => [f.kind, f.identity])).toEqual([['plan-unknown', 'app-roles: p.tfplan']]);
  });

  it('a vault provider configured otherwise than the synthesis (an address, an alias) is flagged and the review incomplete', async () => {
    const withProviders = (providerConfig: Record<string, unknown>) =>
      readSavedPlan(
        planDocument(stack('app-roles'), [], { configuration: { provider_config: providerConfig, root_module: {} } }),
        'app-roles',
        'p.tfplan',
        'x',
        REVIEWED_ATTRIBUTES,
      );
    const plain = await reviewSavedPlans(synthesized, [withProviders({ vault: { name: 'vault', full_name: 'registry.opentofu.org/hashicorp/vault' } })]);
    expect(plain.complete).toBe(true);
    const moved = await reviewSavedPlans(synthesized, [
      withProviders({
        vault: { name: 'vault', expressions: { address: { constant_value: 'https://elsewhere.example:8200' } } },
        'vault.other': { name: 'vault', alias: 'other', expressions: { namespace: { references: ['var.ns'] } } },
      }),
    ]);
    expect(moved.complete).toBe(false);
    expect(moved.diff.flags.map((f) => [f.kind, f.identity])).toEqual([['plan-unreviewed', 'app-roles: provider vault']]);
    expect(moved.diff.flags[0].message).toContain('its `address` set to `https://elsewhere.example:8200`; a second vault provider `vault.other`');
  });

  it('a change to a resource the review does not read is flagged and the review incomplete', async () => {
    const review = await reviewSavedPlans(synthesized, [
      plan('app-roles', [{ address: 'vault_generic_endpoint.x', actions: ['create'], before: null, after: { path: 'sys/policies/acl/registry-ci', data_json: '{}' } }]),
    ]);
    expect(hasAccessChange(review.diff)).toBe(false);
    expect(review.complete).toBe(false);
    expect(review.diff.flags.map((f) => [f.kind, f.identity])).toEqual([['plan-unreviewed', 'app-roles: vault_generic_endpoint.x']]);
    const markdown = renderPlanReviewMarkdown(review);
    expect(markdown).toContain('**No access change.**');
    expect(markdown).toContain('- **change the access review cannot read**, `app-roles: vault_generic_endpoint.x`: `create` of a `vault_generic_endpoint`');
  });

  it('a planned value holding "${" is read as the engine writes it, not as a reference', async () => {
    const review = await reviewSavedPlans(synthesized, [plan('app-roles', [update(ORCH_ROLE, { token_policies: ['orchestrator-dev', 'team-${x}'] })])]);
    const binding = review.diff.changed.find((c) => c.name === 'approle/orchestrator-dev')!.bindings.find((b) => b.field === 'token_policies')!;
    expect(binding.after).toEqual(['orchestrator-dev', 'team-${x}']);
  });

  it('an object one plan forgets and another imports is one object', async () => {
    const moved = { ...applied.get(ORCH_ROLE)! };
    const review = await reviewSavedPlans(synthesized, [
      plan('app-roles', [{ address: ORCH_ROLE, actions: ['forget'], before: moved, after: null }]),
      plan('ci-access', [{ address: 'vault_approle_auth_backend_role.moved', actions: ['no-op'], before: null, after: moved }]),
    ]);
    expect(hasAccessChange(review.diff)).toBe(false);
    // As the engines show an import: its `before` is the object read from the store, the one the
    // other stack's state holds (the pipeline's sharding migration, on the store).
    const imported = await reviewSavedPlans(synthesized, [
      plan('app-roles', [{ address: ORCH_ROLE, actions: ['forget'], before: moved, after: null }]),
      plan('ci-access', [{ address: 'vault_approle_auth_backend_role.moved', actions: ['no-op'], before: moved, after: moved }]),
    ]);
    expect(hasAccessChange(imported.diff)).toBe(false);
    expect(imported.diff.unchanged).toBe(review.diff.unchanged);
    // Forgotten alone: out of state, still on the store, no access lost.
    const forgotten = await reviewSavedPlans(synthesized, [plan('app-roles', [{ address: ORCH_ROLE, actions: ['forget'], before: moved, after: null }])]);
    expect(hasAccessChange(forgotten.diff)).toBe(false);
  });

  it('two plans of one stack are refused', async () => {
    await expect(reviewSavedPlans(synthesized, [plan('app-roles', []), plan('app-roles', [], 'other.tfplan')])).rejects.toThrow(
      'stack app-roles has two plans (app-roles.tfplan, other.tfplan): give one plan per stack',
    );
  });
});

describe('StackReadings: each stack read once for both sides of a review', () => {
  const synthesized = readSynthOutput(path.join(ACCESS_FIXTURES, 'base'));

  it('reads the same configuration with a shared reading as without, and reads a stack object once', () => {
    const readings = new StackReadings();
    const fresh = storeConfigurationOf(synthesized);
    const first = storeConfigurationOf(synthesized, new Set(), readings);
    const second = storeConfigurationOf(synthesized, new Set(), readings);
    expect(first).toEqual(fresh);
    expect(second).toEqual(fresh);
    // Read once: the second side holds the very identities the first read.
    expect(second.identities[0]).toBe(first.identities[0]);
  });

  it('reads a new stack object anew (a stack made from a plan is never taken for the synthesized one)', () => {
    const readings = new StackReadings();
    storeConfigurationOf(synthesized, new Set(), readings);
    const renamed = synthesized.map((s) => ({ ...s, resources: JSON.parse(JSON.stringify(s.resources).replace(/orchestrator-dev/g, 'orchestrator-qa')) }));
    const names = storeConfigurationOf(renamed, new Set(), readings).identities.map((i) => i.name);
    expect(names.some((n) => n.includes('orchestrator-qa'))).toBe(true);
    expect(names.some((n) => n.includes('orchestrator-dev'))).toBe(false);
  });
});

describe('IdentityAccessMemo: an identity read once for both sides is evaluated once', () => {
  const synthesized = readSynthOutput(path.join(ACCESS_FIXTURES, 'base'));

  it('gives the kept access for the same identity and parsed policies, and evaluates again when a policy text differs', async () => {
    const readings = new StackReadings();
    const parser = new PolicyParser();
    const memo = new IdentityAccessMemo();
    const configuration = storeConfigurationOf(synthesized, new Set(), readings);
    const first = await AccessModel.load(configuration, parser, memo);
    const again = await AccessModel.load(storeConfigurationOf(synthesized, new Set(), readings), parser, memo);
    const alone = await AccessModel.load(configuration);
    expect(again.identities[0]).toBe(first.identities[0]);
    expect(again.identities.map((i) => i.acl.rules)).toEqual(alone.identities.map((i) => i.acl.rules));
    // The same identity objects, one policy text changed: the identities holding it are evaluated anew.
    const [name, policy] = [...configuration.policies].find(([, p]) => first.identities.some((i) => i.tokenPolicies.includes(p.name) && i.acl.rules.length > 0))!;
    const changed = { ...configuration, policies: new Map([...configuration.policies, [name, { ...policy, text: 'path "changed/*" { capabilities = ["read"] }\n' }]]) };
    const after = await AccessModel.load(changed, parser, memo);
    const holder = after.identities.find((i) => i.tokenPolicies.includes(name))!;
    expect(holder).not.toBe(first.get(holder.identity.name));
    expect(holder.acl.rules.map((r) => r.path.display)).toContain('changed/*');
    const other = after.identities.find((i) => !i.tokenPolicies.includes(name));
    if (other) expect(other).toBe(first.get(other.identity.name));
  });
});
