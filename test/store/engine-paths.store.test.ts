/**
 * Issue 29, "Terraform in CI": each engine-facing path of the library once on every engine this
 * machine has (test/support/store/engine-matrix.ts: the toolchain's OpenTofu, and Terraform where
 * it is installed; each title names the engine and its version). One store per engine, and the
 * paths in the order a platform lives them:
 *
 * 1. `adopt` of a hand-made store (import blocks), then the configuration pipeline's plan and apply
 *    jobs' engine commands run directly (no gitlab-ci-local): `tf STACK -- init`,
 *    `tf STACK --refuse-replace --allow-removals --removals-file F -- plan -out=P` and
 *    `tf STACK --refuse-replace -- apply P`; the saved plan imports and updates only, Role IDs and a
 *    Secret ID issued before are kept;
 * 2. the schedule's drift job (`tf STACK -- plan -detailed-exitcode`): 0 in sync, 2 after a change;
 * 3. a change and a removal through the same jobs: the removal listed beside the saved plan, its
 *    apply refused without `--allow-removals` (the apply job defers it) and applied with it (the
 *    manual removal job's command);
 * 4. `moves` from the single `app-roles` stack into hash shards: plans of only forgets and imports
 *    (`removed` and `import` blocks), applied through the guard, nothing recreated.
 *
 * The guards' own refusals (`apply -destroy`, `-replace`, `destroy`, `state rm`, `import`, the
 * takeover) run on both engines in engine-guards.store.test.ts. docs/store-tests.md ("Engines")
 * lists which test covers which path on which engine.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RegistryServiceAccount, SecretStoreApp } from '../../lib';
import { definePlatform, Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { READER_POLICY } from '../../lib/reconcile/live-store-reader';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { MOVES_FILE } from '../../lib/reconcile/stack-moves';
import { stackDigest } from '../../lib/sources/stack-digest';
import { forEachEngine } from '../support/store/engine-matrix';
import { createHandMadePlatform, HandMadePlatform } from '../support/store/hand-made-platform';
import { cacheDir } from '../support/store/toolchain-env';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, firstError, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

/** Four applications besides the spec's four, so that sharding moves several; the last one is removed in step 3. */
const GENERATED = Array.from({ length: 4 }, (_, i) => ({ id: `batch-${i}`, name: `batch${i}`, environment: 'dev' }));
const REMOVED = GENERATED[3];

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

forEachEngine('the engine-facing paths', (engine) => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let publicKeyPem: string;
  let hand: HandMadePlatform;
  let readerToken: string;
  /** Whether step 3's change (one more account, one application less) is in the configuration. */
  let changed = false;

  const cli = (args: string[], token = store.rootToken) =>
    runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token, env: { SECRETSTORE_IAC_ENGINE: engine.binary } });
  /** Where the pipeline keeps a stack's saved plan: outside cdktf.out, which a synthesis replaces. */
  const planFile = (stack: string) => path.join(fixture.dir, 'plans', `${stack}.tfplan`);
  const removalsFile = (stack: string) => path.join(fixture.dir, 'plans', `${stack}.removals`);

  /** The platform with the generated applications, and after step 3's change one more account and one application less. */
  function extend(platform: Platform): void {
    for (const g of GENERATED.filter((a) => !changed || a !== REMOVED)) platform.appRoles.addApplication(g.id, { name: g.name, environment: g.environment });
    if (!changed) return;
    new RegistryServiceAccount(platform.ciAccess, 'svc-extra', {
      name: 'extra',
      permissions: ['pypi:read'],
      usedBy: 'the shared Python library consumers (test-only account)',
      consumers: ['python-build'],
      readers: [platform.ciAccess.registryCi],
    });
  }
  const config = (overrides: Partial<PlatformConfig> = {}) => testPlatformConfig(publicKeyPem, overrides);

  /** The plan job's commands: init, then the guarded plan saved outside cdktf.out. */
  async function planJob(stack: string): Promise<{ code: number; stderr: string }> {
    const init = await cli(['tf', stack, '--', 'init', '-input=false']);
    expect({ stack, init: init.code, stderr: init.code === 0 ? '' : init.stderr }).toEqual({ stack, init: 0, stderr: '' });
    return cli(['tf', stack, '--refuse-replace', '--allow-removals', '--removals-file', removalsFile(stack), '--', 'plan', '-input=false', '-lock-timeout=10m', `-out=${planFile(stack)}`]);
  }

  /** The apply job's command (with `--allow-removals`: the manual removal job's). */
  const applyJob = (stack: string, allowRemovals = false) =>
    cli(['tf', stack, '--refuse-replace', ...(allowRemovals ? ['--allow-removals'] : []), '--', 'apply', '-input=false', '-lock-timeout=10m', planFile(stack)]);

  /** The schedule's drift job: 0 in sync, 2 when the store differs from the configuration. */
  async function driftJob(stack: string): Promise<number> {
    return (await cli(['tf', stack, '--', 'plan', '-input=false', '-lock-timeout=10m', '-detailed-exitcode'])).code;
  }

  /** Each resource change of a saved plan (`show -json` by the engine) as `address: [import+]actions`, no-ops left out. */
  async function savedPlanActions(stack: string, file = planFile(stack)): Promise<string[]> {
    const shown = await fixture.engine(stack, ['show', '-json', file]);
    return (JSON.parse(shown.stdout).resource_changes ?? [])
      .map((rc: any) => `${rc.address}: ${rc.change.importing ? 'import+' : ''}${rc.change.actions.join(',')}`)
      .filter((a: string) => !a.endsWith(': no-op'))
      .sort();
  }

  /** Every AppRole role the hand-made store had keeps its Role ID, and the Secret ID issued before logs in. */
  async function expectCredentialsKept(roles: readonly string[]): Promise<void> {
    for (const role of roles) {
      expect({ role, roleId: (await ok(store, 'GET', `auth/approle/role/${role}/role-id`)).data.role_id }).toEqual({ role, roleId: hand.roleIds[role] });
    }
    const login = await appRoleLogin(store, hand.roleIds['orchestrator-dev'], hand.orchestratorSecretId);
    expect({ status: login.status, error: login.status === 200 ? '' : firstError(login) }).toEqual({ status: 200, error: '' });
  }

  beforeAll(async () => {
    store = await startStore();
    publicKeyPem = generateSigningKey().publicKeyPem;
    fixture = PlatformFixture.create(store, `engine-${engine.name.toLowerCase()}`);
    fixture.engineBinary = engine.binary;
    fs.mkdirSync(path.join(fixture.dir, 'plans'));
    fixture.synthPlatform(config(), extend);
    hand = await createHandMadePlatform(store, path.join(fixture.dir, 'cdktf.out'));
    await ok(store, 'PUT', 'sys/policies/acl/secretstore-iac-reader', { policy: READER_POLICY });
    readerToken = (await ok(store, 'POST', 'auth/token/create', { policies: ['secretstore-iac-reader'], no_default_policy: true, ttl: '1h' })).auth.client_token;
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it(engine.title('adopt writes import blocks; the plan job\'s saved plan only imports and updates; the apply job applies it: Role IDs and a Secret ID issued before are kept'), async () => {
    for (const stack of fixture.stacks) expect((await cli(['tf', stack, '--', 'init', '-input=false'])).code).toBe(0);
    const adopted = await cli(['adopt', '--engine', engine.binary], readerToken);
    expect([adopted.code, adopted.stderr]).toEqual([0, '']);
    for (const stack of fixture.stacks) expect(fs.existsSync(path.join(fixture.stackDir(stack), IMPORT_FILE))).toBe(true);
    for (const stack of fixture.stacks) {
      const planned = await planJob(stack);
      expect({ stack, code: planned.code, stderr: planned.code === 0 ? '' : planned.stderr }).toEqual({ stack, code: 0, stderr: '' });
      // The engine tf ran, by its own version line.
      // And what its fresh working directory held (issue 45): the stack's configuration files, by the stack's own digest.
      const laid = stackDigest(fixture.stackDir(stack));
      expect(planned.stderr).toContain(
        `secretstore-iac tf: engine ${engine.binary} (${engine.name} v${engine.version}; SECRETSTORE_IAC_ENGINE; providers from the mirror ${cacheDir()}/provider-mirror; configuration: ${laid.files.length} files laid fresh, ${laid.digest})`,
      );
      expect(fs.existsSync(removalsFile(stack))).toBe(false);
      const actions = await savedPlanActions(stack);
      expect(actions.length).toBeGreaterThan(0);
      for (const action of actions) expect(action).toMatch(/: import\+(update|no-op)$/);
    }
    for (const stack of fixture.stacks) {
      const applied = await applyJob(stack);
      expect({ stack, code: applied.code, stderr: applied.code === 0 ? '' : applied.stderr }).toEqual({ stack, code: 0, stderr: '' });
      expect(applied.stdout).toMatch(/Apply complete! Resources: \d+ imported, 0 added, \d+ changed, 0 destroyed/);
    }
    await expectCredentialsKept(hand.appRoles);
    // Declared TTLs now (the hand-made store had 2 h).
    expect((await ok(store, 'GET', 'auth/approle/role/orchestrator-dev')).data.token_ttl).toBe(43200);
    // Applied: adopt again finds nothing to import (it reads each state through the engine) and
    // removes the import files, which a re-synthesis moving their targets would fail on (docs/adoption.md).
    const again = await cli(['adopt', '--engine', engine.binary], readerToken);
    expect([again.code, again.stderr]).toEqual([0, '']);
    for (const stack of fixture.stacks) expect(fs.existsSync(path.join(fixture.stackDir(stack), IMPORT_FILE))).toBe(false);
  });

  it(engine.title('the drift job\'s plan -detailed-exitcode: 0 on every stack once applied'), async () => {
    for (const stack of fixture.stacks) expect({ stack, code: await driftJob(stack) }).toEqual({ stack, code: 0 });
  });

  it(engine.title('a change and a removal: the drift job exits 2; the removal is listed beside the saved plan, its apply is refused without --allow-removals and applied with it'), async () => {
    changed = true;
    fixture.synthPlatform(config(), extend);
    expect(await driftJob('ci-access')).toBe(2);
    expect(await driftJob('app-roles')).toBe(2);
    for (const stack of fixture.stacks) {
      const planned = await planJob(stack);
      expect({ stack, code: planned.code, stderr: planned.code === 0 ? '' : planned.stderr }).toEqual({ stack, code: 0, stderr: '' });
    }
    // ci-access: registry-ci's policy gains the account's path, in place.
    expect(await savedPlanActions('ci-access')).toEqual([expect.stringMatching(/^vault_policy\.registry-ci_\S+: update$/)]);
    // app-roles: the removed application's role and policy are destroyed, nothing else changes.
    const removed = `${REMOVED.name}-${REMOVED.environment}`;
    expect(await savedPlanActions('app-roles')).toEqual([
      expect.stringMatching(new RegExp(`^vault_approle_auth_backend_role\\.${REMOVED.id}_\\S+: delete$`)),
      expect.stringMatching(new RegExp(`^vault_policy\\.${REMOVED.id}_\\S+: delete$`)),
    ]);
    expect(fs.readFileSync(removalsFile('app-roles'), 'utf8').split('\n').filter(Boolean).sort()).toEqual([
      expect.stringMatching(new RegExp(`^auth/approle/role/${removed} \\(vault_approle_auth_backend_role\\.`)),
      expect.stringMatching(new RegExp(`^sys/policies/acl/${removed} \\(vault_policy\\.`)),
    ]);
    expect((await applyJob('ci-access')).code).toBe(0);
    expect((await ok(store, 'GET', 'sys/policies/acl/registry-ci')).data.policy).toContain('secret/data/registry/svc-extra');
    // The apply job's guard refuses the saved plan's destroys (the pipeline leaves it to the manual job).
    const refused = await applyJob('app-roles');
    expect(refused.code).toBe(4);
    expect((await storeRequest(store, 'GET', `auth/approle/role/${removed}`)).status).toBe(200);
    const applied = await applyJob('app-roles', true);
    expect({ code: applied.code, stderr: applied.code === 0 ? '' : applied.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await storeRequest(store, 'GET', `auth/approle/role/${removed}`)).status).toBe(404);
    expect((await storeRequest(store, 'GET', `sys/policies/acl/${removed}`)).status).toBe(404);
    await expectCredentialsKept(hand.appRoles.filter((r) => r !== removed));
    for (const stack of fixture.stacks) expect({ stack, code: await driftJob(stack) }).toEqual({ stack, code: 0 });
  });

  it(engine.title('moves into hash shards: plans of only forgets and imports, applied through the guard; nothing recreated, the Secret ID still logs in'), async () => {
    // The base: this configuration as it is applied, synthesized beside cdktf.out.
    const base = new SecretStoreApp({ outdir: path.join(fixture.dir, 'base') });
    extend(definePlatform(base, config()));
    base.synth();
    fixture.synthPlatform(config({ applicationSharding: { by: 'environment-hash', shards: 2 } }), extend);
    const moved = await cli(['moves', 'base', 'cdktf.out']);
    expect([moved.code, moved.stderr]).toEqual([0, '']);
    let forgets = 0;
    let imports = 0;
    for (const stack of fixture.stacks) {
      const planned = await planJob(stack);
      expect({ stack, code: planned.code, stderr: planned.code === 0 ? '' : planned.stderr }).toEqual({ stack, code: 0, stderr: '' });
      const file = path.join(fixture.stackDir(stack), MOVES_FILE);
      const blocks = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
      const expected = [
        ...(blocks.removed ?? []).map((r: any) => `${r.from}: forget`),
        ...(blocks.import ?? []).map((i: any) => `${i.to}: import+no-op`),
      ].sort();
      const actions = await savedPlanActions(stack);
      expect({ stack, actions }).toEqual({ stack, actions: expected });
      forgets += (blocks.removed ?? []).length;
      imports += (blocks.import ?? []).length;
    }
    // Every remaining application's role and policy left app-roles for a shard.
    expect({ forgets, imports }).toEqual({ forgets: 2 * (hand.appRoles.length - 1), imports: 2 * (hand.appRoles.length - 1) });
    // The mount stack first: it forgets every application (OpenTofu counts the forgets in its
    // summary, Terraform 1.11 does not); then the shards import them.
    const forgotten = await applyJob('app-roles');
    expect({ code: forgotten.code, stderr: forgotten.code === 0 ? '' : forgotten.stderr }).toEqual({ code: 0, stderr: '' });
    expect(forgotten.stdout).toContain(`Apply complete! Resources: 0 added, 0 changed, 0 destroyed${engine.name === 'OpenTofu' ? `, ${forgets} forgotten` : ''}.`);
    for (const stack of fixture.stacks.filter((s) => s.startsWith('app-roles-'))) {
      const applied = await applyJob(stack);
      expect({ stack, code: applied.code, stderr: applied.code === 0 ? '' : applied.stderr }).toEqual({ stack, code: 0, stderr: '' });
      expect(applied.stdout).toMatch(/Apply complete! Resources: [1-9]\d* imported, 0 added, 0 changed, 0 destroyed\./);
    }
    await expectCredentialsKept(hand.appRoles.filter((r) => r !== `${REMOVED.name}-${REMOVED.environment}`));
    for (const stack of fixture.stacks) expect({ stack, code: await driftJob(stack) }).toEqual({ stack, code: 0 });
  });
});
