/**
 * The configuration pipeline's jobs log in with the tool's own JWT login (lib/store/jwt-login.ts,
 * lib/pipeline/pipeline-login.ts): the same flow as the CI login template, each failure said as spec §7
 * says it. Against a local stub answering with the texts OpenBao and Vault answer with; the real
 * stores' answers are asserted in test/store/pipeline-login.store.test.ts.
 */
import * as http from 'http';
import { AddressInfo } from 'net';
import { pipelineLogin } from '../../../lib/pipeline/pipeline-login';
import { PipelineJobLog } from '../../../lib/pipeline/pipeline-job-log';
import { jwtLogin, JwtLoginError, JwtLoginRequest } from '../../../lib/store/jwt-login';
import { StoreAddressError } from '../../../lib/store/store-address';
import { StoreClient } from '../../../lib/store/store-client';

type Answer = { status: number; body?: unknown };

/** A stub store: `answer` decides each reply; every request is recorded (method, path, token, body). */
async function stub(answer: (path: string, body: any) => Answer) {
  const seen: { method: string; path: string; token?: string; namespace?: string; body: any }[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const body = text === '' ? undefined : JSON.parse(text);
      seen.push({ method: req.method!, path: req.url!, token: req.headers['x-vault-token'] as string | undefined, namespace: req.headers['x-vault-namespace'] as string | undefined, body });
      const a = answer(req.url!, body);
      res.writeHead(a.status, { 'Content-Type': 'application/json' });
      res.end(a.body === undefined ? '' : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { address, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A well-formed (unsigned: the stub does not verify) JWT. */
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2dpdGxhYi5hY21lLmV4YW1wbGUifQ.c2lnbmF0dXJl';
const TOKEN = 's.JobTokenSecret0123456789';
const REQUEST: JwtLoginRequest = { mount: 'jwt', role: 'secretstore-iac-plan', jwt: JWT, audience: 'https://gitlab.acme.example', tokenVariable: 'SECRETSTORE_ID_TOKEN', baseJob: '.secretstore-iac-login' };
const granted: Answer = { status: 200, body: { auth: { client_token: TOKEN, token_policies: ['secretstore-iac-plan', 'default', 'secretstore-iac-plan-app-roles-1'], lease_duration: 3600 } } };

/** The login's error against a store answering `status` with `errors`. */
async function refusedWith(status: number, errors: string[], request: JwtLoginRequest = REQUEST): Promise<JwtLoginError> {
  const s = await stub(() => ({ status, body: { errors } }));
  try {
    const e = await jwtLogin(new StoreClient({ address: s.address }), request).catch((x) => x);
    expect(e).toBeInstanceOf(JwtLoginError);
    return e;
  } finally {
    await s.close();
  }
}

describe('spec §4.1 flow 1: a JWT login with the job\'s ID token, no store token', () => {
  it('POSTs {role, jwt} to auth/<mount>/login without X-Vault-Token, and returns the token and its policies (default left out)', async () => {
    const s = await stub(() => granted);
    try {
      const login = await jwtLogin(new StoreClient({ address: s.address, namespace: 'team-a' }), REQUEST);
      expect(login).toEqual({ token: TOKEN, policies: ['secretstore-iac-plan', 'secretstore-iac-plan-app-roles-1'], ttlSeconds: 3600 });
      expect(s.seen).toEqual([{ method: 'POST', path: '/v1/auth/jwt/login', token: undefined, namespace: 'team-a', body: { role: 'secretstore-iac-plan', jwt: JWT } }]);
    } finally {
      await s.close();
    }
  });
});

describe('spec §7: each failure of the login as its condition, outcome and fix', () => {
  it('HTTP 400 wrong aud claim: use the audience {ci_url}', async () => {
    const e = await refusedWith(400, ['error validating token: invalid audience (aud) claim: audience claim does not match any expected audience']);
    expect(e.status).toBe(400);
    expect(e.message).toBe(
      'HTTP 400 from JWT login as secretstore-iac-plan at auth/jwt: wrong aud claim (store said: error validating token: invalid audience (aud) claim: audience claim does not match any expected audience).\n' +
        'Fix: use the audience https://gitlab.acme.example: id_tokens: SECRETSTORE_ID_TOKEN: aud: https://gitlab.acme.example (extend .secretstore-iac-login).',
    );
  });

  it('HTTP 403: job not bound to the role; check the role\'s bound claims', async () => {
    const e = await refusedWith(403, ['permission denied']);
    expect(e.message).toMatch(/^HTTP 403 from JWT login as secretstore-iac-plan at auth\/jwt: job not bound to the role \(store said: permission denied\)\.\nFix: check the role's bound claims/);
  });

  it('HTTP 400 naming a claim (how both stores answer a bound-claim mismatch): job not bound, and the spec\'s 403 said', async () => {
    const e = await refusedWith(400, ['error validating claims: claim "ref_protected" does not match any associated bound claim values']);
    expect(e.message.split('\n')).toEqual([
      'HTTP 400 from JWT login as secretstore-iac-plan at auth/jwt: job not bound to the role, its token\'s claims do not match the role\'s bound claims (store said: error validating claims: claim "ref_protected" does not match any associated bound claim values).',
      'The spec lists this as HTTP 403; both stores answer a bound-claim mismatch with 400.',
      "Fix: check the role's bound claims (the project, branch or protection of this job), or run the job where the role is bound.",
    ]);
  });

  it('a role the mount does not have; a token the store does not accept; anything else at 400', async () => {
    expect((await refusedWith(400, ['role "secretstore-iac-plan" could not be found'])).message).toMatch(/the store has no role secretstore-iac-plan there .*\nFix: apply the platform's ci-access configuration/);
    expect((await refusedWith(400, ['error validating token: token is expired (exp)'])).message).toMatch(/the store rejected the job token .*\nFix: check that the store's JWT method trusts this CI instance/);
    expect((await refusedWith(400, ['error validating token: failed to verify id token signature'])).message).toMatch(/the store rejected the job token/);
    expect((await refusedWith(400, ['something new'])).message).toMatch(/^HTTP 400 from JWT login as secretstore-iac-plan at auth\/jwt \(store said: something new\)\.\nCause: wrong aud claim, or the job is not bound to the role\./);
  });

  it('empty token after parsing: the response could not be parsed; its shape is shown, never a value', async () => {
    for (const body of [{ auth: { client_token: '' }, data: { secret: 'v4lue' } }, { auth: null, warnings: ['w'] }, 'a proxy page']) {
      const s = await stub(() => ({ status: 200, body }));
      try {
        const e = await jwtLogin(new StoreClient({ address: s.address }), REQUEST).catch((x) => x);
        expect(e).toBeInstanceOf(JwtLoginError);
        expect(e.message).toMatch(/^empty token after parsing: the login response could not be parsed \(JWT login as secretstore-iac-plan at auth\/jwt\)\. Login response: /);
        expect(e.message).not.toContain('v4lue');
        expect(e.message).toContain('Fix: check that the store address (SECRETSTORE_ADDR) points at the store itself');
      } finally {
        await s.close();
      }
    }
  });

  it('no ID token, or not a JWT: said before anything is sent', async () => {
    const s = await stub(() => granted);
    try {
      const client = new StoreClient({ address: s.address });
      await expect(jwtLogin(client, { ...REQUEST, jwt: '' })).rejects.toThrow('SECRETSTORE_ID_TOKEN is unset or empty: the job declares no ID token.\nFix: extend .secretstore-iac-login, or declare id_tokens: SECRETSTORE_ID_TOKEN: aud: https://gitlab.acme.example in the job.');
      await expect(jwtLogin(client, { ...REQUEST, jwt: 'hvs.a-store-token' })).rejects.toThrow(/^SECRETSTORE_ID_TOKEN does not hold a JWT\./);
      expect(s.seen).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe('a configuration pipeline job logs in in its own process (the token is never a shell variable)', () => {
  const ROLE_ENV = { SECRETSTORE_IAC_LOGIN_ROLE: 'secretstore-iac-plan', SECRETSTORE_IAC_LOGIN_MOUNT: 'jwt', SECRETSTORE_IAC_LOGIN_AUDIENCE: 'https://gitlab.acme.example', SECRETSTORE_ID_TOKEN: JWT };

  it('with a role: the job\'s steps get VAULT_TOKEN from the login, the ID token and other store tokens dropped; the end revokes the token; no secret in the log', async () => {
    const s = await stub((p) => (p === '/v1/auth/jwt/login' ? granted : { status: 204 }));
    try {
      const lines: string[] = [];
      const session = await pipelineLogin({ ...ROLE_ENV, SECRETSTORE_ADDR: s.address, BAO_TOKEN: 'hvs.stale-laptop-token', HOME: '/home/ci' }, new PipelineJobLog('plan', (l) => lines.push(l)));
      expect(session.env).toEqual({ SECRETSTORE_IAC_LOGIN_ROLE: 'secretstore-iac-plan', SECRETSTORE_IAC_LOGIN_MOUNT: 'jwt', SECRETSTORE_IAC_LOGIN_AUDIENCE: 'https://gitlab.acme.example', SECRETSTORE_ADDR: s.address, HOME: '/home/ci', VAULT_TOKEN: TOKEN });
      await session.end();
      expect(s.seen.map((r) => [r.method, r.path, r.token])).toEqual([
        ['POST', '/v1/auth/jwt/login', undefined],
        ['POST', '/v1/auth/token/revoke-self', TOKEN],
      ]);
      expect(lines).toEqual([
        `secretstore-iac pipeline plan: logged in to ${s.address} as role secretstore-iac-plan at auth/jwt: policies secretstore-iac-plan, secretstore-iac-plan-app-roles-1, for 3600 s; the store token in BAO_TOKEN is not used`,
        "secretstore-iac pipeline plan: revoked the job's store token (role secretstore-iac-plan) and the stack tokens made from it",
      ]);
      expect(lines.join('\n')).not.toContain(TOKEN);
      expect(lines.join('\n')).not.toContain(JWT);
    } finally {
      await s.close();
    }
  });

  it('in a namespace: the login goes there, and the steps get VAULT_NAMESPACE with the token (valid only there)', async () => {
    const s = await stub(() => granted);
    try {
      const session = await pipelineLogin({ ...ROLE_ENV, SECRETSTORE_IAC_LOGIN_NAMESPACE: 'team-a', VAULT_ADDR: s.address }, new PipelineJobLog('plan', () => undefined));
      expect(session.env).toMatchObject({ VAULT_NAMESPACE: 'team-a', VAULT_TOKEN: TOKEN });
      expect(s.seen[0]).toMatchObject({ path: '/v1/auth/jwt/login', namespace: 'team-a' });
    } finally {
      await s.close();
    }
  });

  it('a revocation the store refuses is said, with the time to live; the job is not failed by it', async () => {
    const s = await stub((p) => (p === '/v1/auth/jwt/login' ? granted : { status: 403, body: { errors: ['permission denied'] } }));
    try {
      const lines: string[] = [];
      const session = await pipelineLogin({ ...ROLE_ENV, SECRETSTORE_ADDR: s.address }, new PipelineJobLog('apply', (l) => lines.push(l)));
      await session.end();
      expect(lines[1]).toMatch(/^secretstore-iac pipeline apply: could not revoke the job's store token \(role secretstore-iac-plan\): .*; it expires with its time to live \(3600 s\)$/);
    } finally {
      await s.close();
    }
  });

  it('without a role (a person running the job\'s command on a laptop): no login, the environment as it is', async () => {
    const env = { VAULT_ADDR: 'http://127.0.0.1:1', VAULT_TOKEN: 'hvs.person' };
    const session = await pipelineLogin(env, new PipelineJobLog('plan', () => undefined));
    expect(session.env).toBe(env);
    await session.end();
  });

  it('SECRETSTORE_ADDR unset or empty (spec §7, first row): the job stops before any request, saying where to define it', async () => {
    const e = await pipelineLogin({ ...ROLE_ENV, SECRETSTORE_ADDR: '' }, new PipelineJobLog('plan', () => undefined)).catch((x) => x);
    expect(e).toBeInstanceOf(StoreAddressError);
    expect(e.message).toMatch(/SECRETSTORE_ADDR/);
  });
});
