/**
 * Issue 36 on a real store, on every engine this machine has (test/support/store/engine-matrix.ts):
 * what the guards review is what the engine runs. The engine's environment (`TF_CLI_ARGS*`,
 * `TF_WORKSPACE`, `TF_DATA_DIR`, a CLI configuration with `dev_overrides`), a file in the stack
 * directory nobody reviewed (an override adding "root" to a role's policies) and a hand-edited
 * `retired-own-grants.json` (an application's role and policy, its seal rewritten to match) are each
 * refused, exit 4, before the engine runs: the AppRole mount, every role and its policies, the Role
 * ID and a Secret ID issued before are all as they were. One applied platform per engine; each case
 * is refused before any plan, so it costs no engine run (but the retired stack's `init`). The
 * argument forms of the guard matrix (destroy, replace, taint, state rm/mv/push/replace-provider,
 * import, workspace delete, -state, -state-out, -chdir, unknown options, test) are refused too, with
 * the state's addresses and the store as they were.
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
  }, 300_000);

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

  it(engine.title('engine arguments from the environment are refused (exit 4), guarded or not, naming each variable; the store is unchanged'), async () => {
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
      expect({ what, code: r.code, names: r.stderr.includes(`  ${name}: `), engineLine: r.stderr.includes('secretstore-iac tf: engine ') }).toEqual({ what, code: 4, names: true, engineLine: false });
      expect(r.stdout).not.toMatch(/Apply complete|Destroy complete|Saved the plan/);
    }
    expect(fs.existsSync(path.join(fixture.stackDir('app-roles'), 'destroy.tfplan'))).toBe(false);
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

  it(engine.title('a CLI configuration with dev_overrides (another provider binary) is refused (exit 4), naming the file'), async () => {
    const config = path.join(fixture.dir, 'dev.tfrc');
    fs.writeFileSync(config, `provider_installation {\n  dev_overrides {\n    "hashicorp/vault" = "${fixture.dir}"\n  }\n  direct {}\n}\n`);
    const r = await tf('app-roles', ['--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], { TF_CLI_CONFIG_FILE: config });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`${config} (CLI configuration) has \`dev_overrides\``);
    await expectStoreUnchanged();
  });

  it(engine.title('an override file in the stack directory ("root" added to a role\'s token_policies) is refused (exit 4), guarded or not; the engine itself would apply it'), async () => {
    const stackDir = fixture.stackDir('app-roles');
    const override = path.join(stackDir, 'evil_override.tf.json');
    const [type, id] = roleAddress.split('.');
    fs.writeFileSync(override, JSON.stringify({ resource: { [type]: { [id]: { token_policies: [...tokenPolicies, 'root'] } } } }));
    try {
      // The engine run directly loads it: a change it would apply (exit 2 with -detailed-exitcode).
      const direct = await fixture.engine('app-roles', ['plan', '-input=false', '-lock=false', '-detailed-exitcode'], [0, 2]);
      expect(direct.code).toBe(2);
      for (const own of [['--refuse-replace'], []]) {
        const r = await tf('app-roles', [...own, '--', 'apply', '-auto-approve', '-input=false']);
        expect({ own, code: r.code }).toEqual({ own, code: 4 });
        expect(r.stderr).toContain('evil_override.tf.json: the engine reads it (configuration, variables or tests), but neither the synthesis nor secretstore-iac wrote it');
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
    fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ version: 'test', stacks: {} }));
    const appRoles = fixture.stackJson('app-roles');
    const statePath = path.resolve(fixture.stackDir('app-roles'), appRoles.terraform.backend.local.path);
    expect(fs.existsSync(statePath)).toBe(true);
    const moves = `${JSON.stringify({ terraform: { ...appRoles.terraform, backend: { local: { path: statePath } } }, provider: appRoles.provider }, null, 2)}\n`;
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
});
