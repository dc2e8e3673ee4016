/**
 * A raw store resource under an auth mount its own stack enables, written with the mount's path as
 * text (`backend: 'approle'`, no reference to the mount's resource), on a real store with OpenTofu and
 * Terraform 1.11.4, applied on a fresh store by the configuration pipeline's apply role (a JWT login
 * signed by the test's key). Without an order the engine writes the role while it enables the mount,
 * and the store answers `Code: 404 ... no handler for route "auth/approle/role/..."` (seen on OpenBao
 * 2.4.0 with OpenTofu; the next apply passed). lib/constructs/mount-dependencies.ts makes it wait for
 * the mount: the first apply passes, the role is written after the mount. The role is named with
 * capitals (`Upper-Role`): the apply role writes it and the plan role reads it back through the name
 * as given (the grants hold it; the store keeps `upper-role`), so the next plan by either has no changes.
 * The library's own guards read such roles with the pipeline's tokens too: `tf --refuse-replace`
 * refuses a create whose lower-cased name the store has (the GET by the stored name is 403 to the
 * apply role, the listing names it), and creates one it does not have.
 */
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { runEngine, TEST_ENGINES } from '../support/store/engine';
import { generateSigningKey, JwtSigningKey } from '../support/store/jwt-signer';
import { bootstrappedPipelineFixture, PlatformFixture, pipelineRoleToken, testPlatformConfig } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { TEST_LOCAL_STATE_REASON } from '../support/platform-config';

const PROJECT_ID = '4243';

describe.each(TEST_ENGINES)('a raw role under a mount of its own stack waits for the mount, with $engine', ({ engine, binary }) => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let fixture: PlatformFixture;
  const run = (stack: string, args: string[], token: string) => runEngine(fixture.stackDir(stack), args, { store, token, binary: binary(), allowCodes: [0, 1, 2] });
  const login = (role: 'secretstore-iac-pipeline' | 'secretstore-iac-plan') => pipelineRoleToken(store, key, role, PROJECT_ID);

  beforeAll(async () => {
    store = await startStore();
    key = generateSigningKey();
    fixture = await bootstrappedPipelineFixture(store, `mount-ordering-${engine.split(' ')[0].toLowerCase()}`, { key, projectId: PROJECT_ID, binary: binary(), localStateReason: TEST_LOCAL_STATE_REASON, extend: (p) => void new ApproleAuthBackendRole(p.appRoles, 'user_upper_role', { backend: 'approle', roleName: 'Upper-Role', tokenPolicies: ['default'] }) });
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it(`${engine}: the first apply of the stack, by the apply role, enables the mount before it writes the raw role: exit 0, no 404`, async () => {
    expect((await storeRequest(store, 'GET', 'sys/auth')).body.data['approle/']).toBeUndefined();
    const r = await run('app-roles', ['apply', '-auto-approve'], await login('secretstore-iac-pipeline'));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).not.toMatch(/no handler for route/);
    const mounted = r.stdout.search(/vault_auth_backend\.approle_backend_[A-F0-9]+: Creation complete/);
    const writing = r.stdout.indexOf('vault_approle_auth_backend_role.user_upper_role: Creating...');
    expect(mounted).toBeGreaterThan(0);
    expect(writing).toBeGreaterThan(mounted);
    expect(r.stdout).toMatch(/vault_approle_auth_backend_role\.user_upper_role: Creation complete after \S+ \[id=auth\/approle\/role\/Upper-Role\]/);
    // The store keeps the name lower-cased.
    expect((await storeRequest(store, 'GET', 'auth/approle/role/upper-role')).status).toBe(200);
  });

  it(`${engine}: afterwards the plan role and the apply role each plan the stack with no changes (both read the role through the name as given)`, async () => {
    for (const role of ['secretstore-iac-plan', 'secretstore-iac-pipeline'] as const) {
      const r = await run('app-roles', ['plan', '-detailed-exitcode'], await login(role));
      expect([role, r.code, r.stderr]).toEqual([role, 0, '']);
    }
  });
  it(`${engine}: the library's guards (tf --refuse-replace) with the pipeline's tokens and roles named with capitals: a role whose lower-cased name the store has is refused as a takeover (the listing answers where the GET by the stored name is refused); without it, a new one is created; then no changes for either role`, async () => {
    const tf = async (args: string[], role: 'secretstore-iac-pipeline' | 'secretstore-iac-plan') =>
      runStoreCli(['tf', 'app-roles', '--engine', binary(), '--refuse-replace', '--', ...args], { cwd: fixture.dir, addr: store.addr, token: await login(role) });
    const synthWith = (names: readonly string[]) =>
      fixture.synthPlatform(
        testPlatformConfig(key.publicKeyPem, { configurationProject: { projectId: PROJECT_ID, localStateReason: TEST_LOCAL_STATE_REASON }, applications: { 'billing-dev': { name: 'billing', environment: 'dev' } } }),
        (p) => {
          for (const name of ['Upper-Role', ...names]) new ApproleAuthBackendRole(p.appRoles, `user_${name.toLowerCase().replace('-', '_')}`, { backend: 'approle', roleName: name, tokenPolicies: ['default'] });
        },
      );
    // Written by hand before this configuration, under the name the store keeps.
    expect((await storeRequest(store, 'POST', 'auth/approle/role/third-role', { token_policies: ['default'] })).status).toBe(204);
    synthWith(['Second-Role', 'Third-Role']);
    const refused = await tf(['apply', '-input=false', '-auto-approve'], 'secretstore-iac-pipeline');
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/vault_approle_auth_backend_role\.user_third_role would be created, but auth\/approle\/role\/\S+ exists on the store/i);
    expect(refused.stderr).not.toMatch(/user_second_role would be created/);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/second-role')).status).toBe(404);
    // The grant holds the name as given (the provider's request path): the stored name's GET is refused, the listing is not.
    const applyToken = await login('secretstore-iac-pipeline');
    expect((await storeRequest(store, 'GET', 'auth/approle/role/third-role', undefined, applyToken)).status).toBe(403);
    expect((await storeRequest(store, 'LIST', 'auth/approle/role', undefined, applyToken)).body.data.keys).toContain('third-role');

    synthWith(['Second-Role']);
    const applied = await tf(['apply', '-input=false', '-auto-approve'], 'secretstore-iac-pipeline');
    expect([applied.code, applied.stdout]).toEqual([0, expect.stringMatching(/Apply complete! Resources: 1 added/)]);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/second-role')).status).toBe(200);
    for (const role of ['secretstore-iac-plan', 'secretstore-iac-pipeline'] as const) {
      const r = await tf(['plan', '-input=false', '-detailed-exitcode'], role);
      expect([role, r.code]).toEqual([role, 0]);
    }
  });
});
