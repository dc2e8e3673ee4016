import * as fs from 'fs';
import * as path from 'path';
import { hashShard } from '../../../lib';
import { describeDestruction, plannedDestructions } from '../../../lib/engine/replacement-guard';
import { runCli } from '../../../lib/cli/run-cli';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { MOVES_FILE, renderMovesFile, stackMoves } from '../../../lib/reconcile/stack-moves';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../../stacks/platform.config';
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
    expect(stackMoves(single, single)).toEqual({ moves: [], byStack: new Map(), ambiguous: [] });
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
    const twice = [...byEnvironment, { ...byEnvironment.find((o) => o.kind === 'policy')!, stack: 'other' }];
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
      expect(fs.readdirSync(path.join(head, 'stacks', stack))).toEqual([MOVES_FILE]);
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
