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
  it('passes an active node and asks with standbyok and perfstandbyok; nothing more', async () => {
    const s = await serve(status(200));
    try {
      const report = await checkStoreHealth(s.address + '/');
      expect(report).toEqual({ address: s.address, status: 200, role: 'active' });
      expect(s.urls).toEqual(['/v1/sys/health?standbyok=true&perfstandbyok=true']);
    } finally {
      await s.close();
    }
  });

  describe('a standby serves (it forwards to the active node): up, and the leader is named', () => {
    /** sys/health with `code` and `flags`; sys/leader with `leader` (status 200) or `leaderStatus`. */
    function standby(code: number, flags: Record<string, boolean>, leader: unknown = LEADER_ANSWER, leaderStatus = 200): http.RequestListener {
      return (req, res) => {
        if (req.url?.startsWith('/v1/sys/leader')) {
          res.writeHead(leaderStatus, { 'Content-Type': 'application/json' });
          res.end(typeof leader === 'string' ? leader : JSON.stringify(leader));
          return;
        }
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ initialized: true, sealed: false, standby: false, performance_standby: false, version: '2.4.0', ...flags }));
      };
    }
    /** OpenBao 2.4's sys/leader on a raft standby (test/store/raft-cluster.store.test.ts). */
    const LEADER_ANSWER = { ha_enabled: true, is_self: false, leader_address: 'http://127.0.0.1:18210', leader_cluster_address: 'https://127.0.0.1:18211' };

    it.each([
      ['standby (HTTP 429, as without standbyok)', 429, { standby: true }, 'standby', 'a standby node (GET /v1/sys/health: HTTP 429): it forwards requests to the active node'],
      ['standby (HTTP 200 with "standby": true, as OpenBao answers with standbyok)', 200, { standby: true }, 'standby', 'a standby node (GET /v1/sys/health: HTTP 200, "standby": true): it forwards requests to the active node'],
      ['performance standby (HTTP 473)', 473, { standby: true, performance_standby: true }, 'performance-standby', 'a performance standby node (GET /v1/sys/health: HTTP 473): it serves reads itself and forwards writes to the active node'],
      ['performance standby (HTTP 200 with "performance_standby": true)', 200, { standby: true, performance_standby: true }, 'performance-standby', 'a performance standby node (GET /v1/sys/health: HTTP 200, "performance_standby": true): it serves reads itself and forwards writes to the active node'],
    ])('%s: up, role and leader from sys/leader in one notice line', async (_what, code, flags, role, says) => {
      const s = await serve(standby(code, flags));
      try {
        const report = await checkStoreHealth(s.address);
        expect(report.role).toBe(role);
        expect(report.status).toBe(code);
        expect(report.leaderAddress).toBe('http://127.0.0.1:18210');
        expect(report.notice).toBe(`the secrets store at ${s.address} is ${says}; the leader is http://127.0.0.1:18210 (GET /v1/sys/leader)`);
        expect(s.urls).toEqual(['/v1/sys/health?standbyok=true&perfstandbyok=true', '/v1/sys/leader']);
      } finally {
        await s.close();
      }
    });

    it.each([
      ['sys/leader answers 500', { errors: ['internal'] }, 500, 'HTTP 500'],
      ['sys/leader answers without leader_address (no leader elected yet)', { ha_enabled: true, is_self: false, leader_address: '' }, 200, 'no leader_address in the answer'],
      ['sys/leader answers a page that is not JSON', '<html>proxy</html>', 200, "HTTP 200, not the store's JSON"],
    ])('still up when %s: the notice says the leader is not known and why', async (_what, leader, leaderStatus, why) => {
      const s = await serve(standby(429, { standby: true }, leader, leaderStatus));
      try {
        const report = await checkStoreHealth(s.address);
        expect(report.role).toBe('standby');
        expect(report.leaderAddress).toBeUndefined();
        expect(report.notice).toBe(
          `the secrets store at ${s.address} is a standby node (GET /v1/sys/health: HTTP 429): it forwards requests to the active node; the leader is not known (GET /v1/sys/leader: ${why})`,
        );
      } finally {
        await s.close();
      }
    });

    it('quotes a hostile leader_address escaped and cut', async () => {
      const s = await serve(standby(429, { standby: true }, { leader_address: `\u001b]0;pwned\u0007http://evil${'x'.repeat(5000)}` }));
      try {
        const report = await checkStoreHealth(s.address);
        expect(report.notice).toContain('the leader is \\u001b]0;pwned\\u0007http://evilxx');
        expect(report.notice).not.toMatch(/[\u0000-\u001f]/);
        expect(report.notice!.length).toBeLessThan(600);
      } finally {
        await s.close();
      }
    });
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

  it('reports a closed port as connection refused (not as the deadline passing)', async () => {
    const s = await serve(status(200));
    await s.close();
    const e = await failure(checkStoreHealth(s.address));
    expect(e.problem).toBe('unreachable');
    expect(e.message).toBe(
      `cannot reach the secrets store at ${s.address} (ECONNREFUSED): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`,
    );
  });

  it('gives up on a store that does not answer after the timeout', async () => {
    const s = await serve(() => undefined);
    try {
      const started = Date.now();
      const e = await failure(checkStoreHealth(s.address, 300));
      expect(e.problem).toBe('timeout');
      expect(e.message).toMatch(/did not answer GET \/v1\/sys\/health within 0.3s: .*\(SECRETSTORE_IAC_STORE_TIMEOUT sets the deadline\)$/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
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
