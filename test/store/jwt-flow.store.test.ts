/**
 * JWT flow on a real store (spec §4.1 flow 1, §5.1): the platform is synthesized with a test
 * configuration whose CI key source is the test's own RSA public key, applied with the real engine,
 * and then CI job tokens signed by the test log in as `registry-ci` and read exactly the six paths
 * of spec §2.3. Status codes and messages asserted here are the ones the real store returns
 * (recorded in docs/store-tests.md).
 */
import { CiJwtAuth, CiJwtRole, CiSecret, JwtKeySource, PlatformSettings, SecretStoreStack } from '../../lib';
import { generateSigningKey, gitlabJobClaims, JwksServer, JwtSigningKey, signJwt, startJwksServer } from '../support/store/jwt-signer';
import {
  SPEC_CI_SECRETS,
  clientToken,
  firstError,
  jwtLogin,
  mountKv,
  PlatformFixture,
  TEST_JOB_TIMEOUT,
  TEST_SETTINGS,
  testPlatformConfig,
  testSecretValues,
  writeKv2,
} from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';


/** Secrets CI must not read (seeded, so a refusal is an ACL refusal and not a 404). */
const NOT_FOR_CI: Record<string, string[]> = {
  'registry/svc-deployer': ['username', 'password'],
  'acme/dev/orchestrator/database': ['pg_host', 'pg_user', 'pg_password'],
  'acme/shared/identity/config': ['client_secret'],
  'acme/shared/sourcehost/config': ['root_password'],
  'acme/shared/registry/config': ['admin_password'],
  'registry/svc-orchestrator-old': ['username', 'password'],
};

const CI = TEST_SETTINGS.ciUrl;

/** The store's error message for a request its ACL refuses (HTTP 403). */
const ACL_DENIED = '1 error occurred:\n\t* permission denied\n\n';

describe('JWT flow: CI job tokens log in as registry-ci and read exactly the spec §2.3 paths', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let key: JwtSigningKey;
  let ciToken: string;
  const seeded: Record<string, Record<string, string>> = {};

  const job = (overrides = {}, options = {}) => signJwt(key.privateKey, gitlabJobClaims(overrides, { ciUrl: CI, ...options }), { kid: key.kid });
  const asCi = (method: string, path: string, body?: unknown) => storeRequest(store, method, path, body, ciToken);

  beforeAll(async () => {
    key = generateSigningKey();
    store = await startStore();
    fixture = PlatformFixture.create(store, 'jwt-flow');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    await fixture.apply();
    await mountKv(store, 'kv-other', 2);
    for (const [logical, keys] of Object.entries({ ...SPEC_CI_SECRETS, ...NOT_FOR_CI })) {
      seeded[logical] = testSecretValues(keys);
      await writeKv2(store, 'secret', logical, seeded[logical]);
    }
    await writeKv2(store, 'kv-other', 'registry/svc-orchestrator', testSecretValues(['username', 'password']));
    ciToken = clientToken(await jwtLogin(store, 'registry-ci', job()));
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it('the applied auth method trusts the test key and binds issuer, audience and the org namespace', async () => {
    const config = await storeRequest(store, 'GET', 'auth/jwt/config');
    expect(config.status).toBe(200);
    expect(config.body.data.bound_issuer).toBe(CI);
    expect(config.body.data.jwt_validation_pubkeys).toEqual([key.publicKeyPem.trim()]);
    const role = await storeRequest(store, 'GET', 'auth/jwt/role/registry-ci');
    expect(role.status).toBe(200);
    expect(role.body.data).toMatchObject({
      role_type: 'jwt',
      bound_audiences: [CI],
      bound_claims: { namespace_path: ['acme', 'acme/*'] },
      bound_claims_type: 'glob',
      user_claim: 'project_path',
      token_policies: ['registry-ci'],
      token_ttl: TEST_JOB_TIMEOUT.toSeconds(),
      token_max_ttl: TEST_JOB_TIMEOUT.toSeconds(),
      token_explicit_max_ttl: TEST_JOB_TIMEOUT.toSeconds(),
    });
  });

  it('a job token with the right audience and claims logs in as registry-ci', async () => {
    const res = await jwtLogin(store, 'registry-ci', job());
    expect(res.status).toBe(200);
    const auth = res.body.auth;
    expect(typeof auth.client_token).toBe('string');
    expect([...auth.token_policies].sort()).toEqual(['default', 'registry-ci']);
    expect(auth.metadata).toMatchObject({ role: 'registry-ci' });
    expect(auth.lease_duration).toBeGreaterThan(0);
    expect(auth.lease_duration).toBeLessThanOrEqual(TEST_JOB_TIMEOUT.toSeconds());
  });

  it('a job of a subgroup of the organisation logs in too (namespace_path glob acme/*)', async () => {
    const res = await jwtLogin(store, 'registry-ci', job({ namespace_path: 'acme/platform' }));
    expect(res.status).toBe(200);
  });

  it("the store token's TTL does not exceed the job limit, and renewal cannot extend it", async () => {
    const limit = TEST_JOB_TIMEOUT.toSeconds();
    const self = await storeRequest(store, 'GET', 'auth/token/lookup-self', undefined, ciToken);
    expect(self.status).toBe(200);
    expect(self.body.data.ttl).toBeGreaterThan(0);
    expect(self.body.data.ttl).toBeLessThanOrEqual(limit);
    expect(self.body.data.explicit_max_ttl).toBe(limit);
    expect(self.body.data.creation_ttl).toBeLessThanOrEqual(limit);
    const renewed = await storeRequest(store, 'POST', 'auth/token/renew-self', { increment: '24h' }, ciToken);
    expect(renewed.status).toBe(200);
    expect(renewed.body.auth.lease_duration).toBeLessThanOrEqual(limit);
  });

  it.each(Object.keys(SPEC_CI_SECRETS))('the CI token reads secret/data/%s with its keys', async (logical) => {
    const res = await asCi('GET', `secret/data/${logical}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data.data).sort()).toEqual([...SPEC_CI_SECRETS[logical]].sort());
    expect(res.body.data.data).toEqual(seeded[logical]);
  });

  it('the policy names exactly the six spec §2.3 paths', async () => {
    const res = await storeRequest(store, 'POST', 'sys/capabilities-self', { paths: Object.keys(SPEC_CI_SECRETS).map((p) => `secret/data/${p}`) }, ciToken);
    expect(res.status).toBe(200);
    for (const p of Object.keys(SPEC_CI_SECRETS)) expect(res.body[`secret/data/${p}`]).toEqual(['read']);
    const policy = await storeRequest(store, 'GET', 'sys/policies/acl/registry-ci');
    const rulePaths = [...String(policy.body.data.policy).matchAll(/^path "([^"]+)"/gm)].map((m) => m[1]).sort();
    expect(rulePaths).toEqual(Object.keys(SPEC_CI_SECRETS).map((p) => `secret/data/${p}`).sort());
  });

  const refused: [string, string, string][] = [
    ['svc-deployer (not readable by CI)', 'GET', 'secret/data/registry/svc-deployer'],
    ['application path orchestrator-dev', 'GET', 'secret/data/acme/dev/orchestrator/database'],
    ['application path authentik-role', 'GET', 'secret/data/acme/shared/identity/config'],
    ['application path gitlab-role', 'GET', 'secret/data/acme/shared/sourcehost/config'],
    ['application path registry', 'GET', 'secret/data/acme/shared/registry/config'],
    ['a name that only extends a granted path', 'GET', 'secret/data/registry/svc-orchestrator-old'],
    ['older form without a grant', 'GET', 'secret/registry/svc-orchestrator'],
    ['metadata of a granted secret', 'GET', 'secret/metadata/registry/svc-orchestrator'],
    ['listing the registry folder', 'LIST', 'secret/metadata/registry'],
    ['writing a granted secret', 'POST', 'secret/data/registry/svc-orchestrator'],
    ['deleting a granted secret', 'DELETE', 'secret/data/registry/svc-orchestrator'],
    ['the same logical path on another KV mount', 'GET', 'kv-other/data/registry/svc-orchestrator'],
    ['the role definition', 'GET', 'auth/jwt/role/registry-ci'],
    ['the policy', 'GET', 'sys/policies/acl/registry-ci'],
    ['a Role ID of an application', 'GET', 'auth/approle/role/orchestrator-dev/role-id'],
    ['a new Secret ID of an application', 'POST', 'auth/approle/role/orchestrator-dev/secret-id'],
    ['the mount table', 'GET', 'sys/mounts'],
    ['creating tokens', 'POST', 'auth/token/create'],
  ];
  it.each(refused)('the CI token is refused with 403: %s (%s %s)', async (_what, method, path) => {
    const res = await asCi(method, path, method === 'POST' ? { data: { username: 'x' } } : undefined);
    expect({ status: res.status, error: firstError(res) }).toEqual({ status: 403, error: ACL_DENIED });
  });

  // Refused logins: what the real store answers (spec §7 lists 403 for "job not bound to the role";
  // the store answers every claim, audience, issuer, lifetime and signature problem with 400).
  const now = () => Math.floor(Date.now() / 1000);
  const badLogins: [string, () => { role: string; jwt: string }, number, string][] = [
    ['wrong aud', () => ({ role: 'registry-ci', jwt: job({ aud: 'https://other-ci.example' }) }), 400,
      'error validating token: invalid audience (aud) claim: audience claim does not match any expected audience'],
    ['no aud claim', () => ({ role: 'registry-ci', jwt: job({ aud: undefined }) }), 400,
      'error validating token: invalid audience (aud) claim: audience claim does not match any expected audience'],
    ['unbound namespace_path (another group)', () => ({ role: 'registry-ci', jwt: job({ namespace_path: 'other-org' }) }), 400,
      'error validating claims: claim "namespace_path" does not match any associated bound claim values'],
    ['namespace_path that only starts with the org name', () => ({ role: 'registry-ci', jwt: job({ namespace_path: 'acme-evil' }) }), 400,
      'error validating claims: claim "namespace_path" does not match any associated bound claim values'],
    ['namespace_path as a number instead of a string', () => ({ role: 'registry-ci', jwt: job({ namespace_path: 42 }) }), 400,
      'error validating claims: claim "namespace_path" does not match any associated bound claim values'],
    ['no namespace_path claim', () => ({ role: 'registry-ci', jwt: job({ namespace_path: undefined }) }), 400,
      'error validating claims: claim "namespace_path" is missing'],
    ['expired token', () => ({ role: 'registry-ci', jwt: job({}, { now: now() - 3600 }) }), 400,
      'error validating token: invalid expiration time (exp) claim: token is expired'],
    ['token not yet valid (nbf in the future)', () => ({ role: 'registry-ci', jwt: job({ nbf: now() + 3600, iat: now() + 3600 }) }), 400,
      'error validating token: invalid not before (nbf) claim: token not yet valid'],
    ['signed by another key', () => {
      const other = generateSigningKey();
      return { role: 'registry-ci', jwt: signJwt(other.privateKey, gitlabJobClaims({}, { ciUrl: CI }), { kid: other.kid }) };
    }, 400, 'error validating token: error verifying token signature: no known key successfully validated the token signature'],
    ['payload altered after signing', () => {
      const [h, , sig] = job().split('.');
      const forged = Buffer.from(JSON.stringify(gitlabJobClaims({ project_id: '1' }, { ciUrl: CI }))).toString('base64url');
      return { role: 'registry-ci', jwt: `${h}.${forged}.${sig}` };
    }, 400, 'error validating token: error verifying token signature: no known key successfully validated the token signature'],
    ['unsigned token (alg none)', () => ({ role: 'registry-ci', jwt: signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: CI }), { alg: 'none' }) }), 400,
      'error validating token: error verifying token signature: no known key successfully validated the token signature'],
    ['not a JWT', () => ({ role: 'registry-ci', jwt: 'not-a-jwt' }), 400,
      'error validating token: error verifying token signature: go-jose/go-jose: compact JWS format must have three parts'],
    ['wrong issuer', () => ({ role: 'registry-ci', jwt: job({ iss: 'https://other-ci.example' }) }), 400,
      'error validating token: invalid issuer (iss) claim'],
    ['no user claim (project_path)', () => ({ role: 'registry-ci', jwt: job({ project_path: undefined }) }), 400,
      'claim "project_path" not found in token'],
    ['unknown role', () => ({ role: 'no-such-role', jwt: job() }), 400, 'role "no-such-role" could not be found'],
    ['no role given', () => ({ role: '', jwt: job() }), 400, 'missing role'],
    ['empty jwt', () => ({ role: 'registry-ci', jwt: '' }), 400, 'missing token'],
  ];
  it.each(badLogins)('a login is refused: %s', async (_what, make, status, message) => {
    const { role, jwt } = make();
    const res = await jwtLogin(store, role, jwt);
    expect(Boolean(res.body?.auth)).toBe(false);
    expect({ status: res.status, error: firstError(res), errors: res.body?.errors?.length }).toEqual({ status, error: message, errors: 1 });
  });

  it('RS512 is accepted as well (jwt_supported_algs is left empty)', async () => {
    const res = await jwtLogin(store, 'registry-ci', signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: CI }), { alg: 'RS512', kid: key.kid }));
    expect(res.status).toBe(200);
  });

  it('aud may also be a list that holds the CI URL', async () => {
    const res = await jwtLogin(store, 'registry-ci', job({ aud: ['https://other.example', CI] }));
    expect(res.status).toBe(200);
  });

  it('a store token revoked at the end of the job reads nothing any more', async () => {
    const token = clientToken(await jwtLogin(store, 'registry-ci', job()));
    expect((await storeRequest(store, 'GET', 'secret/data/registry/svc-orchestrator', undefined, token)).status).toBe(200);
    expect((await storeRequest(store, 'POST', 'auth/token/revoke-self', undefined, token)).status).toBe(204);
    const after = await storeRequest(store, 'GET', 'secret/data/registry/svc-orchestrator', undefined, token);
    expect({ status: after.status, error: firstError(after) }).toEqual({ status: 403, error: expect.stringMatching(/permission denied|invalid token/) });
  });

  describe('with a JWKS served on 127.0.0.1 (test-only stack: CiJwtAuth with JwtKeySource.jwksUrl)', () => {
    let jwks: JwksServer;
    let jwksFixture: PlatformFixture;
    let first: JwtSigningKey;
    const jwksJob = (k: JwtSigningKey) => signJwt(k.privateKey, gitlabJobClaims({}, { ciUrl: CI }), { kid: k.kid });

    beforeAll(async () => {
      first = generateSigningKey();
      jwks = await startJwksServer([first]);
      jwksFixture = PlatformFixture.create(store, 'jwks');
      jwksFixture.synth((app) => {
        const stack = new SecretStoreStack(app, 'ci-jwks', { settings: new PlatformSettings(TEST_SETTINGS) });
        const auth = new CiJwtAuth(stack, 'jwt', { path: 'jwt-jwks', keySource: JwtKeySource.jwksUrl(jwks.url) });
        const role = new CiJwtRole(stack, 'role', { auth, roleName: 'jwks-ci', jobTimeout: TEST_JOB_TIMEOUT });
        new CiSecret(stack, 'e2e-test-user', {
          path: 'orchestrator/e2e-test-user',
          keys: ['username', 'password'],
          consumers: ['e2e-test'],
          description: 'end-to-end test user',
          readers: [role],
        });
      });
      await jwksFixture.apply();
    });

    afterAll(async () => {
      await jwks?.stop();
      jwksFixture?.cleanup();
    });

    it('a token signed with a served key logs in and reads its path; another key is refused', async () => {
      expect((await storeRequest(store, 'GET', 'auth/jwt-jwks/config')).body.data.jwks_url).toBe(jwks.url);
      const token = clientToken(await jwtLogin(store, 'jwks-ci', jwksJob(first), 'jwt-jwks'));
      const read = await storeRequest(store, 'GET', 'secret/data/orchestrator/e2e-test-user', undefined, token);
      expect(read.status).toBe(200);
      expect(read.body.data.data).toEqual(seeded['orchestrator/e2e-test-user']);
      const other = await jwtLogin(store, 'jwks-ci', jwksJob(generateSigningKey()), 'jwt-jwks');
      expect({ status: other.status, error: firstError(other) }).toEqual({
        status: 400,
        error: expect.stringMatching(/^error validating token: error verifying token signature/),
      });
    });

    it('a rotated key is picked up from the JWKS without re-applying', async () => {
      const next = generateSigningKey();
      jwks.setKeys([next, first]);
      const res = await jwtLogin(store, 'jwks-ci', jwksJob(next), 'jwt-jwks');
      expect(res.status).toBe(200);
    });
  });
});
