import * as fs from 'fs';
import * as path from 'path';
import { hashShard } from '../../../lib';
import { describeDestruction, plannedDestructions } from '../../../lib/engine/replacement-guard';
import { runCli } from '../../../lib/cli/run-cli';
import { SEAL_FILE } from '../../../lib/engine/bookkeeping-seal';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { RETIRED_OWN_GRANTS_FILE } from '../../../lib/reconcile/retired-stack-grants';
import { MOVES_FILE, renderMovesFile, stackMoves } from '../../../lib/reconcile/stack-moves';
import { renderStackMovesMarkdown } from '../../../lib/reconcile/stack-moves-markdown';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

// Issue 16: moving an application between stacks never recreates it. `moves BASE HEAD` writes
// `removed` (destroy = false) in the stack it left and `import` in the stack it joined.

const sharded = (applicationSharding: PlatformConfig['applicationSharding']): PlatformConfig => ({ ...platformConfig, applicationSharding });
const SPEC_ROLES = ['authentik-role', 'gitlab-role', 'orchestrator-dev', 'registry'];

async function moves(base: string, head: string, ...more: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['moves', base, head, ...more], { env: {}, cwd: path.dirname(head), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
const movesFile = (outdir: string, stack: string) => JSON.parse(fs.readFileSync(path.join(outdir, 'stacks', stack, MOVES_FILE), 'utf8'));

describe('stackMoves: an object declared in another stack in HEAD than in BASE moved', () => {
  const single = readDeclaredObjects(synthesizePlatform().outdir);
  const byEnvironment = readDeclaredObjects(synthesizePlatform(sharded({ by: 'environment' })).outdir);

  it('single app-roles → by environment: every application\'s role and policy moves, the mount stays', () => {
    const result = stackMoves(single, byEnvironment);
    expect(result.moves.map((m) => `${m.kind} ${m.storePath} ${m.from.stack}->${m.to.stack}`)).toEqual([
      'approle-role auth/approle/role/authentik-role app-roles->app-roles-shared',
      'approle-role auth/approle/role/gitlab-role app-roles->app-roles-shared',
      'approle-role auth/approle/role/orchestrator-dev app-roles->app-roles-dev',
      'approle-role auth/approle/role/registry app-roles->app-roles-shared',
      'policy sys/policies/acl/authentik-role app-roles->app-roles-shared',
      'policy sys/policies/acl/gitlab-role app-roles->app-roles-shared',
      'policy sys/policies/acl/orchestrator-dev app-roles->app-roles-dev',
      'policy sys/policies/acl/registry app-roles->app-roles-shared',
    ]);
    expect([...result.byStack.keys()]).toEqual(['app-roles', 'app-roles-dev', 'app-roles-shared']);
    expect(result.byStack.get('app-roles')).toEqual({ forget: expect.any(Array), imports: [] });
    expect(result.byStack.get('app-roles')!.forget).toHaveLength(8);
    expect(result.byStack.get('app-roles-dev')!.imports.map((i) => i.id)).toEqual(['auth/approle/role/orchestrator-dev', 'orchestrator-dev']);
    // Same construct path below the stack: the same address on both sides.
    for (const m of result.moves) expect(m.to.address).toBe(m.from.address);
  });

  it('the way back is the mirror image; nothing moves between equal configurations', () => {
    const back = stackMoves(byEnvironment, single);
    expect(back.moves).toHaveLength(8);
    expect(back.byStack.get('app-roles')!.imports).toHaveLength(8);
    expect(stackMoves(single, single)).toEqual({ moves: [], renames: [], removals: [], byStack: new Map(), ambiguous: [], conflicts: [] });
  });

  it('re-sharding moves only the applications whose shard changed', () => {
    const h2 = readDeclaredObjects(synthesizePlatform(sharded({ by: 'hash', shards: 2 })).outdir);
    const h3 = readDeclaredObjects(synthesizePlatform(sharded({ by: 'hash', shards: 3 })).outdir);
    const changed = SPEC_ROLES.filter((r) => hashShard(r, 2) !== hashShard(r, 3)).sort();
    expect(changed.length).toBeGreaterThan(0);
    const moved = stackMoves(h2, h3).moves.filter((m) => m.kind === 'approle-role').map((m) => m.storePath.split('/').pop());
    expect(moved).toEqual(changed);
  });

  it('an object declared by two stacks is ambiguous: reported, not moved', () => {
    const twice = [...byEnvironment, { ...byEnvironment.find((o) => o.storePath === 'sys/policies/acl/orchestrator-dev')!, stack: 'other' }];
    const result = stackMoves(single, twice);
    expect(result.ambiguous).toEqual(['policy sys/policies/acl/orchestrator-dev']);
    expect(result.moves.map((m) => m.storePath)).not.toContain('sys/policies/acl/orchestrator-dev');
  });
});

describe('The moves file: removed (keep on the store) and import blocks, byte-identical', () => {
  it('forgets with lifecycle destroy = false and imports with a literal id', () => {
    const text = renderMovesFile({ forget: ['vault_policy.a'], imports: [{ to: 'vault_policy.b', id: 'x${y}' }] });
    const file = JSON.parse(text);
    expect(file.removed).toEqual([{ from: 'vault_policy.a', lifecycle: [{ destroy: false }] }]);
    expect(file.import).toEqual([{ to: 'vault_policy.b', id: 'x$${y}' }]);
    expect(file.terraform).toBeUndefined();
    expect(renderMovesFile({ forget: ['vault_policy.a'], imports: [{ to: 'vault_policy.b', id: 'x${y}' }] })).toBe(text);
  });
});

describe('secretstore-iac moves BASE HEAD', () => {
  it('writes moves.tf.json into the stacks that lose and gain objects, and says what moved', async () => {
    const base = synthesizePlatform().outdir;
    const head = synthesizePlatform(sharded({ by: 'environment' })).outdir;
    const run = await moves(base, head);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('8 objects moved between stacks');
    expect(run.stdout).toContain('approle-role auth/approle/role/orchestrator-dev: app-roles -> app-roles-dev');
    expect(movesFile(head, 'app-roles').removed).toHaveLength(8);
    expect(movesFile(head, 'app-roles').import).toBeUndefined();
    expect(movesFile(head, 'app-roles-shared').import).toHaveLength(6);
    expect(fs.existsSync(path.join(head, 'stacks', 'ci-access', MOVES_FILE))).toBe(false);
    // A re-synthesis keeps the file (the synthesis never writes it).
    synthesizePlatform(sharded({ by: 'environment' }), undefined, head);
    expect(movesFile(head, 'app-roles').removed).toHaveLength(8);
  });

  it('removes a stale moves file once BASE and HEAD agree, and --dry-run writes nothing', async () => {
    const base = synthesizePlatform().outdir;
    const head = synthesizePlatform(sharded({ by: 'environment' })).outdir;
    expect((await moves(base, head, '--dry-run')).stdout).toContain('Dry run: nothing written.');
    expect(fs.existsSync(path.join(head, 'stacks', 'app-roles', MOVES_FILE))).toBe(false);
    await moves(base, head);
    const again = await moves(head, head);
    expect(again.stdout).toContain('No object moved between stacks');
    expect(again.stdout).toContain(`Removed ${path.join('cdktf.out', 'stacks', 'app-roles', MOVES_FILE)}: no move in this stack.`);
    expect(fs.existsSync(path.join(head, 'stacks', 'app-roles', MOVES_FILE))).toBe(false);
  });

  it('a stack HEAD no longer has gets a directory with only the moves file, its backend and provider', async () => {
    const base = synthesizePlatform(sharded({ by: 'hash', shards: 8 })).outdir;
    const head = synthesizePlatform(sharded({ by: 'environment' })).outdir;
    await moves(base, head);
    const retired = fs.readdirSync(path.join(head, 'stacks')).filter((s) => /^app-roles-\d\d$/.test(s));
    expect(retired.length).toBeGreaterThan(0);
    for (const stack of retired) {
      // Beside it, the record of the pipeline roles' own grants there, which its plan destroys without approval.
      // And the seal of both (issue 36: tf refuses them edited).
      expect(fs.readdirSync(path.join(head, 'stacks', stack))).toEqual([MOVES_FILE, RETIRED_OWN_GRANTS_FILE, SEAL_FILE]);
      const file = movesFile(head, stack);
      expect(file.terraform.backend).toEqual({ local: { path: `../../../terraform.${stack}.tfstate` } });
      expect(file.provider).toEqual({ vault: [{}] });
      expect(file.removed.length).toBeGreaterThan(0);
    }
  });

  it('HEAD must be a synthesized output directory (usage error, exit 2)', async () => {
    const base = synthesizePlatform().outdir;
    expect(await moves(base, path.join(base, 'stacks'))).toMatchObject({ code: 2, stderr: expect.stringContaining('HEAD must be a synthesized output directory') });
  });
});

describe('tf --refuse-replace names `secretstore-iac moves` when the destroyed object moved to another stack', () => {
  it('a delete of an object declared in another stack says to run moves', () => {
    const [d] = plannedDestructions({
      resource_changes: [{ address: 'vault_approle_auth_backend_role.r', type: 'vault_approle_auth_backend_role', change: { actions: ['delete'], before: { backend: 'approle', role_name: 'orchestrator-dev' }, after: null } }],
    });
    expect(d.storePath).toBe('auth/approle/role/orchestrator-dev');
    expect(describeDestruction({ ...d, declaredInStack: 'app-roles-dev' })).toBe(
      'vault_approle_auth_backend_role.r would be destroyed, but auth/approle/role/orchestrator-dev is declared in stack app-roles-dev now: it moved. ' +
        'Fix: run `secretstore-iac moves BASE HEAD` (BASE: the configuration last applied, HEAD: this output) to forget it here and import it there, keeping the object (docs/sharding.md)',
    );
    expect(describeDestruction(d)).toContain('Fix: declare the object again; if a person decided to delete it, run the apply without --refuse-replace');
  });
});

// Issue 27: renaming an application's construct id (same role name, same stack) must not recreate
// its role; an object declared nowhere any more is a removal, listed for the approval.
const withBilling = (id: string) => (p: { appRoles: { addApplication: (id: string, props: any) => unknown } }) => {
  p.appRoles.addApplication(id, { name: 'billing', environment: 'dev' });
};

describe('stackMoves: a construct id renamed within a stack is a rename (moved block), by store identity', () => {
  const base = readDeclaredObjects(synthesizePlatform(platformConfig, withBilling('billing-dev')).outdir);
  const head = readDeclaredObjects(synthesizePlatform(platformConfig, withBilling('billing-application')).outdir);

  it('the role and the policy of the renamed application, same stack, new addresses; nothing else', () => {
    const result = stackMoves(base, head);
    expect(result.moves).toEqual([]);
    expect(result.removals).toEqual([]);
    expect(result.renames.map((r) => `${r.kind} ${r.storePath} ${r.stack}`)).toEqual(['approle-role auth/approle/role/billing-dev app-roles', 'policy sys/policies/acl/billing-dev app-roles']);
    for (const r of result.renames) {
      expect(r.from).toMatch(/billing-dev/);
      expect(r.to).toMatch(/billing-application/);
      expect(r.to).not.toBe(r.from);
    }
    expect(result.byStack.get('app-roles')).toEqual({ forget: [], imports: [], renames: result.renames.map((r) => ({ from: r.from, to: r.to })).sort((a, b) => (a.from < b.from ? -1 : 1)) });
    expect([...result.byStack.keys()]).toEqual(['app-roles']);
  });

  it('the moves file holds moved blocks from the old address to the new one', () => {
    const file = JSON.parse(renderMovesFile({ forget: [], imports: [], renames: [{ from: 'vault_policy.a', to: 'vault_policy.b' }] }));
    expect(file.moved).toEqual([{ from: 'vault_policy.a', to: 'vault_policy.b' }]);
    expect(file.removed).toBeUndefined();
    expect(file.import).toBeUndefined();
  });

  it('a rename whose old address is declared again by another object is a conflict, not a moved block', () => {
    const swapped = readDeclaredObjects(
      synthesizePlatform(platformConfig, (p) => {
        p.appRoles.addApplication('billing-application', { name: 'billing', environment: 'dev' });
        p.appRoles.addApplication('billing-dev', { name: 'billing', environment: 'test' });
      }).outdir,
    );
    const result = stackMoves(base, swapped);
    expect(result.renames).toEqual([]);
    expect(result.conflicts).toHaveLength(2);
    expect(result.conflicts[0]).toMatch(/^approle-role auth\/approle\/role\/billing-dev in stack app-roles: renamed from vault_approle_auth_backend_role\.billing-dev\S+ to \S+, but \S+ now declares another object$/);
  });
});

describe('stackMoves: an object declared nowhere in HEAD is a removal', () => {
  const people = { discoveryUrl: 'https://idp.example', clientId: 'secretstore', storeUrl: 'https://secrets.example:8200', groups: { developers: { groups: ['developers'] } } };
  const withPeople = synthesizePlatform({ ...platformConfig, people } as PlatformConfig, withBilling('billing-dev')).outdir;
  const without = synthesizePlatform(platformConfig).outdir;

  it('the people section and an application removed: every object listed, with its stack and whether the stack remains', () => {
    const result = stackMoves(readDeclaredObjects(withPeople), readDeclaredObjects(without));
    expect(result.removals.map((r) => `${r.stack} ${r.kind} ${r.storePath} ${r.stackRemains}`)).toEqual([
      'app-roles approle-role auth/approle/role/billing-dev true',
      'app-roles policy sys/policies/acl/billing-dev true',
      'people jwt-role auth/oidc/role/developers false',
      'people jwt-auth-mount sys/auth/oidc false',
      'people policy sys/policies/acl/developers false',
      // The configuration pipeline roles' grants in the people stack (docs/pipelines.md §9).
      'people policy sys/policies/acl/secretstore-iac-pipeline-people false',
      'people policy sys/policies/acl/secretstore-iac-plan-people false',
    ]);
    expect(result.moves).toEqual([]);
    expect(result.byStack.size).toBe(0);
  });

  it('the note says what access is revoked, and that a person approves the destroy', () => {
    const md = renderStackMovesMarkdown(stackMoves(readDeclaredObjects(withPeople), readDeclaredObjects(without)), 'A person approves.');
    expect(md).toContain('### Objects removed: 7 destroyed on the store, after approval');
    expect(md).toContain('A person approves.');
    expect(md).toContain('Removed stacks (every object of their state is destroyed): `people`.');
    expect(md).toContain('| `people` (removed) | `sys/auth/oidc` | JWT/OIDC auth method: every role under it, every login through it |');
    expect(md).toContain('| `app-roles` | `auth/approle/role/billing-dev` | AppRole role: its Role ID and every Secret ID issued for it |');
    expect(renderStackMovesMarkdown(stackMoves(readDeclaredObjects(without), readDeclaredObjects(without)), 'x')).toBe('');
  });

  it('`moves` writes the removed stack\'s directory (backend and provider, nothing to forget) so its removal can be planned, and the note', async () => {
    const head = synthesizePlatform(platformConfig).outdir;
    const run = await moves(withPeople, head, '--markdown-file', 'note.md');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('7 objects removed (declared in BASE, nowhere in HEAD): their plans destroy them, applied only with --allow-removals:');
    expect(run.stdout).toContain('  jwt-auth-mount sys/auth/oidc in people (a stack HEAD no longer has)');
    expect(run.stdout).toContain(`Wrote ${path.join('cdktf.out', 'stacks', 'people', MOVES_FILE)}: forget 0, import 0 (a stack HEAD no longer has: plan and apply it, which destroys 5 objects after approval, then delete the directory).`);
    const file = movesFile(head, 'people');
    expect(Object.keys(file).sort()).toEqual(['//', 'provider', 'terraform']);
    expect(file.terraform.backend).toEqual({ local: { path: '../../../terraform.people.tfstate' } });
    expect(fs.readFileSync(path.join(path.dirname(head), 'note.md'), 'utf8')).toContain('### Objects removed: 7 destroyed on the store, after approval');
  });

  it('`moves` writes moved blocks for a rename, and says so', async () => {
    const base = synthesizePlatform(platformConfig, withBilling('billing-dev')).outdir;
    const head = synthesizePlatform(platformConfig, withBilling('billing-application')).outdir;
    const run = await moves(base, head);
    expect(run.stdout).toContain('2 objects renamed within a stack (moved blocks):');
    expect(run.stdout).toContain(`Wrote ${path.join('cdktf.out', 'stacks', 'app-roles', MOVES_FILE)}: forget 0, import 0, rename 2.`);
    expect(movesFile(head, 'app-roles').moved).toHaveLength(2);
  });
});
