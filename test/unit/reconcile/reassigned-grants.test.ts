import * as fs from 'fs';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { declaredPipelineGrants } from '../../../lib/reconcile/pipeline-grants';
import { RETIRED_OWN_GRANTS_FILE, retiredOwnGrants } from '../../../lib/reconcile/retired-stack-grants';
import { separateRetiredOwnGrants, stackMoves } from '../../../lib/reconcile/stack-moves';
import { renderStackMovesMarkdown } from '../../../lib/reconcile/stack-moves-markdown';
import { readSynthOutput } from '../../../lib/sources/synth-output';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

// Issue 36: an application named secretstore-iac-plan in environment app-roles-02, in the change that
// retired shard app-roles-02, had the policy secretstore-iac-plan-app-roles-02: `moves` took the
// retiring plan grant for a move into the application's policy, and the merge-request plan role read
// the application's secret. SSI-R9 refuses such a name at synthesis (ssi-r9 test); `moves` reads
// outputs, which may be edited by hand, so it never takes a grant for another object either.

const hash = (shards: number): PlatformConfig => ({ ...platformConfig, applicationSharding: { by: 'hash', shards } });
const addBilling = (p: any) => p.appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev' });
const PLAN_GRANT = 'secretstore-iac-plan-app-roles-02';
const PLAN_GRANT_PATH = `sys/policies/acl/${PLAN_GRANT}`;

/** HEAD: two shards, billing-dev's policy renamed in the output to the retiring shard's plan grant. */
function headWithApplicationNamedLikeTheGrant(): string {
  const outdir = synthesizePlatform(hash(2), addBilling).outdir;
  for (const stack of readSynthOutput(outdir)) {
    const document = JSON.parse(fs.readFileSync(stack.file, 'utf8'));
    const policies = document.resource?.vault_policy ?? {};
    const id = Object.keys(policies).find((k) => policies[k].name === 'billing-dev');
    if (id === undefined) continue;
    policies[id].name = PLAN_GRANT;
    fs.writeFileSync(stack.file, JSON.stringify(document, null, 2));
  }
  return outdir;
}

async function moves(base: string, head: string, ...more: string[]): Promise<{ code: number; stdout: string }> {
  const out: string[] = [];
  const code = await runCli(['moves', base, head, ...more], { env: {}, cwd: path.dirname(head), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => out.push(l) });
  return { code, stdout: out.join('\n') };
}

describe('a retiring pipeline grant never becomes another object\'s policy', () => {
  const base = synthesizePlatform(hash(3), addBilling).outdir;
  const head = headWithApplicationNamedLikeTheGrant();
  const grants = (dir: string) => new Set(declaredPipelineGrants(readSynthOutput(dir)).map((g) => `${g.stack} ${g.address}`));

  it('BASE\'s grant and HEAD\'s application policy share the store path: without telling grants apart, it would be a move', () => {
    const naive = stackMoves(readDeclaredObjects(base), readDeclaredObjects(head));
    expect(naive.moves.map((m) => m.storePath)).toContain(PLAN_GRANT_PATH);
  });

  it('stackMoves: not a move but a removal of the grant and a creation of the other object, both listed', () => {
    const result = stackMoves(readDeclaredObjects(base), readDeclaredObjects(head), { base: grants(base), head: grants(head) });
    expect(result.moves.map((m) => m.storePath)).not.toContain(PLAN_GRANT_PATH);
    expect(result.renames.map((m) => m.storePath)).not.toContain(PLAN_GRANT_PATH);
    expect(result.reassigned).toEqual([
      {
        kind: 'policy',
        storePath: PLAN_GRANT_PATH,
        from: { stack: 'app-roles-02', address: 'vault_policy.secretstore-iac-grant-pipeline-plan', grant: true },
        to: expect.objectContaining({ grant: false }),
      },
    ]);
    expect(result.removals.map((r) => r.storePath)).toContain(PLAN_GRANT_PATH);
    expect([...result.byStack.values()].flatMap((b) => b.imports.map((i) => i.id))).not.toContain(PLAN_GRANT);
    // The retiring stack's grants then wait for approval with it: none is destroyed automatically.
    const separated = separateRetiredOwnGrants(result, retiredOwnGrants(readSynthOutput(base), readSynthOutput(head)));
    expect(separated.retiredGrants ?? []).toEqual([]);
    expect(separated.removals.map((r) => r.storePath)).toEqual(expect.arrayContaining([PLAN_GRANT_PATH, 'sys/policies/acl/secretstore-iac-pipeline-app-roles-02']));
  });

  it('the note shows the removal and the creation', () => {
    const result = stackMoves(readDeclaredObjects(base), readDeclaredObjects(head), { base: grants(base), head: grants(head) });
    const note = renderStackMovesMarkdown(result, 'Approve it.');
    expect(note).toContain('### Not moved: 1 removed and created again');
    expect(note).toContain(`| \`${PLAN_GRANT_PATH}\` | pipeline grant: \`vault_policy.secretstore-iac-grant-pipeline-plan\` in \`app-roles-02\` | not a pipeline grant: `);
    expect(note).toMatch(new RegExp(`\\| \`app-roles-02\` \\(removed\\) \\| \`${PLAN_GRANT_PATH}\` \\|`));
  });

  it('secretstore-iac moves: no import or forget of it, listed as removed and not moved, the grant not recorded as destroyed without approval', async () => {
    const { code, stdout } = await moves(base, head, '--dry-run');
    expect(code).toBe(0);
    expect(stdout).toContain(`1 object not moved: a pipeline grant on one side and another object on the other, so removed (with approval) and created, never moved:\n  policy ${PLAN_GRANT_PATH}: pipeline grant of app-roles-02 in BASE, object of`);
    expect(stdout).not.toMatch(new RegExp(`policy ${PLAN_GRANT_PATH}: app-roles-02 -> `));
    expect(stdout).not.toContain('destroyed without --allow-removals');
    await moves(base, head);
    const record = path.join(head, 'stacks', 'app-roles-02', RETIRED_OWN_GRANTS_FILE);
    const recorded = fs.existsSync(record) ? fs.readFileSync(record, 'utf8') : '';
    expect(recorded).not.toContain(PLAN_GRANT_PATH);
  });
});
