/**
 * Issue 45, "a hermetic engine run": the engine runs in a working directory laid fresh from the
 * stack directory (lib/engine/engine-working-directory.ts): only the synthesis's and the tool's
 * files (copied, the bookkeeping checked on the copies), links to the engine's data, the lock file
 * copied and brought back, new engine data moved back, the rest discarded, the directory gone after
 * the run whatever its end. Fake engines record what they see; the real engines' runs in a fresh
 * directory are the store tests' (test/store/engine-*.store.test.ts).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runEngineCollected } from '../../../lib/engine/engine-output';
import { runEngine } from '../../../lib/engine/engine-process';
import { buildEngineRunEnvironment, EngineRunEnvironment } from '../../../lib/engine/engine-run-environment';
import { ENGINE_RUNS_DIR, layEngineWorkingDirectory, readLaidConfiguration } from '../../../lib/engine/engine-working-directory';
import { SEAL_FILE, sealBookkeeping } from '../../../lib/engine/bookkeeping-seal';
import { UntrustedStackDirectory } from '../../../lib/engine/stack-directory-guard';
import { stackDigest } from '../../../lib/sources/stack-digest';

const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-freshdir-')));
let run: EngineRunEnvironment;
beforeAll(() => {
  run = buildEngineRunEnvironment({ PATH: process.env.PATH, TMPDIR: work }, { cwd: process.cwd(), address: 'http://127.0.0.1:9' });
});
afterAll(() => {
  run.dispose();
  fs.rmSync(work, { recursive: true, force: true });
});

const io = { stdout: () => undefined, stderr: () => undefined };

/**
 * An output directory with one stack (`cdk.tf.json`, `.terraform/`, a lock file, a saved plan, a
 * local state) and a fake engine that records its working directory, its listing and where
 * `../../../` leads, writes the plan `-out=` names, and for `init` replaces the lock by a rename (as
 * OpenTofu does) and writes into `.terraform/`; for `crash` it leaves a crash log and an override file
 * and fails.
 */
function fixture(options: { terraformDir?: boolean } = {}): { outdir: string; stackDir: string; engine: string; seen: (what: string) => string } {
  const outdir = fs.mkdtempSync(path.join(work, 'out-'));
  const stackDir = path.join(outdir, 'stacks', 'app-roles');
  fs.mkdirSync(stackDir, { recursive: true });
  fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{"terraform":{"backend":{"local":{"path":"../../../terraform.app-roles.tfstate"}}}}');
  if (options.terraformDir !== false) {
    fs.mkdirSync(path.join(stackDir, '.terraform', 'providers'), { recursive: true });
    fs.writeFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), backendRecord({ path: '../../../terraform.app-roles.tfstate', workspace_dir: null }));
  }
  fs.writeFileSync(path.join(stackDir, '.terraform.lock.hcl'), 'old lock\n');
  fs.writeFileSync(path.join(stackDir, 'saved.tfplan'), 'saved plan');
  fs.writeFileSync(path.join(stackDir, 'terraform.tfstate'), '{"version":4}');
  const record = path.join(outdir, 'seen');
  const engine = path.join(outdir, 'fake-engine');
  fs.writeFileSync(
    engine,
    [
      '#!/bin/sh',
      `rec=${record}`,
      'pwd -P > "$rec.cwd"',
      'ls -A1 > "$rec.ls"',
      '(cd ../../.. && pwd -P) > "$rec.up"',
      'for a in "$@"; do case "$a" in -out=*) echo "new plan" > "${a#-out=}";; esac; done',
      'case "$1" in',
      '  init) mkdir -p .terraform/providers && echo installed > .terraform/providers/marker; echo "new lock" > .terraform.lock.hcl.tmp && mv .terraform.lock.hcl.tmp .terraform.lock.hcl; echo "{\\"version\\":3,\\"backend\\":{\\"type\\":\\"local\\",\\"config\\":{\\"path\\":\\"../../../terraform.app-roles.tfstate\\"},\\"hash\\":1}}" > .terraform/terraform.tfstate;;',
      '  workspace) echo "$3" > .terraform/environment;;',
      '  records) cat .terraform/terraform.tfstate > "$rec.record";;',
      '  apply) cat "$2" > "$rec.applied";;',
      '  crash) echo boom > crash.log; echo "{}" > junk_override.tf.json; exit 1;;',
      '  unlock) echo "{}" > .terraform.tfstate.lock.info && rm .terraform.tfstate.lock.info;;',
      'esac',
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { outdir, stackDir, engine, seen: (what) => fs.readFileSync(`${record}.${what}`, 'utf8').trim() };
}

const runsOf = (outdir: string) => path.join(outdir, ENGINE_RUNS_DIR);

/** The backend record `init` writes in `.terraform/` (OpenTofu 1.12.6's shape): the local backend with `config`. */
function backendRecord(config: Record<string, unknown>, type = 'local'): string {
  return `${JSON.stringify({ version: 3, terraform_version: '1.12.6', backend: { type, config, hash: 1234 } }, null, 2)}\n`;
}

describe('the engine runs in a working directory laid fresh from the stack directory', () => {
  it('holds the synthesis\'s file and the engine\'s data only, beside stacks/ at a stack\'s depth: `../../../` is the same directory', async () => {
    const { outdir, stackDir, engine, seen } = fixture();
    expect(await runEngine(engine, ['plan'], stackDir, run.env, io)).toBe(0);
    expect(path.dirname(seen('cwd'))).toBe(runsOf(outdir));
    expect(path.basename(seen('cwd'))).toMatch(new RegExp(`^${process.pid}-app-roles-\\w{6}$`));
    expect(seen('ls').split('\n')).toEqual(['.terraform', '.terraform.lock.hcl', 'cdk.tf.json', 'saved.tfplan', 'terraform.tfstate']);
    // The local backend's relative path (`../../../terraform.<stack>.tfstate`) names the same file.
    expect(seen('up')).toBe(fs.realpathSync(path.join(stackDir, '..', '..', '..')));
    // Gone with the run, the folder too.
    expect(fs.existsSync(runsOf(outdir))).toBe(false);
  });

  it('a non-synthesis *.tf.json in the stack directory is never laid (a file appearing after the guard passed): only what the guard accepts and the synthesis wrote', () => {
    const { stackDir } = fixture();
    // Written after the guard passed (lay is what runs after it): an override, a `#` name, variables, tests.
    for (const name of ['team_override.tf.json', '#team_override.tf.json', 'extra.tf.json', 'terraform.tfvars', 'a.auto.tfvars.json']) fs.writeFileSync(path.join(stackDir, name), '{"resource":{}}');
    fs.mkdirSync(path.join(stackDir, 'tests'));
    const laid = layEngineWorkingDirectory(stackDir, ['plan']);
    try {
      expect(fs.readdirSync(laid.dir).sort()).toEqual(['.terraform', '.terraform.lock.hcl', 'cdk.tf.json', 'saved.tfplan', 'terraform.tfstate']);
      // The configuration is a copy (not a link to a file that can change), the data links to the stack's.
      expect(fs.lstatSync(path.join(laid.dir, 'cdk.tf.json')).isFile()).toBe(true);
      // `.terraform/` is a directory of its own: its providers linked (written through), its records copied.
      expect(fs.lstatSync(path.join(laid.dir, '.terraform')).isDirectory()).toBe(true);
      expect(fs.readlinkSync(path.join(laid.dir, '.terraform', 'providers'))).toBe(path.join(stackDir, '.terraform', 'providers'));
      expect(fs.lstatSync(path.join(laid.dir, '.terraform', 'terraform.tfstate')).isFile()).toBe(true);
      expect(fs.readlinkSync(path.join(laid.dir, 'terraform.tfstate'))).toBe(path.join(stackDir, 'terraform.tfstate'));
      expect(fs.lstatSync(path.join(laid.dir, '.terraform.lock.hcl')).isFile()).toBe(true);
      expect(laid.laid).toEqual({ files: ['cdk.tf.json'], digest: readLaidConfiguration(stackDir).laid.digest });
    } finally {
      laid.finish();
    }
    expect(fs.existsSync(laid.dir)).toBe(false);
    // What the stack held stays.
    expect(fs.existsSync(path.join(stackDir, 'team_override.tf.json'))).toBe(true);
  });

  it('show -json PLANFILE (reads no configuration): the fresh directory holds the engine\'s data only, whatever else the stack directory holds', () => {
    const { stackDir, engine, seen } = fixture();
    fs.writeFileSync(path.join(stackDir, 'team_override.tf.json'), '{}');
    const shown = runEngineCollected(engine, ['show', '-json', 'saved.tfplan'], stackDir, run.env, { readsConfiguration: false });
    expect(shown.status).toBe(0);
    expect(seen('ls').split('\n')).toEqual(['.terraform', '.terraform.lock.hcl', 'saved.tfplan', 'terraform.tfstate']);
  });

  it('what laid names is the stack\'s digest as changed-stacks computes it (configuration, bookkeeping and seal)', () => {
    const { stackDir } = fixture();
    sealBookkeeping(stackDir, {}, false);
    expect(readLaidConfiguration(stackDir).laid.digest).toBe(stackDigest(stackDir).digest);
  });

  it('a lock file the run changed (replaced by a rename) is brought back; the plan -out= names is moved back; writes through .terraform land in the stack\'s', async () => {
    const { stackDir, engine } = fixture();
    expect(await runEngine(engine, ['init'], stackDir, run.env, io)).toBe(0);
    expect(fs.readFileSync(path.join(stackDir, '.terraform.lock.hcl'), 'utf8')).toBe('new lock\n');
    expect(fs.readFileSync(path.join(stackDir, '.terraform', 'providers', 'marker'), 'utf8')).toBe('installed\n');
    expect(fs.lstatSync(path.join(stackDir, '.terraform')).isDirectory()).toBe(true);
    // Relative (a bare name), through the parent (`../`, rebased) and absolute.
    const absolute = path.join(work, 'absolute.tfplan');
    const planned = runEngineCollected(engine, ['plan', '-out=x.tfplan'], stackDir, run.env);
    expect(planned.status).toBe(0);
    expect(fs.readFileSync(path.join(stackDir, 'x.tfplan'), 'utf8')).toBe('new plan\n');
    expect(runEngineCollected(engine, ['plan', '-out=../sibling.tfplan'], stackDir, run.env).status).toBe(0);
    expect(fs.readFileSync(path.join(stackDir, '..', 'sibling.tfplan'), 'utf8')).toBe('new plan\n');
    expect(runEngineCollected(engine, ['plan', `-out=${absolute}`], stackDir, run.env).status).toBe(0);
    expect(fs.readFileSync(absolute, 'utf8')).toBe('new plan\n');
    // A saved plan given as a bare name is the stack's.
    expect(runEngineCollected(engine, ['apply', 'x.tfplan'], stackDir, run.env).status).toBe(0);
  });

  it('an unchanged lock file is left as it was (same inode); a .terraform/ the run made in a stack without one is moved into it', async () => {
    const { stackDir, engine } = fixture({ terraformDir: false });
    const before = fs.statSync(path.join(stackDir, '.terraform.lock.hcl')).ino;
    expect(await runEngine(engine, ['plan'], stackDir, run.env, io)).toBe(0);
    expect(fs.statSync(path.join(stackDir, '.terraform.lock.hcl')).ino).toBe(before);
    expect(await runEngine(engine, ['init'], stackDir, run.env, io)).toBe(0);
    expect(fs.lstatSync(path.join(stackDir, '.terraform')).isDirectory()).toBe(true);
    expect(fs.readFileSync(path.join(stackDir, '.terraform', 'providers', 'marker'), 'utf8')).toBe('installed\n');
  });

  it('a failed run: its engine data (crash.log) comes back, anything else it left is discarded, the directory is removed', async () => {
    const { outdir, stackDir, engine } = fixture();
    expect(await runEngine(engine, ['crash'], stackDir, run.env, io)).toBe(1);
    expect(fs.readFileSync(path.join(stackDir, 'crash.log'), 'utf8')).toBe('boom\n');
    expect(fs.existsSync(path.join(stackDir, 'junk_override.tf.json'))).toBe(false);
    expect(fs.existsSync(runsOf(outdir))).toBe(false);
    fs.rmSync(path.join(stackDir, 'crash.log'));
    expect(runEngineCollected(engine, ['crash'], stackDir, run.env).status).toBe(1);
    expect(fs.existsSync(runsOf(outdir))).toBe(false);
  });

  it('a linked file the engine removed (a local state\'s lock information, once unlocked) is removed from the stack directory too', async () => {
    const { stackDir, engine } = fixture();
    fs.writeFileSync(path.join(stackDir, '.terraform.tfstate.lock.info'), '{"ID":"stale"}');
    expect(await runEngine(engine, ['unlock'], stackDir, run.env, io)).toBe(0);
    expect(fs.existsSync(path.join(stackDir, '.terraform.tfstate.lock.info'))).toBe(false);
    expect(fs.existsSync(path.join(stackDir, 'terraform.tfstate'))).toBe(true);
  });

  it('an engine that cannot start: the error, and the directory removed (both starts)', async () => {
    const { outdir, stackDir } = fixture();
    const missing = path.join(outdir, 'no-such-engine');
    await expect(runEngine(missing, ['plan'], stackDir, run.env, io)).rejects.toThrow(/ENOENT/);
    expect(fs.existsSync(runsOf(outdir))).toBe(false);
    expect(() => runEngineCollected(missing, ['plan'], stackDir, run.env)).toThrow(/ENOENT/);
    expect(fs.existsSync(runsOf(outdir))).toBe(false);
  });

  it('the bookkeeping is checked on the copies the engine reads: a moves file not recorded in the seal is refused, nothing started, nothing left', async () => {
    const { outdir, stackDir, engine, seen } = fixture();
    sealBookkeeping(stackDir, {}, false);
    // Put there after the guard passed (lay runs after it): not what the tool sealed.
    fs.writeFileSync(path.join(stackDir, 'moves.tf.json'), '{"resource":{"vault_policy":{"x":{"name":"registry-ci","policy":""}}}}');
    expect(() => layEngineWorkingDirectory(stackDir, ['plan'])).toThrow(UntrustedStackDirectory);
    expect(() => layEngineWorkingDirectory(stackDir, ['plan'])).toThrow(`moves.tf.json: not recorded in ${SEAL_FILE}`);
    expect(fs.existsSync(runsOf(outdir))).toBe(false);
    await expect(runEngine(engine, ['plan'], stackDir, run.env, io)).rejects.toThrow(UntrustedStackDirectory);
    expect(() => seen('cwd')).toThrow();
  });

  describe('the engine\'s records in .terraform/ (backend configuration, workspace) are copied and checked against the laid cdk.tf.json; the rest of .terraform/ is linked', () => {
    it('a backend record giving the declared backend another path (init -backend-config, or written by hand, its hash kept) is refused, naming the attribute, never its value; nothing started', async () => {
      const { outdir, stackDir, engine, seen } = fixture();
      fs.writeFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), backendRecord({ path: '/elsewhere/secret-free.tfstate', workspace_dir: null }));
      const refused = () => layEngineWorkingDirectory(stackDir, ['plan']);
      expect(refused).toThrow(UntrustedStackDirectory);
      expect(refused).toThrow('.terraform/terraform.tfstate (the engine\'s backend record) gives the "local" backend `path` other than cdk.tf.json declares');
      expect(refused).not.toThrow(/elsewhere/);
      expect(fs.existsSync(runsOf(outdir))).toBe(false);
      await expect(runEngine(engine, ['plan'], stackDir, run.env, io)).rejects.toThrow(UntrustedStackDirectory);
      expect(() => seen('cwd')).toThrow();
      // An attribute the block does not set, set in the record: named too; unset (null) ones are the block's.
      fs.writeFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), backendRecord({ path: '../../../terraform.app-roles.tfstate', workspace_dir: '/other' }));
      expect(refused).toThrow('gives the "local" backend `workspace_dir` other than cdk.tf.json declares');
    });

    it('what the check reads is what the engine reads: a record changed after the guard is refused on the copy', () => {
      const { stackDir } = fixture();
      const laid = layEngineWorkingDirectory(stackDir, ['plan']);
      try {
        // Changed in the stack after laying: the run reads the copy, unchanged.
        fs.writeFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), backendRecord({ path: '/elsewhere.tfstate' }));
        expect(JSON.parse(fs.readFileSync(path.join(laid.dir, '.terraform', 'terraform.tfstate'), 'utf8')).backend.config.path).toBe('../../../terraform.app-roles.tfstate');
      } finally {
        laid.finish();
      }
      // The stack's changed record is not overwritten by the unchanged copy, and the next start refuses it.
      expect(JSON.parse(fs.readFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), 'utf8')).backend.config.path).toBe('/elsewhere.tfstate');
      expect(() => layEngineWorkingDirectory(stackDir, ['plan'])).toThrow('`path` other than cdk.tf.json declares');
    });

    it('another workspace selected is refused, on the copy too; a record of another backend type is the engine\'s own refusal (init), not this check\'s', () => {
      const { stackDir } = fixture();
      fs.writeFileSync(path.join(stackDir, '.terraform', 'environment'), 'other\n');
      expect(() => layEngineWorkingDirectory(stackDir, ['plan'])).toThrow('.terraform/environment selects another workspace than `default`');
      fs.writeFileSync(path.join(stackDir, '.terraform', 'environment'), 'default\n');
      fs.writeFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), backendRecord({ conn_str: null, schema_name: 'x' }, 'pg'));
      layEngineWorkingDirectory(stackDir, ['plan']).finish();
      fs.writeFileSync(path.join(stackDir, '.terraform', 'plugin_path'), '["/tmp/elsewhere"]');
      expect(() => layEngineWorkingDirectory(stackDir, ['plan'])).toThrow('.terraform/plugin_path: not what `init` writes from the tool\'s mirror (the record of `init -plugin-dir`: every later `init` installs providers from there)');
      fs.rmSync(path.join(stackDir, '.terraform', 'plugin_path'));
      fs.writeFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), '{not json');
      expect(() => layEngineWorkingDirectory(stackDir, ['plan'])).toThrow("is not JSON: what backend the engine would use cannot be checked");
    });

    it('records the run writes (init, workspace select) are brought back into the stack\'s .terraform/; the links stay the stack\'s entries', async () => {
      const { stackDir, engine, seen } = fixture();
      fs.rmSync(path.join(stackDir, '.terraform', 'terraform.tfstate'));
      expect(await runEngine(engine, ['init'], stackDir, run.env, io)).toBe(0);
      expect(JSON.parse(fs.readFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), 'utf8')).backend.type).toBe('local');
      expect(fs.readFileSync(path.join(stackDir, '.terraform', 'providers', 'marker'), 'utf8')).toBe('installed\n');
      expect(fs.lstatSync(path.join(stackDir, '.terraform', 'providers')).isDirectory()).toBe(true);
      expect(await runEngine(engine, ['workspace', 'select', 'default'], stackDir, run.env, io)).toBe(0);
      expect(fs.readFileSync(path.join(stackDir, '.terraform', 'environment'), 'utf8')).toBe('default\n');
      expect(await runEngine(engine, ['records'], stackDir, run.env, io)).toBe(0);
      expect(JSON.parse(seen('record')).backend.config.path).toBe('../../../terraform.app-roles.tfstate');
    });
  });

  it('a killed run\'s directory (its pid no longer runs) is removed by the next run; a live one\'s is kept', async () => {
    const { outdir, stackDir, engine } = fixture();
    const dead = path.join(runsOf(outdir), '999999999-app-roles-abcdef');
    const live = path.join(runsOf(outdir), `${process.ppid}-app-roles-abcdef`);
    fs.mkdirSync(dead, { recursive: true });
    fs.mkdirSync(live);
    fs.symlinkSync(path.join(stackDir, 'terraform.tfstate'), path.join(dead, 'terraform.tfstate'));
    expect(await runEngine(engine, ['plan'], stackDir, run.env, io)).toBe(0);
    expect(fs.readdirSync(runsOf(outdir))).toEqual([path.basename(live)]);
    // Links only: what they pointed to stays.
    expect(fs.existsSync(path.join(stackDir, 'terraform.tfstate'))).toBe(true);
  });
});
