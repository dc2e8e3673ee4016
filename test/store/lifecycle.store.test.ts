/**
 * Lifecycle of the configuration on a real store with the real engine:
 *
 * - idempotence: after apply, `tofu plan -detailed-exitcode` reports no changes;
 * - removal: a field or a grant removed from the configuration is really removed on the store after
 *   re-applying (a role write is a partial update on the store, so this needs every field rendered);
 * - change propagation: one more registry account (one construct instantiation) plans only the
 *   policy update, and after apply the CI token reads the new path.
 *
 * Every test first applies the state it starts from, so the tests do not depend on their order.
 */
import {
  CiJwtAuth,
  CiJwtRole,
  CiSecret,
  JwtKeySource,
  PlatformSettings,
  RegistryServiceAccount,
  SecretStoreApp,
  SecretStoreStack,
} from '../../lib';
import { Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import {
  clientToken,
  firstError,
  jwtLogin,
  PlannedChange,
  PlatformFixture,
  TEST_JOB_TIMEOUT,
  TEST_SETTINGS,
  testPlatformConfig,
  testSecretValues,
  writeKv2,
} from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

const ACL_DENIED = '1 error occurred:\n\t* permission denied\n\n';
const CI = TEST_SETTINGS.ciUrl;

/** Resource changes that do something (not `no-op`). */
const effective = (changes: PlannedChange[]) => changes.filter((c) => !(c.actions.length === 1 && c.actions[0] === 'no-op'));
const ruleLines = (policy: string) => [...policy.matchAll(/^path "([^"]+)"/gm)].map((m) => m[1]).sort();

describe('lifecycle: idempotence, removal, change propagation', () => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let platformFx: PlatformFixture;
  let variantFx: PlatformFixture;
  /** With `project_id` bound. */
  let withProject: PlatformConfig;
  /** The same without `project_id`. */
  let withoutProject: PlatformConfig;

  const job = (overrides = {}) => signJwt(key.privateKey, gitlabJobClaims(overrides, { ciUrl: CI }), { kid: key.kid });

  /** Synthesizes the platform with `config` (plus `svc-extra` when asked) and applies both stacks. */
  async function applyPlatform(config: PlatformConfig, extra = false): Promise<Platform> {
    const platform = platformFx.synthPlatform(config, extra ? addExtraAccount : undefined);
    await platformFx.apply();
    return platform;
  }

  /** The change-propagation account: a distinct scope (PyPI read), readable by registry-ci. */
  function addExtraAccount(platform: Platform): void {
    new RegistryServiceAccount(platform.ciAccess, 'svc-extra', {
      name: 'extra',
      permissions: ['pypi:read'],
      usedBy: 'the shared Python library consumers (test-only account)',
      consumers: ['python-build'],
      readers: [platform.ciAccess.registryCi],
    });
  }

  /** A test-only CI stack built from the library constructs, on its own JWT mount. */
  function synthVariant(options: { tokenBoundCidrs?: string[]; declareReport: boolean }): void {
    variantFx.synth((app: SecretStoreApp) => {
      const stack = new SecretStoreStack(app, 'ci-variant', { settings: new PlatformSettings(TEST_SETTINGS) });
      const auth = new CiJwtAuth(stack, 'jwt', { path: 'jwt-variant', keySource: JwtKeySource.publicKeys([key.publicKeyPem.trim()]) });
      const role = new CiJwtRole(stack, 'role', {
        auth,
        roleName: 'variant-ci',
        jobTimeout: TEST_JOB_TIMEOUT,
        tokenBoundCidrs: options.tokenBoundCidrs,
      });
      new CiSecret(stack, 'keep', {
        path: 'variant/keep',
        keys: ['token'],
        consumers: ['variant-job'],
        description: 'always granted',
        readers: [role],
      });
      // Dropping the declaration drops its grant (a declared CI secret without readers is refused by SSI-R8).
      if (options.declareReport) {
        new CiSecret(stack, 'report', {
          path: 'variant/report',
          keys: ['api_key'],
          consumers: ['variant-job'],
          description: 'declared and granted in the first variant only',
          readers: [role],
        });
      }
    });
  }

  beforeAll(async () => {
    key = generateSigningKey();
    store = await startStore();
    platformFx = PlatformFixture.create(store, 'lifecycle-platform');
    variantFx = PlatformFixture.create(store, 'lifecycle-variant');
    withProject = testPlatformConfig(key.publicKeyPem, { ciBoundClaims: { namespace_path: 'acme', project_id: ['42'] } });
    withoutProject = testPlatformConfig(key.publicKeyPem, { ciBoundClaims: { namespace_path: 'acme' } });
    await writeKv2(store, 'secret', 'registry/svc-extra', testSecretValues(['username', 'password']));
    await writeKv2(store, 'secret', 'variant/keep', testSecretValues(['token']));
    await writeKv2(store, 'secret', 'variant/report', testSecretValues(['api_key']));
  });

  afterAll(async () => {
    await store?.stop();
    platformFx?.cleanup();
    variantFx?.cleanup();
  });

  it('idempotence: after apply, plan -detailed-exitcode reports no changes for every stack, also after re-synthesis', async () => {
    await applyPlatform(withProject);
    expect(platformFx.stacks).toEqual(['app-roles', 'ci-access']);
    for (const stack of platformFx.stacks) {
      const plan = await platformFx.plan(stack);
      expect({ stack, code: plan.code }).toEqual({ stack, code: 0 });
      expect(plan.stdout).toMatch(/No changes\./);
    }
    // A fresh synthesis of the same configuration gives the same plan: nothing.
    platformFx.synthPlatform(withProject);
    for (const stack of platformFx.stacks) expect((await platformFx.plan(stack)).code).toBe(0);
    const again = await platformFx.engine('ci-access', ['apply', '-auto-approve']);
    expect(again.stdout).toMatch(/Resources: 0 added, 0 changed, 0 destroyed\./);
  });

  // The store keeps a PEM without its trailing newline; the library trims keys so that a key read
  // from a .pem file does not plan an update of jwt_validation_pubkeys on every run.
  it('a PEM key with its trailing newline (as in a .pem file) plans no change after apply', async () => {
    const pemFx = PlatformFixture.create(store, 'lifecycle-pem');
    try {
      pemFx.synth((app: SecretStoreApp) => {
        const stack = new SecretStoreStack(app, 'ci-pem', { settings: new PlatformSettings(TEST_SETTINGS) });
        expect(key.publicKeyPem.endsWith('-----END PUBLIC KEY-----\n')).toBe(true);
        const auth = new CiJwtAuth(stack, 'jwt', { path: 'jwt-pem', keySource: JwtKeySource.publicKeys([key.publicKeyPem]) });
        const role = new CiJwtRole(stack, 'role', { auth, roleName: 'pem-ci', jobTimeout: TEST_JOB_TIMEOUT });
        new CiSecret(stack, 'keep', { path: 'pem/keep', keys: ['token'], consumers: ['pem-job'], description: 'x', readers: [role] });
      });
      await pemFx.apply();
      expect((await pemFx.plan('ci-pem')).code).toBe(0);
    } finally {
      pemFx.cleanup();
    }
  });

  it('removing a bound claim (project_id) from the configuration removes it on the store', async () => {
    await applyPlatform(withProject);
    const before = await storeRequest(store, 'GET', 'auth/jwt/role/registry-ci');
    expect(before.body.data.bound_claims).toEqual({ namespace_path: ['acme'], project_id: ['42'] });
    const otherProject = await jwtLogin(store, 'registry-ci', job({ project_id: '43' }));
    expect({ status: otherProject.status, error: firstError(otherProject) }).toEqual({
      status: 400,
      error: 'error validating claims: claim "project_id" does not match any associated bound claim values',
    });

    platformFx.synthPlatform(withoutProject);
    const plan = await platformFx.planChanges('ci-access');
    expect(effective(plan.changes).map((c) => [c.type, c.actions])).toEqual([['vault_jwt_auth_backend_role', ['update']]]);
    await platformFx.apply();

    const after = await storeRequest(store, 'GET', 'auth/jwt/role/registry-ci');
    expect(after.body.data.bound_claims).toEqual({ namespace_path: ['acme'] });
    expect(after.body.data.bound_claims).not.toHaveProperty('project_id');
    expect((await jwtLogin(store, 'registry-ci', job({ project_id: '43' }))).status).toBe(200);
    expect((await platformFx.plan('ci-access')).code).toBe(0);
  });

  it('removing token_bound_cidrs (test-only stack) clears them on the store', async () => {
    synthVariant({ tokenBoundCidrs: ['10.0.0.0/8'], declareReport: true });
    await variantFx.apply();
    const bound = await storeRequest(store, 'GET', 'auth/jwt-variant/role/variant-ci');
    expect(bound.body.data.token_bound_cidrs).toEqual(['10.0.0.0/8']);
    const refused = await jwtLogin(store, 'variant-ci', job(), 'jwt-variant');
    expect({ status: refused.status, error: firstError(refused) }).toEqual({ status: 403, error: 'permission denied' });

    synthVariant({ declareReport: true });
    const plan = await variantFx.planChanges('ci-variant');
    expect(effective(plan.changes).map((c) => [c.type, c.actions])).toEqual([['vault_jwt_auth_backend_role', ['update']]]);
    await variantFx.apply();
    const cleared = await storeRequest(store, 'GET', 'auth/jwt-variant/role/variant-ci');
    expect(cleared.body.data.token_bound_cidrs).toEqual([]);
    const token = clientToken(await jwtLogin(store, 'variant-ci', job(), 'jwt-variant'));
    expect((await storeRequest(store, 'GET', 'secret/data/variant/keep', undefined, token)).status).toBe(200);
  });

  it('removing a grant (test-only stack: a CiSecret dropped) refuses the path after re-apply', async () => {
    synthVariant({ declareReport: true });
    await variantFx.apply();
    const token = clientToken(await jwtLogin(store, 'variant-ci', job(), 'jwt-variant'));
    expect((await storeRequest(store, 'GET', 'secret/data/variant/report', undefined, token)).status).toBe(200);

    synthVariant({ declareReport: false });
    const plan = await variantFx.planChanges('ci-variant');
    const changes = effective(plan.changes);
    expect(changes.map((c) => [c.type, c.actions])).toEqual([['vault_policy', ['update']]]);
    expect(ruleLines(changes[0].before.policy)).toEqual(['secret/data/variant/keep', 'secret/data/variant/report']);
    expect(ruleLines(changes[0].after.policy)).toEqual(['secret/data/variant/keep']);
    await variantFx.apply();

    // Policies are evaluated on every request: the token issued before the change loses the path too.
    for (const t of [token, clientToken(await jwtLogin(store, 'variant-ci', job(), 'jwt-variant'))]) {
      const report = await storeRequest(store, 'GET', 'secret/data/variant/report', undefined, t);
      expect({ status: report.status, error: firstError(report) }).toEqual({ status: 403, error: ACL_DENIED });
      expect((await storeRequest(store, 'GET', 'secret/data/variant/keep', undefined, t)).status).toBe(200);
    }
    expect((await variantFx.plan('ci-variant')).code).toBe(0);
  });

  it('change propagation: one more registry account plans only the policy update; after apply the CI token reads it; removing it revokes', async () => {
    await applyPlatform(withoutProject);
    const token = clientToken(await jwtLogin(store, 'registry-ci', job()));
    const refusedBefore = await storeRequest(store, 'GET', 'secret/data/registry/svc-extra', undefined, token);
    expect(refusedBefore.status).toBe(403);

    platformFx.synthPlatform(withoutProject, addExtraAccount);
    const ci = await platformFx.planChanges('ci-access');
    const changes = effective(ci.changes);
    expect(changes.map((c) => [c.type, c.after?.name, c.actions])).toEqual([['vault_policy', 'registry-ci', ['update']]]);
    expect(ci.changes.some((c) => c.actions.includes('delete') || c.actions.includes('create'))).toBe(false);
    expect(Object.values(ci.outputChanges).every((o) => o.actions.every((a) => a === 'no-op'))).toBe(true);
    const beforeRules = ruleLines(changes[0].before.policy);
    const afterRules = ruleLines(changes[0].after.policy);
    expect(afterRules.filter((r) => !beforeRules.includes(r))).toEqual(['secret/data/registry/svc-extra']);
    expect(beforeRules.filter((r) => !afterRules.includes(r))).toEqual([]);
    const apps = await platformFx.planChanges('app-roles');
    expect(effective(apps.changes)).toEqual([]);

    await platformFx.apply();
    expect((await platformFx.plan('ci-access')).code).toBe(0);
    for (const t of [token, clientToken(await jwtLogin(store, 'registry-ci', job()))]) {
      const read = await storeRequest(store, 'GET', 'secret/data/registry/svc-extra', undefined, t);
      expect(read.status).toBe(200);
      expect(Object.keys(read.body.data.data).sort()).toEqual(['password', 'username']);
    }

    // Removing the instantiation removes its grant on the store.
    platformFx.synthPlatform(withoutProject);
    const removal = effective((await platformFx.planChanges('ci-access')).changes);
    expect(removal.map((c) => [c.type, c.after?.name, c.actions])).toEqual([['vault_policy', 'registry-ci', ['update']]]);
    await platformFx.apply();
    const refusedAfter = await storeRequest(store, 'GET', 'secret/data/registry/svc-extra', undefined, token);
    expect({ status: refusedAfter.status, error: firstError(refusedAfter) }).toEqual({ status: 403, error: ACL_DENIED });
  });
});
