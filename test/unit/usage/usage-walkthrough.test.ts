/**
 * The walkthrough of docs/usage.md §1 runs as written: on the repository's fixtures (the access
 * base, the real Vault audit lines, a head that drops two of `registry-ci`'s grants), `usage
 * --format json` writes the usage file and `access-diff --usage` writes the note the docs show.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../lib/cli/run-cli';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-walkthrough-'));
  fs.cpSync(path.join(ACCESS_FIXTURES, 'base'), path.join(dir, 'base'), { recursive: true });
  fs.cpSync(path.join(ACCESS_FIXTURES, 'base'), path.join(dir, 'head'), { recursive: true });
  fs.copyFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'usage', 'vault-audit.log'), path.join(dir, 'audit.log'));
  // The reviewer's change: registry-ci no longer reads the svc-executor and svc-orchestrator credentials.
  const file = path.join(dir, 'head', 'stacks', 'ci-access', 'cdk.tf.json');
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const policy = doc.resource.vault_policy['registry-ci_policy_FD942459'];
  for (const name of ['svc-executor', 'svc-orchestrator']) {
    const rule = `# ci-access/${name}\npath "secret/data/registry/${name}" {\n  capabilities = ["read"]\n}\n\n`;
    expect(policy.policy).toContain(rule);
    policy.policy = policy.policy.replace(rule, '');
  }
  fs.writeFileSync(file, JSON.stringify(doc));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { env: {}, cwd: dir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** "N days ago" depends on the day the test runs: the same words for any N. */
const anyDay = (text: string) => text.replace(/less than a day ago|\d+ days? ago/g, 'N days ago');

it('docs/usage.md §1: the usage file, then the note of access-diff --usage, as the docs show it', async () => {
  const usage = await cli(['usage', 'base', '--log', 'audit.log', '--format', 'json']);
  expect([usage.code, usage.stderr]).toEqual([1, '']);
  fs.writeFileSync(path.join(dir, 'usage.json'), usage.stdout);
  const review = await cli(['access-diff', 'base', 'head', '--usage', 'usage.json']);
  expect([review.code, review.stderr]).toEqual([1, '']);
  const docs = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'usage.md'), 'utf8');
  const shown = /step 6 writes:\n\n```markdown\n([\s\S]*?)\n```/.exec(docs);
  expect(shown).not.toBeNull();
  expect(anyDay(review.stdout)).toContain(anyDay(shown![1]));
});
