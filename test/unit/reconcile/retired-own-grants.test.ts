/**
 * Issue 30, option B: a retired stack (fewer shards) whose every object moved still declares the
 * pipeline roles' two grants there, declared nowhere any more. They are the pipeline's own policies,
 * giving no identity access to a secret: its plan destroys them without the manual approval job, but
 * only they, only when they are all the retired stack destroys, and only when BASE's synthesis shows
 * them to be the library's grants (never by name alone). Against a real store and engine, under
 * gitlab-ci-local: test/store/configuration-pipeline.store.test.ts (the re-shard to fewer shards).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { approveRemovals, approveRetiredGrants, reportRetiredGrants } from '../../../lib/cli/removal-approval';
import { runCli } from '../../../lib/cli/run-cli';
import { plannedDestructions } from '../../../lib/engine/replacement-guard';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { ownGrantDestroys, readRetiredOwnGrants, RETIRED_OWN_GRANTS_FILE, retiredOwnGrantProblems, retiredOwnGrants } from '../../../lib/reconcile/retired-stack-grants';
import { RetiredGrantsRecordRefused } from '../../../lib/cli/removal-approval';
import { bookkeepingProblems, SEAL_FILE, sealBookkeeping } from '../../../lib/engine/bookkeeping-seal';
import { GuardRefusal } from '../../../lib/engine/guard-refusal';
import { MOVES_FILE, separateRetiredOwnGrants, stackMoves } from '../../../lib/reconcile/stack-moves';
import { stackMovesJson } from '../../../lib/reconcile/stack-moves-json';
import { renderStackMovesMarkdown } from '../../../lib/reconcile/stack-moves-markdown';
import { readSynthOutput, SynthStack } from '../../../lib/sources/synth-output';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

const hash = (shards: number): PlatformConfig => ({ ...platformConfig, applicationSharding: { by: 'hash', shards } });
const addBilling = (p: any) => p.appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev' });
const GRANTS = ['sys/policies/acl/secretstore-iac-pipeline-app-roles-02', 'sys/policies/acl/secretstore-iac-plan-app-roles-02'];

async function moves(base: string, head: string, ...more: string[]): Promise<{ code: number; stdout: string }> {
  const out: string[] = [];
  const code = await runCli(['moves', base, head, ...more], { env: {}, cwd: path.dirname(head), isTerminal: false, stdout: (l) => out.push(l), stderr: () => undefined });
  return { code, stdout: out.join('\n') };
}

/** A deep copy of a synthesized output's stacks, to edit one block. */
const copy = (stacks: readonly SynthStack[]): SynthStack[] => JSON.parse(JSON.stringify(stacks));
/** The `vault_policy` block of `stack` whose name is `name`. */
const policy = (stacks: SynthStack[], stack: string, name: string) => Object.values(stacks.find((s) => s.name === stack)!.resources.vault_policy as Record<string, any>).find((b) => b.name === name)!;

describe('retiredOwnGrants: a retired stack\'s pipeline grants, recognised from BASE\'s synthesis', () => {
  // Three hash shards (app-roles-02 holds four applications with billing-dev), then two: every
  // application in app-roles-01, app-roles-02 retired.
  const base3 = synthesizePlatform(hash(3), addBilling);
  const head2 = synthesizePlatform(hash(2), addBilling);
  const base = readSynthOutput(base3.outdir);
  const head = readSynthOutput(head2.outdir);

  it('the two grants of the retired shard, each with its address, store path and role; none of a stack HEAD keeps', () => {
    expect(head.map((s) => s.name)).not.toContain('app-roles-02');
    expect(retiredOwnGrants(base, head)).toEqual([
      { stack: 'app-roles-02', address: 'vault_policy.secretstore-iac-grant-pipeline-apply', storePath: GRANTS[0], role: 'secretstore-iac-pipeline' },
      { stack: 'app-roles-02', address: 'vault_policy.secretstore-iac-grant-pipeline-plan', storePath: GRANTS[1], role: 'secretstore-iac-plan' },
    ]);
    expect(retiredOwnGrants(base, base)).toEqual([]);
  });

  it.each([
    [
      'a policy named like a grant whose construct is not the library\'s grant (a hand-made policy)',
      (s: SynthStack[]) => (policy(s, 'app-roles-02', 'secretstore-iac-pipeline-app-roles-02')['//'].metadata.path = 'app-roles-02/my-policy'),
    ],
    [
      'an application\'s policy given a grant\'s name (its construct path is the application\'s)',
      (s: SynthStack[]) => {
        const grant = policy(s, 'app-roles-02', 'secretstore-iac-pipeline-app-roles-02');
        const app = policy(s, 'app-roles-02', 'orchestrator-dev');
        delete (s.find((x) => x.name === 'app-roles-02')!.resources.vault_policy as any)[grant['//'].metadata.uniqueId];
        app.name = 'secretstore-iac-pipeline-app-roles-02';
      },
    ],
    [
      'the grant construct with a name that is not <role name>-<stack>',
      (s: SynthStack[]) => (policy(s, 'app-roles-02', 'secretstore-iac-pipeline-app-roles-02').name = 'secretstore-iac-pipeline-app-roles-03'),
    ],
    [
      'a grant no pipeline role attaches (not in its token_policies)',
      (s: SynthStack[]) => {
        for (const role of Object.values(s.find((x) => x.name === 'ci-access')!.resources.vault_jwt_auth_backend_role as Record<string, any>)) {
          role.token_policies = role.token_policies.filter((n: string) => n !== 'secretstore-iac-pipeline-app-roles-02');
        }
      },
    ],
  ])('not a grant: %s', (_, edit) => {
    const edited = copy(base);
    edit(edited);
    expect(retiredOwnGrants(edited, head).map((g) => g.storePath)).toEqual([GRANTS[1]]);
  });

  it('without a configuration project (no pipeline roles), a policy of yours named and placed like a grant is none', () => {
    const { configurationProject, ...plain } = hash(3);
    // SSI-R9 refuses such a name at synthesis; an output edited by hand may still hold one.
    const before = copy(readSynthOutput(synthesizePlatform(plain, addBilling).outdir));
    const shard = before.find((s) => s.name === 'app-roles-02')!;
    (shard.resources as any).vault_policy['secretstore-iac-grant-pipeline-apply'] = {
      name: 'secretstore-iac-pipeline-app-roles-02',
      policy: 'path "sys/audit" {\n  capabilities = ["read"]\n}\n',
      '//': { metadata: { path: 'app-roles-02/secretstore-iac-grant-pipeline-apply', uniqueId: 'secretstore-iac-grant-pipeline-apply' } },
    };
    const { configurationProject: _, ...plainHead } = hash(2);
    expect(retiredOwnGrants(before, readSynthOutput(synthesizePlatform(plainHead, addBilling).outdir))).toEqual([]);
  });
});

describe('separateRetiredOwnGrants: the grants go apart only when they are all the retired stack removes', () => {
  const base3 = synthesizePlatform(hash(3), addBilling).outdir;

  it('every other object moved: the grants are not removals, they are destroyed without approval', () => {
    const head = synthesizePlatform(hash(2), addBilling).outdir;
    const result = separateRetiredOwnGrants(stackMoves(readDeclaredObjects(base3), readDeclaredObjects(head)), retiredOwnGrants(readSynthOutput(base3), readSynthOutput(head)));
    expect(result.removals).toEqual([]);
    expect(result.retiredGrants!.map((r) => [r.stack, r.storePath])).toEqual(GRANTS.map((g) => ['app-roles-02', g]));
    expect(result.moves).toHaveLength(8);
  });

  it('the retired stack also removes an application (billing-dev): its grants stay removals, waiting for approval with it', () => {
    const head = synthesizePlatform(hash(2)).outdir;
    const result = separateRetiredOwnGrants(stackMoves(readDeclaredObjects(base3), readDeclaredObjects(head)), retiredOwnGrants(readSynthOutput(base3), readSynthOutput(head)));
    expect(result.retiredGrants ?? []).toEqual([]);
    expect(result.removals.map((r) => r.storePath)).toEqual(['auth/approle/role/billing-dev', 'sys/policies/acl/billing-dev', ...GRANTS]);
  });

  it('a removal in a stack HEAD keeps is never a retired grant', () => {
    const moved = stackMoves(readDeclaredObjects(base3), readDeclaredObjects(base3));
    const removal = { kind: 'policy' as const, storePath: GRANTS[0], stack: 'app-roles-02', address: 'vault_policy.secretstore-iac-grant-pipeline-apply', stackRemains: true };
    const result = separateRetiredOwnGrants({ ...moved, removals: [removal] }, [{ stack: 'app-roles-02', address: removal.address, storePath: removal.storePath }]);
    expect(result.removals).toEqual([removal]);
    expect(result.retiredGrants ?? []).toEqual([]);
  });
});

describe('the note and --format json list the grants apart from the revocations', () => {
  const base3 = synthesizePlatform(hash(3), addBilling).outdir;

  it('only grants: a section saying they go automatically and why, no "Objects removed"; JSON grantsDestroyedAutomatically', async () => {
    const head = synthesizePlatform(hash(2), addBilling).outdir;
    const note = path.join(path.dirname(head), 'note.md');
    const r = await moves(base3, head, '--markdown-file', note);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('2 pipeline grants of retired stacks whose other objects all moved: their plans destroy them without --allow-removals');
    expect(r.stdout).toMatch(/Wrote cdktf\.out\/stacks\/app-roles-02\/moves\.tf\.json: forget 8, import 0 \(a stack HEAD no longer has: plan and apply it, which destroys its 2 pipeline grants without approval, then delete the directory\)\./);
    const md = fs.readFileSync(note, 'utf8');
    expect(md).not.toContain('### Objects removed');
    expect(md).toContain('### Pipeline grants of retired stacks: 2 destroyed automatically, without approval');
    expect(md).toContain('They are pipeline-internal and give no identity access to a secret: not a revocation, so the retired stack\'s apply destroys them, with no manual job.');
    for (const g of GRANTS) expect(md).toContain(`| \`app-roles-02\` (removed) | \`${g}\` | pipeline grant: the pipeline roles' rules on this stack's objects |`);
    const json = JSON.parse((await moves(base3, head, '--format', 'json', '--dry-run')).stdout);
    const retired = json.stacks.find((s: any) => s.stack === 'app-roles-02');
    expect(retired.removed).toEqual([]);
    expect(retired.grantsDestroyedAutomatically.map((g: any) => g.storePath)).toEqual(GRANTS);
    // The record tf reads, beside the moves file.
    expect(readRetiredOwnGrants(path.join(head, 'stacks', 'app-roles-02')).map((g) => g.storePath)).toEqual(GRANTS);
  });

  it('with a real removal in the retired stack: every object, grants included, under "Objects removed", after approval', () => {
    const head = synthesizePlatform(hash(2)).outdir;
    const result = separateRetiredOwnGrants(stackMoves(readDeclaredObjects(base3), readDeclaredObjects(head)), retiredOwnGrants(readSynthOutput(base3), readSynthOutput(head)));
    const md = renderStackMovesMarkdown(result, 'Approve.');
    expect(md).toContain('### Objects removed: 4 destroyed on the store, after approval');
    expect(md).not.toContain('### Pipeline grants of retired stacks');
    const json = stackMovesJson(result, { base: 'b', head: 'h' }, new Map(), false);
    expect(json.stacks.find((s) => s.stack === 'app-roles-02')!.grantsDestroyedAutomatically).toEqual([]);
  });
});

describe('tf --refuse-replace on a retired stack: its own grants pass without --allow-removals, only when they are all it destroys', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const base3 = synthesizePlatform(hash(3), addBilling).outdir;

  /** HEAD (two shards) with the retired app-roles-02 directory `moves` wrote. */
  async function retiredHead(): Promise<{ outdir: string; stackDir: string }> {
    const outdir = synthesizePlatform(hash(2), addBilling).outdir;
    expect((await moves(base3, outdir)).code).toBe(0);
    const stackDir = path.join(outdir, 'stacks', 'app-roles-02');
    expect(fs.readdirSync(stackDir).sort()).toEqual([MOVES_FILE, RETIRED_OWN_GRANTS_FILE, SEAL_FILE].sort());
    return { outdir, stackDir };
  }
  const change = (address: string, name: string, actions = ['delete']) => ({ address, type: 'vault_policy', change: { actions, before: { name }, after: actions.includes('create') ? { name } : null } });
  const grantApply = change('vault_policy.secretstore-iac-grant-pipeline-apply', 'secretstore-iac-pipeline-app-roles-02');
  const grantPlan = change('vault_policy.secretstore-iac-grant-pipeline-plan', 'secretstore-iac-plan-app-roles-02');
  const review = (...changes: object[]) => ({ destructions: plannedDestructions({ resource_changes: changes }), creates: [] });

  it('the plan destroys exactly the recorded grants: they leave the review (nothing refused, no removal), reported', async () => {
    const { outdir, stackDir } = await retiredHead();
    const approved = approveRetiredGrants(review(grantApply, grantPlan), stackDir, outdir);
    expect(approved.review.destructions).toEqual([]);
    expect(approved.grants).toEqual([`${GRANTS[0]} (vault_policy.secretstore-iac-grant-pipeline-apply)`, `${GRANTS[1]} (vault_policy.secretstore-iac-grant-pipeline-plan)`]);
    // With --allow-removals as well (the pipeline's plan jobs): no removal left, so no removals file, and the apply is not deferred.
    expect(approveRemovals(approved.review, outdir).removals).toEqual([]);
    const lines: string[] = [];
    reportRetiredGrants(approved.grants, 'app-roles-02', (l) => lines.push(l));
    expect(lines[0]).toBe(
      'secretstore-iac tf: app-roles-02: 2 pipeline grants of this retired stack destroyed without approval (pipeline-internal: the objects they covered moved to stacks whose grants cover them; no identity loses access to a secret):',
    );
    expect(lines.slice(1)).toEqual(approved.grants.map((g) => `  ${g}`));
  });

  it.each([
    ['an application\'s policy HEAD declares nowhere', change('vault_policy.payments-dev_policy_1', 'payments-dev')],
    ['a lookalike: a grant\'s name at an address moves did not record', change('vault_policy.my-policy', 'secretstore-iac-pipeline-app-roles-02')],
    ['a people role', { address: 'vault_jwt_auth_backend_role.developers', type: 'vault_jwt_auth_backend_role', change: { actions: ['delete'], before: { backend: 'oidc', role_name: 'developers' }, after: null } }],
  ])('with anything else destroyed (%s), nothing passes on its own: the grants wait with it for --allow-removals', async (_, other) => {
    const { outdir, stackDir } = await retiredHead();
    const approved = approveRetiredGrants(review(grantApply, grantPlan, other), stackDir, outdir);
    expect(approved.grants).toEqual([]);
    expect(approved.review.destructions).toHaveLength(3);
    // The manual job's --allow-removals lists all three as removals.
    expect(approveRemovals(approved.review, outdir).removals).toHaveLength(3);
  });

  it('a replacement of a grant, or a grant HEAD declares again, is not let through', async () => {
    const { outdir, stackDir } = await retiredHead();
    expect(approveRetiredGrants(review(change(grantApply.address, 'secretstore-iac-pipeline-app-roles-02', ['delete', 'create'])), stackDir, outdir).grants).toEqual([]);
    expect(ownGrantDestroys(plannedDestructions({ resource_changes: [grantApply] }), readRetiredOwnGrants(stackDir), new Set([GRANTS[0]]))).toEqual([]);
  });

  it('a stack HEAD still has (a grant of a stack still declared) never passes; nor a retired stack without the record', async () => {
    const { outdir, stackDir } = await retiredHead();
    const kept = path.join(outdir, 'stacks', 'app-roles-01');
    fs.copyFileSync(path.join(stackDir, RETIRED_OWN_GRANTS_FILE), path.join(kept, RETIRED_OWN_GRANTS_FILE));
    expect(approveRetiredGrants(review(grantApply, grantPlan), kept, outdir).grants).toEqual([]);
    fs.rmSync(path.join(stackDir, RETIRED_OWN_GRANTS_FILE));
    expect(approveRetiredGrants(review(grantApply, grantPlan), stackDir, outdir).grants).toEqual([]);
  });

  it('issue 36: an application\'s role and policy added to the record by hand (its seal rewritten to match) are refused, naming each entry; nothing passes', async () => {
    const { outdir, stackDir } = await retiredHead();
    const file = path.join(stackDir, RETIRED_OWN_GRANTS_FILE);
    const record = JSON.parse(fs.readFileSync(file, 'utf8'));
    record.grants.push(
      { address: 'vault_approle_auth_backend_role.payments-dev_role_1', storePath: 'auth/approle/role/payments-dev', role: 'secretstore-iac-pipeline' },
      { address: 'vault_policy.payments-dev_policy_1', storePath: 'sys/policies/acl/payments-dev', role: 'payments-dev' },
    );
    const text = `${JSON.stringify(record, null, 2)}\n`;
    fs.writeFileSync(file, text);
    // A naive edit: the seal says so before any engine runs.
    expect(bookkeepingProblems(stackDir)).toEqual([expect.stringContaining(`${RETIRED_OWN_GRANTS_FILE}: changed since \`secretstore-iac moves\` wrote it`)]);
    // The seal rewritten with it: the record is checked against HEAD's synthesis all the same.
    sealBookkeeping(stackDir, { [RETIRED_OWN_GRANTS_FILE]: text }, true);
    expect(bookkeepingProblems(stackDir)).toEqual([]);
    const role = { address: 'vault_approle_auth_backend_role.payments-dev_role_1', type: 'vault_approle_auth_backend_role', change: { actions: ['delete'], before: { backend: 'approle', role_name: 'payments-dev' }, after: null } };
    const app = change('vault_policy.payments-dev_policy_1', 'payments-dev');
    const approve = () => approveRetiredGrants(review(grantApply, grantPlan, role, app), stackDir, outdir);
    expect(approve).toThrow(RetiredGrantsRecordRefused);
    try {
      approve();
    } catch (e) {
      expect(e).toBeInstanceOf(GuardRefusal);
      expect((e as Error).message).toBe(
        [
          'app-roles-02: nothing applied: its retired-own-grants.json records what is not a configuration pipeline role\'s own grant in app-roles-02 by HEAD\'s synthesis; a destroy it names would pass without approval:',
          '  {"address": "vault_approle_auth_backend_role.payments-dev_role_1", "storePath": "auth/approle/role/payments-dev", "role": "secretstore-iac-pipeline"}: the grant of secretstore-iac-pipeline in app-roles-02 is sys/policies/acl/secretstore-iac-pipeline-app-roles-02, not auth/approle/role/payments-dev',
          '  {"address": "vault_policy.payments-dev_policy_1", "storePath": "sys/policies/acl/payments-dev", "role": "payments-dev"}: "payments-dev" is no configuration pipeline role of HEAD\'s synthesis (a JWT role with its grant in HEAD\'s stacks)',
          'Fix: remove the file and run `secretstore-iac moves BASE HEAD` again (it writes the record from BASE\'s synthesis); a removal of anything else is approved with --allow-removals (docs/pipelines.md §8)',
        ].join('\n'),
      );
    }
  });

  it('retiredOwnGrantProblems: only a HEAD pipeline role\'s grant for THIS stack, at its address, passes', () => {
    const head = readSynthOutput(synthesizePlatform(hash(2), addBilling).outdir);
    const good = { stack: 'app-roles-02', address: 'vault_policy.secretstore-iac-grant-pipeline-apply', storePath: GRANTS[0], role: 'secretstore-iac-pipeline' };
    expect(retiredOwnGrantProblems([good], 'app-roles-02', head)).toEqual([]);
    // Another stack's grant of the same role (one HEAD keeps).
    expect(retiredOwnGrantProblems([{ ...good, storePath: 'sys/policies/acl/secretstore-iac-pipeline-app-roles-01' }], 'app-roles-02', head)[0]).toContain(
      'the grant of secretstore-iac-pipeline in app-roles-02 is sys/policies/acl/secretstore-iac-pipeline-app-roles-02, not sys/policies/acl/secretstore-iac-pipeline-app-roles-01',
    );
    // The right store path at another address (an application's policy given the grant's name).
    expect(retiredOwnGrantProblems([{ ...good, address: 'vault_policy.orchestrator-dev_policy_1' }], 'app-roles-02', head)[0]).toContain(
      'the grant of secretstore-iac-pipeline is declared at vault_policy.secretstore-iac-grant-pipeline-apply, not vault_policy.orchestrator-dev_policy_1',
    );
    // A JWT role that is no pipeline role (no grant in HEAD's stacks), and a stack HEAD still has.
    expect(retiredOwnGrantProblems([{ ...good, role: 'registry-ci', storePath: 'sys/policies/acl/registry-ci-app-roles-02' }], 'app-roles-02', head)[0]).toContain('"registry-ci" is no configuration pipeline role');
    expect(retiredOwnGrantProblems([good], 'app-roles-01', head)).toEqual(['app-roles-01 is a stack HEAD still declares: it has no retired grants, yet its retired-own-grants.json records 1']);
    // Without HEAD's pipeline (no configuration project): nothing qualifies.
    expect(retiredOwnGrantProblems([good], 'app-roles-02', [])).toHaveLength(1);
  });

  it('a record that is not what moves writes is an error naming the file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-own-grants-'));
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, RETIRED_OWN_GRANTS_FILE), '{"grants": [{"address": 1}]}');
    expect(() => readRetiredOwnGrants(dir)).toThrow(`${path.join(dir, RETIRED_OWN_GRANTS_FILE)} is not what \`secretstore-iac moves\` writes (a grant without address, storePath and role): run moves again`);
  });

  it('the retired stack back in a later HEAD (3 shards again, its directory kept): moves removes the old record and seals that, so nothing stale is left for tf to refuse', async () => {
    const { outdir, stackDir } = await retiredHead();
    const base2 = synthesizePlatform(hash(2), addBilling).outdir;
    // HEAD synthesized into the same output: app-roles-02 is a stack again, the record still beside its cdk.tf.json.
    synthesizePlatform(hash(3), addBilling, outdir);
    expect(fs.existsSync(path.join(stackDir, RETIRED_OWN_GRANTS_FILE))).toBe(true);
    const problems = bookkeepingProblems(stackDir);
    expect(problems.slice(0, 2)).toEqual([MOVES_FILE, RETIRED_OWN_GRANTS_FILE].map((f) => expect.stringContaining(`${f}: derived from another synthesis of this stack`)));
    // Its content is checked against the synthesis too: a retired stack's moves file, where the stack is declared again.
    expect(problems.slice(2)).toEqual(expect.arrayContaining([expect.stringContaining(`${MOVES_FILE}: holds a \`terraform\` block`), expect.stringMatching(/^moves\.tf\.json: removed\[0\] forgets .*, which the synthesis declares/)]));
    const r = await moves(base2, outdir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`stacks/app-roles-02/${RETIRED_OWN_GRANTS_FILE}: the stack is in HEAD again, not retired.`);
    expect(fs.readdirSync(stackDir).sort()).toEqual(['cdk.tf.json', MOVES_FILE, SEAL_FILE].sort());
    expect(bookkeepingProblems(stackDir)).toEqual([]);
  });
});
