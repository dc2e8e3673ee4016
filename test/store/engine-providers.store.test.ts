/**
 * Issue 45 on a real store, on every engine this machine has (test/support/store/engine-matrix.ts),
 * with the toolchain's provider mirror: the provider an engine run starts (with the store token) is
 * the build the tool installed. A swapped `hashicorp/vault` provider (a script that appends to a
 * marker file whenever anything starts it) is offered through each way the issue found:
 * `providers lock -fs-mirror`, `init -plugin-dir`, a prepared plugin cache and an edited committed
 * lock (`locks/<stack>/`). Each is refused, exit 4, and the swapped provider never runs: the marker
 * file stays absent and the store keeps its roles. `apply -lock=false` is refused, guarded or not.
 * The ordinary flows (init, plan, a guarded apply; the pipeline's init, `plan -out`, `apply PLANFILE`)
 * still pass, and the `h1:` hash the tool computes for the installed package is the one the engine
 * wrote into the lock.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageHashV1 } from '../../lib/engine/provider-package-hash';
import { readProviderLock } from '../../lib/engine/installed-providers';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { runStoreCli } from '../support/store/store-cli';
import { forEachEngine } from '../support/store/engine-matrix';
import { toolchain } from '../support/store/toolchain-env';

async function roleList(store: RunningStore): Promise<string[]> {
  const res = await storeRequest(store, 'GET', 'auth/approle/role?list=true');
  if (res.status !== 200) throw new Error(`LIST auth/approle/role: HTTP ${res.status}`);
  return (res.body.data.keys as string[]).sort();
}

forEachEngine('issue 45: the providers an engine run starts are the builds the tool installed', (engine) => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let roles: string[];
  let marker: string;
  let evil: string;
  let address: string;
  let goodLock: string;
  let goodHash: string;
  let swappedHash: string;

  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken, env });
  const tf = (args: string[], env: NodeJS.ProcessEnv = {}) => cli(['tf', 'app-roles', '--engine', engine.binary, ...args], env);
  const stackDir = () => fixture.stackDir('app-roles');
  const lockFile = () => path.join(stackDir(), '.terraform.lock.hcl');
  const ran = () => fs.existsSync(marker);

  /** The stack as the tool's own init leaves it: providers from the mirror, the lock from them. */
  async function reinit(): Promise<void> {
    fs.rmSync(path.join(stackDir(), '.terraform', 'providers'), { recursive: true, force: true });
    fs.rmSync(path.join(stackDir(), '.terraform', 'plugin_path'), { force: true });
    fs.writeFileSync(lockFile(), goodLock);
    const init = await tf(['--', 'init', '-input=false']);
    if (init.code !== 0) throw new Error(`init: ${init.stdout}\n${init.stderr}`);
  }

  /** The swapped provider has not run, the store keeps its roles, and the stack plans no change. */
  async function expectNothingRan(): Promise<void> {
    expect({ swappedProviderRan: ran() }).toEqual({ swappedProviderRan: false });
    expect(await roleList(store)).toEqual(roles);
  }

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'engine-providers');
    fixture.engineBinary = engine.binary;
    // The direct engine runs below (the attacker's, outside the tool) get a plugin cache of their own:
    // never the toolchain's shared one.
    fixture.engineEnv = { TF_PLUGIN_CACHE_DIR: path.join(fixture.dir, 'attacker-plugin-cache') };
    fs.mkdirSync(fixture.engineEnv.TF_PLUGIN_CACHE_DIR, { recursive: true });
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem));
    for (const stack of fixture.stacks) {
      const init = await cli(['tf', stack, '--engine', engine.binary, '--', 'init', '-input=false']);
      if (init.code !== 0) throw new Error(`${engine.label} init ${stack}: ${init.stdout}\n${init.stderr}`);
      const applied = await cli(['tf', stack, '--engine', engine.binary, '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
      if (applied.code !== 0) throw new Error(`${engine.label} apply ${stack}: ${applied.stdout}\n${applied.stderr}`);
    }
    roles = await roleList(store);
    goodLock = fs.readFileSync(lockFile(), 'utf8');
    const [build] = readProviderLock(goodLock).builds;
    address = build.address;
    goodHash = build.hashes[0];
    // The swapped build: a provider binary that only proves it was started.
    marker = path.join(fixture.dir, 'swapped-provider-ran');
    evil = path.join(fixture.dir, 'evil-mirror');
    const dir = path.join(evil, address, build.version, 'linux_amd64');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `terraform-provider-vault_v${build.version}`), `#!/bin/sh\necho "started $*" >> ${marker}\nexit 1\n`, { mode: 0o755 });
    swappedHash = packageHashV1(dir);
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it(engine.title('the h1: hash the tool computes for the installed package and the mirror\'s is the one the engine wrote into the lock'), () => {
    const installed = path.join(stackDir(), '.terraform', 'providers', address, readProviderLock(goodLock).builds[0].version, 'linux_amd64');
    const mirrored = path.join(path.dirname(toolchain().cliConfig), 'provider-mirror', address, readProviderLock(goodLock).builds[0].version, 'linux_amd64');
    expect(readProviderLock(goodLock)).toEqual({ builds: [{ address, version: expect.any(String), hashes: [goodHash] }], problems: [] });
    expect(packageHashV1(installed)).toBe(goodHash);
    expect(packageHashV1(mirrored)).toBe(goodHash);
    expect(swappedHash).not.toBe(goodHash);
  });

  it(engine.title('providers lock -fs-mirror with a swapped provider: refused under the guard before the engine runs; run without it, the lock it wrote is not kept; the attack\'s end state (lock rewritten, init -plugin-dir, both by the engine itself) is refused before any plan or apply'), async () => {
    const guarded = await tf(['--refuse-replace', '--', 'providers', 'lock', `-fs-mirror=${evil}`, '-platform=linux_amd64']);
    expect(guarded.code).toBe(4);
    expect(guarded.stderr).toContain('app-roles: nothing run: `providers lock` rewrites the stack\'s provider lock file');
    expect(fs.readFileSync(lockFile(), 'utf8')).toBe(goodLock);
    // A person runs it without the guard: the engine rewrites the lock, the tool puts it back.
    const person = await tf(['--', 'providers', 'lock', `-fs-mirror=${evil}`, '-platform=linux_amd64']);
    expect({ code: person.code, out: person.code === 4 ? '' : `${person.stdout}\n${person.stderr}` }).toEqual({ code: 4, out: '' });
    expect(person.stderr).toContain(`.terraform.lock.hcl lists ${swappedHash}`);
    expect(fs.readFileSync(lockFile(), 'utf8')).toBe(goodLock);
    // The attacker's own engine runs, outside the tool: the lock rewritten to the swapped build and
    // the build installed from the plugin directory.
    fs.rmSync(lockFile());
    await fixture.engine('app-roles', ['providers', 'lock', `-fs-mirror=${evil}`, '-platform=linux_amd64']);
    expect(fs.readFileSync(lockFile(), 'utf8')).toContain(swappedHash);
    await fixture.engine('app-roles', ['init', '-input=false', `-plugin-dir=${evil}`]);
    fs.rmSync(marker, { force: true });
    const attacks = [['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], ['--refuse-replace', '--', 'plan', '-input=false', '-out=attack.tfplan'], ['--', 'plan', '-input=false'], ['--', 'init', '-input=false']];
    // The record `init -plugin-dir` leaves in .terraform/ is refused first (every later init would install from there) ...
    for (const args of attacks) {
      const r = await tf(args);
      expect({ args, code: r.code, pluginPath: r.stderr.includes('.terraform/plugin_path: not what `init` writes from the tool\'s mirror') }).toEqual({ args, code: 4, pluginPath: true });
      expect(r.stdout).not.toMatch(/Apply complete|Saved the plan/);
    }
    // ... and without it, the swapped build it installed.
    fs.rmSync(path.join(stackDir(), '.terraform', 'plugin_path'));
    for (const args of attacks) {
      const r = await tf(args);
      expect({ args, code: r.code }).toEqual({ args, code: 4 });
      expect(r.stderr).toContain(`${address} ${readProviderLock(goodLock).builds[0].version} (linux_amd64): installed .terraform/providers/`);
      expect(r.stderr).toContain(`hashes to ${swappedHash}; expected ${goodHash}`);
      expect(r.stdout).not.toMatch(/Apply complete|Saved the plan/);
    }
    await expectNothingRan();
    await reinit();
  });

  it(engine.title('init -plugin-dir with a swapped provider: refused under the guard; run without it (no lock yet), the build it installed is refused and its lock not kept'), async () => {
    const guarded = await tf(['--refuse-replace', '--', 'init', '-input=false', `-plugin-dir=${evil}`]);
    expect(guarded.code).toBe(4);
    expect(guarded.stderr).toContain('`-plugin-dir=');
    expect(fs.readFileSync(lockFile(), 'utf8')).toBe(goodLock);
    fs.rmSync(lockFile());
    fs.rmSync(path.join(stackDir(), '.terraform', 'providers'), { recursive: true, force: true });
    const person = await tf(['--', 'init', '-input=false', `-plugin-dir=${evil}`]);
    expect({ code: person.code, out: person.code === 4 ? '' : `${person.stdout}\n${person.stderr}` }).toEqual({ code: 4, out: '' });
    expect(person.stderr).toContain('app-roles: the lock it wrote is not kept');
    expect(fs.existsSync(lockFile())).toBe(false);
    const apply = await tf(['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(apply.code).toBe(4);
    await expectNothingRan();
    await reinit();
  });

  it(engine.title('a prepared plugin cache holding the swapped build, with the lock edited to its hash: refused before init runs'), async () => {
    const cache = path.join(fixture.dir, 'prepared-cache');
    fs.cpSync(evil, cache, { recursive: true });
    fs.writeFileSync(lockFile(), goodLock.replace(goodHash, swappedHash));
    const r = await tf(['--', 'init', '-input=false'], { TF_PLUGIN_CACHE_DIR: cache });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`.terraform.lock.hcl lists ${swappedHash}; expected only ${goodHash}`);
    await expectNothingRan();
    await reinit();
  });

  it(engine.title('an edited committed lock (locks/app-roles/, the swapped build\'s hash added): refused before the pipeline\'s init and before a guarded apply'), async () => {
    // A configuration repository: cdktf.json beside the output, the stack's lock committed.
    fs.writeFileSync(path.join(fixture.dir, 'cdktf.json'), '{"app":"true"}');
    const committed = path.join(fixture.dir, 'locks', 'app-roles', '.terraform.lock.hcl');
    fs.mkdirSync(path.dirname(committed), { recursive: true });
    try {
      fs.writeFileSync(committed, goodLock.replace(`"${goodHash}",`, `"${goodHash}",\n    "${swappedHash}",`));
      for (const args of [['--', 'init', '-input=false'], ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']]) {
        const r = await tf(args);
        expect({ args, code: r.code }).toEqual({ args, code: 4 });
        expect(r.stderr).toContain(`.terraform.lock.hcl lists ${swappedHash}; expected only ${goodHash}`);
        expect(r.stderr).toContain('`git checkout -- locks/app-roles` when it was edited');
      }
      await expectNothingRan();
      // The committed lock as init wrote it: the ordinary flow passes.
      fs.writeFileSync(committed, goodLock);
      const plan = await tf(['--refuse-replace', '--', 'plan', '-input=false', '-detailed-exitcode']);
      expect({ code: plan.code, stderr: plan.code === 0 ? '' : plan.stderr }).toEqual({ code: 0, stderr: '' });
    } finally {
      fs.rmSync(path.join(fixture.dir, 'cdktf.json'), { force: true });
      fs.rmSync(path.join(fixture.dir, 'locks'), { recursive: true, force: true });
    }
    await reinit();
  });

  it(engine.title('apply -lock=false is refused (exit 4), guarded or not, naming why; the state and the store are as they were'), async () => {
    fs.rmSync(marker, { force: true });
    for (const own of [['--refuse-replace'], []]) {
      const r = await tf([...own, '--', 'apply', '-lock=false', '-auto-approve', '-input=false']);
      expect({ own, code: r.code }).toEqual({ own, code: 4 });
      expect(r.stderr).toContain('has `-lock=false` (no state lock held');
      expect(r.stdout).not.toMatch(/Apply complete/);
    }
    expect(await roleList(store)).toEqual(roles);
  });

  it(engine.title('the ordinary flows pass: init, plan, a guarded apply; the pipeline\'s init, plan -out and apply of the saved plan'), async () => {
    const steps: string[][] = [
      ['--', 'init', '-input=false'],
      ['--', 'plan', '-input=false', '-lock-timeout=10m', '-detailed-exitcode'],
      ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false', '-lock-timeout=10m'],
      ['--refuse-replace', '--allow-removals', '--', 'plan', '-input=false', '-lock-timeout=10m', `-out=${path.join(fixture.dir, 'app-roles.tfplan')}`],
      ['--refuse-replace', '--', 'apply', '-input=false', '-lock-timeout=10m', path.join(fixture.dir, 'app-roles.tfplan')],
    ];
    for (const args of steps) {
      const r = await tf(args);
      expect({ args, code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ args, code: 0, stderr: '' });
    }
    await expectNothingRan();
  });
});

forEachEngine('issue 45: provider builds checked against the tool\'s mirror on the real engine, with fake builds (no provider compiled)', (engine) => {
  // A toolchain cache of its own (SECRETSTORE_IAC_CACHE) whose mirror holds a "good" build, and a
  // swapped one elsewhere; each build is a script that appends its name to a marker file when the
  // engine starts it (and exits 1: the plan fails, which proves the engine started it).
  let store: RunningStore;
  let root: string;
  let host: string;
  const marker = () => path.join(root, 'started.txt');
  const started = () => (fs.existsSync(marker()) ? fs.readFileSync(marker(), 'utf8').trim().split('\n') : []);
  const build = (base: string, name: string): string => {
    const dir = path.join(base, host, 'hashicorp', 'vault', '5.9.0', 'linux_amd64');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'terraform-provider-vault_v5.9.0'), `#!/bin/sh\necho ${name} >> ${marker()}\nexit 1\n`, { mode: 0o755 });
    return dir;
  };
  let good: string;
  let swapped: string;
  const stackDir = () => path.join(root, 'cdktf.out', 'stacks', 'scratch');
  const tf = (args: string[]) =>
    runStoreCli(['tf', 'scratch', '--engine', engine.binary, ...args], {
      cwd: root,
      addr: store.addr,
      token: store.rootToken,
      env: { SECRETSTORE_IAC_CACHE: path.join(root, 'cache'), TF_CLI_CONFIG_FILE: path.join(root, 'cli.tfrc') },
    });
  const direct = (args: string[]) =>
    spawnSync(engine.binary, args, { cwd: stackDir(), encoding: 'utf8', env: { PATH: process.env.PATH, HOME: root, TF_CLI_CONFIG_FILE: path.join(root, 'cli.tfrc'), CHECKPOINT_DISABLE: '1' } });

  beforeAll(async () => {
    store = await startStore();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-provider-builds-'));
    host = engine.name === 'OpenTofu' ? 'registry.opentofu.org' : 'registry.terraform.io';
    good = build(path.join(root, 'cache', 'provider-mirror'), 'good');
    swapped = build(path.join(root, 'evil'), 'swapped');
    fs.writeFileSync(path.join(root, 'cli.tfrc'), `provider_installation {\n  filesystem_mirror {\n    path = "${path.join(root, 'cache', 'provider-mirror')}"\n  }\n}\n`);
    fs.mkdirSync(stackDir(), { recursive: true });
    fs.writeFileSync(
      path.join(stackDir(), 'cdk.tf.json'),
      JSON.stringify({ terraform: { required_providers: { vault: { source: 'hashicorp/vault', version: '>= 5.6.0, < 6.0.0' } } }, provider: { vault: [{ address: store.addr }] }, data: { vault_generic_secret: { x: { path: 'secret/x' } } } }),
    );
  });

  afterAll(async () => {
    await store?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it(engine.title('init from the mirror: the lock holds exactly the h1: the tool computes; a plan starts the good build'), async () => {
    const init = await tf(['--', 'init', '-input=false']);
    expect({ code: init.code, stderr: init.code === 0 ? '' : init.stderr }).toEqual({ code: 0, stderr: '' });
    expect(readProviderLock(fs.readFileSync(path.join(stackDir(), '.terraform.lock.hcl'), 'utf8')).builds).toEqual([{ address: `${host}/hashicorp/vault`, version: '5.9.0', hashes: [packageHashV1(good)] }]);
    const plan = await tf(['--', 'plan', '-input=false']);
    expect(plan.code).not.toBe(0);
    expect(started()).toContain('good');
    expect(started()).not.toContain('swapped');
  });

  it(engine.title('the lock rewritten by providers lock -fs-mirror and the swapped build installed by init -plugin-dir (the engine\'s own runs): tf refuses before the engine starts it; so does the guard for both commands'), async () => {
    fs.rmSync(marker(), { force: true });
    for (const args of [['providers', 'lock', `-fs-mirror=${path.join(root, 'evil')}`, '-platform=linux_amd64'], ['init', '-input=false', `-plugin-dir=${path.join(root, 'evil')}`]]) {
      const refused = await tf(['--refuse-replace', '--', ...args]);
      expect({ args, code: refused.code }).toEqual({ args, code: 4 });
    }
    fs.rmSync(path.join(stackDir(), '.terraform.lock.hcl'));
    const lock = direct(['providers', 'lock', `-fs-mirror=${path.join(root, 'evil')}`, '-platform=linux_amd64']);
    expect({ code: lock.status, out: lock.status === 0 ? '' : lock.stderr }).toEqual({ code: 0, out: '' });
    const init = direct(['init', '-input=false', `-plugin-dir=${path.join(root, 'evil')}`]);
    expect({ code: init.status, out: init.status === 0 ? '' : init.stderr }).toEqual({ code: 0, out: '' });
    expect(started()).toEqual([]);
    const attacks = [['--', 'plan', '-input=false'], ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], ['--', 'init', '-input=false']];
    // Refused first for the record init -plugin-dir left (.terraform/plugin_path), then, without it, for the swapped build.
    for (const args of attacks) {
      const r = await tf(args);
      expect({ args, code: r.code, pluginPath: r.stderr.includes('.terraform/plugin_path: not what `init` writes from the tool\'s mirror') }).toEqual({ args, code: 4, pluginPath: true });
    }
    fs.rmSync(path.join(stackDir(), '.terraform', 'plugin_path'));
    for (const args of attacks) {
      const r = await tf(args);
      expect({ args, code: r.code }).toEqual({ args, code: 4 });
      expect(r.stderr).toContain(`hashes to ${packageHashV1(swapped)}; expected ${packageHashV1(good)}`);
    }
    expect(started()).toEqual([]);
  });

  it(engine.title('a person\'s unguarded init -plugin-dir of the swapped build: refused after it, the lock it wrote not kept; the fix (remove .terraform, init) restores the good build'), async () => {
    fs.rmSync(path.join(stackDir(), '.terraform'), { recursive: true, force: true });
    fs.rmSync(path.join(stackDir(), '.terraform.lock.hcl'), { force: true });
    const r = await tf(['--', 'init', '-input=false', `-plugin-dir=${path.join(root, 'evil')}`]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('scratch: the lock it wrote is not kept');
    expect(fs.existsSync(path.join(stackDir(), '.terraform.lock.hcl'))).toBe(false);
    expect(started()).toEqual([]);
    fs.rmSync(path.join(stackDir(), '.terraform'), { recursive: true, force: true });
    expect((await tf(['--', 'init', '-input=false'])).code).toBe(0);
    await tf(['--', 'plan', '-input=false']);
    expect(started()).toEqual(['good']);
  });
});
