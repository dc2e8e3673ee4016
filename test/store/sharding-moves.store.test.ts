/**
 * Issue 16: applications move from the single `app-roles` stack into shards, and between shards
 * when their number changes, without the store's objects being recreated: `secretstore-iac moves`
 * writes `removed` (keep on the store) and `import` blocks, the plans show only forgets and
 * imports, and a Role ID and Secret ID issued before the move still log in afterwards.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ApplicationSharding, applicationStackName, SecretStoreApp } from '../../lib';
import { SEAL_FILE } from '../../lib/engine/bookkeeping-seal';
import { MOVES_FILE } from '../../lib/reconcile/stack-moves';
import { definePlatform, Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { runStoreCli } from '../support/store/store-cli';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, firstError, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

/** Ten applications besides the spec's four, so that re-sharding moves several. */
const GENERATED = Array.from({ length: 10 }, (_, i) => ({ id: `batch-${i}`, name: `batch${i}`, environment: 'dev' }));
const addGenerated = (platform: Platform) => GENERATED.forEach((g) => platform.appRoles.addApplication(g.id, { name: g.name, environment: g.environment }));

/** A Role ID and a Secret ID issued by deployment automation (the store API), never printed. */
interface IssuedCredentials {
  readonly roleId: string;
  readonly secretId: string;
}

describe('moving applications between stacks never recreates them', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let publicKeyPem: string;
  const issued = new Map<string, IssuedCredentials>();
  const outdir = () => path.join(fixture.dir, 'cdktf.out');
  const cli = (args: string[]) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken });
  const config = (applicationSharding?: ApplicationSharding): PlatformConfig => testPlatformConfig(publicKeyPem, applicationSharding ? { applicationSharding } : {});

  /** Synthesizes `config` (with the generated applications) into `dir`: a BASE for `moves`. */
  function synthBase(dir: string, c: PlatformConfig): string {
    const app = new SecretStoreApp({ outdir: path.join(fixture.dir, dir) });
    addGenerated(definePlatform(app, c));
    app.synth();
    return dir;
  }

  /** The stack directories of the output: the synthesized ones and the retired ones `moves` wrote. */
  const stackDirs = () => fs.readdirSync(path.join(outdir(), 'stacks')).sort();

  /** Each planned resource change of a stack as `address: [import+]actions`. */
  async function plannedActions(stack: string): Promise<string[]> {
    const plan = await fixture.planChanges(stack);
    return plan.raw.resource_changes.map((rc: any) => `${rc.address}: ${rc.change.importing ? 'import+' : ''}${rc.change.actions.join(',')}`);
  }

  /** The store objects each stack's state holds (`tofu state list`), by stack. */
  async function stateOf(stack: string): Promise<string[]> {
    const res = await fixture.engine(stack, ['state', 'list']);
    return res.stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
  }

  /** `moves BASE cdktf.out`, then checks every stack's plan shows only the forgets and imports the moves files hold. */
  async function moveAndCheckPlans(base: string): Promise<{ forgets: number; imports: number }> {
    // The JSON form first (a dry run: nothing written): what it lists is what the files then hold.
    const dry = await cli(['moves', base, 'cdktf.out', '--dry-run', '--format', 'json']);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    const json = JSON.parse(dry.stdout);
    expect(json).toMatchObject({ command: 'moves', written: false });
    for (const secret of [store.rootToken, ...[...issued.values()].map((c) => c.secretId)]) expect(dry.stdout).not.toContain(secret);
    const moved = await cli(['moves', base, 'cdktf.out']);
    expect(moved).toMatchObject({ code: 0, stderr: '' });
    for (const s of json.stacks) {
      const file = path.join(outdir(), 'stacks', s.stack, MOVES_FILE);
      const blocks = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
      expect({ stack: s.stack, forgotten: s.forgotten.map((f: any) => f.address).sort(), imported: s.imported.map((i: any) => i.address).sort() }).toEqual({
        stack: s.stack,
        forgotten: (blocks.removed ?? []).map((r: any) => r.from).sort(),
        imported: (blocks.import ?? []).map((i: any) => i.to).sort(),
      });
    }
    let forgets = 0;
    let imports = 0;
    for (const stack of stackDirs()) {
      // A retired stack's directory is new (the synthesis dropped it): init it as the pipeline would.
      if (!fixture.stacks.includes(stack)) expect((await cli(['tf', stack, '--', 'init', '-input=false'])).code).toBe(0);
      const file = path.join(outdir(), 'stacks', stack, MOVES_FILE);
      const blocks = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
      const expected = [
        ...(blocks.removed ?? []).map((r: any) => `${r.from}: forget`),
        ...(blocks.import ?? []).map((i: any) => `${i.to}: import+no-op`),
      ].sort();
      const actions = (await plannedActions(stack)).filter((a) => !a.endsWith(': no-op'));
      // Only forgets and imports: no create, delete or replace anywhere.
      expect({ stack, actions: actions.sort() }).toEqual({ stack, actions: expected });
      forgets += (blocks.removed ?? []).length;
      imports += (blocks.import ?? []).length;
    }
    expect(forgets).toBe(imports);
    return { forgets, imports };
  }

  /** Applies the mount stack first, then every other stack directory (shards, retired stacks). */
  async function applyInOrder(): Promise<void> {
    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-input=false', '-auto-approve']);
    expect(applied.code).toBe(0);
    for (const stack of stackDirs().filter((s) => s.startsWith('app-roles-'))) {
      await fixture.init(stack);
      const res = await cli(['tf', stack, '--refuse-replace', '--', 'apply', '-input=false', '-auto-approve']);
      expect({ stack, code: res.code }).toEqual({ stack, code: 0 });
    }
  }

  /** Issues a Secret ID for a role through the store API, as deployment automation does. */
  async function issue(role: string): Promise<IssuedCredentials> {
    const roleId = await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`);
    const secretId = await storeRequest(store, 'POST', `auth/approle/role/${role}/secret-id`, {});
    expect([roleId.status, secretId.status]).toEqual([200, 200]);
    return { roleId: roleId.body.data.role_id, secretId: secretId.body.data.secret_id };
  }

  /** The credentials issued before the moves still log in, and the Role ID is the same. */
  async function expectIssuedStillLogIn(): Promise<void> {
    for (const [role, creds] of issued) {
      const res = await appRoleLogin(store, creds.roleId, creds.secretId);
      expect({ role, status: res.status, error: res.status === 200 ? '' : firstError(res) }).toEqual({ role, status: 200, error: '' });
      expect(clientToken(res)).toBeTruthy();
      expect((await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id).toBe(creds.roleId);
    }
  }

  beforeAll(async () => {
    store = await startStore();
    publicKeyPem = generateSigningKey().publicKeyPem;
    fixture = PlatformFixture.create(store, 'shard');
    fixture.synthPlatform(config(), addGenerated);
    await fixture.apply();
    for (const role of ['orchestrator-dev', 'registry', ...GENERATED.map((g) => `${g.name}-${g.environment}`)]) issued.set(role, await issue(role));
  });

  afterAll(async () => {
    fixture?.cleanup();
    await store?.stop();
  });

  it('the single app-roles layout holds every application', async () => {
    expect(fixture.stacks).toEqual(['app-roles', 'ci-access']);
    expect((await stateOf('app-roles')).filter((a) => a.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(14);
  });

  it('without moves, tf --refuse-replace refuses the plan that would destroy the moved roles (exit 4) and names moves', async () => {
    synthBase('base-single', config());
    fixture.synthPlatform(config({ by: 'environment-hash', shards: 3 }), addGenerated);
    const refused = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'plan', '-input=false', '-out=refused.tfplan']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/vault_approle_auth_backend_role\.orchestrator-dev_role_[0-9A-F]+ declared at app-roles\/orchestrator-dev\/role would be destroyed|vault_approle_auth_backend_role\.orchestrator-dev_role_[0-9A-F]+ would be destroyed, but auth\/approle\/role\/orchestrator-dev is declared in stack app-roles-dev-\d\d now/);
    expect(refused.stderr).toContain('Fix: run `secretstore-iac moves BASE HEAD`');
    fs.rmSync(path.join(fixture.stackDir('app-roles'), 'refused.tfplan'), { force: true });
  });

  it('without moves, a shard\'s tf --refuse-replace refuses the plan that would create roles and policies the store has (exit 4) and names moves', async () => {
    // The shards are new stacks: their plans would create every application's role and policy, which
    // the store has (app-roles created them). The store writes them in place: the apply would succeed
    // and two states would hold each object.
    const shard = fixture.stacks.find((s) => s.startsWith('app-roles-dev-'))!;
    await fixture.init(shard);
    const refused = await cli(['tf', shard, '--refuse-replace', '--', 'plan', '-input=false', '-out=refused.tfplan']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/the plan would create \d+ objects the store already has, refused/);
    expect(refused.stderr).toMatch(/vault_approle_auth_backend_role\.\S+ would be created, but auth\/approle\/role\/\S+ exists on the store\. Fix: if it moved from another stack, run `secretstore-iac moves BASE HEAD`/);
    expect(refused.stderr).toMatch(/vault_policy\.\S+ would be created, but sys\/policies\/acl\/\S+ exists on the store/);
    // `apply` without a plan file plans first and applies nothing.
    const applied = await cli(['tf', shard, '--refuse-replace', '--', 'apply', '-input=false', '-auto-approve']);
    expect(applied.code).toBe(4);
    expect(applied.stderr).toContain(`${shard}: nothing applied: the plan would create`);
    // Nothing applied: the shard has no state yet.
    const state = await fixture.engine(shard, ['state', 'list'], [0, 1]);
    expect(state.code === 1 ? state.stderr : state.stdout.trim()).toMatch(/^$|No state file was found/);
    fs.rmSync(path.join(fixture.stackDir(shard), 'refused.tfplan'), { force: true });
  });

  it('migrating app-roles into shards: moves, then plans of only forgets and imports; the issued Secret IDs still log in', async () => {
    const counted = await moveAndCheckPlans('base-single');
    // Every application's role and policy left app-roles.
    expect(counted).toEqual({ forgets: 28, imports: 28 });
    await applyInOrder();
    // The old stack's state holds the mount only; each shard's holds its applications.
    expect(await stateOf('app-roles')).toEqual([expect.stringMatching(/^vault_auth_backend\.approle_backend_/)]);
    const shards = fixture.stacks.filter((s) => s.startsWith('app-roles-'));
    const inShards = (await Promise.all(shards.map(stateOf))).flat();
    expect(inShards.filter((a) => a.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(14);
    expect(inShards.filter((a) => a.startsWith('vault_policy.'))).toHaveLength(14);
    await expectIssuedStillLogIn();
    // Applied: every stack plans no change.
    for (const stack of fixture.stacks) expect({ stack, code: (await fixture.plan(stack)).code }).toEqual({ stack, code: 0 });
  });

  it('re-sharding (3 → 2 hash shards per environment) moves 11 applications the same way, and empties the retired shards', async () => {
    const roles = [['orchestrator-dev', 'dev'], ['authentik-role', 'shared'], ['gitlab-role', 'shared'], ['registry', 'shared'], ...GENERATED.map((g) => [`${g.name}-${g.environment}`, g.environment])];
    const home = (shards: number, [roleName, environment]: string[]) => applicationStackName('app-roles', { by: 'environment-hash', shards }, { roleName, environment });
    const moving = roles.filter((r) => home(3, r) !== home(2, r));
    expect(moving.length).toBeGreaterThanOrEqual(10);
    synthBase('base-3', config({ by: 'environment-hash', shards: 3 }));
    fixture.synthPlatform(config({ by: 'environment-hash', shards: 2 }), addGenerated);
    // Role and policy of each moving application: forgotten in one shard, imported in another.
    expect(await moveAndCheckPlans('base-3')).toEqual({ forgets: 2 * moving.length, imports: 2 * moving.length });
    const retired = stackDirs().filter((s) => !fixture.stacks.includes(s));
    expect(retired.length).toBeGreaterThan(0);
    await applyInOrder();
    await expectIssuedStillLogIn();
    // A retired shard's state is empty once applied; every synthesized stack plans no change.
    for (const stack of retired) expect({ stack, state: await stateOf(stack) }).toEqual({ stack, state: [] });
    for (const stack of fixture.stacks) expect({ stack, code: (await fixture.plan(stack)).code }).toEqual({ stack, code: 0 });
  });

  it('changed-stacks selects the shard of a changed application only, and every shard when the mount stack changes (mount first)', async () => {
    const sharding: ApplicationSharding = { by: 'environment-hash', shards: 2 };
    // The moves of the re-shard are applied: their files are no-ops now, and would count as changes.
    // Their seal goes with them: every file of a stack directory but the engine's data is digested (issue 45).
    for (const stack of stackDirs()) for (const file of [MOVES_FILE, SEAL_FILE]) fs.rmSync(path.join(outdir(), 'stacks', stack, file), { force: true });
    synthBase('base-2', config(sharding));
    const changed = async () => {
      const res = await cli(['changed-stacks', 'base-2', 'cdktf.out']);
      expect(res.code).toBe(0);
      return res.stdout.split('\n').filter(Boolean);
    };
    expect(await changed()).toEqual([]);

    // One more application: only the stack its key names.
    fixture.synthPlatform(config(sharding), (p) => {
      addGenerated(p);
      p.appRoles.addApplication('extra-dev', { name: 'extra', environment: 'dev' });
    });
    expect(await changed()).toEqual([applicationStackName('app-roles', sharding, { roleName: 'extra-dev', environment: 'dev' })]);

    // The mount's description: the mount stack, then every shard that depends on it.
    const described = { ...config(sharding), authMounts: { approle: { description: 'Application agents (changed by the sharding test)' } } };
    fixture.synthPlatform(described, addGenerated);
    const shards = fixture.stacks.filter((s) => s.startsWith('app-roles-')).sort();
    expect(shards.length).toBeGreaterThanOrEqual(2);
    expect(await changed()).toEqual(['app-roles', ...shards]);
    // On the store: the mount changes in place; the shards, selected for their dependency, plan nothing.
    const mount = await plannedActions('app-roles');
    expect(mount.filter((a) => !a.endsWith(': no-op'))).toEqual([expect.stringMatching(/^vault_auth_backend\.approle_backend_[0-9A-F]+: update$/)]);
    for (const stack of shards) expect({ stack, code: (await fixture.plan(stack)).code }).toEqual({ stack, code: 0 });
  });
});
