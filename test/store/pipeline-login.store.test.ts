/**
 * The configuration pipeline's jobs log in with the tool's own JWT login (lib/pipeline/pipeline-login.ts;
 * issue 48), on the real store: a JWT auth method trusting the test's own key (its public key in
 * `jwt_validation_pubkeys`, no bypass), a role bound like the pipeline's plan role (audience, project,
 * protected ref). A job token the test signs logs in: the job's steps get the role's token, which reads
 * what the role's policy allows and is revoked when the job ends. Each refusal is the store's own
 * answer, said as spec §7 says it (wrong audience, a job not bound, a token of another key, a role the
 * mount does not have). On OpenBao, the same in a namespace.
 */
import { PipelineJobLog } from '../../lib/pipeline/pipeline-job-log';
import { pipelineLogin } from '../../lib/pipeline/pipeline-login';
import { JwtLoginError } from '../../lib/store/jwt-login';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';

const ROLE = 'secretstore-iac-plan';
const CI = 'https://gitlab.acme.example';
const PROJECT = 'acme/secrets-config';

describe('a configuration pipeline job logs in with its ID token, in its own process', () => {
  let store: RunningStore;
  let key: JwtSigningKey;
  const other = generateSigningKey();

  /** A request in `namespace` (root when empty), with `token` (root's by default). */
  const request = async (namespace: string, method: string, p: string, body?: unknown, token: string | null = store.rootToken) => {
    const headers: Record<string, string> = { ...(token ? { 'X-Vault-Token': token } : {}), ...(namespace ? { 'X-Vault-Namespace': namespace } : {}) };
    const res = await fetch(`${store.addr}/v1/${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : '' };
  };

  /** The JWT method and the plan role in `namespace`, and a policy reading one path. */
  async function platform(namespace: string): Promise<void> {
    if (namespace !== '') expect((await storeRequest(store, 'POST', `sys/namespaces/${namespace}`, {})).status).toBeLessThan(300);
    for (const [m, p, b] of [
      ['POST', 'sys/auth/jwt', { type: 'jwt' }],
      ['POST', 'auth/jwt/config', { bound_issuer: CI, jwt_validation_pubkeys: [key.publicKeyPem] }],
      ['PUT', `sys/policies/acl/${ROLE}`, { policy: 'path "sys/policies/acl/*" {\n  capabilities = ["read"]\n}\n' }],
      ['POST', `auth/jwt/role/${ROLE}`, { role_type: 'jwt', bound_audiences: [CI], user_claim: 'project_path', bound_claims: { project_path: PROJECT, ref_protected: 'false' }, token_policies: [ROLE], token_ttl: '10m' }],
    ] as const) {
      const res = await request(namespace, m, p, b);
      expect([p, res.status < 300 ? 'ok' : res.body]).toEqual([p, 'ok']);
    }
  }

  const jobToken = (overrides: Record<string, unknown> = {}, signer: JwtSigningKey = key) =>
    signJwt(signer.privateKey, gitlabJobClaims({ project_path: PROJECT, ref: 'feature', ref_protected: 'false', ...overrides }, { ciUrl: CI }), { kid: signer.kid });
  const jobEnv = (namespace: string, jwt: string) => ({
    SECRETSTORE_ADDR: store.addr,
    SECRETSTORE_IAC_LOGIN_ROLE: ROLE,
    SECRETSTORE_IAC_LOGIN_MOUNT: 'jwt',
    SECRETSTORE_IAC_LOGIN_AUDIENCE: CI,
    SECRETSTORE_ID_TOKEN: jwt,
    ...(namespace ? { SECRETSTORE_IAC_LOGIN_NAMESPACE: namespace } : {}),
  });

  beforeAll(async () => {
    key = generateSigningKey();
    store = await startStore();
    await platform('');
  });
  afterAll(async () => {
    await store?.stop();
  });

  const namespaces = storeKind() === 'vault' ? [''] : ['', 'team-a'];
  it.each(namespaces.map((n) => [n === '' ? 'the root namespace' : `namespace ${n}`, n]))(
    '%s: the job\'s steps get the role\'s token (its policy\'s reads allowed, others refused), revoked when the job ends; no secret in the log',
    async (_name, namespace) => {
      if (namespace !== '') await platform(namespace);
      const lines: string[] = [];
      const jwt = jobToken();
      const session = await pipelineLogin(jobEnv(namespace, jwt), new PipelineJobLog('plan', (l) => lines.push(l)));
      const token = session.env.VAULT_TOKEN!;
      expect(session.env.SECRETSTORE_ID_TOKEN).toBeUndefined();
      expect(session.env.VAULT_NAMESPACE).toBe(namespace === '' ? undefined : namespace);
      const self = await request(namespace, 'GET', 'auth/token/lookup-self', undefined, token);
      expect(self.status).toBe(200);
      expect([...self.body.data.policies].sort()).toEqual(['default', ROLE]);
      expect(self.body.data.meta.role).toBe(ROLE);
      expect((await request(namespace, 'GET', `sys/policies/acl/${ROLE}`, undefined, token)).status).toBe(200);
      expect((await request(namespace, 'GET', 'sys/auth', undefined, token)).status).toBe(403);
      await session.end();
      // Revoked: the store no longer accepts it.
      expect((await request(namespace, 'GET', 'auth/token/lookup-self', undefined, token)).status).toBe(403);
      expect(lines).toEqual([
        `secretstore-iac pipeline plan: logged in to ${store.addr}${namespace ? ` (namespace ${namespace})` : ''} as role ${ROLE} at auth/jwt: policies ${ROLE}, for 600 s`,
        `secretstore-iac pipeline plan: revoked the job's store token (role ${ROLE}) and the stack tokens made from it`,
      ]);
      for (const secret of [token, jwt]) expect(lines.join('\n')).not.toContain(secret);
    },
  );

  /** The login's refusal for a job token, as the real store answers it. */
  const refusal = async (jwt: string, env: Record<string, string> = {}): Promise<JwtLoginError> => {
    const e = await pipelineLogin({ ...jobEnv('', jwt), ...env }, new PipelineJobLog('plan', () => undefined)).catch((x) => x);
    expect(e).toBeInstanceOf(JwtLoginError);
    expect(e.message).not.toContain(jwt);
    return e;
  };

  it('spec §7: a token for another audience is HTTP 400 "wrong aud claim", the fix naming the audience', async () => {
    const e = await refusal(jobToken({ aud: 'https://wrong-audience.example' }));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^HTTP 400 from JWT login as secretstore-iac-plan at auth\/jwt: wrong aud claim \(store said: .*aud.*\)\.\nFix: use the audience https:\/\/gitlab\.acme\.example: id_tokens: SECRETSTORE_ID_TOKEN: aud: https:\/\/gitlab\.acme\.example/);
  });

  it('spec §7: a job the role is not bound to (another project, a protected ref) is "job not bound to the role" (the stores answer 400, the spec says 403: both said)', async () => {
    for (const overrides of [{ project_path: 'acme/other' }, { ref_protected: 'true' }]) {
      const e = await refusal(jobToken(overrides));
      expect([overrides, e.status]).toEqual([overrides, 400]);
      expect(e.message).toMatch(/job not bound to the role, its token's claims do not match the role's bound claims \(store said: .*claim.*\)\.\nThe spec lists this as HTTP 403; both stores answer a bound-claim mismatch with 400\.\nFix: check the role's bound claims/);
    }
  });

  it('a token signed by a key the method does not trust, and an expired one: "the store rejected the job token"', async () => {
    expect((await refusal(jobToken({}, other))).message).toMatch(/^HTTP 400 from JWT login as secretstore-iac-plan at auth\/jwt: the store rejected the job token \(store said: .*\)\.\nFix: check that the store's JWT method trusts this CI instance/);
    const past = Math.floor(Date.now() / 1000) - 3600;
    const expired = signJwt(key.privateKey, gitlabJobClaims({ project_path: PROJECT, ref_protected: 'false' }, { ciUrl: CI, now: past, lifetimeSeconds: 60 }), { kid: key.kid });
    expect((await refusal(expired)).message).toMatch(/the store rejected the job token/);
  });

  it('a role the mount does not have: named, with the fix (apply ci-access)', async () => {
    const e = await refusal(jobToken(), { SECRETSTORE_IAC_LOGIN_ROLE: 'secretstore-iac-nobody' });
    expect(e.message).toMatch(/^HTTP 400 from JWT login as secretstore-iac-nobody at auth\/jwt: the store has no role secretstore-iac-nobody there \(store said: .*could not be found.*\)\.\nFix: apply the platform's ci-access configuration/);
  });

  it('spec §2.5, the older flow: with SECRETSTORE_ID_TOKEN empty, CI_JOB_JWT_V2 logs in (said in one line); neither reaches the steps; the ID token wins when both are set', async () => {
    const lines: string[] = [];
    const legacy = jobToken();
    const session = await pipelineLogin({ ...jobEnv('', ''), CI_JOB_JWT_V2: legacy }, new PipelineJobLog('plan', (l) => lines.push(l)));
    const token = session.env.VAULT_TOKEN!;
    expect((await request('', 'GET', `sys/policies/acl/${ROLE}`, undefined, token)).status).toBe(200);
    expect(session.env.CI_JOB_JWT_V2).toBeUndefined();
    expect(session.env.SECRETSTORE_ID_TOKEN).toBeUndefined();
    await session.end();
    expect((await request('', 'GET', 'auth/token/lookup-self', undefined, token)).status).toBe(403);
    expect(lines[0]).toBe(
      'secretstore-iac pipeline plan: SECRETSTORE_ID_TOKEN is empty: using the older CI_JOB_JWT_V2 (older flow); declare the id_tokens block instead (extend .secretstore-iac-login)',
    );
    expect(lines[1]).toMatch(/^secretstore-iac pipeline plan: logged in to .* as role secretstore-iac-plan at auth\/jwt/);
    expect(lines.join('\n')).not.toContain(legacy);

    // Both set: the declared ID token is the one sent (a bad legacy token would be refused if it were used).
    const both = await pipelineLogin({ ...jobEnv('', jobToken()), CI_JOB_JWT_V2: jobToken({}, other) }, new PipelineJobLog('plan', () => undefined));
    expect(both.env.CI_JOB_JWT_V2).toBeUndefined();
    await both.end();
    // An older token the store refuses: the fix is the ID token to declare.
    const wrongAud = jobToken({ aud: 'https://wrong-audience.example' });
    const e = await pipelineLogin({ ...jobEnv('', ''), CI_JOB_JWT_V2: wrongAud }, new PipelineJobLog('plan', () => undefined)).catch((x) => x);
    expect(e).toBeInstanceOf(JwtLoginError);
    expect(e.message).not.toContain(wrongAud);
    expect(e.message).toMatch(/wrong aud claim .*\nFix: use the audience https:\/\/gitlab\.acme\.example: id_tokens: SECRETSTORE_ID_TOKEN: aud:/);
  });
});
