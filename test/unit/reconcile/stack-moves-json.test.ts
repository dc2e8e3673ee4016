import * as fs from 'fs';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { MOVES_FILE } from '../../../lib/reconcile/stack-moves';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

// `moves --format json`: one JSON object on standard output, per stack the objects renamed (moved),
// forgotten, imported and removed, and what happens to its moves file; the exit codes of the text form.

const sharded = (applicationSharding: PlatformConfig['applicationSharding']): PlatformConfig => ({ ...platformConfig, applicationSharding });
const withBilling = (id: string) => (p: { appRoles: { addApplication: (id: string, props: any) => unknown } }) => {
  p.appRoles.addApplication(id, { name: 'billing', environment: 'dev' });
};

async function moves(base: string, head: string, ...more: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['moves', base, head, ...more], { env: {}, cwd: path.dirname(head), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('secretstore-iac moves --format json', () => {
  it('applications into shards: per stack the objects forgotten and imported, with each moves file written', async () => {
    const base = synthesizePlatform().outdir;
    const head = synthesizePlatform(sharded({ by: 'environment' })).outdir;
    const run = await moves(base, head, '--format', 'json');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const json = JSON.parse(run.stdout);
    expect(json).toMatchObject({ command: 'moves', base, head, written: true });
    expect(json.stacks.map((s: any) => s.stack)).toEqual(['app-roles', 'app-roles-dev', 'app-roles-shared']);
    const [apps, dev] = json.stacks;
    expect(apps).toMatchObject({ stack: 'app-roles', retired: false, movesFile: { path: path.join('cdktf.out', 'stacks', 'app-roles', MOVES_FILE), action: 'write' }, moved: [], imported: [], removed: [] });
    expect(apps.forgotten).toHaveLength(8);
    expect(apps.forgotten[0]).toEqual({ kind: 'approle-role', storePath: 'auth/approle/role/authentik-role', address: expect.stringMatching(/^vault_approle_auth_backend_role\./), toStack: 'app-roles-shared' });
    expect(dev.imported).toEqual([
      { kind: 'approle-role', storePath: 'auth/approle/role/orchestrator-dev', address: expect.stringMatching(/^vault_approle_auth_backend_role\./), id: 'auth/approle/role/orchestrator-dev', fromStack: 'app-roles' },
      { kind: 'policy', storePath: 'sys/policies/acl/orchestrator-dev', address: expect.stringMatching(/^vault_policy\./), id: 'orchestrator-dev', fromStack: 'app-roles' },
    ]);
    // The JSON says what the files hold: the same addresses.
    const file = JSON.parse(fs.readFileSync(path.join(head, 'stacks', 'app-roles', MOVES_FILE), 'utf8'));
    expect(file.removed.map((r: any) => r.from).sort()).toEqual(apps.forgotten.map((f: any) => f.address).sort());
  });

  it('--dry-run: written false, and nothing written', async () => {
    const base = synthesizePlatform().outdir;
    const head = synthesizePlatform(sharded({ by: 'environment' })).outdir;
    const json = JSON.parse((await moves(base, head, '--format', 'json', '--dry-run')).stdout);
    expect(json.written).toBe(false);
    expect(json.stacks[0].movesFile.action).toBe('write');
    expect(fs.existsSync(path.join(head, 'stacks', 'app-roles', MOVES_FILE))).toBe(false);
  });

  it('renames are "moved", removals "removed" (a retired stack says so), a stale moves file "remove"', async () => {
    const base = synthesizePlatform(platformConfig, withBilling('billing-dev')).outdir;
    const head = synthesizePlatform(platformConfig, withBilling('billing-application')).outdir;
    const renamed = JSON.parse((await moves(base, head, '--format', 'json')).stdout);
    expect(renamed.stacks).toHaveLength(1);
    expect(renamed.stacks[0].moved.map((m: any) => [m.kind, m.storePath])).toEqual([
      ['approle-role', 'auth/approle/role/billing-dev'],
      ['policy', 'sys/policies/acl/billing-dev'],
    ]);
    expect(renamed.stacks[0].moved[0].from).not.toBe(renamed.stacks[0].moved[0].to);
    const again = JSON.parse((await moves(head, head, '--format', 'json')).stdout);
    expect(again.stacks).toEqual([{ stack: 'app-roles', retired: false, movesFile: { path: path.join('cdktf.out', 'stacks', 'app-roles', MOVES_FILE), action: 'remove' }, moved: [], forgotten: [], imported: [], removed: [], grantsDestroyedAutomatically: [] }]);

    const people = { discoveryUrl: 'https://idp.example', clientId: 'secretstore', storeUrl: 'https://secrets.example:8200', groups: { developers: { groups: ['developers'] } } };
    const withPeople = synthesizePlatform({ ...platformConfig, people } as PlatformConfig).outdir;
    const removed = JSON.parse((await moves(withPeople, synthesizePlatform().outdir, '--format', 'json')).stdout);
    const peopleStack = removed.stacks.find((s: any) => s.stack === 'people');
    expect(peopleStack).toMatchObject({ retired: true, movesFile: { action: 'write' } });
    // The people stack's own pipeline grant policies go with it (destroyed last, lib/constructs/pipeline-stack-grant.ts).
    expect(peopleStack.removed.map((r: any) => r.storePath)).toEqual([
      'auth/oidc/role/developers',
      'sys/auth/oidc',
      'sys/policies/acl/developers',
      'sys/policies/acl/secretstore-iac-pipeline-people',
      'sys/policies/acl/secretstore-iac-plan-people',
    ]);
    // The stack removes more than its grants (a revocation): the grants wait for approval with the rest.
    expect(peopleStack.grantsDestroyedAutomatically).toEqual([]);
  });

  it('a --format other than text or json is a usage error (exit 2)', async () => {
    const base = synthesizePlatform().outdir;
    expect(await moves(base, base, '--format', 'yaml')).toMatchObject({ code: 2, stderr: expect.stringContaining('--format must be one of text, json, not "yaml"') });
  });
});
