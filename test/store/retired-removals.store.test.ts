/**
 * Issue 30, option B, its other half on a real store: a retired shard (3 → 2 hash shards) that also
 * removes a real object (an application removed in the same commit) exempts nothing. Driven with
 * the commands of the configuration pipeline's jobs (lib/render/configuration-pipeline-yaml.ts),
 * with the pipeline apply role's own token (a JWT login signed by the test's key): the retired
 * stack's plan lists the application's role and policy AND the two pipeline grants as removals;
 * `tf --refuse-replace` without `--allow-removals` (the apply-retired job) refuses applying it
 * (exit 4) and changes nothing; the manual job's `tf --refuse-replace --allow-removals` applies it:
 * no 403, the removed objects and the grants are gone, the moved applications' Role IDs and issued
 * Secret IDs are untouched. The case where every object moved (the grants pass without approval)
 * runs under gitlab-ci-local in configuration-pipeline.store.test.ts; the pure logic in
 * test/unit/reconcile/retired-own-grants.test.ts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { applicationStackName, SecretStoreApp } from '../../lib';
import { definePlatform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { readRetiredOwnGrants, RETIRED_OWN_GRANTS_FILE } from '../../lib/reconcile/retired-stack-grants';
import { SEAL_FILE } from '../../lib/engine/bookkeeping-seal';
import { MOVES_FILE } from '../../lib/reconcile/stack-moves';
import { CliRun, runStoreCli } from '../support/store/store-cli';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, firstError, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { TEST_LOCAL_STATE_REASON } from '../support/platform-config';

const PROJECT_ID = '4343';
const MOUNT_STACK = 'app-roles';
/** Twelve applications in one environment, so that the retired shard holds several. */
const APPLICATIONS = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`batch${i}-dev`, { name: `batch${i}`, environment: 'dev' }]));
const sharding = (shards: number) => ({ by: 'hash' as const, shards });
const home = (shards: number, roleName: string) => applicationStackName(MOUNT_STACK, sharding(shards), { roleName, environment: APPLICATIONS[roleName].environment });

describe('a retired shard that also removes an application: nothing is exempt, its apply waits for --allow-removals', () => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let fixture: PlatformFixture;
  /** Every output of the CLI runs, checked for secret values at the end. */
  const outputs: string[] = [];
  const secrets: string[] = [];
  const issued = new Map<string, { roleId: string; secretId: string }>();
  /** The AppRole roles in the shards' states before the change. */
  let rolesBefore = 0;
  /** The stacks `changed-stacks BASE HEAD` lists, in the order the pipeline applies them. */
  let changedStacks: string[] = [];
  const plans = () => path.join(fixture.dir, 'secretstore-iac-plans');
  const planFile = (stack: string) => path.join(plans(), `${stack}.tfplan`);
  const removalsFile = (stack: string) => path.join(plans(), `${stack}.removals`);

  // The retired shard and, among its applications, the one removed and the ones that move.
  const retiredShard = `${MOUNT_STACK}-02`;
  const inRetired = Object.keys(APPLICATIONS).filter((r) => home(3, r) === retiredShard).sort();
  const removed = inRetired[0];
  const moving = inRetired.slice(1);
  const grants = [`secretstore-iac-pipeline-${retiredShard}`, `secretstore-iac-plan-${retiredShard}`];

  const config = (shards: number, applications: Record<string, { name: string; environment: string }>): PlatformConfig =>
    testPlatformConfig(key.publicKeyPem, { configurationProject: { projectId: PROJECT_ID, localStateReason: TEST_LOCAL_STATE_REASON }, applicationSharding: sharding(shards), applications });
  const headApplications = () => Object.fromEntries(Object.entries(APPLICATIONS).filter(([r]) => r !== removed));

  const cli = async (args: string[], token: string): Promise<CliRun> => {
    const res = await runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token });
    outputs.push(res.stdout, res.stderr);
    return res;
  };
  const ok = (res: CliRun, what: string) => {
    if (res.code !== 0) throw new Error(`${what} failed (exit ${res.code}):\n${res.stdout}\n${res.stderr}`);
    expect(`${res.stdout}\n${res.stderr}`).not.toMatch(/permission denied|Code: 403/);
    return res;
  };
  /** A protected-branch job's login with the apply role: its store token. */
  const applyRoleToken = async () => {
    const token = clientToken(
      await jwtLogin(
        store,
        'secretstore-iac-pipeline',
        signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, ref_protected: 'true', ref_type: 'branch' }, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid }),
      ),
    );
    secrets.push(token);
    return token;
  };
  const status = async (p: string) => (await storeRequest(store, 'GET', p)).status;
  const stateOf = async (stack: string) => (await fixture.engine(stack, ['state', 'list'])).stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
  /** Each store path the retired stack's removal concerns, with its HTTP status on the store. */
  const removedObjects = async () =>
    Object.fromEntries(
      await Promise.all([`auth/approle/role/${removed}`, `sys/policies/acl/${removed}`, ...grants.map((g) => `sys/policies/acl/${g}`)].map(async (p) => [p, await status(p)])),
    );

  beforeAll(async () => {
    store = await startStore();
    key = generateSigningKey();
    secrets.push(store.rootToken);
    fixture = PlatformFixture.create(store, 'retired-removals');
    fs.mkdirSync(plans());
    fixture.synthPlatform(config(3, APPLICATIONS));
    // The administrator's bootstrap with the root token: the pipeline roles, the mount, then the shards.
    await fixture.apply(['ci-access']);
    await fixture.apply([MOUNT_STACK]);
    await fixture.apply(fixture.stacks.filter((s) => s.startsWith(`${MOUNT_STACK}-`)));
    // Deployment automation issues a Role ID and a Secret ID for each application that will move.
    for (const role of moving) {
      const roleId = await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`);
      const secretId = await storeRequest(store, 'POST', `auth/approle/role/${role}/secret-id`, {});
      expect([roleId.status, secretId.status]).toEqual([200, 200]);
      issued.set(role, { roleId: roleId.body.data.role_id, secretId: secretId.body.data.secret_id });
      secrets.push(secretId.body.data.secret_id);
    }
  });

  afterAll(async () => {
    fixture?.cleanup();
    await store?.stop();
  });

  it('applied with 3 shards: the retired-to-be shard holds the removed application, the moving ones, and the pipeline roles\' two grants', async () => {
    expect(fixture.stacks).toContain(retiredShard);
    expect(moving.length).toBeGreaterThanOrEqual(1);
    expect(await removedObjects()).toEqual({
      [`auth/approle/role/${removed}`]: 200,
      [`sys/policies/acl/${removed}`]: 200,
      ...Object.fromEntries(grants.map((g) => [`sys/policies/acl/${g}`, 200])),
    });
    // Beside the platform's own applications that hash there.
    const retiredRoles = (await stateOf(retiredShard)).filter((a) => a.startsWith('vault_approle_auth_backend_role.'));
    expect(retiredRoles).toEqual(expect.arrayContaining(inRetired.map((r) => expect.stringMatching(new RegExp(`^vault_approle_auth_backend_role\\.${r}_role_[0-9A-F]+$`)))));
    const shards = fixture.stacks.filter((s) => s.startsWith(`${MOUNT_STACK}-`));
    rolesBefore = (await Promise.all(shards.map(stateOf))).flat().filter((a) => a.startsWith('vault_approle_auth_backend_role.')).length;
  });

  it('2 shards and the application removed: the own-grants record moves wrote exempts nothing; the retired plan lists the role, the policy and the two grants as removals', async () => {
    // BASE: the previous commit's synthesis.
    const base = new SecretStoreApp({ outdir: path.join(fixture.dir, 'base-3') });
    definePlatform(base, config(3, APPLICATIONS));
    base.synth();
    fixture.synthPlatform(config(2, headApplications()));
    expect(fixture.stacks).not.toContain(retiredShard);
    const moved = ok(await cli(['moves', 'base-3', 'cdktf.out'], store.rootToken), 'moves');
    expect(moved.stdout).toMatch(new RegExp(`Wrote cdktf\\.out/stacks/${retiredShard}/moves\\.tf\\.json: forget \\d+, import 0 \\(a stack HEAD no longer has: plan and apply it, which destroys 4 objects after approval, then delete the directory\\)\\.`));
    expect(moved.stdout).not.toContain('without approval');
    const retiredDir = path.join(fixture.dir, 'cdktf.out', 'stacks', retiredShard);
    // moves records the two grants it recognised from BASE (never by name alone); whether they need
    // no approval is tf's decision on the plan: only when they are ALL the plan destroys.
    // With the seal of both (issue 36: tf refuses them edited).
    expect(fs.readdirSync(retiredDir).sort()).toEqual([MOVES_FILE, RETIRED_OWN_GRANTS_FILE, SEAL_FILE].sort());
    expect(readRetiredOwnGrants(retiredDir).map((g) => g.storePath)).toEqual(grants.map((g) => `sys/policies/acl/${g}`));

    // The pipeline's plan jobs, in its order (the changed stacks as the synth job lists them, then the retired), with the apply role.
    const changed = ok(await cli(['changed-stacks', 'base-3', 'cdktf.out'], store.rootToken), 'changed-stacks').stdout.split('\n').filter(Boolean);
    expect(changed).toEqual(expect.arrayContaining(['ci-access', ...fixture.stacks.filter((s) => s.startsWith(`${MOUNT_STACK}-`))]));
    changedStacks = changed;
    const token = await applyRoleToken();
    for (const stack of [...changed, retiredShard]) {
      ok(await cli(['tf', stack, '--', 'init', '-input=false'], token), `init ${stack}`);
      ok(
        await cli(['tf', stack, '--refuse-replace', '--allow-removals', '--removals-file', removalsFile(stack), '--', 'plan', '-input=false', `-out=${planFile(stack)}`], token),
        `plan ${stack}`,
      );
    }
    // Only the retired stack's plan destroys anything.
    expect(fs.readdirSync(plans()).filter((f) => f.endsWith('.removals'))).toEqual([`${retiredShard}.removals`]);
    const removals = fs.readFileSync(removalsFile(retiredShard), 'utf8').split('\n').filter(Boolean);
    expect(removals.map((l) => l.split(' ')[0]).sort()).toEqual([`auth/approle/role/${removed}`, `sys/policies/acl/${removed}`, ...grants.map((g) => `sys/policies/acl/${g}`)].sort());
    // The record exempted nothing: no grant went through without approval.
    expect(outputs.join('\n')).not.toMatch(/pipeline grants? of this retired stack destroyed without approval/);
  });

  it('the other stacks\' plans applied (imports); the retired plan without --allow-removals is refused (exit 4) and changes nothing', async () => {
    const token = await applyRoleToken();
    for (const stack of changedStacks) {
      ok(await cli(['tf', stack, '--refuse-replace', '--', 'apply', '-input=false', planFile(stack)], token), `apply ${stack}`);
    }
    // Every moved application is in a shard of HEAD's state now.
    const kept = (await Promise.all(fixture.stacks.filter((s) => s.startsWith(`${MOUNT_STACK}-`)).map(stateOf))).flat();
    expect(kept.filter((a) => a.startsWith('vault_approle_auth_backend_role.'))).toHaveLength(rolesBefore - 1);

    const stateBefore = await stateOf(retiredShard);
    const refused = await cli(['tf', retiredShard, '--refuse-replace', '--', 'apply', '-input=false', planFile(retiredShard)], token);
    expect({ code: refused.code, stdout: refused.stdout }).toMatchObject({ code: 4 });
    // Each of the four destroys named (by the address the removals file gave it), the grants among them.
    const addresses = fs.readFileSync(removalsFile(retiredShard), 'utf8').split('\n').filter(Boolean).map((l) => /\((\S+)\)$/.exec(l)![1]);
    expect(addresses).toEqual(expect.arrayContaining(['vault_policy.secretstore-iac-grant-pipeline-apply', 'vault_policy.secretstore-iac-grant-pipeline-plan']));
    for (const address of addresses) expect(refused.stderr).toContain(`${address} would be destroyed`);
    expect(refused.stderr).not.toMatch(/pipeline grants? of this retired stack destroyed without approval/);
    expect(await stateOf(retiredShard)).toEqual(stateBefore);
    expect(Object.values(await removedObjects())).toEqual([200, 200, 200, 200]);
  });

  it('the manual job\'s --allow-removals applies it with the apply role: no 403, the removed objects and grants are gone, the moved applications untouched', async () => {
    const token = await applyRoleToken();
    const applied = ok(await cli(['tf', retiredShard, '--refuse-replace', '--allow-removals', '--', 'apply', '-input=false', planFile(retiredShard)], token), `apply ${retiredShard} --allow-removals`);
    expect(applied.stdout).toMatch(/Apply complete! Resources: 0 added, 0 changed, 4 destroyed/);
    expect(await removedObjects()).toEqual({
      [`auth/approle/role/${removed}`]: 404,
      [`sys/policies/acl/${removed}`]: 404,
      ...Object.fromEntries(grants.map((g) => [`sys/policies/acl/${g}`, 404])),
    });
    for (const [role, creds] of issued) {
      expect(home(2, role)).not.toBe(retiredShard);
      expect((await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id).toBe(creds.roleId);
      const login = await appRoleLogin(store, creds.roleId, creds.secretId);
      expect({ role, status: login.status, error: login.status === 200 ? '' : firstError(login) }).toEqual({ role, status: 200, error: '' });
    }
    expect(await stateOf(retiredShard)).toEqual([]);
  });

  it('no secret value in any output', () => {
    expect(outputs.length).toBeGreaterThan(0);
    for (const out of outputs) for (const secret of secrets) expect(out.includes(secret)).toBe(false);
  });
});
