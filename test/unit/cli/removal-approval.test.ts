import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { approveRemovals, reportRemovals } from '../../../lib/cli/removal-approval';
import { runCli } from '../../../lib/cli/run-cli';
import { plannedDestructions } from '../../../lib/engine/replacement-guard';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

// Issue 27: a destroy of an object the configuration declares nowhere any more (a removal) passes
// `tf --refuse-replace` only with `--allow-removals`, which the pipeline gives its manual job; every
// other destroy is still refused. Against a real store and engine: test/store/pipeline-removals.store.test.ts.

const change = (type: string, address: string, actions: string[], before: Record<string, unknown>) => ({ address, type, change: { actions, before, after: actions.includes('create') ? before : null } });

describe('approveRemovals: only a destroy of an object no stack declares passes', () => {
  const outdir = synthesizePlatform(platformConfig).outdir;
  const plan = {
    resource_changes: [
      // Removed: declared nowhere in the output.
      change('vault_approle_auth_backend_role', 'vault_approle_auth_backend_role.billing', ['delete'], { backend: 'approle', role_name: 'billing-dev' }),
      change('vault_policy', 'vault_policy.billing', ['delete'], { name: 'billing-dev' }),
      change('vault_jwt_auth_backend', 'vault_jwt_auth_backend.oidc', ['delete'], { path: 'oidc' }),
      // Still declared (moved or renamed without its blocks): refused.
      change('vault_approle_auth_backend_role', 'vault_approle_auth_backend_role.old', ['delete'], { backend: 'approle', role_name: 'orchestrator-dev' }),
      // Replaced, even if declared nowhere: refused.
      change('vault_policy', 'vault_policy.replaced', ['delete', 'create'], { name: 'gone' }),
      // A kind the reconciliation does not know: refused.
      change('vault_mount', 'vault_mount.kv', ['delete'], { path: 'kv' }),
    ],
  };
  const review = { destructions: plannedDestructions(plan), creates: [] };

  it('lets the three removals through, keeps the other three in the review the guard refuses', () => {
    const approved = approveRemovals(review, outdir);
    expect(approved.removals).toEqual([
      'auth/approle/role/billing-dev (vault_approle_auth_backend_role.billing)',
      'sys/auth/oidc (vault_jwt_auth_backend.oidc)',
      'sys/policies/acl/billing-dev (vault_policy.billing)',
    ]);
    expect(approved.review.destructions.map((d) => d.address)).toEqual(['vault_approle_auth_backend_role.old', 'vault_mount.kv', 'vault_policy.replaced']);
  });

  it('reads the output\'s declarations only for a plan that destroys something (each plan job at 20,000 applications saved seconds)', () => {
    // No such output: a plan that destroys nothing never looks; one that destroys still must.
    const missing = path.join(os.tmpdir(), 'ssi-no-such-output', 'cdktf.out');
    const nothing = { destructions: [], creates: review.creates };
    expect(approveRemovals(nothing, missing)).toEqual({ review: nothing, removals: [] });
    expect(() => approveRemovals(review, missing)).toThrow(/not a synthesized output/);
  });

  it('reports them, and writes the list to the removals file; no removal removes a stale file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-removals-'));
    try {
      const file = path.join(dir, 'people.removals');
      const lines: string[] = [];
      reportRemovals(['sys/auth/oidc (vault_jwt_auth_backend.oidc)'], 'people', file, (l) => lines.push(l));
      expect(lines).toEqual(['secretstore-iac tf: people: 1 object declared nowhere any more, destroyed by this plan (--allow-removals):', '  sys/auth/oidc (vault_jwt_auth_backend.oidc)']);
      expect(fs.readFileSync(file, 'utf8')).toBe('sys/auth/oidc (vault_jwt_auth_backend.oidc)\n');
      reportRemovals([], 'people', file, (l) => lines.push(l));
      expect(fs.existsSync(file)).toBe(false);
      expect(lines).toHaveLength(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tf --allow-removals and --removals-file: usage', () => {
  async function tf(args: string[]) {
    const err: string[] = [];
    const code = await runCli(['tf', 'people', ...args], { env: {}, cwd: os.tmpdir(), isTerminal: false, stdout: () => undefined, stderr: (l) => err.push(l) });
    return { code, stderr: err.join('\n') };
  }

  it.each([
    [['--allow-removals', '--', 'apply', 'p.tfplan'], '--allow-removals relaxes --refuse-replace: give both'],
    [['--refuse-replace', '--removals-file', 'r', '--', 'plan', '-out=p'], '--removals-file lists what --allow-removals lets through: give both'],
  ])('%j is a usage error before anything runs', async (args, message) => {
    expect(await tf(args)).toMatchObject({ code: 2, stderr: expect.stringContaining(message) });
  });
});
