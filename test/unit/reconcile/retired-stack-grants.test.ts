/**
 * Issue 27's removal gap with the grants per stack (issue 30): a stack BASE has and HEAD does not (the
 * `people` section removed, the last application of a shard) holds the pipeline roles' grant for its
 * objects. The pipeline applies ci-access first and the retired stack's destroys only in the manual
 * job, later: `moves BASE HEAD` writes into ci-access an engine override that keeps the retired
 * stack's grant names on the roles and the roles' rules on those grants, until the removal is applied.
 */
import * as fs from 'fs';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { AppRoleApplication } from '../../../lib';
import { RETIRED_GRANTS_FILE, retiredStackGrants } from '../../../lib/reconcile/retired-stack-grants';
import { readSynthOutput } from '../../../lib/sources/synth-output';
import { bookkeepingProblems } from '../../../lib/engine/bookkeeping-seal';
import { releaseBasis, releasedGrantsProblems } from '../../../lib/engine/released-grants-check';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { withPeople } from '../../support/people-config';
import { policyRules, synthesizePlatform } from '../../support/synthesized-platform';

const PIPELINE = { configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } };

async function moves(base: string, head: string, ...more: string[]): Promise<{ code: number; stdout: string }> {
  const out: string[] = [];
  const code = await runCli(['moves', base, head, ...more], { env: {}, cwd: path.dirname(head), isTerminal: false, stdout: (l) => out.push(l), stderr: () => undefined });
  return { code, stdout: out.join('\n') };
}

describe('moves keeps a retired stack\'s grants on the pipeline roles until its removal is applied', () => {
  const base = synthesizePlatform({ ...withPeople(), ...PIPELINE });
  const head = synthesizePlatform({ ...platformConfig, ...PIPELINE });
  const overrideFile = path.join(head.outdir, 'stacks', 'ci-access', RETIRED_GRANTS_FILE);
  /** A role or policy block of ci-access, BASE's or HEAD's, by its store name. */
  const block = (stacks: Record<string, any>, type: string, name: string) =>
    Object.entries(stacks['ci-access'].resource[type] as Record<string, any>).find(([, b]) => (b.role_name ?? b.name) === name)!;

  it('people removed: ci-access\'s override gives each role back the people grant and the rules on both people grants; nothing else', async () => {
    const r = await moves(base.outdir, head.outdir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Wrote cdktf.out/stacks/ci-access/${RETIRED_GRANTS_FILE}: its roles keep the policies of people until their removal is applied.`);
    const override = JSON.parse(fs.readFileSync(overrideFile, 'utf8'));
    for (const [role, access] of [['secretstore-iac-pipeline', 'apply'], ['secretstore-iac-plan', 'plan']] as const) {
      const [id, headRole] = block(head.stacks, 'vault_jwt_auth_backend_role', role);
      const [, baseRole] = block(base.stacks, 'vault_jwt_auth_backend_role', role);
      expect(headRole.token_policies).not.toContain(`${role}-people`);
      // The override's list: HEAD's, then the retired grant: BASE's names, as a set.
      expect(override.resource.vault_jwt_auth_backend_role[id]).toEqual({ token_policies: [...headRole.token_policies, `${role}-people`] });
      expect(new Set(override.resource.vault_jwt_auth_backend_role[id].token_policies)).toEqual(new Set(baseRole.token_policies));
      // The role's own policy: HEAD's text, and BASE's rules on the people grants (the apply role destroys both).
      const [policyId, headPolicy] = block(head.stacks, 'vault_policy', role);
      const text = override.resource.vault_policy[policyId].policy as string;
      expect(text.startsWith(headPolicy.policy)).toBe(true);
      const caps = access === 'apply' ? ['create', 'read', 'update', 'delete'] : ['read'];
      expect(policyRules(text.slice(headPolicy.policy.length))).toEqual([
        ['sys/policies/acl/secretstore-iac-pipeline-people', caps],
        ['sys/policies/acl/secretstore-iac-plan-people', caps],
      ]);
      expect(text).toContain('# Kept by secretstore-iac moves until the removal of people (a stack this configuration no longer has) is applied.');
    }
    // Only the two roles and their two policies are overridden.
    expect(Object.values(override.resource).flatMap((b: any) => Object.keys(b))).toHaveLength(4);
  });

  it('a re-run against the new base (the removal applied and merged) removes the override; so does --dry-run say, writing nothing', async () => {
    fs.writeFileSync(overrideFile, '{}');
    const dry = await moves(head.outdir, head.outdir, '--dry-run');
    expect(dry.stdout).toContain(`Would remove cdktf.out/stacks/ci-access/${RETIRED_GRANTS_FILE}: no retired stack's policy to keep.`);
    expect(fs.existsSync(overrideFile)).toBe(true);
    await moves(head.outdir, head.outdir);
    expect(fs.existsSync(overrideFile)).toBe(false);
  });

  it('without a configuration project (no grants), or with no stack retired, nothing is kept', () => {
    const withoutProject = ({ configurationProject, ...rest }: typeof platformConfig) => rest;
    const plainBase = readSynthOutput(synthesizePlatform(withoutProject(withPeople())).outdir);
    const plainHead = readSynthOutput(synthesizePlatform(withoutProject(platformConfig)).outdir);
    expect(retiredStackGrants(plainBase, plainHead)).toEqual([]);
    expect(retiredStackGrants(readSynthOutput(base.outdir), readSynthOutput(base.outdir))).toEqual([]);
  });

  it('the last application of a shard removed: the shard\'s grants are kept the same way', () => {
    const sharded = (applications: Record<string, { name: string; environment: string }>) =>
      synthesizePlatform({ ...platformConfig, ...PIPELINE, applicationSharding: { by: 'environment' }, applications });
    const before = readSynthOutput(sharded({ 'billing-qa': { name: 'billing', environment: 'qa' } }).outdir);
    const after = readSynthOutput(sharded({}).outdir);
    expect(before.map((s) => s.name)).toContain('app-roles-qa');
    expect(after.map((s) => s.name)).not.toContain('app-roles-qa');
    const [kept] = retiredStackGrants(before, after);
    expect({ stack: kept.stack, retired: kept.retired }).toEqual({ stack: 'ci-access', retired: ['app-roles-qa'] });
    expect(kept.content).toContain('"secretstore-iac-pipeline-app-roles-qa"');
    expect(kept.content).toContain('path \\"sys/policies/acl/secretstore-iac-plan-app-roles-qa\\"');
  });

  it("only the pipeline roles' grants are kept: a role attached by an override to an application policy of the retired shard is not (it loses it in the apply, as the review shows)", () => {
    const sharded = (applications: Record<string, { name: string; environment: string }>, attach: boolean) =>
      synthesizePlatform({ ...platformConfig, ...PIPELINE, applicationSharding: { by: 'environment' }, applications }, (_p, app) => {
        if (!attach) return;
        const search = app.node.findAll().find((c): c is AppRoleApplication => c instanceof AppRoleApplication && c.roleName === 'search-staging')!;
        search.role.addOverride('token_policies', ['search-staging', 'billing-qa']);
      });
    const before = readSynthOutput(sharded({ 'billing-qa': { name: 'billing', environment: 'qa' }, 'search-staging': { name: 'search', environment: 'staging' } }, true).outdir);
    const after = readSynthOutput(sharded({ 'search-staging': { name: 'search', environment: 'staging' } }, false).outdir);
    const kept = retiredStackGrants(before, after);
    // ci-access keeps the shard's grants; app-roles-staging keeps nothing of billing-qa's policy.
    expect(kept.map((k) => k.stack)).toEqual(['ci-access']);
    expect(kept[0].content).not.toContain('"billing-qa"');
  });

  /**
   * The plan `show -json` gives for the release: every overridden object updated from the override's
   * value (what the store holds) to HEAD's declared one, references resolved as the engine does.
   */
  function releasePlan(override: any, declared: any) {
    const names = new Map<string, string>(Object.entries(declared.vault_policy ?? {}).map(([id, b]: [string, any]) => [`vault_policy.${id}`, b.name]));
    const value = (v: unknown): unknown => (Array.isArray(v) ? v.map(value) : typeof v === 'string' ? (/^\$\{(vault_policy\.[^.]+)\.name\}$/.exec(v) ? names.get(/^\$\{(vault_policy\.[^.]+)\.name\}$/.exec(v)![1]) : v.replace(/\$\$\{/g, '${')) : v);
    const changes: any[] = [];
    for (const [type, blocks] of Object.entries(override.resource) as [string, Record<string, any>][]) {
      for (const [id, attributes] of Object.entries(blocks)) {
        const own = declared[type][id];
        const base = type === 'vault_policy' ? { name: own.name } : { role_name: own.role_name };
        const [key] = Object.keys(attributes);
        changes.push({ address: `${type}.${id}`, type, name: id, change: { actions: ['update'], before: { ...base, [key]: value(attributes[key]) }, after: { ...base, [key]: value(own[key]) } } });
      }
    }
    for (const [id, b] of Object.entries(declared.vault_policy ?? {}) as [string, any][]) {
      if (!override.resource.vault_policy?.[id]) changes.push({ address: `vault_policy.${id}`, type: 'vault_policy', name: id, change: { actions: ['no-op'], before: { name: b.name }, after: { name: b.name } } });
    }
    return { resource_changes: changes };
  }

  it.each([
    ['people removed', () => ({ base: synthesizePlatform({ ...withPeople(), ...PIPELINE }), head: synthesizePlatform({ ...platformConfig, ...PIPELINE }) })],
    ['a shard retired (hash 3 → 2)', () => ({
      base: synthesizePlatform({ ...platformConfig, ...PIPELINE, applicationSharding: { by: 'hash', shards: 3 } }),
      head: synthesizePlatform({ ...platformConfig, ...PIPELINE, applicationSharding: { by: 'hash', shards: 2 } }),
    })],
  ])('%s: the override passes the content check, its release passes --released-grants exactly, and the note names each access change (issue 45)', async (_label, make) => {
    const { base: b, head: h } = make();
    const note = path.join(path.dirname(h.outdir), 'moves.md');
    expect((await moves(b.outdir, h.outdir, '--markdown-file', note)).code).toBe(0);
    const stackDir = path.join(h.outdir, 'stacks', 'ci-access');
    expect(bookkeepingProblems(stackDir)).toEqual([]);
    const override = JSON.parse(fs.readFileSync(path.join(stackDir, RETIRED_GRANTS_FILE), 'utf8'));
    const declared = JSON.parse(fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8')).resource;
    const { problems, released } = releasedGrantsProblems(releasePlan(override, declared), override, releaseBasis(stackDir));
    expect(problems).toEqual([]);
    // What moves announced is what the release takes away: the same changes, one by one.
    const [kept] = retiredStackGrants(readSynthOutput(b.outdir), readSynthOutput(h.outdir));
    const key = (r: { address: string; loses: string; what: string }) => `${r.address} ${r.loses} ${r.what}`;
    expect(released.map(key).sort()).toEqual(kept.released!.map(key).sort());
    expect(released.length).toBeGreaterThan(0);
    const markdown = fs.readFileSync(note, 'utf8');
    expect(markdown).toContain(`### Access released after the retired stacks' removal: ${released.length} change`);
    for (const r of released) expect(markdown).toContain(`${r.loses} \`${r.what}\``);
    // A release that ends at less than the declared value (a policy text cut short) is refused.
    const cut = releasePlan(override, declared);
    const policy = cut.resource_changes.find((c: any) => c.type === 'vault_policy' && c.change.actions[0] === 'update');
    policy.change.after.policy = policy.change.after.policy.slice(0, 20);
    expect(releasedGrantsProblems(cut, override, releaseBasis(stackDir)).problems).toEqual([expect.stringContaining('policy becomes other than the stack declares')]);
  });
});
