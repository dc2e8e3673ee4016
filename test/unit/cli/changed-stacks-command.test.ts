import * as fs from 'fs';
import * as path from 'path';
import { AppRoleApplication, SecretStoreStack } from '../../../lib';
import { runCli } from '../../../lib/cli/run-cli';
import { Platform } from '../../../lib/platform/platform';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

// `secretstore-iac changed-stacks BASE HEAD` on two synthesized output directories (git refs are
// synthesized the way access-diff's are, proven in test/store/configuration-pipeline.store.test.ts).

/** The platform with a shard stack that depends on app-roles, as part A's sharding declares them. */
const withShard = (extra: (p: Platform) => void = () => undefined) =>
  synthesizePlatform(platformConfig, (p, app) => {
    new SecretStoreStack(app, 'app-roles-a', { settings: p.appRoles.settings }).addDependency(p.appRoles);
    extra(p);
  }).outdir;

async function changedStacks(...args: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(['changed-stacks', ...args], { env: {}, cwd: '/', isTerminal: false, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

describe('secretstore-iac changed-stacks BASE HEAD', () => {
  const base = withShard();
  const same = withShard();
  // A new application changes app-roles only: its role, its policy and the pipeline roles' grants there (docs/pipelines.md §9).
  const billing = withShard((p) => new AppRoleApplication(p.appRoles, 'billing-dev', { auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev' }));

  it('no change: exit 0 and nothing on standard output', async () => {
    expect(await changedStacks(base, same)).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('one line per stack to plan, dependencies first: a change to app-roles selects its shard after it', async () => {
    const r = await changedStacks(base, billing);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual(['app-roles', 'app-roles-a']);
  });

  it('a removed stack is reported on standard error, never on standard output', async () => {
    const head = synthesizePlatform().outdir;
    const r = await changedStacks(base, head);
    // ci-access changes: the pipeline roles no longer name the removed stack's grants (moves keeps them until its removal is applied).
    expect(r).toEqual({ code: 0, stdout: 'ci-access', stderr: `removed stack app-roles-a: in ${base}, not in ${head}; not selected: \`secretstore-iac moves\` writes its directory, planned as a retired stack (docs/pipelines.md §8)` });
  });

  it('--format json: every stack with its change, digests, dependencies and files; the selection in order', async () => {
    const r = await changedStacks(base, billing, '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.selected).toEqual(['app-roles', 'app-roles-a']);
    expect(json.removed).toEqual([]);
    const shard = json.stacks.find((s: any) => s.name === 'app-roles-a');
    expect(shard).toMatchObject({ change: 'unchanged', selected: true, via: ['app-roles'], dependencies: ['app-roles'], files: ['cdk.tf.json'] });
    expect(shard.baseDigest).toBe(shard.headDigest);
    const appRoles = json.stacks.find((s: any) => s.name === 'app-roles');
    expect(appRoles.change).toBe('changed');
    expect(appRoles.baseDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(appRoles.headDigest).not.toBe(appRoles.baseDigest);
  });

  it('--format md: a table for the merge-request note, with the planned stacks and short digests', async () => {
    const r = await changedStacks(base, billing, '--format', 'md');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('### Stacks planned: 2 of 3');
    expect(r.stdout).toMatch(/\| `ci-access` \| unchanged \| no \|/);
    expect(r.stdout).toMatch(/\| `app-roles-a` \| unchanged \| yes: depends on `app-roles` \| `sha256:[0-9a-f]{16}` \| `sha256:[0-9a-f]{16}` \|/);
    expect(r.stdout).toMatch(/\| `app-roles` \| changed \| yes \|/);
  });

  it('--markdown-file FILE: the md form written to FILE beside the lines on standard output, for the pipeline\'s note', async () => {
    const file = path.join(path.dirname(base), 'changed-stacks.md');
    const r = await changedStacks(base, billing, '--markdown-file', file);
    expect(r.stdout.split('\n')).toEqual(['app-roles', 'app-roles-a']);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${(await changedStacks(base, billing, '--format', 'md')).stdout}\n`);
  });

  it('usage errors exit 2: one argument, an unknown format, a directory that is no synthesized output', async () => {
    expect((await changedStacks(base)).code).toBe(2);
    expect((await changedStacks(base, same, '--format', 'yaml')).code).toBe(2);
    const empty = path.dirname(base);
    fs.mkdirSync(path.join(empty, 'not-an-output'));
    const r = await changedStacks(base, path.join(empty, 'not-an-output'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a directory but not a synthesized output (no manifest.json)');
  });
});
