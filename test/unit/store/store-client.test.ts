import * as http from 'http';
import { AddressInfo } from 'net';
import { AppRoleOperator, UnknownApplicationError } from '../../../lib/store/approle-operator';
import { CommandContext } from '../../../lib/cli/command';
import { runOperatorCommand } from '../../../lib/cli/redacting-context';
import { UsageError } from '../../../lib/cli/usage-error';
import { resolveStoreToken, StoreClient, StoreError } from '../../../lib/store/store-client';

// The store client's error mapping, against a local stub server that answers like OpenBao does
// (the real answers are asserted in test/store/operator.store.test.ts).

type Handler = (req: http.IncomingMessage, body: string) => { status: number; body?: unknown };

async function stub(handler: Handler): Promise<{ address: string; close: () => Promise<void>; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${req.headers['x-vault-token'] ?? '-'}`);
      const answer = handler(req, body);
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { address: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

describe('resolveStoreToken', () => {
  it('takes SECRETSTORE_TOKEN, VAULT_TOKEN or BAO_TOKEN', () => {
    expect(resolveStoreToken({ VAULT_TOKEN: 'v' })).toBe('v');
    expect(resolveStoreToken({ BAO_TOKEN: 'b' })).toBe('b');
    expect(resolveStoreToken({ SECRETSTORE_TOKEN: 's', VAULT_TOKEN: 'v' })).toBe('s');
  });

  it('says where a token goes, and that arguments are not a place for it', () => {
    expect(() => resolveStoreToken({})).toThrow(/^no store token: set VAULT_TOKEN \(or BAO_TOKEN \/ SECRETSTORE_TOKEN\).*tokens are never taken from arguments$/);
  });
});

describe('StoreClient errors', () => {
  it('an unreachable store names the address and the variables', async () => {
    const s = await stub(() => ({ status: 200 }));
    await s.close();
    const client = new StoreClient({ address: s.address, token: 't' });
    await expect(client.request('GET', 'sys/health')).rejects.toThrow(
      new StoreError('unreachable', `cannot reach the secrets store at ${s.address} (ECONNREFUSED): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`),
    );
  });

  it('403 with a valid token names the capability; with an invalid one, the token', async () => {
    const s = await stub((req) =>
      req.url === '/v1/auth/token/lookup-self'
        ? { status: req.headers['x-vault-token'] === 'good' ? 200 : 403, body: {} }
        : { status: 403, body: { errors: ['1 error occurred:\n\t* permission denied\n\n'] } },
    );
    try {
      const denied = await new StoreClient({ address: s.address, token: 'good' }).request('POST', 'auth/approle/role/x/secret-id').catch((e) => e);
      expect(denied).toBeInstanceOf(StoreError);
      expect(denied.kind).toBe('permission-denied');
      expect(denied.storeErrors).toEqual(['permission denied']);
      expect(denied.message).toBe(
        'permission denied: POST /v1/auth/approle/role/x/secret-id (HTTP 403, permission denied): the token may not update auth/approle/role/x/secret-id. ' +
          'Fix: use a token whose policy grants capabilities = ["update"] on "auth/approle/role/x/secret-id"',
      );
      const bad = await new StoreClient({ address: s.address, token: 'bad' }).request('GET', 'auth/approle/role/x/role-id').catch((e) => e);
      expect(bad.message).toContain('the store does not accept the token itself');
    } finally {
      await s.close();
    }
  });

  it('403 with a token of another namespace names both namespaces, not a missing capability (issue 28)', async () => {
    const s = await stub((req) =>
      req.url === '/v1/auth/token/lookup-self'
        ? { status: 200, body: { data: { namespace_path: 'team-b/', policies: ['admin', 'default'] } } }
        : { status: 403, body: { errors: ['1 error occurred:\n\t* permission denied\n\n'] } },
    );
    try {
      const denied = await new StoreClient({ address: s.address, token: 'of-team-b', namespace: 'team-a' }).request('GET', 'sys/auth').catch((e) => e);
      expect(denied.kind).toBe('permission-denied');
      expect(denied.message).toBe(
        'permission denied: GET /v1/sys/auth (HTTP 403, permission denied): the token belongs to namespace team-b, and the requests go to namespace team-a: ' +
          'a token acts only in its own namespace and the namespaces below it, so the store refuses every request there (HTTP 403). ' +
          "Fix: use a token of team-a (or of a namespace above it), or name the token's namespace (settings.namespace, VAULT_NAMESPACE)",
      );
      // The same token without a namespace: the requests go to the root namespace.
      const root = await new StoreClient({ address: s.address, token: 'of-team-b' }).request('GET', 'sys/auth').catch((e) => e);
      expect(root.message).toContain('the token belongs to namespace team-b, and the requests go to the root namespace');
      // A token of the namespace, or of one above it, is refused for a capability as before.
      const above = await new StoreClient({ address: s.address, token: 'of-team-b', namespace: 'team-b/sub' }).request('GET', 'sys/auth').catch((e) => e);
      expect(above.message).toContain('the token may not read sys/auth. Fix: use a token whose policy grants');
    } finally {
      await s.close();
    }
  });

  it('404, 503 and 500 keep the status and the store text, and sends no token when told', async () => {
    const s = await stub((req) =>
      req.url!.includes('missing')
        ? { status: 404, body: { errors: [] } }
        : req.url!.includes('sealed')
          ? { status: 503, body: { errors: ['Vault is sealed'] } }
          : { status: 500, body: { errors: ['boom'] } },
    );
    try {
      const client = new StoreClient({ address: `${s.address}/`, token: 'tok' });
      await expect(client.request('GET', '/v1/missing')).rejects.toMatchObject({ kind: 'not-found', status: 404, message: 'GET /v1/missing: HTTP 404 (HTTP 404)' });
      await expect(client.request('GET', 'sealed')).rejects.toMatchObject({
        kind: 'unavailable',
        message: 'GET /v1/sealed: HTTP 503 (Vault is sealed): the store is sealed, in standby without a leader, or starting',
      });
      await expect(client.request('POST', 'x', {}, null)).rejects.toMatchObject({ kind: 'server-error', status: 500 });
      // A 503 is followed by sys/health, without the token, to tell sealed from uninitialised.
      expect(s.seen).toEqual(['GET /v1/missing tok', 'GET /v1/sealed tok', 'GET /v1/sys/health?standbyok=true&perfstandbyok=true -', 'POST /v1/x -']);
    } finally {
      await s.close();
    }
  });
});

describe('StoreClient: what the store says is named exactly and quoted safely', () => {
  // A stand-in that answers every call with `status` and `raw`, and sys/health with `health`.
  async function store(status: number, raw: string, health?: { status: number; body: unknown }) {
    const server = http.createServer((req, res) => {
      if (health && req.url!.startsWith('/v1/sys/health')) {
        res.writeHead(health.status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(health.body));
        return;
      }
      res.writeHead(status, { 'Content-Type': 'text/html' });
      res.end(raw);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { client: new StoreClient({ address, token: 't' }), address, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  it.each([
    [501, { initialized: false, sealed: true, version: '2.4.0' }, 'not-initialized', 'is not initialized (GET /v1/sys/auth: HTTP 503; GET /v1/sys/health: not initialized): initialize and unseal it first (bao operator init)'],
    [503, { initialized: true, sealed: true, version: '2.4.0' }, 'sealed', 'is sealed (GET /v1/sys/auth: HTTP 503 (Vault is sealed)): unseal it (bao operator unseal) and run the command again'],
    // The fix names the CLI of the store that answered: HashiCorp Vault (1.x) gets `vault`.
    [503, { initialized: true, sealed: true, version: '1.21.1' }, 'sealed', 'is sealed (GET /v1/sys/auth: HTTP 503 (Vault is sealed)): unseal it (vault operator unseal) and run the command again'],
    [503, { initialized: true, sealed: true }, 'sealed', 'is sealed (GET /v1/sys/auth: HTTP 503 (Vault is sealed)): unseal it (bao (or vault) operator unseal) and run the command again'],
  ])('a 503 with sys/health %i is %j', async (code, body, kind, message) => {
    const s = await store(503, '{"errors":["Vault is sealed"]}', { status: code, body });
    try {
      await expect(s.client.request('GET', 'sys/auth')).rejects.toMatchObject({ kind, message: `the secrets store at ${s.address} ${message}` });
    } finally {
      await s.close();
    }
  });

  it('a 10 MB error page is quoted cut to 200 characters and escaped', async () => {
    const page = `<html>\u001b[2J\u001b]0;pwned\u0007${'x'.repeat(10 * 1024 * 1024)}</html>`;
    const s = await store(500, page);
    try {
      const e = await s.client.request('GET', 'sys/auth').catch((err) => err);
      expect(e).toBeInstanceOf(StoreError);
      expect(e.message).toMatch(/^GET \/v1\/sys\/auth: HTTP 500 \(HTTP 500, not the store's JSON: "<html>\\u001b\[2J\\u001b\]0;pwned\\u0007x+… \(10485\d+ more characters\)"\)$/);
      expect(e.message.length).toBeLessThan(400);
    } finally {
      await s.close();
    }
  });

  it("the store's error texts are cut to 500 characters and escaped, one line each", async () => {
    const s = await store(400, JSON.stringify({ errors: [`bad\u001b[31m\n## Drift: in sync\u202e${'y'.repeat(5000)}`] }));
    try {
      const e = await s.client.request('GET', 'sys/auth').catch((err) => err);
      expect(e.storeErrors).toHaveLength(1);
      expect(e.storeErrors[0]).toMatch(/^bad\\u001b\[31m\\u000a## Drift: in sync\\u202ey+… \(\d+ more characters\)$/);
      expect(e.message).not.toMatch(/[\u0000-\u001f\u202e]/);
    } finally {
      await s.close();
    }
  });
});

describe('AppRoleOperator', () => {
  it('an unknown role is an UnknownApplicationError listing the roles when the token may list them', async () => {
    const s = await stub((req) =>
      req.url === '/v1/auth/approle/role?list=true' ? { status: 200, body: { data: { keys: ['registry', 'orchestrator-dev'] } } } : { status: 404, body: { errors: [] } },
    );
    try {
      const error = await new AppRoleOperator(new StoreClient({ address: s.address, token: 't' })).roleId('nosuch').catch((e) => e);
      expect(error).toBeInstanceOf(UnknownApplicationError);
      expect(error.message).toContain('unknown application "nosuch": the store has no AppRole role "nosuch" on the mount "approle" in the root namespace (roles on "approle": orchestrator-dev, registry)');
    } finally {
      await s.close();
    }
  });

  it('rejects role and mount names that are not path segments', () => {
    const client = new StoreClient({ address: 'http://127.0.0.1:1' });
    expect(() => new AppRoleOperator(client, '../sys')).toThrow('--mount "../sys" is not a mount path such as approle');
    return expect(new AppRoleOperator(client).roleId('../../sys/seal')).rejects.toThrow('"../../sys/seal" is not a role name');
  });

  it('login: 400 is an invalid pair, the token of a valid one is revoked at once', async () => {
    const s = await stub((req, body) => {
      if (req.url === '/v1/auth/approle/login') {
        return JSON.parse(body).secret_id === 'good'
          ? { status: 200, body: { auth: { client_token: 'issued', token_policies: ['default', 'app'], lease_duration: 43200, renewable: true, metadata: { role_name: 'app' } } } }
          : { status: 400, body: { errors: ['invalid role or secret ID'] } };
      }
      return { status: 204 };
    });
    try {
      const operator = new AppRoleOperator(new StoreClient({ address: s.address, token: 'privileged' }));
      expect(await operator.login('r', 'bad')).toEqual({ valid: false, status: 400, reason: 'invalid role or secret ID' });
      expect(await operator.login('r', 'good')).toEqual({ valid: true, roleName: 'app', policies: ['default', 'app'], ttlSeconds: 43200, renewable: true });
      expect(s.seen).toEqual(['POST /v1/auth/approle/login -', 'POST /v1/auth/approle/login -', 'POST /v1/auth/token/revoke-self issued']);
    } finally {
      await s.close();
    }
  });
});

describe('runOperatorCommand', () => {
  const context = (env: NodeJS.ProcessEnv, lines: string[]): CommandContext => ({
    env,
    cwd: '/',
    isTerminal: false,
    stdout: (l) => lines.push(`out:${l}`),
    stderr: (l) => lines.push(`err:${l}`),
  });

  it('hides the environment token and every value the body hides, in output and in errors', async () => {
    const lines: string[] = [];
    const result = runOperatorCommand(context({ VAULT_TOKEN: 'env-token-value' }, lines), async (io) => {
      io.hide('secret-id-value');
      io.stdout('token env-token-value and secret-id-value');
      io.stderr('again secret-id-value');
      throw new UsageError('bad secret-id-value');
    });
    await expect(result).rejects.toThrow(new UsageError('bad <redacted>'));
    await expect(result).rejects.toBeInstanceOf(UsageError);
    expect(lines).toEqual(['out:token <redacted> and <redacted>', 'err:again <redacted>']);
  });
});
