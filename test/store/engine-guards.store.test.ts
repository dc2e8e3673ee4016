/**
 * Issue 27 on a real store, on every engine this machine has (test/support/store/engine-matrix.ts:
 * the toolchain's OpenTofu, and Terraform where installed, passed with `--engine`): every
 * engine command of `secretstore-iac tf STACK --refuse-replace -- ...` that would destroy goes through
 * the guard. `apply -destroy`, `apply -replace=ROLE` and `destroy` without a saved plan are planned
 * with the operator's own arguments and refused (exit 4): the AppRole mount, the roles, the Role ID
 * and a Secret ID issued before are all still there. Without `--refuse-replace`, `destroy` needs
 * `--allow-destroy`. `import` and `state rm` are refused before the engine runs; the fix `import`'s
 * message names (`adopt`) converges.
 *
 * Then the takeover guard with a token that may write but not read another team's policy (403 on
 * the lookup): the apply is refused naming the missing rule; with the rule granted, the takeover is
 * refused naming `adopt`; adopt, then the apply passes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readDeclaredObjects } from '../../lib/reconcile/declared-object';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { runStoreCli } from '../support/store/store-cli';
import { forEachEngine, openTofu } from '../support/store/engine-matrix';

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

forEachEngine('tf --refuse-replace: nothing is destroyed without a reviewed plan (issue 27)', (engine) => {
  const binary = () => engine.binary;
  let store: RunningStore;
  let fixture: PlatformFixture;
  let roleId: string;
  let secretId: string;
  let roles: string[];
  let roleAddress: string;
  let roleDeclaredAt: string;
  let policyAddress: string;

  const cli = (args: string[], token = store.rootToken) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token });
  const tf = (stack: string, ...args: string[]) => cli(['tf', stack, '--engine', binary(), ...args]);
  const stateList = async (stack: string) => (await tf(stack, '--', 'state', 'list')).stdout.split('\n').filter((l) => /^vault_/.test(l)).sort();

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'engine-guards');
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem));
    for (const stack of fixture.stacks) {
      const init = await tf(stack, '--', 'init', '-input=false');
      if (init.code !== 0) throw new Error(`${engine.label} init ${stack}: ${init.stdout}\n${init.stderr}`);
      const applied = await tf(stack, '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false');
      if (applied.code !== 0) throw new Error(`${engine.label} apply ${stack}: ${applied.stdout}\n${applied.stderr}`);
    }
    const declared = readDeclaredObjects(path.join(fixture.dir, 'cdktf.out'), 'app-roles');
    const role = declared.find((o) => o.kind === 'approle-role' && o.name === 'orchestrator-dev')!;
    roleAddress = role.address;
    roleDeclaredAt = role.declaredAt!;
    policyAddress = declared.find((o) => o.kind === 'policy' && o.name === 'orchestrator-dev')!.address;
    roleId = (await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id;
    secretId = (await ok(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
    roles = (await ok(store, 'GET', 'auth/approle/role?list=true')).data.keys.sort();
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  /** The AppRole mount, every role, the Role ID, and the Secret ID issued before: all as they were. */
  async function expectStoreUnchanged(): Promise<void> {
    expect(roles.length).toBeGreaterThan(1);
    expect((await ok(store, 'GET', 'auth/approle/role?list=true')).data.keys.sort()).toEqual(roles);
    expect((await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id).toBe(roleId);
    expect((await appRoleLogin(store, roleId, secretId)).status).toBe(200);
  }

  it(engine.title(`the stacks were applied through tf --refuse-replace, and a Secret ID issued since logs in`), async () => {
    expect((await tf('app-roles', '--', 'version')).stderr).toContain(`secretstore-iac tf: engine ${binary()}`);
    await expectStoreUnchanged();
  });

  it(engine.title(`apply -destroy without a plan file is planned WITH -destroy and refused (exit 4), naming the mount and every role; the store is unchanged`), async () => {
    const r = await tf('app-roles', '--refuse-replace', '--', 'apply', '-destroy', '-auto-approve', '-input=false');
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/app-roles: nothing applied: the plan would destroy or replace \d+ objects, refused:/);
    expect(r.stderr).toMatch(/vault_auth_backend\.\S+ declared at app-roles\/approle\/backend would be destroyed\. Fix:/);
    expect(r.stderr).toContain(`${roleAddress} declared at ${roleDeclaredAt} would be destroyed. Fix: the destroy mode (\`destroy\`, \`-destroy\`) asked for it`);
    expect(r.stdout).not.toMatch(/Destroy complete|Apply complete/);
    await expectStoreUnchanged();
  });

  it(engine.title(`apply -replace=ROLE is refused (exit 4) naming the replacement; the Role ID and the Secret ID are kept`), async () => {
    const r = await tf('app-roles', '--refuse-replace', '--', 'apply', `-replace=${roleAddress}`, '-auto-approve', '-input=false');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`${roleAddress} declared at ${roleDeclaredAt} would be replaced (destroyed, then created again); replace_by_request. Fix: -replace= asked for it`);
    await expectStoreUnchanged();
  });

  it(engine.title(`destroy (with and without -auto-approve) is refused (exit 4); the store is unchanged`), async () => {
    for (const args of [['destroy', '-auto-approve', '-input=false'], ['destroy', '-input=false']]) {
      const r = await tf('app-roles', '--refuse-replace', '--', ...args);
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('app-roles: nothing applied: the plan would destroy or replace');
    }
    await expectStoreUnchanged();
  });

  it(engine.title(`without --refuse-replace, destroy is refused (exit 4) unless --allow-destroy, listing what the state holds`), async () => {
    const r = await tf('app-roles', '--', 'destroy', '-auto-approve', '-input=false');
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/app-roles: nothing destroyed: `destroy -auto-approve -input=false` destroys every object in the stack's state \(\d+: vault_approle_auth_backend_role\./);
    expect(r.stderr).toContain('run again with --allow-destroy');
    await expectStoreUnchanged();
  });

  it(engine.title(`-target narrows the reviewed plan: an apply of one policy the store lost passes and restores only it`), async () => {
    await ok(store, 'DELETE', 'sys/policies/acl/orchestrator-dev');
    const r = await tf('app-roles', '--refuse-replace', '--', 'apply', `-target=${policyAddress}`, '-auto-approve', '-input=false');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`secretstore-iac tf: reviewed \`plan -target=${policyAddress} -input=false -lock=false\`: nothing destroyed, replaced or taken over`);
    expect(r.stdout).toMatch(/Apply complete! Resources: 0 added, 1 changed, 0 destroyed|Apply complete! Resources: 1 added, 0 changed, 0 destroyed/);
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/orchestrator-dev')).status).toBe(200);
    await expectStoreUnchanged();
  });

  it(engine.title(`state rm and import are refused (exit 4) before the engine runs; the state keeps the role`), async () => {
    const before = await stateList('app-roles');
    expect(before).toContain(roleAddress);
    const rm = await tf('app-roles', '--refuse-replace', '--', 'state', 'rm', roleAddress);
    expect(rm.code).toBe(4);
    expect(rm.stderr).toContain(`app-roles: nothing run: \`state rm\` takes ${roleAddress} out of this stack's state`);
    const imported = await tf('app-roles', '--refuse-replace', '--', 'import', roleAddress, 'auth/approle/role/orchestrator-dev');
    expect(imported.code).toBe(4);
    expect(imported.stderr).toContain('Fix: run `secretstore-iac adopt app-roles`');
    expect(await stateList('app-roles')).toEqual(before);
  });

  it(engine.title(`the role out of state (a person's state rm): import is refused naming adopt; adopt, then the guarded apply, keeps the Role ID and the Secret ID`), async () => {
    const rm = await tf('app-roles', '--', 'state', 'rm', roleAddress);
    expect(rm.code).toBe(0);
    // The apply would write the role over the store's: the takeover guard refuses it, naming adopt.
    const refused = await tf('app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false');
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(`${roleAddress} would be created, but auth/approle/role/orchestrator-dev exists on the store`);
    expect(refused.stderr).toContain('import it with `secretstore-iac adopt app-roles`');
    // The fix, as named.
    const adopted = await cli(['adopt', 'app-roles', '--engine', binary()]);
    expect([adopted.code, adopted.stderr]).toEqual([0, '']);
    const applied = await tf('app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false');
    expect([applied.code, applied.stderr]).toEqual([0, expect.stringContaining('nothing destroyed, replaced or taken over')]);
    expect(await stateList('app-roles')).toContain(roleAddress);
    await expectStoreUnchanged();
    fs.rmSync(path.join(fixture.stackDir('app-roles'), 'adopt-imports.tf.json'), { force: true });
  });
});

describe('tf --refuse-replace: a token that may write but not read never writes blind (issue 27)', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  const OTHER_TEAM = '# another team\'s policy\npath "secret/data/other/*" {\n  capabilities = ["read"]\n}\n';
  let writer: string;

  const cli = (args: string[], token: string) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token });

  /** A token that may do everything but read (or list) the policy `orchestrator-dev`: it may still write it. */
  async function writerToken(readable: boolean): Promise<string> {
    await ok(store, 'PUT', 'sys/policies/acl/writer', {
      policy: [
        'path "*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }',
        `path "sys/policies/acl/orchestrator-dev" { capabilities = [${readable ? '"read", ' : ''}"create", "update"] }`,
        'path "sys/policies/acl" { capabilities = ["deny"] }',
        'path "sys/policies/acl/" { capabilities = ["deny"] }',
      ].join('\n'),
    });
    return (await ok(store, 'POST', 'auth/token/create', { policies: ['writer'], no_default_policy: true, ttl: '1h' })).auth.client_token;
  }

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'guard-403');
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem));
    for (const stack of fixture.stacks) await fixture.init(stack);
    await fixture.apply(['ci-access']);
    // Another team's policy of the same name, made by hand.
    await ok(store, 'PUT', 'sys/policies/acl/orchestrator-dev', { policy: OTHER_TEAM });
    writer = await writerToken(false);
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it(openTofu().title('the lookup is forbidden (403 on GET and LIST): refused (exit 4) naming the rule the token lacks; the other team\'s policy is untouched'), async () => {
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/orchestrator-dev', undefined, writer)).status).toBe(403);
    const r = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], writer);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/app-roles: nothing applied: cannot check whether the store already has 1 object the plan creates: the token \(VAULT_TOKEN, as the vault provider reads it\) may not read them \(HTTP 403\)/);
    expect(r.stderr).toMatch(
      /vault_policy\.\S+ \(sys\/policies\/acl\/orchestrator-dev\): path "sys\/policies\/acl\/orchestrator-dev" \{ capabilities = \["read"\] \} \(or path "sys\/policies\/acl" \{ capabilities = \["list"\] \}, and path "sys\/policies\/acl\/" \{ capabilities = \["list"\] \} from OpenBao 2\.6\.0 \/ Vault 2\.0\.3\)/,
    );
    expect((await ok(store, 'GET', 'sys/policies/acl/orchestrator-dev')).data.policy).toBe(OTHER_TEAM);
    expect((await storeRequest(store, 'GET', 'sys/auth/approle')).status).not.toBe(200);
  });

  it(openTofu().title('with the rule the message names granted, the takeover is refused naming adopt; adopt, then the apply converges'), async () => {
    writer = await writerToken(true);
    const r = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], writer);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/vault_policy\.\S+ would be created, but sys\/policies\/acl\/orchestrator-dev exists on the store\. Fix: .*import it with `secretstore-iac adopt app-roles`/);
    expect((await ok(store, 'GET', 'sys/policies/acl/orchestrator-dev')).data.policy).toBe(OTHER_TEAM);
    // The fix, as named (a person reads adopt's access report: the policy becomes the declared one).
    const adopted = await cli(['adopt', 'app-roles'], store.rootToken);
    expect(adopted.code).toBe(0);
    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], writer);
    expect(applied.code).toBe(0);
    expect((await fixture.plan('app-roles')).code).toBe(0);
  });
});
