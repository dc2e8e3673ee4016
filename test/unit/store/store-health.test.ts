import * as http from 'http';
import { AddressInfo } from 'net';
import { checkStoreBeforeEngine, checkStoreHealth, engineNeedsStore, StoreHealthError } from '../../../lib/store/store-health';

// The health check against a local HTTP server answering with the statuses OpenBao's sys/health
// uses (the real sealed store is in test/store/store-health.store.test.ts), and a closed port.

async function serve(handler: http.RequestListener): Promise<{ address: string; urls: string[]; close: () => Promise<void> }> {
  const urls: string[] = [];
  const server = http.createServer((req, res) => {
    urls.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${port}`,
    urls,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The store's sys/health JSON (as OpenBao answers it) with the status `code`. */
function status(code: number, body: unknown = { initialized: code !== 501, sealed: code === 503 || code === 501, standby: code === 429, version: '2.1.0' }): http.RequestListener {
  return (_req, res) => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

async function failure(p: Promise<unknown>): Promise<StoreHealthError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(StoreHealthError);
    return e as StoreHealthError;
  }
  throw new Error('expected the health check to fail');
}

describe('checkStoreHealth', () => {
  it('passes an active node and asks with standbyok and perfstandbyok', async () => {
    const s = await serve(status(200));
    try {
      await expect(checkStoreHealth(s.address + '/')).resolves.toBeUndefined();
      expect(s.urls).toEqual(['/v1/sys/health?standbyok=true&perfstandbyok=true']);
    } finally {
      await s.close();
    }
  });

  it.each([429, 473])('passes a standby (429) and a performance standby (473): they serve requests; %i', async (code) => {
    const s = await serve(status(code));
    try {
      await expect(checkStoreHealth(s.address)).resolves.toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it.each([
    [503, 'sealed', /is sealed \(GET \/v1\/sys\/health: HTTP 503\): unseal it/],
    [501, 'not-initialized', /is not initialized \(GET \/v1\/sys\/health: HTTP 501\): initialize and unseal it first/],
    [472, 'dr-secondary', /is a disaster-recovery secondary \(GET \/v1\/sys\/health: HTTP 472\): point SECRETSTORE_ADDR/],
    [474, 'standby-without-active', /is a standby that cannot reach the active node \(GET \/v1\/sys\/health: HTTP 474\)/],
    [530, 'removed', /is a node removed from its cluster \(GET \/v1\/sys\/health: HTTP 530\)/],
    [404, 'unexpected', /does not answer GET \/v1\/sys\/health like a secrets store \(HTTP 404, /],
  ])('refuses HTTP %i as %s, naming the address', async (code, problem, message) => {
    const s = await serve(status(code));
    try {
      const e = await failure(checkStoreHealth(s.address));
      expect(e.problem).toBe(problem);
      expect(e.status).toBe(code);
      expect(e.message).toMatch(message);
      expect(e.message).toContain(s.address);
    } finally {
      await s.close();
    }
  });

  it.each([
    ['an HTML page', '<html><body>Welcome to nginx!</body></html>', '"<html><body>Welcome to nginx!</body></html>"'],
    ['other JSON', '{"status":"ok","initialized":"yes"}', '"{"status":"ok","initialized":"yes"}"'],
    ['an empty answer', '', 'an empty answer'],
  ])('refuses an HTTP 200 with %s: it does not answer like a secrets store', async (_what, body, quoted) => {
    const s = await serve(status(200, body));
    try {
      const e = await failure(checkStoreHealth(s.address));
      expect(e.problem).toBe('unexpected');
      expect(e.message).toBe(
        `${s.address} does not answer GET /v1/sys/health like a secrets store (HTTP 200, ${quoted}; the store answers JSON with boolean ` +
          '"initialized" and "sealed"): check SECRETSTORE_ADDR / VAULT_ADDR',
      );
    } finally {
      await s.close();
    }
  });

  it('quotes a hostile answer cut and escaped', async () => {
    const s = await serve(status(200, `\u001b]0;pwned\u0007\u001b[2J${'z'.repeat(100000)}`));
    try {
      const e = await failure(checkStoreHealth(s.address));
      expect(e.message).toContain('"\\u001b]0;pwned\\u0007\\u001b[2Jzz');
      expect(e.message).not.toMatch(/[\u0000-\u001f]/);
      expect(e.message.length).toBeLessThan(400);
    } finally {
      await s.close();
    }
  });

  it('does not follow a redirect to another origin', async () => {
    const other = await serve(status(200));
    const s = await serve((_req, res) => {
      res.writeHead(307, { Location: `${other.address}/v1/sys/health` });
      res.end();
    });
    try {
      const e = await failure(checkStoreHealth(s.address));
      expect(e.problem).toBe('redirect');
      expect(e.message).toContain(`to another origin, "${other.address}/v1/sys/health"; not followed`);
      expect(other.urls).toEqual([]);
    } finally {
      await s.close();
      await other.close();
    }
  });

  it('reports a closed port as connection refused, at once', async () => {
    const s = await serve(status(200));
    await s.close();
    const started = Date.now();
    const e = await failure(checkStoreHealth(s.address));
    expect(e.problem).toBe('unreachable');
    expect(e.message).toBe(
      `cannot reach the secrets store at ${s.address} (ECONNREFUSED): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('gives up on a store that does not answer after the timeout', async () => {
    const s = await serve(() => undefined);
    try {
      const started = Date.now();
      const e = await failure(checkStoreHealth(s.address, 300));
      expect(e.problem).toBe('timeout');
      expect(e.message).toMatch(/did not answer GET \/v1\/sys\/health within 0.3s: .*\(SECRETSTORE_IAC_STORE_TIMEOUT sets the deadline\)$/);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await s.close();
    }
  });
});

describe('engineNeedsStore', () => {
  it('is true for the subcommands that call the provider, false for offline ones', () => {
    expect(engineNeedsStore(['plan', '-detailed-exitcode'])).toBe(true);
    expect(engineNeedsStore(['-chdir=x', 'apply'])).toBe(true);
    expect(engineNeedsStore(['init'])).toBe(false);
    expect(engineNeedsStore(['state', 'list'])).toBe(false);
    expect(engineNeedsStore(['validate'])).toBe(false);
  });

  it('checkStoreBeforeEngine does not call the store for an offline subcommand', async () => {
    await expect(checkStoreBeforeEngine('http://127.0.0.1:1', ['init'])).resolves.toBeUndefined();
    await expect(checkStoreBeforeEngine('http://127.0.0.1:1', ['plan'])).rejects.toThrow(/cannot reach the secrets store at http:\/\/127.0.0.1:1/);
  });
});
