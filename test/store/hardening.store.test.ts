/**
 * Issue 11 on a real store: nothing a configuration says can widen access beyond what it declares
 * (and issue 26's mount settings, at the end).
 *
 * The platform is applied once. Then every configuration the issue found accepted (and, applied,
 * giving access nothing declared) is synthesized again: each is now refused with the rule that
 * forbids it, the output directory keeps the last good synthesis byte for byte, no staging directory
 * is left, and the engine plans no change on the store. Where the refusal rests on a store fact
 * (a glob claim matching another group, a policy comment breaking out of its line, the built-in
 * policies), the fact is shown on the store itself.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppRoleApplication, AppRoleAuth, CiSecret, Duration, JwtKeySource, PolicyDocument, SecretStoreValidationError } from '../../lib';
import { renderPolicyHcl } from '../../lib/render/policy-hcl';
import { Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt, startJwksServer } from '../support/store/jwt-signer';
import { readerPolicy } from '../../lib/reconcile/live-store-reader';
import { StoreTarget } from '../../lib/model/store-target';
import { clientToken, firstError, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/store-facts';
import { RESERVED_MOUNT_PATHS_BY_STORE, isReservedMountPath } from '../../lib/model/reserved-store-names';

const CI = TEST_SETTINGS.ciUrl;
/** Seen on OpenBao: AppRole and JWT role names and policy names are case-insensitive (a name differing only in case is the same role or policy). */
/**
 * HTTP status of mounting at each probed path on the selected store: 400 exactly where the library's
 * reserved list of that store (RESERVED_MOUNT_PATHS_BY_STORE) says so, 204 elsewhere. Seen: OpenBao
 * refuses auth methods at token, identity and cubbyhole; HashiCorp Vault only at token.
 */
const RESERVED_MOUNT_FACTS: Record<string, number> = Object.fromEntries([
  ...['sys', 'identity', 'cubbyhole', 'audit', 'auth', 'token'].map((m) => [`secrets ${m}`, isReservedMountPath(m, 'secrets', storeKind()) ? 400 : 204]),
  ...['token', 'sys', 'identity', 'cubbyhole'].map((m) => [`auth ${m}`, isReservedMountPath(m, 'auth', storeKind()) ? 400 : 204]),
]);
const CASE_FACTS = { approleLower: 200, jwtLower: 200, policyNames: ['caseprobe'] };
/** The construct id of the issue: it ended the policy comment and added a rule granting sudo on sys/. */
const BREAKOUT_ID = 'x\npath "sys/*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }\n#';

describe('refused configurations on a real store (issue 11)', () => {
  let store: RunningStore;
  // Made before the test table, which is built when the file is collected.
  const key: JwtSigningKey = generateSigningKey();
  const good: PlatformConfig = testPlatformConfig(key.publicKeyPem);
  let fixture: PlatformFixture;
  /** cdk.tf.json of each stack after the good synthesis. */
  const synthesized: Record<string, string> = {};
  const stackFile = (stack: string) => path.join(fixture.stackDir(stack), 'cdk.tf.json');

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'hardening');
    fixture.synthPlatform(good);
    await fixture.apply();
    for (const stack of fixture.stacks) synthesized[stack] = fs.readFileSync(stackFile(stack), 'utf8');
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  const app = (p: Platform, props: Partial<ConstructorParameters<typeof AppRoleApplication>[2]>) =>
    new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev', ...props });
  const ciSecret = (p: Platform, id: string, props: Partial<ConstructorParameters<typeof CiSecret>[2]>) =>
    new CiSecret(p.ciAccess, id, { path: 'sonar/token', keys: ['token'], consumers: ['scan'], description: 'scan', readers: [p.ciAccess.registryCi], ...props });

  type Refused = [string, PlatformConfig, ((p: Platform) => void) | undefined, string];
  const refused = (): Refused[] => [
    ['a construct id that breaks out of the policy comment', good, (p) => ciSecret(p, BREAKOUT_ID, {}), '[ci-access] id = "x\\npath \\"sys'],
    ['a description with U+2028 (YAML comment breakout)', good, (p) => ciSecret(p, 'x', { description: 'scan\u2028evil: 1' }), '[ci-access/x] description = "scan\\u2028evil: 1": must be one line'],
    ['an application role named default', good, (p) => app(p, { roleName: 'default' }), '[app-roles/x/policy] SSI-R9 name = "default"'],
    ['an application role named root', good, (p) => app(p, { roleName: 'root' }), '[app-roles/x/policy] SSI-R9 name = "root"'],
    ['an AppRole mount at token', good, (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'token' }), '[app-roles/x/backend] SSI-R9 path = "token"'],
    ['namespace_path "*"', { ...good, ciBoundClaims: { namespace_path: '*' } }, undefined, '[ci-access/registry-ci] SSI-R10 boundClaims = {"namespace_path":["*"]}'],
    ['namespace_path "acme*"', { ...good, ciBoundClaims: { namespace_path: 'acme*' } }, undefined, '[ci-access/registry-ci] SSI-R10 boundClaims = {"namespace_path":["acme*"]}'],
    ['an empty claim name', { ...good, ciBoundClaims: { '': 'x', namespace_path: 'acme' } }, undefined, '[ci-access/registry-ci] boundClaims[""] = ""'],
    ['a CI URL with a query and shell characters', { ...good, settings: { ...good.settings, ciUrl: `${CI}/?a=$(id)` } }, undefined, '[ci-access] settings.ciUrl = '],
    ['a JWKS URL with a space', { ...good, ciKeySource: JwtKeySource.jwksUrl(`${CI}/oauth keys`) }, undefined, '[ci-access/jwt] keySource.jwks_url = '],
    ['secretIdNumUses -1', good, (p) => app(p, { secretIdNumUses: -1 }), '[app-roles/x] secretIdNumUses = -1'],
    ['a CIDR that is not one', good, (p) => app(p, { tokenBoundCidrs: ['10.0.0.0/40'] }), '[app-roles/x] tokenBoundCidrs = "10.0.0.0/40"'],
    ['a 10-year job timeout', { ...good, ciJobTimeout: Duration.hours(24 * 3650) }, undefined, '[ci-access/registry-ci] jobTimeout = "3650d": must be at most 1d'],
    ['Duration.parse("1 day")', good, (p) => app(p, { tokenTtl: Duration.parse('1 day') }), '[app-roles/x] tokenTtl = "1 day": is not a duration'],
  ];

  it.each(refused().map((r) => [r[0], r] as const))('%s: refused, nothing written, the store plans no change', async (_title, [, config, extend, expected]) => {
    let error: unknown;
    try {
      fixture.synthPlatform(config, extend && ((p) => extend(p)));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SecretStoreValidationError);
    expect((error as SecretStoreValidationError).problems.map((p) => `[${p.constructPath}] ${p.message}`).some((m) => m.startsWith(expected))).toBe(true);
    for (const stack of Object.keys(synthesized)) expect(fs.readFileSync(stackFile(stack), 'utf8')).toBe(synthesized[stack]);
    expect(fs.readdirSync(fixture.dir).filter((f) => f.includes('staging'))).toEqual([]);
  });

  it('after all refusals the engine plans no change on either stack', async () => {
    for (const stack of Object.keys(synthesized)) expect((await fixture.plan(stack)).code).toBe(0);
  });

  it('the store reads an encoded hostile construct path as a comment: no rule is added (registry-ci gets no sudo on sys/)', async () => {
    // What validation now refuses is also harmless past the encoder: the store's own HCL parser
    // sees one rule, and a token of the policy has no capability on sys/.
    const policy = new PolicyDocument('hostile-probe');
    policy.addRule('secret/data/probe', ['read'], `ci-access/${BREAKOUT_ID}`);
    const text = renderPolicyHcl(policy);
    expect((await storeRequest(store, 'PUT', 'sys/policies/acl/hostile-probe', { policy: text })).status).toBe(204);
    const token = clientToken(await storeRequest(store, 'POST', 'auth/token/create', { policies: ['hostile-probe'], no_default_policy: true, ttl: '5m' }));
    // Asked with the root token: a token without the default policy may not call capabilities-self.
    const caps = await storeRequest(store, 'POST', 'sys/capabilities', { token, paths: ['sys/mounts', 'sys/policies/acl/x', 'secret/data/probe'] });
    const data = caps.body.data ?? caps.body;
    expect([caps.status, data['sys/mounts'], data['sys/policies/acl/x'], data['secret/data/probe']]).toEqual([200, ['deny'], ['deny'], ['read']]);
    const stored = await storeRequest(store, 'GET', 'sys/policies/acl/hostile-probe');
    expect([...String(stored.body.data.policy).matchAll(/^path "([^"]*)"/gm)].map((m) => m[1])).toEqual(['secret/data/probe']);
  });

  it('why SSI-R10: a glob "acme*" role lets a job of the group acme-evil log in', async () => {
    const role = {
      role_type: 'jwt',
      bound_audiences: [CI],
      bound_claims: { namespace_path: 'acme*' },
      bound_claims_type: 'glob',
      user_claim: 'project_path',
      token_policies: ['default'],
      token_ttl: 60,
    };
    expect((await storeRequest(store, 'POST', 'auth/jwt/role/glob-probe', role)).status).toBe(204);
    const jwt = signJwt(key.privateKey, gitlabJobClaims({ namespace_path: 'acme-evil', project_path: 'acme-evil/x' }, { ciUrl: CI }), { kid: key.kid });
    const login = await jwtLogin(store, 'glob-probe', jwt);
    expect(login.status).toBe(200);
    // The platform's role (acme, acme/*) refuses the same job.
    const refusedLogin = await jwtLogin(store, 'registry-ci', jwt);
    expect([refusedLogin.status, firstError(refusedLogin)]).toEqual([400, 'error validating claims: claim "namespace_path" does not match any associated bound claim values']);
  });

  it('why SSI-R9: root and response-wrapping are the store\'s own; default is writable and on every token', async () => {
    for (const name of ['root', 'response-wrapping']) {
      const res = await storeRequest(store, 'PUT', `sys/policies/acl/${name}`, { policy: 'path "x" { capabilities = ["read"] }' });
      expect(res.status).toBe(400);
    }
    const token = clientToken(await storeRequest(store, 'POST', 'auth/token/create', { policies: ['hostile-probe'], ttl: '5m' }));
    const lookup = await storeRequest(store, 'GET', 'auth/token/lookup-self', undefined, token);
    expect(lookup.body.data.policies).toEqual(['default', 'hostile-probe']);
  });

  it('role and policy names differing only in case: what the store does (the grammar refuses upper case, so no two declared names can collide)', async () => {
    const approle = await storeRequest(store, 'POST', 'auth/approle/role/CaseProbe', { token_policies: ['default'] });
    expect([200, 204]).toContain(approle.status);
    const approleLower = await storeRequest(store, 'GET', 'auth/approle/role/caseprobe');
    const jwt = await storeRequest(store, 'POST', 'auth/jwt/role/CaseProbe', { role_type: 'jwt', bound_audiences: [CI], user_claim: 'sub', bound_claims: { namespace_path: 'acme' } });
    expect([200, 204]).toContain(jwt.status);
    const jwtLower = await storeRequest(store, 'GET', 'auth/jwt/role/caseprobe');
    expect([200, 204]).toContain((await storeRequest(store, 'PUT', 'sys/policies/acl/CaseProbe', { policy: 'path "x" { capabilities = ["read"] }' })).status);
    const policies = (await storeRequest(store, 'LIST', 'sys/policies/acl')).body.data.keys as string[];
    expect({ approleLower: approleLower.status, jwtLower: jwtLower.status, policyNames: policies.filter((p) => /caseprobe/i.test(p)) }).toEqual(CASE_FACTS);
  });

  it(`why the reserved mounts: ${storeKind()} refuses a secrets engine at sys, identity, cubbyhole, audit, auth and an auth method at ${RESERVED_MOUNT_PATHS_BY_STORE[storeKind()].auth.join(', ')}, exactly the library's list for it`, async () => {
    const statuses: Record<string, number> = {};
    for (const mount of ['sys', 'identity', 'cubbyhole', 'audit', 'auth', 'token']) {
      statuses[`secrets ${mount}`] = (await storeRequest(store, 'POST', `sys/mounts/${mount}`, { type: 'kv' })).status;
    }
    for (const mount of ['token', 'sys', 'identity', 'cubbyhole']) {
      statuses[`auth ${mount}`] = (await storeRequest(store, 'POST', `sys/auth/${mount}`, { type: 'approle' })).status;
    }
    expect(statuses).toEqual(RESERVED_MOUNT_FACTS);
  });
});

/**
 * Issue 26: the store facts behind the mount-settings checks (lib/model/auth-mount-tune.ts), the
 * loopback rule (lib/private/loopback-host.ts) and the reader policy written per LIST lookup
 * (lib/reconcile/live-store-reader.ts). No platform is applied: each fact is asked of the store directly.
 */
describe('mount settings on a real store (issue 26)', () => {
  let store: RunningStore;
  beforeAll(async () => {
    store = await startStore();
  });
  afterAll(async () => {
    await store?.stop();
  });

  /** An AppRole mount tuned to `tokenType`, one role declaring `service` (as every application does), and a login. */
  async function appRoleLogin(mount: string, tokenType: string): Promise<{ auth: any; renew: { status: number; error: string } }> {
    expect((await storeRequest(store, 'POST', `sys/auth/${mount}`, { type: 'approle' })).status).toBe(204);
    expect((await storeRequest(store, 'POST', `sys/auth/${mount}/tune`, { token_type: tokenType })).status).toBe(204);
    const role = { token_type: 'service', token_ttl: '1h', token_max_ttl: '24h', token_policies: ['default'] };
    expect([200, 204]).toContain((await storeRequest(store, 'POST', `auth/${mount}/role/agent`, role)).status);
    const roleId = (await storeRequest(store, 'GET', `auth/${mount}/role/agent/role-id`)).body.data.role_id;
    const secretId = (await storeRequest(store, 'POST', `auth/${mount}/role/agent/secret-id`, {})).body.data.secret_id;
    const login = await storeRequest(store, 'POST', `auth/${mount}/login`, { role_id: roleId, secret_id: secretId }, null);
    expect(login.status).toBe(200);
    const renewed = await storeRequest(store, 'POST', 'auth/token/renew-self', {}, login.body.auth.client_token);
    return { auth: login.body.auth, renew: { status: renewed.status, error: firstError(renewed) ?? '' } };
  }

  it('a mount tuned to batch overrides a role that declares service: a batch token, which renew-self refuses', async () => {
    const { auth, renew } = await appRoleLogin('approle-batch', 'batch');
    expect([auth.token_type, auth.renewable]).toEqual(['batch', false]);
    expect(renew.status).toBe(400);
    expect(renew.error).toMatch(/batch token/i);
  });

  it('default-batch leaves a role that declares service a renewable service token', async () => {
    const { auth, renew } = await appRoleLogin('approle-default-batch', 'default-batch');
    expect([auth.token_type, auth.renewable]).toEqual(['service', true]);
    expect(renew.status).toBe(200);
  });

  it('the store refuses a tune whose default lease TTL is above the maximum', async () => {
    expect((await storeRequest(store, 'POST', 'sys/auth/approle-ttl', { type: 'approle' })).status).toBe(204);
    const tuned = await storeRequest(store, 'POST', 'sys/auth/approle-ttl/tune', { default_lease_ttl: '2h', max_lease_ttl: '1h' });
    expect(tuned.status).toBe(400);
    expect(firstError(tuned)).toMatch(/lease TTL/i);
    // At most the maximum is accepted.
    expect((await storeRequest(store, 'POST', 'sys/auth/approle-ttl/tune', { default_lease_ttl: '1h', max_lease_ttl: '1h' })).status).toBe(204);
  });

  it('a .localhost name is not this machine to the store: a JWKS URL at sso.localhost is not fetched, the same URL at 127.0.0.1 is', async () => {
    const jwks = await startJwksServer([generateSigningKey()]);
    try {
      expect((await storeRequest(store, 'POST', 'sys/auth/jwt-localhost', { type: 'jwt' })).status).toBe(204);
      const viaName = await storeRequest(store, 'POST', 'auth/jwt-localhost/config', { jwks_url: jwks.url.replace('127.0.0.1', 'sso.localhost') });
      expect(viaName.status).toBe(400);
      expect(jwks.fetches).toBe(0);
      const viaAddress = await storeRequest(store, 'POST', 'auth/jwt-localhost/config', { jwks_url: jwks.url });
      expect(viaAddress.status).toBe(204);
      expect(jwks.fetches).toBeGreaterThan(0);
    } finally {
      await jwks.stop();
    }
  });

  it.each([
    ['for an unknown version', undefined],
    [`for the older LIST lookup (${storeKind()} before the fix)`, new StoreTarget(storeKind(), storeKind() === 'vault' ? '1.21.1' : '2.4.0')],
    [`for the newer LIST lookup (${storeKind()} with the fix)`, new StoreTarget(storeKind(), storeKind() === 'vault' ? '2.0.3' : '2.6.0')],
  ])('the reader policy written %s lists the roles of an AppRole mount on this store', async (_what, target) => {
    expect((await storeRequest(store, 'POST', 'sys/auth/approle-reader', { type: 'approle' })).status).toBeLessThan(500);
    expect([200, 204]).toContain((await storeRequest(store, 'POST', 'auth/approle-reader/role/listed', { token_policies: ['default'] })).status);
    expect((await storeRequest(store, 'PUT', 'sys/policies/acl/reader-probe', { policy: readerPolicy(target) })).status).toBe(204);
    const token = clientToken(await storeRequest(store, 'POST', 'auth/token/create', { policies: ['reader-probe'], no_default_policy: true, ttl: '5m' }));
    const listed = await storeRequest(store, 'LIST', 'auth/approle-reader/role', undefined, token);
    expect([listed.status, listed.body?.data?.keys]).toEqual([200, ['listed']]);
  });
});
