/**
 * Access invariants on a real store (issue 38): the platform is applied, then a policy is made by
 * hand on the store and attached to the CI role `registry-ci`, granting a read the security team's
 * invariant forbids. The synthesized configuration keeps the invariant (`invariants check` on it:
 * exit 0); `invariants check live` finds the hand-made policy; a job of that role logs in, reads the
 * forbidden path (the store allows it), and `usage --invariants` reports the request as forbidden.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startAuditedStore } from '../support/store/audit-device';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig, testSecretValues, writeKv2 } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/store-facts';

/** The path the invariant forbids CI to read, seeded so that the read is the ACL's to allow. */
const PROD = 'acme/prod/payments/database';
const HAND_MADE = 'hand-made-prod-read';

describe(`access invariants on ${storeKind()}: a hand-made policy found live and its request in the audit log`, () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let key: JwtSigningKey;
  let dir: string;
  let log: string;
  let invariants: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-invariants-'));
    log = path.join(dir, 'audit.log');
    invariants = path.join(dir, 'secretstore-iac-invariants.yaml');
    fs.writeFileSync(
      invariants,
      [
        'invariants:',
        '  - id: no-ci-reads-prod',
        '    reason: CI jobs never read production secrets',
        '    who: ci',
        '    paths: ["secret/data/+/prod/*"]',
        '    capabilities: [read]',
        // Every invariant selects a declared identity (issue 45: one that selects nobody is an error): this platform declares no people.
        '  - id: no-application-sudo',
        '    reason: applications never get sudo',
        '    who: application',
        '    paths: ["*"]',
        '    capabilities: [sudo]',
        '',
      ].join('\n'),
    );
    key = generateSigningKey();
    store = await startAuditedStore(log);
    fixture = PlatformFixture.create(store, 'invariants');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    await fixture.apply();
    for (const logical of [PROD, 'registry/svc-orchestrator']) await writeKv2(store, 'secret', logical, testSecretValues(['value']));
    // Made by hand, directly on the store: the configuration knows nothing of it. The JWT plugin
    // takes an update without `role_type` for an OIDC role ("allowed_redirect_uris must be set"), so it is sent again.
    expect((await storeRequest(store, 'PUT', `sys/policies/acl/${HAND_MADE}`, { policy: 'path "secret/data/acme/prod/*" {\n  capabilities = ["read"]\n}\n' })).status).toBe(204);
    const role = await storeRequest(store, 'GET', 'auth/jwt/role/registry-ci');
    const policies: string[] = role.body.data.token_policies;
    const updated = await storeRequest(store, 'POST', 'auth/jwt/role/registry-ci', { role_type: role.body.data.role_type, token_policies: [...policies, HAND_MADE] });
    expect([updated.status, updated.body?.errors]).toEqual([204, undefined]);
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runStoreCli(args, { cwd: dir, addr: store.addr, token: store.rootToken });
  const synthesized = () => path.join(fixture.dir, 'cdktf.out');

  it('the configuration keeps the invariants; the live store breaks one, through the hand-made policy on registry-ci', async () => {
    const declared = await cli('invariants', 'check', synthesized(), '--invariants', invariants, '--format', 'json');
    expect([declared.code, declared.stderr, JSON.parse(declared.stdout).violations]).toEqual([0, '', []]);
    const live = await cli('invariants', 'check', 'live', '--invariants', invariants, '--format', 'json');
    expect(live.stderr).toBe('');
    expect(live.code).toBe(1);
    const found = JSON.parse(live.stdout).violations;
    expect(found).toEqual([
      expect.objectContaining({
        invariant: 'no-ci-reads-prod',
        identity: 'jwt/registry-ci',
        kind: 'ci',
        capabilities: ['read'],
        rule: 'secret/data/acme/prod/*',
        policies: [HAND_MADE],
        path: 'secret/data/acme/prod/w',
      }),
    ]);
    const text = await cli('invariants', 'check', 'live', '--invariants', invariants);
    expect(text.stdout).toContain(`jwt/registry-ci (ci) can read secret/data/acme/prod/w (rule "secret/data/acme/prod/*", policy ${HAND_MADE}): breaks invariant "no-ci-reads-prod"`);
  });

  it('a job of registry-ci reads the production path (the store allows it) and usage reports the request as forbidden', async () => {
    const jwt = signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
    const token = clientToken(await jwtLogin(store, 'registry-ci', jwt));
    expect((await storeRequest(store, 'GET', `secret/data/${PROD}`, undefined, token)).status).toBe(200);
    expect((await storeRequest(store, 'GET', 'secret/data/registry/svc-orchestrator', undefined, token)).status).toBe(200);
    const run = await cli('usage', synthesized(), '--log', log, '--invariants', invariants, '--format', 'json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.forbidden).toEqual([
      { invariant: 'no-ci-reads-prod', reason: 'CI jobs never read production secrets', identity: 'jwt/registry-ci', kind: 'ci', operation: 'read', path: `secret/data/${PROD}`, allowed: 1, denied: 0, lastTime: expect.stringMatching(/^\d{4}-/) },
    ]);
    const md = await cli('usage', synthesized(), '--log', log, '--invariants', invariants);
    expect(md.stdout).toContain('## Requests an access invariant forbids');
    expect(md.stdout).toContain(`| \`no-ci-reads-prod\` | \`jwt/registry-ci\` | ci | read | \`secret/data/${PROD}\` | 1 | 0 |`);
    expect(md.stdout.includes(token) || md.stdout.includes(jwt)).toBe(false);
  });

  it('the store\'s default policy counts: changed to read production, an application without token_no_default_policy reads it (200) and the live check reports it through default; with token_no_default_policy its token gets 403 and nothing is reported', async () => {
    const appInvariants = path.join(dir, 'application-invariants.yaml');
    fs.writeFileSync(appInvariants, ['invariants:', '  - id: no-app-reads-prod', '    reason: only the production application reads production', '    who: application', '    paths: ["secret/data/+/prod/*"]', '    capabilities: [read]', ''].join('\n'));
    const ROLE = 'orchestrator-dev';
    const login = async () => {
      const roleId = (await storeRequest(store, 'GET', `auth/approle/role/${ROLE}/role-id`)).body.data.role_id as string;
      const secretId = (await storeRequest(store, 'POST', `auth/approle/role/${ROLE}/secret-id`)).body.data.secret_id as string;
      const res = await appRoleLogin(store, roleId, secretId);
      return { token: clientToken(res), policies: [...res.body.auth.policies].sort() as string[] };
    };
    const reported = async () => {
      const run = await cli('invariants', 'check', 'live', '--invariants', appInvariants, '--format', 'json');
      expect(run.stderr).toBe('');
      return (JSON.parse(run.stdout).violations as { identity: string; policies: string[] }[]).filter((v) => v.identity === `approle/${ROLE}`);
    };
    const stock = (await storeRequest(store, 'GET', 'sys/policies/acl/default')).body.data.policy as string;
    expect((await storeRequest(store, 'GET', `auth/approle/role/${ROLE}`)).body.data.token_no_default_policy).toBe(false);
    expect(await reported()).toEqual([]);
    try {
      expect((await storeRequest(store, 'PUT', 'sys/policies/acl/default', { policy: `${stock}\npath "secret/data/acme/prod/*" {\n  capabilities = ["read"]\n}\n` })).status).toBe(204);
      // The store attaches default to the token: the read is allowed through it alone.
      const withDefault = await login();
      expect(withDefault.policies).toContain('default');
      expect((await storeRequest(store, 'GET', `secret/data/${PROD}`, undefined, withDefault.token)).status).toBe(200);
      expect(await reported()).toEqual([expect.objectContaining({ invariant: 'no-app-reads-prod', kind: 'application', capabilities: ['read'], rule: 'secret/data/acme/prod/*', policies: ['default'] })]);
      // token_no_default_policy: the store leaves default off, and so does the check.
      expect((await storeRequest(store, 'POST', `auth/approle/role/${ROLE}`, { token_no_default_policy: true })).status).toBe(204);
      const without = await login();
      expect(without.policies).not.toContain('default');
      expect((await storeRequest(store, 'GET', `secret/data/${PROD}`, undefined, without.token)).status).toBe(403);
      expect(await reported()).toEqual([]);
    } finally {
      await storeRequest(store, 'POST', `auth/approle/role/${ROLE}`, { token_no_default_policy: false });
      await storeRequest(store, 'PUT', 'sys/policies/acl/default', { policy: stock });
    }
  });
});
