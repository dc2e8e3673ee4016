import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { derivedProviderLock, satisfiesConstraint } from '../../../lib/engine/provider-lock-files';

// `secretstore-iac tf STACK -- init` keeps the stack's provider lock file where a configuration
// repository commits it (locks/<stack>/.terraform.lock.hcl beside cdktf.json), not only in the
// synthesized output, which is not committed. A fake engine stands in for OpenTofu: it prints the lock
// file it finds (its h1: hash) and writes the one in $TF_VAR_fake_lock (when set), then exits with $TF_VAR_fake_exit (input variables reach the engine; other variables do not, issue 45).
// No provider is installed here: the committed lock is the record, and only lock files in the form
// the engine writes pass (lib/engine/installed-providers.ts).

/** A lock file of one build whose only hash is `h1:<tag>`. */
const lockOf = (tag: string): string =>
  ['provider "registry.opentofu.org/hashicorp/vault" {', '  version     = "5.9.0"', '  constraints = ">= 5.6.0, < 6.0.0"', '  hashes = [', `    "h1:${tag}",`, '  ]', '}', ''].join('\n');

const FAKE_ENGINE = [
  '#!/bin/sh',
  'if [ -f .terraform.lock.hcl ]; then echo "engine saw: $(grep -o \'h1:[^"]*\' .terraform.lock.hcl || cat .terraform.lock.hcl)"; else echo "engine saw: no lock"; fi',
  'if [ -n "$TF_VAR_fake_lock" ]; then printf "%s" "$TF_VAR_fake_lock" > .terraform.lock.hcl; fi',
  'exit "${TF_VAR_fake_exit:-0}"',
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
    const r = await tf(repo, { TF_VAR_fake_lock: 'lock v1' }, 'init');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('engine saw: no lock');
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe('lock v1');
    expect(r.stderr.match(COMMIT_LINE)?.[1]).toBe('wrote');
  });

  it('a fresh output (a new clone): the committed lock is copied into the stack directory before the engine runs; unchanged, nothing to commit', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, lockOf('v1'));
    const r = await tf(repo, {}, 'init');
    expect(r.stdout).toBe('engine saw: h1:v1');
    expect(fs.readFileSync(repo.working, 'utf8')).toBe(lockOf('v1'));
    expect(r.stderr).not.toMatch(COMMIT_LINE);
    expect(r.code).toBe(0);
  });

  it('the committed lock wins over a stale one an earlier run left in the stack directory', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, lockOf('v2pulled'));
    fs.writeFileSync(repo.working, lockOf('v1stale'));
    const r = await tf(repo, {}, 'validate');
    expect(r.stdout).toBe('engine saw: h1:v2pulled');
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe(lockOf('v2pulled'));
    expect(r.stderr).not.toMatch(COMMIT_LINE);
  });

  it('an upgrade (init -upgrade changes the lock): copied back, saying it changed', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, lockOf('v1'));
    const r = await tf(repo, { TF_VAR_fake_lock: lockOf('v2') }, 'init', '-upgrade');
    expect(r.stdout).toBe('engine saw: h1:v1');
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe(lockOf('v2'));
    expect(r.stderr.match(COMMIT_LINE)?.[1]).toBe('changed');
    expect(fs.readdirSync(path.dirname(repo.committed))).toEqual(['.terraform.lock.hcl']);
  });

  it('a failed engine run leaves the committed lock as it was', async () => {
    const repo = repository();
    fs.mkdirSync(path.dirname(repo.committed), { recursive: true });
    fs.writeFileSync(repo.committed, lockOf('v1'));
    const r = await tf(repo, { TF_VAR_fake_lock: 'half-done', TF_VAR_fake_exit: '1' }, 'init');
    expect(r.code).toBe(1);
    expect(fs.readFileSync(repo.committed, 'utf8')).toBe(lockOf('v1'));
    expect(r.stderr).not.toMatch(COMMIT_LINE);
  });

  it('an output directory outside a configuration repository (no cdktf.json beside it): the lock stays in the stack directory only', async () => {
    const repo = repository(false);
    const r = await tf(repo, { TF_VAR_fake_lock: 'lock v1' }, 'init');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(repo.working, 'utf8')).toBe('lock v1');
    expect(fs.existsSync(path.join(repo.root, 'locks'))).toBe(false);
    expect(r.stderr).not.toMatch(COMMIT_LINE);
  });
});

/** A lock as OpenTofu writes it for the stacks' one provider. */
const VAULT_LOCK = (constraints: string) =>
  [
    '# This file is maintained automatically by "tofu init".',
    '# Manual edits may be lost in future updates.',
    '',
    'provider "registry.opentofu.org/hashicorp/vault" {',
    '  version     = "5.9.0"',
    `  constraints = "${constraints}"`,
    '  hashes = [',
    '    "h1:sjG1lvqz+yzkH9m6QAs3AR0758Da8o4fOYaSN37AKzE=",',
    '  ]',
    '}',
    '',
  ].join('\n');

describe('every synthesized stack gets its committed lock file', () => {
  /** The repository with more stacks beside ci-access, each requiring hashicorp/vault with its own constraint. */
  function withStacks(stacks: Record<string, string>) {
    const repo = repository();
    const stackJson = (version: string) => JSON.stringify({ terraform: { required_providers: { vault: { source: 'hashicorp/vault', version } } } });
    fs.writeFileSync(path.join(repo.stackDir, 'cdk.tf.json'), stackJson('>= 5.6.0, < 6.0.0'));
    for (const [stack, version] of Object.entries(stacks)) {
      fs.mkdirSync(path.join(repo.root, 'cdktf.out', 'stacks', stack), { recursive: true });
      fs.writeFileSync(path.join(repo.root, 'cdktf.out', 'stacks', stack, 'cdk.tf.json'), stackJson(version));
    }
    return { ...repo, lockOf: (stack: string) => path.join(repo.root, 'locks', stack, '.terraform.lock.hcl') };
  }

  it('the first init of one stack writes the lock of every other stack that has none, with its own constraints, and says to commit each', async () => {
    const repo = withStacks({ people: '>= 5.7.0, < 6.0.0', 'app-roles': '>= 5.6.0, < 6.0.0' });
    const r = await tf(repo, { TF_VAR_fake_lock: VAULT_LOCK('>= 5.6.0, < 6.0.0') }, 'init');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(repo.lockOf('people'), 'utf8')).toBe(VAULT_LOCK('>= 5.7.0, < 6.0.0'));
    expect(fs.readFileSync(repo.lockOf('app-roles'), 'utf8')).toBe(VAULT_LOCK('>= 5.6.0, < 6.0.0'));
    expect(r.stderr.split('\n').filter((l) => l.includes('from this stack\'s provider lock'))).toEqual([
      'secretstore-iac tf: wrote locks/app-roles/.terraform.lock.hcl from this stack\'s provider lock (the same provider builds); commit it',
      'secretstore-iac tf: wrote locks/people/.terraform.lock.hcl from this stack\'s provider lock (the same provider builds); commit it',
    ]);
  });

  it('in a CI job (CI=true), whose working copy is never committed, the lines say how to make each lock in a checkout instead of "commit it" (issue 47)', async () => {
    const repo = withStacks({ people: '>= 5.7.0, < 6.0.0' });
    const r = await tf(repo, { TF_VAR_fake_lock: VAULT_LOCK('>= 5.6.0, < 6.0.0'), CI: 'true' }, 'init');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(repo.lockOf('people'), 'utf8')).toBe(VAULT_LOCK('>= 5.7.0, < 6.0.0'));
    expect(r.stderr).not.toMatch(/commit it$/m);
    expect(r.stderr.split('\n').filter((l) => l.includes('from this stack\'s provider lock'))).toEqual([
      "secretstore-iac tf: wrote locks/people/.terraform.lock.hcl from this stack's provider lock (the same provider builds); this CI job's working copy is not committed: run `npx secretstore-iac tf people -- init` in a checkout and commit locks/people/",
    ]);
  });

  it('a stack that has its lock keeps it; one whose constraint the locked version does not meet is left to its own init; a failed run writes none', async () => {
    const repo = withStacks({ people: '>= 6.0.0', 'app-roles': '>= 5.6.0, < 6.0.0' });
    fs.mkdirSync(path.dirname(repo.lockOf('app-roles')), { recursive: true });
    fs.writeFileSync(repo.lockOf('app-roles'), 'committed by hand');
    const failed = await tf(repo, { TF_VAR_fake_lock: VAULT_LOCK('>= 5.6.0, < 6.0.0'), TF_VAR_fake_exit: '1' }, 'init');
    expect(failed.code).toBe(1);
    expect(fs.existsSync(repo.lockOf('people'))).toBe(false);
    const r = await tf(repo, { TF_VAR_fake_lock: VAULT_LOCK('>= 5.6.0, < 6.0.0') }, 'init');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(repo.lockOf('app-roles'), 'utf8')).toBe('committed by hand');
    expect(fs.existsSync(repo.lockOf('people'))).toBe(false);
    expect(r.stderr).not.toContain('from this stack\'s provider lock');
  });
});

describe('derivedProviderLock and satisfiesConstraint', () => {
  it('keeps versions and checksums, sets the stack\'s constraints; undefined for a provider the lock lacks', () => {
    expect(derivedProviderLock(VAULT_LOCK('>= 5.6.0, < 6.0.0'), { vault: { source: 'vault', version: '~> 5.7' } })).toBe(VAULT_LOCK('~> 5.7'));
    expect(derivedProviderLock(VAULT_LOCK('>= 5.6.0, < 6.0.0'), { vault: { source: 'hashicorp/vault', version: '>= 5.6.0' }, random: { source: 'hashicorp/random', version: '>= 3.0.0' } })).toBeUndefined();
    expect(derivedProviderLock(VAULT_LOCK('>= 5.6.0, < 6.0.0'), { vault: { source: 'hashicorp/vault', version: '< 5.9.0' } })).toBeUndefined();
  });

  it.each([
    ['5.9.0', '>= 5.6.0, < 6.0.0', true],
    ['5.9.0', '>= 5.7.0, < 6.0.0', true],
    ['6.0.0', '>= 5.6.0, < 6.0.0', false],
    ['5.9.0', '5.9.0', true],
    ['5.9.0', '= 5.6.0', false],
    ['5.9.0', '!= 5.9.0', false],
    ['5.9.0', '~> 5.7', true],
    ['6.1.0', '~> 5.7', false],
    ['5.7.4', '~> 5.7.1', true],
    ['5.8.0', '~> 5.7.1', false],
    ['5.9.0', '> 5.9.0', false],
    ['5.9.0', '<= 5.9.0', true],
    ['5.9.0-beta1', '>= 5.0.0', false],
    ['5.9.0', 'latest', false],
  ])('%s satisfies "%s": %s', (version, constraint, expected) => {
    expect(satisfiesConstraint(version, constraint)).toBe(expected);
  });
});
