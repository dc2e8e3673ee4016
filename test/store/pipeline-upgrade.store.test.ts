/**
 * The upgrade to per-stack pipeline grants (docs/pipelines.md §9), on a real store: a store applied by
 * the version before them (commit 09ddf13: the pipeline roles' policies in `ci-access` listed every
 * application's objects; synthesized JSON in test/fixtures/pipeline-upgrade/, written by
 * scripts/pipeline-upgrade-fixture.sh), then the new version's first default-branch pipeline in the
 * pipeline's order, with the pipeline roles' own tokens (JWT logins with job tokens signed by the
 * test's key), as the generated jobs run it (`tf STACK --refuse-replace --allow-removals
 * --removals-file ... -- plan -out=...`, then `tf STACK --refuse-replace -- apply PLAN`):
 * - the plan stage: every stack planned with the apply role's token, before any apply (the old,
 *   wide policy);
 * - the apply stage: `ci-access` first (the roles narrow to their own policy plus the grant names of
 *   the stacks, which the store does not have yet), then `app-roles` with a job token logged in after
 *   that narrowing: its saved plan creates its grants; no 403 (a plan made between the two would be
 *   refused: it refreshes the objects with the narrowed token);
 * - afterwards: no role replaced (the AppRole roles' Role IDs unchanged, a Secret ID issued before
 *   still logs in), the next pipeline's plans (apply and plan role) are empty.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { CliRun, runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';
import { TEST_LOCAL_STATE_REASON } from '../support/platform-config';

const PROJECT_ID = '4242';
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'pipeline-upgrade');
/** The stacks of the old and the new version, in the order of the pipeline's apply stage. */
const STACKS = ['ci-access', 'app-roles'] as const;
/** The AppRole roles the platform declares (lib/platform/app-roles-stack.ts). */
const APPROLE_ROLES = ['authentik-role', 'gitlab-role', 'orchestrator-dev', 'registry'];

describe('upgrade to per-stack pipeline grants: the first pipeline on a store the version before them applied', () => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let fixture: PlatformFixture;
  let roleIds: Record<string, string>;
  let secretId: string;
  const planDir = () => path.join(fixture.dir, 'plans');
  /** A job token of the configuration project: a protected branch's (apply role) or a merge request's (plan role). */
  const login = async (role: 'secretstore-iac-pipeline' | 'secretstore-iac-plan') =>
    clientToken(
      await jwtLogin(
        store,
        role,
        signJwt(
          key.privateKey,
          gitlabJobClaims(role === 'secretstore-iac-pipeline' ? { project_id: PROJECT_ID, ref_protected: 'true', ref_type: 'branch' } : { project_id: PROJECT_ID, ref_protected: 'false' }, {
            ciUrl: TEST_SETTINGS.ciUrl,
          }),
          { kid: key.kid },
        ),
      ),
    );
  const tf = (stack: string, token: string, args: string[]) => runStoreCli(['tf', stack, ...args], { cwd: fixture.dir, addr: store.addr, token });
  const ran = (r: CliRun, what: string): string => {
    if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
    expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/permission denied|Code: 403/);
    return r.stdout;
  };
  /** The default-branch plan job's command (`secretstore-iac-plan-STACK-default-branch`). */
  const planJob = (stack: string, token: string) =>
    tf(stack, token, ['--refuse-replace', '--allow-removals', '--removals-file', path.join(planDir(), `${stack}.removals`), '--', 'plan', '-input=false', `-out=${path.join(planDir(), `${stack}.tfplan`)}`]);
  const approleRoleIds = async () =>
    Object.fromEntries(await Promise.all(APPROLE_ROLES.map(async (r) => [r, (await storeRequest(store, 'GET', `auth/approle/role/${r}/role-id`)).body?.data?.role_id])));

  beforeAll(async () => {
    store = await startStore();
    key = generateSigningKey();
    fixture = PlatformFixture.create(store, 'pipeline-upgrade');
    fs.mkdirSync(planDir());
    // The old version's synthesis, with this test's CI key where the generator left its placeholder.
    const pem = JSON.stringify(key.publicKeyPem.trim()).slice(1, -1);
    for (const stack of STACKS) {
      fs.mkdirSync(fixture.stackDir(stack), { recursive: true });
      const old = fs.readFileSync(path.join(FIXTURES, storeKind(), `${stack}.cdk.tf.json`), 'utf8');
      fs.writeFileSync(path.join(fixture.stackDir(stack), 'cdk.tf.json'), old.split('PUBLIC_KEY_PEM_PLACEHOLDER').join(pem));
    }
    // Applied as the old version's pipeline left it (the administrator's token: what applied it does not matter).
    for (const stack of STACKS) {
      await fixture.init(stack);
      await fixture.engine(stack, ['apply', '-auto-approve']);
    }
    roleIds = await approleRoleIds();
    secretId = (await storeRequest(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).body.data.secret_id;
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it('the old version: the apply role holds one policy, which lists the applications\' objects; no grant policy exists', async () => {
    expect(Object.values(roleIds).every((id) => typeof id === 'string' && id !== '')).toBe(true);
    const role = await storeRequest(store, 'GET', 'auth/jwt/role/secretstore-iac-pipeline');
    expect(role.body.data.token_policies).toEqual(['secretstore-iac-pipeline']);
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/secretstore-iac-pipeline')).body.data.policy).toContain('auth/approle/role/orchestrator-dev');
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/secretstore-iac-pipeline-app-roles')).status).toBe(404);
  });

  it('the new version\'s first pipeline: every stack planned with the apply role, then ci-access applied, then app-roles, each job with its own login: no 403, nothing destroyed or replaced', async () => {
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem, { configurationProject: { projectId: PROJECT_ID, localStateReason: TEST_LOCAL_STATE_REASON } }));
    // Plan stage: the jobs run side by side, after the synthesis and before any apply.
    const planToken = await login('secretstore-iac-pipeline');
    for (const stack of STACKS) {
      await fixture.init(stack);
      ran(await planJob(stack, planToken), `plan job of ${stack}`);
      // Nothing removed (no removals file): the apply jobs apply the saved plans, no manual job.
      expect([stack, fs.existsSync(path.join(planDir(), `${stack}.removals`))]).toEqual([stack, false]);
    }
    // Apply stage: ci-access first (every other stack's apply job needs it).
    const ciAccess = ran(await tf('ci-access', await login('secretstore-iac-pipeline'), ['--refuse-replace', '--', 'apply', '-input=false', path.join(planDir(), 'ci-access.tfplan')]), 'apply job of ci-access');
    expect(ciAccess).toMatch(/Apply complete! Resources: \d+ added, \d+ changed, 0 destroyed/);
    const role = await storeRequest(store, 'GET', 'auth/jwt/role/secretstore-iac-pipeline');
    expect(role.body.data.token_policies).toEqual(['secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles']);
    // Narrowed: the application objects are out of the role's own policy; the grant is not there yet.
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/secretstore-iac-pipeline')).body.data.policy).not.toContain('auth/approle/role/orchestrator-dev');
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/secretstore-iac-pipeline-app-roles')).status).toBe(404);
    // app-roles' apply job logs in after the narrowing: its saved plan creates the grants.
    const applyToken = await login('secretstore-iac-pipeline');
    expect((await storeRequest(store, 'GET', 'auth/approle/role/orchestrator-dev', undefined, applyToken)).status).toBe(403);
    // A plan made now (a plan job re-run, a new pipeline) refreshes the stack's objects with the
    // narrowed token: refused until the grant exists (docs/pipelines.md). The saved plan needs no refresh.
    const early = await tf('app-roles', applyToken, ['--refuse-replace', '--', 'plan', '-input=false']);
    expect(early.code).not.toBe(0);
    expect(`${early.stdout}\n${early.stderr}`).toMatch(/permission denied/);
    const appRoles = ran(await tf('app-roles', applyToken, ['--refuse-replace', '--', 'apply', '-input=false', path.join(planDir(), 'app-roles.tfplan')]), 'apply job of app-roles');
    expect(appRoles).toMatch(/Apply complete! Resources: \d+ added, \d+ changed, 0 destroyed/);
    for (const grant of ['secretstore-iac-pipeline-app-roles', 'secretstore-iac-plan-app-roles']) expect([grant, (await storeRequest(store, 'GET', `sys/policies/acl/${grant}`)).status]).toEqual([grant, 200]);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/orchestrator-dev', undefined, applyToken)).status).toBe(200);
  });

  it('afterwards: the same Role IDs, a Secret ID issued before logs in, and the next pipeline\'s plans are empty (apply role and plan role)', async () => {
    expect(await approleRoleIds()).toEqual(roleIds);
    expect((await appRoleLogin(store, roleIds['orchestrator-dev'], secretId)).status).toBe(200);
    for (const role of ['secretstore-iac-pipeline', 'secretstore-iac-plan'] as const) {
      const token = await login(role);
      for (const stack of STACKS) {
        const planned = ran(await tf(stack, token, ['--refuse-replace', '--', 'plan', '-input=false', '-detailed-exitcode']), `${role}: plan of ${stack}`);
        expect([role, stack, planned]).toEqual([role, stack, expect.stringContaining('No changes.')]);
      }
    }
  });
});
