import { execFileSync } from 'child_process';
import * as fs from 'fs';
import { parse } from 'yaml';
import { ACCESS_DIFF_NOTE, RISK_FLAG_COUNT_FILE } from '../../../lib/pipeline/pipeline-review-job';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { REPO_ROOT } from '../../support/paths';
import { synthesizePlatform } from '../../support/synthesized-platform';

// `secretstore-iac init [DIR]`: a new configuration repository that depends on the package. That it
// installs, synthesizes and applies is proven in test/store/configuration-repository.store.test.ts.

const OWN = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));

async function init(cwd: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['init', ...args], { env: { PATH: process.env.PATH }, cwd, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Every file below `dir`, by `/`-separated path, with its text. */
function tree(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (d: string) =>
    fs.readdirSync(d, { withFileTypes: true }).forEach((e) =>
      e.isDirectory() ? walk(path.join(d, e.name)) : (files[path.relative(dir, path.join(d, e.name)).split(path.sep).join('/')] = fs.readFileSync(path.join(d, e.name), 'utf8')),
    );
  walk(dir);
  return files;
}

const work = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-init-'));

describe('secretstore-iac init DIR: a configuration repository that depends on the package', () => {
  const parent = work();
  let written: Record<string, string>;
  let result: Awaited<ReturnType<typeof init>>;
  beforeAll(async () => {
    result = await init(parent, 'Acme Secrets');
    written = tree(path.join(parent, 'Acme Secrets'));
  });
  afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

  it('writes the repository\'s files and prints each one', () => {
    expect(result.code).toBe(0);
    const files = ['.gitignore', '.gitlab-ci.yml', 'README.md', 'cdktf.json', 'package.json', 'stacks/main.ts', 'stacks/platform.config.ts', 'tsconfig.json'];
    expect(Object.keys(written).sort()).toEqual(files);
    expect(result.stdout.split('\n')).toEqual([
      `secretstore-iac init: wrote a configuration repository depending on secretstore-iac ^${OWN.version} in Acme Secrets:`,
      ...files.map((f) => `  ${f}`),
      'next: cd Acme Secrets && npm install && npm run synth (see README.md there)',
    ]);
    expect(result.stderr).toBe('');
    // Written whole through a staging directory beside it, which is gone.
    expect(fs.readdirSync(parent)).toEqual(['Acme Secrets']);
  });

  it('stacks/ is this repository\'s own configuration and app entry, byte for byte: they cannot drift', () => {
    expect(written['stacks/main.ts']).toBe(fs.readFileSync(path.join(REPO_ROOT, 'stacks', 'main.ts'), 'utf8'));
    expect(written['stacks/platform.config.ts']).toBe(fs.readFileSync(path.join(REPO_ROOT, 'stacks', 'platform.config.ts'), 'utf8'));
    expect(written['stacks/main.ts']).toContain("from 'secretstore-iac'");
  });

  it('package.json: private, secretstore-iac at ^<this version>, the typescript (below 7) and @types/node this package is built with, the scripts the pipeline runs', () => {
    const manifest = JSON.parse(written['package.json']);
    expect(manifest.name).toBe('acme-secrets');
    expect(manifest.private).toBe(true);
    expect(manifest.dependencies).toEqual({ 'secretstore-iac': `^${OWN.version}` });
    // Only what the pipeline's synth job compiles with: every job installs the dependencies (npm ci).
    expect(manifest.devDependencies).toEqual({
      typescript: OWN.devDependencies.typescript,
      '@types/node': OWN.devDependencies['@types/node'],
    });
    expect(manifest.devDependencies.typescript).toMatch(/^[1-6]\.\d+\.\d+$/);
    expect(Object.keys(manifest.scripts).sort()).toEqual(['build', 'pipeline:local', 'synth', 'synth:built']);
    // gitlab-ci-local, which only a workstation runs, at the version this package is tested with, by npx: no dependency.
    expect(OWN.devDependencies['gitlab-ci-local']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest.scripts['pipeline:local']).toBe(`npx --yes --package=gitlab-ci-local@${OWN.devDependencies['gitlab-ci-local']} -- gitlab-ci-local --shell-isolation --json-schema-validation`);
    expect(manifest.scripts.synth).toBe('npm run build && npm run synth:built');
    // What the pipeline's synth job runs on the dist/ its npm run build compiled: no second compilation.
    expect(manifest.scripts['synth:built']).toBe('node dist/stacks/main.js');
  });

  it('tsconfig.json compiles stacks/ to dist/stacks/, which cdktf.json\'s app runs', () => {
    const tsconfig = JSON.parse(written['tsconfig.json']);
    expect(tsconfig.include).toEqual(['stacks/**/*.ts']);
    expect(tsconfig.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.', strict: true, module: 'commonjs' });
    expect(JSON.parse(written['cdktf.json'])).toMatchObject({ language: 'typescript', app: 'npx tsc -p tsconfig.json && node dist/stacks/main.js', projectId: 'acme-secrets' });
  });

  it('.gitlab-ci.yml includes the committed copy where the synthesized pipeline says to commit it', () => {
    const { outdir } = synthesizePlatform();
    const synthesized = fs.readFileSync(path.join(outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8');
    const include = /^#\s+- local: (\S+)$/m.exec(synthesized)?.[1];
    expect(include).toBe('.gitlab/secretstore-iac.gitlab-ci.yml');
    expect(written['.gitlab-ci.yml']).toMatch(new RegExp(`^include:\\n  - local: "${include!.replace(/\./g, '\\.')}"$`, 'm'));
  });

  it('.gitignore keeps the output, builds and engine files out, and the lock files (locks/) in', () => {
    const ignored = written['.gitignore'].split('\n').filter((l) => l && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules/', 'dist/', 'cdktf.out/', '.terraform/', '*.tfstate']));
    expect(ignored.some((l) => l.startsWith('locks') || l.startsWith('.gitlab/') || l.includes('package-lock'))).toBe(false);
    // What a local pipeline run leaves, and its variables file (tokens).
    expect(ignored).toEqual(expect.arrayContaining(['.gitlab-ci-local/', '.gitlab-ci-local-variables.yml', 'secretstore-iac-plans/', 'cdktf.base.out/', 'changed-stacks.txt', 'access-diff.md']));
    // Every file the review job writes at the repository root, by the names the job uses.
    expect(ignored).toEqual(expect.arrayContaining([ACCESS_DIFF_NOTE, RISK_FLAG_COUNT_FILE]));
  });

  it('.gitignore ignores every artifact and cache path of every job of the synthesized pipeline (what a local run leaves in the tree)', () => {
    const { outdir } = synthesizePlatform();
    const pipeline = parse(fs.readFileSync(path.join(outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8')) as Record<string, { artifacts?: { paths?: string[] }; cache?: Array<{ paths?: string[] }> }>;
    const paths = new Set(Object.values(pipeline).flatMap((job) => [...(job?.artifacts?.paths ?? []), ...(job?.cache ?? []).flatMap((c) => c.paths ?? [])]));
    expect([...paths]).toEqual(expect.arrayContaining(['cdktf.base.out/', 'reviewed-plans.json', 'access-diff.md']));
    // Each path made in a git work tree that has only the generated .gitignore: git sees nothing to add.
    const dir = work();
    execFileSync('git', ['init', '-q'], { cwd: dir });
    fs.writeFileSync(path.join(dir, '.gitignore'), written['.gitignore']);
    execFileSync('git', ['add', '.gitignore'], { cwd: dir });
    for (const p of paths) {
      const made = path.join(dir, p.replace(/\*/g, 'tfplan'));
      if (p.endsWith('/') || !path.extname(p)) fs.mkdirSync(path.join(made), { recursive: true }), fs.writeFileSync(path.join(made, 'file'), 'x');
      else fs.mkdirSync(path.dirname(made), { recursive: true }), fs.writeFileSync(made, 'x');
    }
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir, encoding: 'utf8' })).toBe('A  .gitignore\n');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('README.md says the two commands and where the lock files live', () => {
    expect(written['README.md']).toContain('npm run synth');
    expect(written['README.md']).toContain('npx secretstore-iac tf ci-access -- init && npx secretstore-iac tf ci-access -- apply');
    expect(written['README.md']).toContain('`locks/STACK/.terraform.lock.hcl`');
    expect(written['README.md']).toContain('`npm run pipeline:local`');
    expect(written['README.md']).not.toContain('Local tarball');
  });
});

describe('secretstore-iac init: where and what', () => {
  it('--package SPEC is the dependency (a packed tarball), which the README and output say a runner cannot install', async () => {
    const dir = work();
    const r = await init(dir, 'config', '--package', 'file:../secretstore-iac-0.2.0.tgz');
    expect(r.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'config', 'package.json'), 'utf8')).dependencies).toEqual({ 'secretstore-iac': 'file:../secretstore-iac-0.2.0.tgz' });
    expect(r.stdout).toContain('is a local tarball, for trying things on this machine: a runner cannot install it');
    expect(fs.readFileSync(path.join(dir, 'config', 'README.md'), 'utf8')).toContain('a runner\ncannot install it');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['a registry version', '^0.2.0'],
    ['a scoped package of a team registry', 'npm:@acme/secretstore-iac@^0.2.0'],
    ['a git URL with a tag', 'git+https://gitlab.example.com/acme/secretstore-iac.git#v0.2.0'],
    ['a tarball URL', 'https://packages.example.com/secretstore-iac-0.2.0.tgz'],
  ])('--package takes %s (%s), without a note', async (_what, spec) => {
    const dir = work();
    const r = await init(dir, 'config', '--package', spec);
    expect(r.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'config', 'package.json'), 'utf8')).dependencies).toEqual({ 'secretstore-iac': spec });
    expect(r.stdout).not.toContain('note:');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('without DIR, into the current directory when it is empty', async () => {
    const dir = work();
    const r = await init(dir);
    expect(r.code).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['.gitignore', '.gitlab-ci.yml', 'README.md', 'cdktf.json', 'package.json', 'stacks', 'tsconfig.json']);
    expect(r.stdout).toContain('next: cd . && npm install');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a directory that is not empty (exit 2), naming what is there, and writes nothing', async () => {
    const dir = work();
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"mine"}');
    fs.mkdirSync(path.join(dir, 'src'));
    const r = await init(dir, '.');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`secretstore-iac init: ${dir} is not empty (package.json, src): init writes a new repository into an empty or new directory only; nothing was written (see secretstore-iac init --help)`);
    expect(fs.readdirSync(dir).sort()).toEqual(['package.json', 'src']);
    expect(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).toBe('{"name":"mine"}');
    expect(r.stdout).toBe('');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each(['', 'latest', 'git+https://gitlab.example.com/acme/secretstore-iac.git', 'file:../secretstore-iac', '../secretstore-iac-0.2.0.tgz'])('refuses --package %j, which a runner cannot install reproducibly (exit 2), naming the rule', async (spec) => {
    const dir = work();
    const r = await init(dir, 'config', '--package', spec);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--package ${JSON.stringify(spec)}: must be, on one line, a version range from a registry`);
    expect(r.stderr).toContain('a git URL with a tag');
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
