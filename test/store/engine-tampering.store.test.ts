/**
 * Issue 36 on a real store, on every engine this machine has (test/support/store/engine-matrix.ts):
 * what the guards review is what the engine runs. The engine's environment (`TF_CLI_ARGS*`,
 * `TF_WORKSPACE`, `TF_DATA_DIR`, a CLI configuration with `dev_overrides`) never reaches the engine
 * (issue 45: the environment is built from an allowlist; these were refusals under issue 36, now
 * drops named on one line, the command runs as if they were unset); a file in the stack
 * directory nobody reviewed (an override adding "root" to a role's policies) and a hand-edited
 * `retired-own-grants.json` (an application's role and policy, its seal rewritten to match) are each
 * refused, exit 4, before the engine runs: the AppRole mount, every role and its policies, the Role
 * ID and a Secret ID issued before are all as they were.
 *
 * Issue 45, a hermetic engine run: a fake provider binary (a script that leaves a marker file and
 * fails) is offered through `dev_overrides` in a CLI configuration whose key is written
 * `"dev\u005foverrides"` (JSON and HCL) named by TF_CLI_CONFIG_FILE, by the older TERRAFORM_CONFIG,
 * and in ~/.terraformrc / ~/.tofurc; a `#team_override.tf.json` adding "root" to a role's policies
 * sits in the stack directory. Each is first shown to work on the engine run directly (the marker
 * appears, the plan changes); through `tf --refuse-replace` the apply changes nothing, the marker
 * never appears, the store is as it was, and the one dropped-variables line names what was not
 * passed (the override file: refused, exit 4, before the engine runs). One applied platform per engine; each case
 * is refused before any plan, so it costs no engine run (but the retired stack's `init`). The
 * argument forms of the guard matrix (destroy, replace, taint, state rm/mv/push/replace-provider,
 * import, workspace delete, -state, -state-out, -chdir, unknown options, test) are refused too, with
 * the state's addresses and the store as they were. The engine's backend record in `.terraform/`
 * edited to another state file (its hash kept, so both engines use the record's path and not the
 * block's) plans every object as new on the engine directly, and is refused through `tf` (plan,
 * apply, init), naming the attribute and never its value.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sealBookkeeping } from '../../lib/engine/bookkeeping-seal';
import { readDeclaredObjects } from '../../lib/reconcile/declared-object';
import { RETIRED_OWN_GRANTS_FILE } from '../../lib/reconcile/retired-stack-grants';
import { MOVES_FILE } from '../../lib/reconcile/stack-moves';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { runStoreCli } from '../support/store/store-cli';
import { forEachEngine } from '../support/store/engine-matrix';
import { runEngine } from '../support/store/engine';
import { toolchain } from '../support/store/toolchain-env';

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

forEachEngine('issue 36: the engine runs only what the guards reviewed (environment, stack directory, bookkeeping)', (engine) => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let roleId: string;
  let secretId: string;
  let roles: string[];
  let tokenPolicies: string[];
  let roleAddress: string;
  let policyAddress: string;

  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken, env });
  const tf = (stack: string, args: string[], env: NodeJS.ProcessEnv = {}) => cli(['tf', stack, '--engine', engine.binary, ...args], env);

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'engine-tampering');
    fixture.engineBinary = engine.binary;
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem));
    for (const stack of fixture.stacks) {
      const init = await tf(stack, ['--', 'init', '-input=false']);
      if (init.code !== 0) throw new Error(`${engine.label} init ${stack}: ${init.stdout}\n${init.stderr}`);
      const applied = await tf(stack, ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
      if (applied.code !== 0) throw new Error(`${engine.label} apply ${stack}: ${applied.stdout}\n${applied.stderr}`);
    }
    const declared = readDeclaredObjects(path.join(fixture.dir, 'cdktf.out'), 'app-roles');
    roleAddress = declared.find((o) => o.kind === 'approle-role' && o.name === 'orchestrator-dev')!.address;
    policyAddress = declared.find((o) => o.kind === 'policy' && o.name === 'orchestrator-dev')!.address;
    roleId = (await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id;
    secretId = (await ok(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
    roles = (await ok(store, 'GET', 'auth/approle/role?list=true')).data.keys.sort();
    tokenPolicies = (await ok(store, 'GET', 'auth/approle/role/orchestrator-dev')).data.token_policies;
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  /** The AppRole mount, every role with its policies, the Role ID, and the Secret ID issued before: all as they were. */
  async function expectStoreUnchanged(): Promise<void> {
    expect(roles.length).toBeGreaterThan(1);
    expect(Object.keys((await ok(store, 'GET', 'sys/auth')).data ?? {})).toContain('approle/');
    expect((await ok(store, 'GET', 'auth/approle/role?list=true')).data.keys.sort()).toEqual(roles);
    expect((await ok(store, 'GET', 'auth/approle/role/orchestrator-dev')).data.token_policies).toEqual(tokenPolicies);
    expect(tokenPolicies).not.toContain('root');
    expect((await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id).toBe(roleId);
    expect((await appRoleLogin(store, roleId, secretId)).status).toBe(200);
  }

  it(engine.title('engine arguments from the environment never reach the engine, guarded or not: dropped, named on one line, nothing destroyed or replaced; the store is unchanged'), async () => {
    const cases: Array<[string, string[], NodeJS.ProcessEnv]> = [
      ['guarded apply, TF_CLI_ARGS_apply destroying', ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], { TF_CLI_ARGS_apply: '-destroy -auto-approve' }],
      ['guarded apply, TF_CLI_ARGS_apply replacing a role', ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], { TF_CLI_ARGS_apply: `-replace=${roleAddress}` }],
      ['apply without the guard, TF_CLI_ARGS=-destroy', ['--', 'apply', '-auto-approve', '-input=false'], { TF_CLI_ARGS: '-destroy' }],
      ['apply without the guard, TF_CLI_ARGS_apply=-destroy', ['--', 'apply', '-auto-approve', '-input=false'], { TF_CLI_ARGS_apply: '-destroy' }],
      ['plan -out without the guard, TF_CLI_ARGS_plan=-destroy', ['--', 'plan', '-input=false', '-out=destroy.tfplan'], { TF_CLI_ARGS_plan: '-destroy' }],
      ['another workspace', ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], { TF_WORKSPACE: 'other' }],
      ['another data directory', ['--', 'apply', '-auto-approve', '-input=false'], { TF_DATA_DIR: 'elsewhere' }],
    ];
    for (const [what, args, env] of cases) {
      const r = await tf('app-roles', args, env);
      const name = Object.keys(env)[0];
      const dropped = r.stderr.split('\n').filter((l) => l.includes('not passed to the engine'));
      expect({ what, code: r.code, dropped: dropped.length, names: (dropped[0] ?? '').includes(` ${name}`), engineLine: r.stderr.includes('secretstore-iac tf: engine ') }).toEqual({ what, code: 0, dropped: 1, names: true, engineLine: true });
      expect(r.stdout).not.toMatch(/Destroy complete|[1-9]\d* destroyed|[1-9]\d* to destroy/);
      expect(r.stdout).toMatch(/No changes|Apply complete! Resources: 0 added, 0 changed, 0 destroyed/);
    }
    // The plan saved with TF_CLI_ARGS_plan=-destroy dropped is an ordinary one: no change.
    fs.rmSync(path.join(fixture.stackDir('app-roles'), 'destroy.tfplan'), { force: true });
    expect(fs.existsSync(path.join(fixture.stackDir('app-roles'), 'elsewhere'))).toBe(false);
    await expectStoreUnchanged();
  });

  it(engine.title('the guard matrix through arguments: every subcommand and flag that can destroy, replace, retarget or move state is refused (exit 4) before the engine runs, or planned with it and refused; the state and the store are unchanged'), async () => {
    const stateBefore = (await fixture.engine('app-roles', ['state', 'list'])).stdout.split('\n').filter(Boolean).sort();
    expect(stateBefore).toContain(roleAddress);
    const [type] = roleAddress.split('.');
    const cases: Array<[string, string[]]> = [
      ['apply -destroy (planned with it)', ['apply', '-destroy', '-auto-approve', '-input=false']],
      ['apply -replace (planned with it)', ['apply', `-replace=${roleAddress}`, '-auto-approve', '-input=false']],
      ['destroy (planned as a destroy)', ['destroy', '-auto-approve', '-input=false']],
      ['plan -destroy -out (the saved plan checked)', ['plan', '-destroy', '-input=false', '-out=matrix.tfplan']],
      ['taint', ['taint', roleAddress]],
      ['state rm', ['state', 'rm', roleAddress]],
      ['state mv to an address not declared', ['state', 'mv', roleAddress, `${type}.elsewhere`]],
      ['state push', ['state', 'push', 'other.tfstate']],
      ['state replace-provider', ['state', 'replace-provider', '-auto-approve', 'hashicorp/vault', 'example/vault']],
      ['import', ['import', roleAddress, 'auth/approle/role/orchestrator-dev']],
      ['workspace delete', ['workspace', 'delete', 'default']],
      ['another state file (-state)', ['apply', '-state=other.tfstate', '-auto-approve', '-input=false']],
      ['another state output (-state-out)', ['apply', '-state-out=other.tfstate', '-auto-approve', '-input=false']],
      ['another directory (-chdir)', ['-chdir=..', 'apply', '-auto-approve', '-input=false']],
      ['an option the guard does not know', ['apply', '-no-such-option', '-auto-approve', '-input=false']],
      ['test (runs its own applies)', ['test']],
    ];
    for (const [what, args] of cases) {
      const r = await tf('app-roles', ['--refuse-replace', '--', ...args]);
      expect({ what, code: r.code }).toEqual({ what, code: 4 });
      expect({ what, out: /Apply complete|Destroy complete|Saved the plan|Moved|Removed|Import successful|has been marked as tainted/.test(r.stdout) }).toEqual({ what, out: false });
    }
    expect(fs.existsSync(path.join(fixture.stackDir('app-roles'), 'matrix.tfplan'))).toBe(false);
    expect((await fixture.engine('app-roles', ['state', 'list'])).stdout.split('\n').filter(Boolean).sort()).toEqual(stateBefore);
    await expectStoreUnchanged();
  });

  it(engine.title('a CLI configuration with dev_overrides (another provider binary) is not read: TF_CLI_CONFIG_FILE is dropped, named, and the apply changes nothing'), async () => {
    const config = path.join(fixture.dir, 'dev.tfrc');
    fs.writeFileSync(config, `provider_installation {\n  dev_overrides {\n    "hashicorp/vault" = "${fixture.dir}"\n  }\n  direct {}\n}\n`);
    const r = await tf('app-roles', ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], { TF_CLI_CONFIG_FILE: config });
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.includes('not passed to the engine') && l.includes(' TF_CLI_CONFIG_FILE'))).toHaveLength(1);
    expect(r.stdout).toMatch(/No changes|Apply complete! Resources: 0 added, 0 changed, 0 destroyed/);
    await expectStoreUnchanged();
  });

  // Issue 45: `#team_override.tf.json` (a name starting with `#` but not ending with it) is loaded by the engines and was skipped by issue 36's guard.
  it.each(['evil_override.tf.json', '#team_override.tf.json'])(engine.title('an override file %j in the stack directory ("root" added to a role\'s token_policies) is refused (exit 4), guarded or not, before the engine runs; the engine itself would apply it'), async (name) => {
    const stackDir = fixture.stackDir('app-roles');
    const override = path.join(stackDir, name);
    const [type, id] = roleAddress.split('.');
    fs.writeFileSync(override, JSON.stringify({ resource: { [type]: { [id]: { token_policies: [...tokenPolicies, 'root'] } } } }));
    try {
      // The engine run directly loads it: a change it would apply (exit 2 with -detailed-exitcode).
      const direct = await fixture.engine('app-roles', ['plan', '-input=false', '-lock=false', '-detailed-exitcode'], [0, 2]);
      expect(direct.code).toBe(2);
      for (const own of [['--refuse-replace'], []]) {
        const r = await tf('app-roles', [...own, '--', 'apply', '-auto-approve', '-input=false']);
        expect({ own, code: r.code, engineLine: r.stderr.includes('secretstore-iac tf: engine ') }).toEqual({ own, code: 4, engineLine: false });
        expect(r.stderr).toContain(`${JSON.stringify(name)}: neither the synthesis, secretstore-iac nor the engine wrote it`);
      }
    } finally {
      fs.rmSync(override, { force: true });
    }
    await expectStoreUnchanged();
    // Removed, the stack plans no change through the tool.
    const plan = await tf('app-roles', ['--refuse-replace', '--', 'plan', '-input=false', '-detailed-exitcode']);
    expect({ code: plan.code, stderr: plan.code === 0 ? '' : plan.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it(engine.title('a hand-edited retired-own-grants.json naming an application\'s role and policy is refused (exit 4), edited alone or with its seal; nothing destroyed'), async () => {
    // A retired stack's directory as moves writes it (only its moves file: the backend of app-roles'
    // state, no resource), in an output whose HEAD declares none of app-roles' objects any more:
    // every destroy of its plan is a removal, and the record would let them through unapproved.
    const outdir = path.join(fixture.dir, 'retired-out');
    const stackDir = path.join(outdir, 'stacks', 'app-roles-retired');
    fs.mkdirSync(stackDir, { recursive: true });
    const appRoles = fixture.stackJson('app-roles');
    const statePath = path.resolve(fixture.stackDir('app-roles'), appRoles.terraform.backend.local.path);
    expect(fs.existsSync(statePath)).toBe(true);
    const settings = { terraform: { ...appRoles.terraform, backend: { local: { path: statePath } } }, provider: appRoles.provider };
    // HEAD: one stack that declares nothing, with the settings the retired stack's moves file carries
    // (a retired stack's terraform and provider blocks are checked against HEAD's stacks, issue 45).
    fs.mkdirSync(path.join(outdir, 'stacks', 'x-head'), { recursive: true });
    fs.writeFileSync(path.join(outdir, 'stacks', 'x-head', 'cdk.tf.json'), JSON.stringify(settings));
    fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ version: 'test', stacks: { 'x-head': { name: 'x-head', synthesizedStackPath: 'stacks/x-head/cdk.tf.json', workingDirectory: 'stacks/x-head' } } }));
    const moves = `${JSON.stringify(settings, null, 2)}\n`;
    fs.writeFileSync(path.join(stackDir, MOVES_FILE), moves);
    const grants = [
      { address: roleAddress, storePath: 'auth/approle/role/orchestrator-dev', role: 'secretstore-iac-pipeline' },
      { address: policyAddress, storePath: 'sys/policies/acl/orchestrator-dev', role: 'orchestrator-dev' },
    ];
    const record = `${JSON.stringify({ grants }, null, 2)}\n`;
    fs.writeFileSync(path.join(stackDir, RETIRED_OWN_GRANTS_FILE), record);
    // The moves file sealed as moves seals it; the record edited afterwards, its seal not: refused first.
    sealBookkeeping(stackDir, { [MOVES_FILE]: moves, [RETIRED_OWN_GRANTS_FILE]: '{"grants": []}\n' }, true);
    const tfRetired = (args: string[]) => tf('app-roles-retired', ['--outdir', outdir, ...args]);
    const naive = await tfRetired(['--refuse-replace', '--', 'init', '-input=false']);
    expect(naive.code).toBe(4);
    expect(naive.stderr).toContain(`${RETIRED_OWN_GRANTS_FILE}: changed since \`secretstore-iac moves\` wrote it`);
    // The seal rewritten with the record: the record itself is checked against HEAD's synthesis.
    sealBookkeeping(stackDir, { [RETIRED_OWN_GRANTS_FILE]: record }, true);
    const init = await tfRetired(['--', 'init', '-input=false']);
    expect({ code: init.code, stderr: init.code === 0 ? '' : init.stderr }).toEqual({ code: 0, stderr: '' });
    // Narrowed to the application's role and policy, the plan destroys exactly what the record names:
    // before issue 36 both were destroyed without approval, "pipeline grants".
    const targets = [`-target=${roleAddress}`, `-target=${policyAddress}`];
    for (const args of [['--', 'apply', ...targets, '-auto-approve', '-input=false'], ['--', 'plan', ...targets, '-input=false', '-out=retired.tfplan']]) {
      const r = await tfRetired(['--refuse-replace', ...args]);
      expect({ args, code: r.code }).toEqual({ args, code: 4 });
      expect(r.stderr).toContain(`app-roles-retired: nothing applied: its ${RETIRED_OWN_GRANTS_FILE} records what is not a configuration pipeline role's own grant in app-roles-retired by HEAD's synthesis`);
      expect(r.stderr).toContain(`"storePath": "auth/approle/role/orchestrator-dev"`);
      expect(r.stderr).not.toMatch(/pipeline grants? of this retired stack destroyed without approval/);
    }
    expect(fs.existsSync(path.join(stackDir, 'retired.tfplan'))).toBe(false);
    await expectStoreUnchanged();
  });
  describe('issue 45: a hermetic engine run: the configuration inputs that got through the denylist of issue 36 change nothing tf applies', () => {
  let providerDir: string;
  let marker: string;

  beforeAll(() => {
    // The attacker's provider: leaves a marker (it would have received the token) and fails.
    providerDir = path.join(fixture.dir, 'evil-provider');
    marker = path.join(fixture.dir, 'evil-provider-ran');
    fs.mkdirSync(providerDir);
    fs.writeFileSync(path.join(providerDir, 'terraform-provider-vault'), `#!/bin/sh\necho "$VAULT_ADDR" >> ${marker}\nexit 1\n`, { mode: 0o755 });
  });

    const write = (name: string, text: string): string => {
      const file = path.join(fixture.dir, name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      return file;
    };
    // HCL 1's JSON form: each block a list of objects (the object form is "Invalid provider_installation method block").
    const jsonConfig = () => write('evil.tfrc.json', `{"provider_installation": [{"dev\\u005foverrides": [{"hashicorp/vault": ${JSON.stringify(providerDir)}}], "direct": [{}]}]}\n`);
    const hclConfig = (name: string) => write(name, `provider_installation {\n  "dev\\u005foverrides" {\n    "hashicorp/vault" = ${JSON.stringify(providerDir)}\n  }\n  direct {}\n}\n`);

    /** The cases: the caller's environment for `tf`, and the one that makes the engine run directly use the fake provider. */
    const cases = (): Array<{ what: string; env: NodeJS.ProcessEnv; direct: Record<string, string | undefined>; named: string[] }> => {
      const home = path.join(fixture.dir, 'evil-home');
      const rc = hclConfig(path.join('evil-home', '.terraformrc'));
      fs.copyFileSync(rc, path.join(home, '.tofurc'));
      const hcl = hclConfig('evil.tfrc');
      const json = jsonConfig();
      return [
        { what: 'TF_CLI_CONFIG_FILE, JSON, "dev\\u005foverrides"', env: { TF_CLI_CONFIG_FILE: json }, direct: { TF_CLI_CONFIG_FILE: json }, named: ['TF_CLI_CONFIG_FILE'] },
        { what: 'TF_CLI_CONFIG_FILE, HCL, "dev\\u005foverrides"', env: { TF_CLI_CONFIG_FILE: hcl }, direct: { TF_CLI_CONFIG_FILE: hcl }, named: ['TF_CLI_CONFIG_FILE'] },
        { what: 'TERRAFORM_CONFIG, TF_CLI_CONFIG_FILE unset', env: { TF_CLI_CONFIG_FILE: undefined, TERRAFORM_CONFIG: hcl }, direct: { TF_CLI_CONFIG_FILE: undefined, TERRAFORM_CONFIG: hcl }, named: ['TERRAFORM_CONFIG'] },
        // The toolchain's mirror is named explicitly: the caller's HOME is the attacker's.
        { what: '~/.terraformrc and ~/.tofurc with dev_overrides', env: { TF_CLI_CONFIG_FILE: undefined, HOME: home, SECRETSTORE_IAC_CACHE: toolchain().cacheDir }, direct: { TF_CLI_CONFIG_FILE: undefined, HOME: home }, named: [] },
      ];
    };

    it(engine.title('each CLI configuration attack works on the engine run directly: it runs the fake provider'), async () => {
      for (const c of cases()) {
        fs.rmSync(marker, { force: true });
        const direct = await runEngine(fixture.stackDir('app-roles'), ['plan', '-input=false', '-lock=false'], { store, env: c.direct, binary: engine.binary, allowCodes: [0, 1] });
        expect({ what: c.what, ran: fs.existsSync(marker), code: direct.code }).toEqual({ what: c.what, ran: true, code: 1 });
      }
      fs.rmSync(marker, { force: true });
    });

    it(engine.title('through tf --refuse-replace none changes what is applied: the fake provider never runs, the store is as it was, the dropped line names the variables'), async () => {
      for (const c of cases()) {
        fs.rmSync(marker, { force: true });
        const r = await tf('app-roles', ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], c.env);
        expect({ what: c.what, code: r.code, ran: fs.existsSync(marker) }).toEqual({ what: c.what, code: 0, ran: false });
        expect(r.stdout).toMatch(/Apply complete! Resources: 0 added, 0 changed, 0 destroyed|No changes/);
        const dropped = r.stderr.split('\n').filter((l) => l.includes('not passed to the engine'));
        expect(dropped.length).toBeLessThanOrEqual(1);
        for (const name of c.named) expect({ what: c.what, name, named: (dropped[0] ?? '').includes(` ${name}`) }).toEqual({ what: c.what, name, named: true });
        expect(r.stderr).toContain(`secretstore-iac tf: engine ${engine.binary} (`);
        expect(r.stderr).toContain(`; --engine; providers from the mirror ${path.join(toolchain().cacheDir, 'provider-mirror')}; configuration: `);
        expect(r.stderr).not.toContain(providerDir);
      }
      await expectStoreUnchanged();
    });
  });

  describe('issue 45: the engine runs in a working directory laid fresh from the stack directory (lib/engine/engine-working-directory.ts)', () => {
    it(engine.title('init from no .terraform/ and a plan saved under a bare -out= name come back into the stack directory; the plan read the state at ../../../; nothing is left beside stacks/'), async () => {
      const stackDir = fixture.stackDir('app-roles');
      const runs = path.join(fixture.dir, 'cdktf.out', '.secretstore-iac-engine-runs');
      // The local backend's relative path, from the stack directory: the state the suite applied.
      const state = path.join(stackDir, '..', '..', '..', 'terraform.app-roles.tfstate');
      expect(fs.existsSync(state)).toBe(true);
      // The engine makes .terraform/ in its fresh directory: moved back before tf checks the installed providers there.
      fs.rmSync(path.join(stackDir, '.terraform'), { recursive: true, force: true });
      const init = await tf('app-roles', ['--', 'init', '-input=false']);
      expect({ code: init.code, stderr: init.code === 0 ? '' : init.stderr }).toEqual({ code: 0, stderr: '' });
      expect(fs.lstatSync(path.join(stackDir, '.terraform')).isDirectory()).toBe(true);
      expect(fs.readdirSync(path.join(stackDir, '.terraform', 'providers')).length).toBeGreaterThan(0);
      expect(fs.existsSync(path.join(stackDir, '.terraform.lock.hcl'))).toBe(true);
      // Planned through .terraform/ linked in: no change, so it read the applied state (another state would plan every object as new, which --refuse-replace refuses).
      fs.rmSync(path.join(stackDir, 'fresh.tfplan'), { force: true });
      const planned = await tf('app-roles', ['--refuse-replace', '--', 'plan', '-input=false', '-out=fresh.tfplan']);
      expect({ code: planned.code, stderr: planned.code === 0 ? '' : planned.stderr }).toEqual({ code: 0, stderr: '' });
      expect(planned.stdout).toContain('No changes.');
      // The saved plan is the stack directory's: the engine run there directly reads it.
      const shown = JSON.parse((await fixture.engine('app-roles', ['show', '-json', 'fresh.tfplan'])).stdout) as { resource_changes?: Array<{ change: { actions: string[] } }> };
      expect((shown.resource_changes ?? []).filter((c) => c.change.actions.join() !== 'no-op')).toEqual([]);
      // And applied from there by name.
      const applied = await tf('app-roles', ['--refuse-replace', '--', 'apply', '-input=false', 'fresh.tfplan']);
      expect({ code: applied.code, stderr: applied.code === 0 ? '' : applied.stderr }).toEqual({ code: 0, stderr: '' });
      expect(applied.stdout).toMatch(/Apply complete! Resources: 0 added, 0 changed, 0 destroyed/);
      expect(fs.existsSync(runs)).toBe(false);
      expect(fs.readdirSync(path.join(fixture.dir, 'cdktf.out')).filter((n) => n.startsWith('.secretstore-iac'))).toEqual([]);
      fs.rmSync(path.join(stackDir, 'fresh.tfplan'), { force: true });
      await expectStoreUnchanged();
    });

    it(engine.title('a backend record in .terraform/ giving the declared backend another state file (its hash kept, as `init -backend-config` leaves it) works on the engine run directly; through tf --refuse-replace it is refused (exit 4) naming the attribute, and the store is unchanged; the fix it names (remove .terraform/, init) converges'), async () => {
      const stackDir = fixture.stackDir('app-roles');
      const recordFile = path.join(stackDir, '.terraform', 'terraform.tfstate');
      const original = fs.readFileSync(recordFile, 'utf8');
      const record = JSON.parse(original);
      expect(record.backend.type).toBe('local');
      const elsewhere = path.join(fixture.dir, 'elsewhere.tfstate');
      record.backend.config.path = elsewhere;
      fs.writeFileSync(recordFile, JSON.stringify(record));
      try {
        // The engine itself uses the record, not the block (same hash): an empty state, so every object is new.
        const direct = await fixture.engine('app-roles', ['plan', '-input=false', '-lock=false']);
        expect({ code: direct.code, plansCreates: /Plan: [1-9]\d* to add/.test(direct.stdout) }).toEqual({ code: 0, plansCreates: true });
        fs.rmSync(elsewhere, { force: true });
        for (const args of [['--refuse-replace', '--', 'plan', '-input=false'], ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], ['--', 'init', '-input=false']]) {
          const r = await tf('app-roles', args);
          expect({ args, code: r.code, named: r.stderr.includes('.terraform/terraform.tfstate (the engine\'s backend record) gives the "local" backend `path` other than cdk.tf.json declares'), value: r.stderr.includes(elsewhere) }).toEqual({ args, code: 4, named: true, value: false });
        }
        expect(fs.existsSync(elsewhere)).toBe(false);
        // The fix, as the refusal names it: remove .terraform/ and run `tf STACK -- init`.
        fs.rmSync(path.join(stackDir, '.terraform'), { recursive: true, force: true });
        const init = await tf('app-roles', ['--', 'init', '-input=false']);
        expect({ code: init.code, stderr: init.code === 0 ? '' : init.stderr }).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(fs.readFileSync(recordFile, 'utf8')).backend.config).toEqual(JSON.parse(original).backend.config);
      } finally {
        // Whatever failed above: the later tests get the record the suite's init wrote.
        const left = fs.existsSync(recordFile) ? fs.readFileSync(recordFile, 'utf8') : '';
        if (left === '' || left.includes(elsewhere)) fs.writeFileSync(recordFile, original);
      }
      await expectStoreUnchanged();
      const again = await tf('app-roles', ['--refuse-replace', '--', 'plan', '-input=false']);
      expect({ code: again.code, stderr: again.code === 0 ? '' : again.stderr, noChanges: again.stdout.includes('No changes.') }).toEqual({ code: 0, stderr: '', noChanges: true });
    });
  });
});
