import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';

// `secretstore-iac tf STACK -- init` keeps the stack's provider lock file where a configuration
// repository commits it (locks/<stack>/.terraform.lock.hcl beside cdktf.json), not only in the
// synthesized output, which is not committed. A fake engine stands in for OpenTofu: it prints the lock
// file it finds and writes the one in $FAKE_LOCK (when set), then exits with $FAKE_EXIT.

const FAKE_ENGINE = [
  '#!/bin/sh',
  'if [ -f .terraform.lock.hcl ]; then echo "engine saw: $(cat .terraform.lock.hcl)"; else echo "engine saw: no lock"; fi',
  'if [ -n "$FAKE_LOCK" ]; then printf "%s" "$FAKE_LOCK" > .terraform.lock.hcl; fi',
  'exit "${FAKE_EXIT:-0}"',
  '',
].join('\n');

const roots: string[] = [];
afterAll(() => roots.splice(0).forEach((root) => fs.rmSync(root, { recursive: true, force: true })));

/** A configuration repository (cdktf.json) with one synthesized stack, and the fake engine. */
function repository(withCdktfJson = true) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-locks-'));
  roots.push(root);
  if (withCdktfJson) fs.writeFileSync(path.join(root, 'cdktf.json'), '{"app":"true"}');
  const stackDir = path.join(root, 'cdktf.out', 'stacks', 'ci-access');
  fs.mkdirSync(stackDir, { recursive: true });
  fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{}');
  const engine = path.join(root, 'fake-engine');
  fs.writeFileSync(engine, FAKE_ENGINE, { mode: 0o755 });
  const committed = path.join(root, 'locks', 'ci-access', '.terraform.lock.hcl');
  return { root, stackDir, engine, committed, working: path.join(stackDir, '.terraform.lock.hcl') };
}

async function tf(repo: ReturnType<typeof repository>, env: NodeJS.ProcessEnv, ...engineArgs: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['tf', 'ci-access', '--engine', repo.engine, '--', ...engineArgs], {
    env: { PATH: process.env.PATH, SECRETSTORE_ADDR: 'http://127.0.0.1:1', ...env },
    cwd: repo.root,
    isTerminal: false,
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const COMMIT_LINE = /^secretstore-iac tf: the engine (wrote|changed) the provider lock file: copied to locks\/ci-access\/\.terraform\.lock\.hcl; commit it$/m;

describe('provider lock files: committed in locks/<stack>/, used and updated by `tf STACK -- init`', () => {
  it('a first init: the lock the engine wrote is copied to locks/<stack>/ with one line saying to commit it', async () => {
    const repo = repository();
    const r = await tf(repo, { FAKE_LOCK: 'lock v1' }, 'init');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('engine saw: no lock');
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe('lock v1');
    expect(r.stderr.match(COMMIT_LINE)?.[1]).toBe('wrote');
  });

  it('a fresh output (a new clone): the committed lock is copied into the stack directory before the engine runs; unchanged, nothing to commit', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, 'lock v1');
    const r = await tf(repo, {}, 'init');
    expect(r.stdout).toBe('engine saw: lock v1');
    expect(fs.readFileSync(repo.working, 'utf8')).toBe('lock v1');
    expect(r.stderr).not.toMatch(COMMIT_LINE);
    expect(r.code).toBe(0);
  });

  it('the committed lock wins over a stale one an earlier run left in the stack directory', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, 'lock v2 (pulled)');
    fs.writeFileSync(repo.working, 'lock v1 (stale)');
    const r = await tf(repo, {}, 'validate');
    expect(r.stdout).toBe('engine saw: lock v2 (pulled)');
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe('lock v2 (pulled)');
    expect(r.stderr).not.toMatch(COMMIT_LINE);
  });

  it('an upgrade (init -upgrade changes the lock): copied back, saying it changed', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, 'lock v1');
    const r = await tf(repo, { FAKE_LOCK: 'lock v2' }, 'init', '-upgrade');
    expect(r.stdout).toBe('engine saw: lock v1');
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe('lock v2');
    expect(r.stderr.match(COMMIT_LINE)?.[1]).toBe('changed');
    expect(fs.readdirSync(path.dirname(repo.committed))).toEqual(['.terraform.lock.hcl']);
  });

  it('a failed engine run leaves the committed lock as it was', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, 'lock v1');
    const r = await tf(repo, { FAKE_LOCK: 'half-done', FAKE_EXIT: '1' }, 'init');
    expect(r.code).toBe(1);
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe('lock v1');
    expect(r.stderr).not.toMatch(COMMIT_LINE);
  });

  it('an output directory outside a configuration repository (no cdktf.json beside it): the lock stays in the stack directory only', async () => {
    const repo = repository(false);
    const r = await tf(repo, { FAKE_LOCK: 'lock v1' }, 'init');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(repo.working, 'utf8')).toBe('lock v1');
    expect(fs.existsSync(path.join(repo.root, 'locks'))).toBe(false);
    expect(r.stderr).not.toMatch(COMMIT_LINE);
  });
});
