/**
 * The CLI end to end, as a process: compiled with tsc, run with node, output piped (not a
 * terminal); and access-diff on git refs, synthesized in temporary worktrees of a throw-away repo.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';

const REPO = REPO_ROOT;
const FIXTURES = path.join(REPO, 'test', 'fixtures', 'access');
let bin: string;
let out: string;

beforeAll(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-process-'));
  execFileSync(
    process.execPath,
    [
      path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'),
      ...['--outDir', out, '--rootDir', REPO, '--module', 'commonjs', '--target', 'ES2022', '--strict'],
      ...['--esModuleInterop', '--skipLibCheck', '--types', 'node', path.join(REPO, 'bin', 'secretstore-iac.ts')],
    ],
    { cwd: REPO, stdio: 'pipe' },
  );
  // As `npm run build` does: the renderers' shell and awk files next to the compiled modules.
  execFileSync(process.execPath, [path.join(REPO, 'scripts', 'copy-assets.js'), out], { cwd: REPO, stdio: 'pipe' });
  bin = path.join(out, 'bin', 'secretstore-iac.js');
});

afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

function run(args: string[], cwd = FIXTURES) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_PATH: path.join(REPO, 'node_modules') },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('secretstore-iac as a process', () => {
  it('help, usage error and runtime error exit codes', () => {
    expect(run(['--help']).code).toBe(0);
    expect(run([]).code).toBe(2);
    expect(run(['nope']).code).toBe(2);
    expect(run(['access', path.join(REPO, 'test', 'fixtures', 'access-broken')]).code).toBe(3);
  });

  it('access and access-diff with piped output: plain Markdown, 0 and 1', () => {
    const access = run(['access', 'base']);
    expect(access.code).toBe(0);
    expect(access.stdout).toContain('## `jwt/registry-ci`');
    expect(access.stdout).not.toContain('\u001b[');
    expect(run(['access-diff', 'base', 'head-nothing-changed']).code).toBe(0);
    const changed = run(['access-diff', 'base', 'head-account-added']);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain('| `secret/data/registry/svc-deployer` (new) | read |  | read |');
  });
});

describe('operator commands through npx (the README form)', () => {
  // npx is itself a node script: on Node 20, a node process stops with exit 9 ("node: PATH: not
  // found") when `--env-file PATH` appears anywhere in its arguments before a `--`, even after the
  // script name. `npx -- secretstore-iac ...` ends npx's own option scanning; the bin's shebang
  // (`node --`) does the same for the bin's node.
  let project: string;
  const missing = path.join(os.tmpdir(), `no-such-dir-${process.pid}`, 'orchestrator.env');

  beforeAll(() => {
    // A project whose package is secretstore-iac with the compiled bin, as npx finds it.
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-npx-'));
    fs.cpSync(out, project, { recursive: true });
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(project, 'node_modules'), 'dir');
    fs.writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'secretstore-iac', version: '0.0.0', bin: { 'secretstore-iac': 'bin/secretstore-iac.js' } }),
    );
  });

  afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

  const env = () => {
    const e: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['SECRETSTORE_ADDR', 'VAULT_ADDR', 'BAO_ADDR']) delete e[k];
    return e;
  };

  it('npx -- secretstore-iac provision APP --env-file PATH reaches the command with its option', () => {
    const r = spawnSync('npx', ['--', 'secretstore-iac', 'provision', 'orchestrator', '--env-file', missing], {
      cwd: project,
      encoding: 'utf8',
      env: env(),
    });
    expect(r.stderr).not.toContain('not found');
    // The command's own first check (no store address), so the arguments arrived intact.
    expect(r.stderr).toContain('secretstore-iac provision: The secrets store address is not set');
    expect(r.status).toBe(3);
  });

  it('the bin run through its shebang (as npx runs it) accepts --env-file PATH for a file that does not exist yet', () => {
    const binPath = path.join(project, 'bin', 'secretstore-iac.js');
    fs.chmodSync(binPath, 0o755);
    const r = spawnSync(binPath, ['provision', 'orchestrator', '--env-file', missing], { cwd: project, encoding: 'utf8', env: env() });
    expect(r.stderr).toContain('secretstore-iac provision: The secrets store address is not set');
    expect(r.status).toBe(3);
  });
});

describe('access-diff on git refs', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd: repo, encoding: 'utf8' }).trim();

  beforeAll(() => {
    // A throw-away project whose synthesis copies a committed output: two commits, base and head.
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-git-'));
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(repo, 'node_modules'), 'dir');
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules\ndist\n');
    fs.writeFileSync(
      path.join(repo, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { outDir: 'dist', rootDir: '.', module: 'commonjs', target: 'ES2022', strict: true, types: ['node'], skipLibCheck: true },
        include: ['stacks/**/*.ts'],
      }),
    );
    // The entry point is not stacks/main.ts: the synthesis runs what cdktf.json's `app` says.
    fs.writeFileSync(path.join(repo, 'cdktf.json'), JSON.stringify({ app: 'npx tsc -p tsconfig.json && node dist/stacks/entry.js' }));
    fs.mkdirSync(path.join(repo, 'stacks'));
    fs.writeFileSync(
      path.join(repo, 'stacks', 'entry.ts'),
      "import * as fs from 'fs';\nimport * as path from 'path';\n" +
        "fs.cpSync(path.join(__dirname, '..', '..', 'fixture'), process.env.CDKTF_OUTDIR!, { recursive: true });\n",
    );
    git('init', '-q', '-b', 'main');
    fs.cpSync(path.join(FIXTURES, 'base'), path.join(repo, 'fixture'), { recursive: true });
    git('add', '.');
    git('commit', '-q', '-m', 'base');
    git('tag', 'base');
    fs.rmSync(path.join(repo, 'fixture'), { recursive: true });
    fs.cpSync(path.join(FIXTURES, 'head-ttl-raised'), path.join(repo, 'fixture'), { recursive: true });
    git('add', '-A');
    git('commit', '-q', '-m', 'head');
  });

  afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('synthesizes each ref in a temporary worktree, diffs, and removes the worktrees', () => {
    const changed = run(['access-diff', 'base', 'main'], repo);
    expect(changed.stderr).toMatch(/synthesizing [0-9a-f]{12} in a temporary worktree/);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain('## Access changes: `base` → `main`');
    expect(changed.stdout).toContain('- **TTL raised**, `jwt/registry-ci`: `token_explicit_max_ttl`, `token_max_ttl`, `token_ttl` 1h → 2h');
    expect(run(['access-diff', 'HEAD~1', 'base'], repo).code).toBe(0);
    expect(git('worktree', 'list').split('\n')).toHaveLength(1);
  });

  it('a ref and a directory can be mixed; an unknown ref is a usage error', () => {
    expect(run(['access-diff', 'base', path.join(FIXTURES, 'head-ttl-raised')], repo).code).toBe(1);
    const unknown = run(['access-diff', 'no-such-ref', 'main'], repo);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no-such-ref is neither a synthesized output directory nor a git ref');
  });
});
