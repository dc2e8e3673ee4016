import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import { AddressInfo } from 'net';
import { DEFAULT_MAX_RESPONSE_BYTES, StoreTransport, StoreTransportError } from '../../../lib/store/store-transport';
import { makeTestCertificates, TEST_SERVER_NAME, TestCertificates } from '../../support/tls-certificates';

// The one HTTP transport of every store call, against hostile stand-in stores on 127.0.0.1 started
// here: what each server saw is the proof of what was (not) sent. TLS with a real OpenBao is in
// test/store/tls.store.test.ts.

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly token?: string;
  readonly body: string;
}

interface Stub {
  readonly address: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

async function listen(server: http.Server | https.Server, protocol: 'http' | 'https'): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `${protocol}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function recorder(seen: Seen[], handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): http.RequestListener {
  return (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', token: req.headers['x-vault-token'] as string | undefined, body });
      handler(req, res);
    });
  };
}

async function stub(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Stub> {
  const seen: Seen[] = [];
  const server = http.createServer(recorder(seen, handler));
  const address = await listen(server, 'http');
  return {
    address,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const json = (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

async function failure(p: Promise<unknown>): Promise<StoreTransportError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(StoreTransportError);
  return e as StoreTransportError;
}

describe('redirects: a token, Role ID or Secret ID never reaches an origin the operator did not name', () => {
  let other: Stub;
  beforeEach(async () => {
    other = await stub(json(200, { data: { secret_id: 'from-the-other-host' } }));
  });
  afterEach(() => other.close());

  it('a redirect to another origin is an error naming the Location; the other server sees nothing', async () => {
    const store = await stub((req, res) => {
      res.writeHead(307, { Location: `${other.address}${req.url}` });
      res.end();
    });
    try {
      const e = await failure(
        new StoreTransport().request({
          method: 'POST',
          url: `${store.address}/v1/auth/approle/login`,
          headers: { 'X-Vault-Token': 'privileged-token' },
          body: '{"role_id":"r","secret_id":"s"}',
        }),
      );
      expect(e.kind).toBe('redirect');
      expect(e.message).toBe(
        `the store answered POST /v1/auth/approle/login with a redirect (HTTP 307) to another origin, "${other.address}/v1/auth/approle/login"; ` +
          'not followed, so no token or credential was sent there. If that host is a node of the same cluster (request forwarding disabled), ' +
          'list it in SECRETSTORE_IAC_REDIRECT_HOSTS (comma-separated host[:port]); clusters that forward standby requests (the default) need no such entry',
      );
      expect(store.seen).toHaveLength(1);
      expect(other.seen).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('the Location is quoted cut and escaped', async () => {
    const store = await stub((_req, res) => {
      // Node refuses C0 controls in a header it writes; C1 (CSI, U+009B) is latin1 and passes.
      res.writeHead(302, { Location: `http://evil.example/\u009b2J${'x'.repeat(5000)}` });
      res.end();
    });
    try {
      const e = await failure(new StoreTransport().request({ method: 'GET', url: `${store.address}/v1/sys/auth` }));
      expect(e.message).not.toMatch(/[\u0080-\u009f]/);
      expect(e.message).toContain('"http://evil.example/%C2%9B2Jxxx');
      expect(e.message).toContain('… (');
      expect(e.message.length).toBeLessThan(1000);
    } finally {
      await store.close();
    }
  });

  it('a host listed in SECRETSTORE_IAC_REDIRECT_HOSTS is followed, with the token and body', async () => {
    const store = await stub((req, res) => {
      res.writeHead(307, { Location: `${other.address}${req.url}` });
      res.end();
    });
    try {
      const otherHost = new URL(other.address).host;
      const transport = StoreTransport.fromEnvironment({ SECRETSTORE_IAC_REDIRECT_HOSTS: ` example.org , ${otherHost}` });
      const res = await transport.request({ method: 'POST', url: `${store.address}/v1/x`, headers: { 'X-Vault-Token': 'tok' }, body: '{"a":1}' });
      expect(res.status).toBe(200);
      expect(res.url).toBe(`${other.address}/v1/x`);
      expect(other.seen).toEqual([{ method: 'POST', url: '/v1/x', token: 'tok', body: '{"a":1}' }]);
    } finally {
      await store.close();
    }
  });

  it('a redirect to the same origin is followed, a few times at most', async () => {
    const store = await stub((req, res) => {
      if (req.url === '/v1/final') return json(200, { ok: true })(req, res);
      res.writeHead(307, { Location: req.url === '/v1/start' ? '/v1/final' : req.url });
      res.end();
    });
    try {
      const res = await new StoreTransport().request({ method: 'GET', url: `${store.address}/v1/start`, headers: { 'X-Vault-Token': 't' } });
      expect([res.status, res.text]).toEqual([200, '{"ok":true}']);
      expect(store.seen.map((s) => `${s.url} ${s.token}`)).toEqual(['/v1/start t', '/v1/final t']);
      const loop = await failure(new StoreTransport().request({ method: 'GET', url: `${store.address}/v1/loop` }));
      expect(loop.message).toBe('the store answered GET /v1/loop with more than 3 redirects in a row; stopped following them');
    } finally {
      await store.close();
    }
  });
});

describe('answer size: reading stops at the limit', () => {
  it('a 100 MB answer stops at the default 32 MiB with an error naming the limit and the option', async () => {
    let sent = 0;
    const total = 100 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const pump = () => {
        while (sent < total && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const address = await listen(server, 'http');
    try {
      const e = await failure(new StoreTransport().request({ method: 'GET', url: `${address}/v1/sys/policies/acl/big` }));
      expect(e.kind).toBe('too-large');
      expect(e.message).toBe(
        `the store's answer to GET /v1/sys/policies/acl/big is larger than the limit of ${DEFAULT_MAX_RESPONSE_BYTES} bytes ` +
          '(SECRETSTORE_IAC_MAX_RESPONSE_BYTES, default 33554432 = 32 MiB); stopped reading it. If the store really answers that much, raise SECRETSTORE_IAC_MAX_RESPONSE_BYTES',
      );
      // The client hung up: the server could not hand over the rest (socket buffers aside).
      await new Promise((r) => setTimeout(r, 100));
      expect(sent).toBeLessThan(total / 2);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('an announced Content-Length over the limit is refused before reading; the limit is an option', async () => {
    const s = await stub(json(200, { data: 'x'.repeat(2000) }, { 'Content-Length': 2011 }));
    try {
      const transport = StoreTransport.fromEnvironment({ SECRETSTORE_IAC_MAX_RESPONSE_BYTES: '1000' });
      const e = await failure(transport.request({ method: 'GET', url: `${s.address}/v1/sys/auth` }));
      expect(e.message).toMatch(/^the store's answer to GET \/v1\/sys\/auth announces 2011 bytes, more than the limit of 1000 bytes/);
      await expect(StoreTransport.fromEnvironment({ SECRETSTORE_IAC_MAX_RESPONSE_BYTES: '3000' }).request({ method: 'GET', url: `${s.address}/v1/sys/auth` })).resolves.toMatchObject({ status: 200 });
    } finally {
      await s.close();
    }
  });

  it('refuses settings that are not positive numbers, naming the variable', () => {
    expect(() => StoreTransport.fromEnvironment({ SECRETSTORE_IAC_MAX_RESPONSE_BYTES: '1.5' })).toThrow(
      'SECRETSTORE_IAC_MAX_RESPONSE_BYTES="1.5" is not a whole number of bytes greater than 0 (default 33554432)',
    );
    expect(() => StoreTransport.fromEnvironment({ SECRETSTORE_IAC_STORE_TIMEOUT: 'soon' })).toThrow(
      'SECRETSTORE_IAC_STORE_TIMEOUT="soon" is not a number of seconds greater than 0 (default 5)',
    );
  });
});

describe('one deadline', () => {
  it('a store that accepts the connection but never answers fails within SECRETSTORE_IAC_STORE_TIMEOUT', async () => {
    const s = await stub(() => undefined);
    try {
      const transport = StoreTransport.fromEnvironment({ SECRETSTORE_IAC_STORE_TIMEOUT: '0.5' });
      const started = Date.now();
      const e = await failure(transport.request({ method: 'GET', url: `${s.address}/v1/sys/auth` }));
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(e.kind).toBe('timeout');
      expect(e.reason).toBe('no answer within 0.5s; SECRETSTORE_IAC_STORE_TIMEOUT sets this deadline');
    } finally {
      await s.close();
    }
  });

  it('defaults to 5 seconds', () => {
    expect(StoreTransport.fromEnvironment({}).timeoutMs).toBe(5000);
  });
});

describe('addresses the transport refuses before connecting', () => {
  it('plain http to a host other than this machine, unless listed in SECRETSTORE_IAC_INSECURE_HTTP_HOSTS', async () => {
    const e = await failure(new StoreTransport().request({ method: 'GET', url: 'http://secrets.example:8200/v1/sys/health' }));
    expect(e.kind).toBe('address');
    expect(e.message).toBe(
      'the store address="http://secrets.example:8200/v1/sys/health" is plain http to a host other than this machine: the token, Role IDs and Secret IDs ' +
        'would cross the network readable and changeable by anyone on the path. Use https://, or, for a network you trust, list the host in ' +
        'SECRETSTORE_IAC_INSECURE_HTTP_HOSTS (comma-separated host[:port])',
    );
    // Listed: the transport tries to connect (and fails on this made-up port of a reserved name).
    const listed = StoreTransport.fromEnvironment({ SECRETSTORE_IAC_INSECURE_HTTP_HOSTS: 'secrets.invalid', SECRETSTORE_IAC_STORE_TIMEOUT: '2' });
    const e2 = await failure(listed.request({ method: 'GET', url: 'http://secrets.invalid:8200/v1/sys/health' }));
    expect(e2.kind).not.toBe('address');
  });

  it('a redirect to plain http on another listed host is still refused', async () => {
    const store = await stub((_req, res) => {
      res.writeHead(307, { Location: 'http://active.example:8200/v1/sys/auth' });
      res.end();
    });
    try {
      const transport = StoreTransport.fromEnvironment({ SECRETSTORE_IAC_REDIRECT_HOSTS: 'active.example:8200' });
      const e = await failure(transport.request({ method: 'GET', url: `${store.address}/v1/sys/auth` }));
      expect(e.kind).toBe('address');
      expect(e.message).toMatch(/^the redirect target="http:\/\/active.example:8200\/v1\/sys\/auth" is plain http/);
    } finally {
      await store.close();
    }
  });

  it('credentials in the URL, without repeating them', async () => {
    const e = await failure(new StoreTransport().request({ method: 'GET', url: 'https://user:hunter2@secrets.example/v1/sys/auth' }));
    expect(e.kind).toBe('address');
    expect(e.message).not.toContain('hunter2');
    expect(e.message).toMatch(/^the store address="https:\/\/\*\*\*@secrets.example\/v1\/sys\/auth" carries credentials \(user:password@\)/);
  });
});

describe('TLS like the store CLI (VAULT_CACERT, VAULT_CAPATH, VAULT_TLS_SERVER_NAME, VAULT_SKIP_VERIFY)', () => {
  let certs: TestCertificates;
  let server: https.Server;
  let address: string;
  const seen: Seen[] = [];
  beforeAll(async () => {
    certs = makeTestCertificates();
    server = https.createServer(
      { cert: fs.readFileSync(certs.serverCert), key: fs.readFileSync(certs.serverKey) },
      recorder(seen, (req, res) => json(200, { initialized: true, sealed: false })(req, res)),
    );
    address = await listen(server, 'https');
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    fs.rmSync(certs.dir, { recursive: true, force: true });
  });

  const get = (env: NodeJS.ProcessEnv, url = `${address}/v1/sys/health`) =>
    StoreTransport.fromEnvironment(env).request({ method: 'GET', url, headers: { 'X-Vault-Token': 'tls-token' } });

  it('without the private CA: a TLS error naming the fix, and no request (token) reaches the server', async () => {
    seen.length = 0;
    const e = await failure(get({}));
    expect(e.kind).toBe('tls');
    expect(e.message).toMatch(/^TLS with the store failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY): /);
    expect(e.message).toContain('Give the CA that signed it with VAULT_CACERT (a PEM file) or VAULT_CAPATH (a directory)');
    const wrong = await failure(get({ VAULT_CACERT: certs.otherCaCert }));
    expect(wrong.kind).toBe('tls');
    expect(seen).toEqual([]);
  });

  it.each([
    ['VAULT_CACERT', () => ({ VAULT_CACERT: certs.caCert })],
    ['BAO_CACERT', () => ({ BAO_CACERT: certs.caCert })],
    ['VAULT_CAPATH', () => ({ VAULT_CAPATH: certs.caDir })],
    ['BAO_CAPATH', () => ({ BAO_CAPATH: certs.caDir })],
  ])('with %s the store is reached', async (_name, env) => {
    await expect(get(env())).resolves.toMatchObject({ status: 200 });
  });

  it('VAULT_TLS_SERVER_NAME checks the certificate against that name', async () => {
    const byName = `https://localhost:${new URL(address).port}/v1/sys/health`;
    const e = await failure(get({ VAULT_CACERT: certs.caCert }, byName));
    expect(e.kind).toBe('tls');
    expect(e.message).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    await expect(get({ VAULT_CACERT: certs.caCert, VAULT_TLS_SERVER_NAME: TEST_SERVER_NAME }, byName)).resolves.toMatchObject({ status: 200 });
  });

  it('VAULT_SKIP_VERIFY is accepted with a warning every time it is read', async () => {
    const warnings: string[] = [];
    const transport = StoreTransport.fromEnvironment({ VAULT_SKIP_VERIFY: 'true' }, (l) => warnings.push(l));
    await expect(transport.request({ method: 'GET', url: `${address}/v1/sys/health` })).resolves.toMatchObject({ status: 200 });
    expect(warnings).toEqual([
      'warning: VAULT_SKIP_VERIFY is set: the store\'s TLS certificate is not verified, so anyone on the network path can pose as the store and receive the token. Give the CA with VAULT_CACERT instead',
    ]);
    StoreTransport.fromEnvironment({ BAO_SKIP_VERIFY: '1' }, (l) => warnings.push(l));
    expect(warnings[1]).toMatch(/^warning: BAO_SKIP_VERIFY is set/);
  });
});
