import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { Duration } from '../../../lib';
import { renderAgentEntrypoint } from '../../../lib/render/agent-entrypoint';
import { requiredCommand } from '../../support/required-command';

// The agent container's entrypoint (spec §4.1 flow 2), rendered and run by sh.

const DEFAULTS = {
  roleName: 'orchestrator-dev',
  configFile: '/secretstore/config/agent.hcl',
  roleIdFile: '/secretstore/auth/role-id',
  secretIdFile: '/secretstore/auth/secret-id',
};
const RENEWAL = { interval: Duration.minutes(45), proxyPort: 8100 };

describe('the rendered text', () => {
  it('writes both files in one directory made once, and execs the configured agent', () => {
    const text = renderAgentEntrypoint({ ...DEFAULTS, addressInConfiguration: false });
    expect(text).toContain('\numask 077\nmkdir -p /secretstore/auth\n');
    expect(text).toContain(`printf '%s' "$SECRETSTORE_ROLE_ID" > /secretstore/auth/role-id\n`);
    expect(text.endsWith('\nunset SECRETSTORE_ROLE_ID SECRETSTORE_SECRET_ID\nexec "${SECRETSTORE_AGENT_BINARY:-bao}" agent -config=/secretstore/config/agent.hcl\n')).toBe(true);
    expect(renderAgentEntrypoint({ ...DEFAULTS, roleIdFile: '/a/r', secretIdFile: '/b/s', addressInConfiguration: false })).toContain('\nmkdir -p /a /b\n');
  });

  it('runs `<binary> proxy` for the proxy container, its messages and comments naming the proxy', () => {
    const text = renderAgentEntrypoint({ ...DEFAULTS, process: 'proxy', configFile: '/c/proxy.hcl', addressInConfiguration: false, renewal: RENEWAL });
    expect(text.endsWith('\nrenew_loop </dev/null &\nexec "${SECRETSTORE_AGENT_BINARY:-bao}" proxy -config=/c/proxy.hcl\n')).toBe(true);
    expect(text).toContain('# Entrypoint of the proxy container of AppRole orchestrator-dev');
    expect(text).toContain('fail() { echo "secretstore proxy: $*" >&2; exit 78; }');
    expect(text).toContain('echo "secretstore proxy: renew-self every $renew_every s through $renew_proxy with ${renew_with##*/}" >&2');
    expect(text).not.toMatch(/\bagent\b/);
  });

  it("names the target store's binary in its comments and runs it by default", () => {
    const vault = renderAgentEntrypoint({ ...DEFAULTS, agentBinary: 'vault', addressInConfiguration: false, renewal: RENEWAL });
    expect(vault).toContain('# Both names, whichever binary SECRETSTORE_AGENT_BINARY names: `vault` reads only VAULT_ADDR (without it, it dials https://127.0.0.1:8200).\n');
    expect(vault).toContain('renew_with="${SECRETSTORE_AGENT_BINARY:-vault}"');
    expect(vault).toContain('# SECRETSTORE_AGENT_BINARY overrides the agent binary (default: vault).\n');
    expect(vault).not.toMatch(/\bbao\b/);
    const bao = renderAgentEntrypoint({ ...DEFAULTS, addressInConfiguration: false, renewal: RENEWAL });
    expect(bao).toContain('# Both names, whichever binary SECRETSTORE_AGENT_BINARY names: `bao` reads BAO_ADDR (and VAULT_ADDR).\n');
    expect(bao).not.toMatch(/`vault|:-vault\}/);
  });

  it('checks the environment for a store address only when the configuration has none', () => {
    const check = '[ -n "${BAO_ADDR:-}${VAULT_ADDR:-}" ] || fail "SECRETSTORE_ADDR is unset or empty';
    expect(renderAgentEntrypoint({ ...DEFAULTS, addressInConfiguration: false })).toContain(check);
    expect(renderAgentEntrypoint({ ...DEFAULTS, addressInConfiguration: true })).not.toContain(check);
  });

  it('adds the renew-self loop with the interval in seconds and the proxy, and no template line of its own', () => {
    const text = renderAgentEntrypoint({ ...DEFAULTS, addressInConfiguration: true, renewal: { interval: Duration.minutes(20), proxyPort: 18200 } });
    expect(text).toContain('# Spec §4.1 flow 2 step 4: every 20m, POST auth/token/renew-self to the agent\'s loopback listener http://127.0.0.1:18200,\n');
    expect(text).toContain('\nrenew_every=1200\nrenew_proxy=http://127.0.0.1:18200\nmain_pid=$$\n');
    expect(text).not.toMatch(/#@|@@/);
    expect(renderAgentEntrypoint({ ...DEFAULTS, addressInConfiguration: true })).not.toMatch(/renew|#@|@@/);
  });
});

describe('entrypoint.sh', () => {
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-entrypoint-')), 'entrypoint.sh');
  fs.writeFileSync(script, renderAgentEntrypoint({ ...DEFAULTS, addressInConfiguration: false, renewal: RENEWAL }));
  afterAll(() => fs.rmSync(path.dirname(script), { recursive: true, force: true }));
  const run = (env: Record<string, string>): { status: number; stderr: string } => {
    try {
      execFileSync('sh', [script], { env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      return { status: 0, stderr: '' };
    } catch (e: any) {
      return { status: e.status, stderr: String(e.stderr) };
    }
  };

  it('is valid POSIX sh', () => {
    expect(() => execFileSync('sh', ['-n', script])).not.toThrow();
  });

  it('refuses to start without the provisioned variables, naming the fix', () => {
    const r = run({ SECRETSTORE_ADDR: 'http://127.0.0.1:1' });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('SECRETSTORE_ROLE_ID is not set: provision the host (secretstore-iac provision)');
    const s = run({ SECRETSTORE_ADDR: 'http://127.0.0.1:1', SECRETSTORE_ROLE_ID: 'r' });
    expect(s.stderr).toContain('SECRETSTORE_SECRET_ID is not set');
  });

  it('refuses to start without a store address (spec §7, first row)', () => {
    const r = run({ SECRETSTORE_ROLE_ID: 'r', SECRETSTORE_SECRET_ID: 's' });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('SECRETSTORE_ADDR is unset or empty');
  });
});

describe('the renew-self loop, run against a stand-in proxy', () => {
  // Missing curl fails one test naming the package, or is reported skipped (SECRETSTORE_IAC_ALLOW_SKIP=curl).
  const curl = requiredCommand('curl', 'the renew-self loop tests');
  const itWithCurl = curl ? it : it.skip;

  /**
   * Runs entrypoint.sh with a stand-in agent that lives until the proxy (answering `status`) has seen
   * `wanted` requests: counted, not timed, so a loaded machine only makes it slower.
   */
  async function runLoop(status: number, wanted: number): Promise<{ log: string; requests: http.IncomingHttpHeaders[]; after: number; gaps: number[] }> {
    const arrivals: number[] = [];
    let stopFile = '';
    const server = http.createServer((req, res) => {
      requests.push({ ...req.headers, ':method': req.method, ':path': req.url });
      arrivals.push(Date.now());
      if (requests.length === wanted) fs.writeFileSync(stopFile, '');
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ auth: { client_token: 's.stand-in-token-in-the-body' } }));
    });
    const requests: http.IncomingHttpHeaders[] = [];
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-loop-'));
    stopFile = path.join(home, 'stop');
    try {
      const entrypoint = path.join(home, 'entrypoint.sh');
      fs.writeFileSync(
        entrypoint,
        renderAgentEntrypoint({
          roleName: 'shop-dev',
          configFile: path.join(home, 'agent.hcl'),
          roleIdFile: path.join(home, 'auth', 'role-id'),
          secretIdFile: path.join(home, 'auth', 'secret-id'),
          addressInConfiguration: false,
          renewal: { interval: Duration.seconds(1), proxyPort: port },
        }),
      );
      // Only sh, mkdir, sleep and curl on the PATH; the stand-in agent waits for the stop file, then exits.
      const bin = path.join(home, 'bin');
      fs.mkdirSync(bin);
      for (const tool of ['sh', 'mkdir', 'sleep']) fs.symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool));
      fs.symlinkSync(curl!, path.join(bin, 'curl'));
      const agent = path.join(home, 'agent');
      fs.writeFileSync(agent, `#!/bin/sh\nwhile [ ! -e '${stopFile}' ]; do sleep 0.1; done\n`, { mode: 0o755 });
      const log = path.join(home, 'log');
      const fd = fs.openSync(log, 'w');
      const child = spawn(path.join(bin, 'sh'), [entrypoint], {
        env: { PATH: bin, SECRETSTORE_ROLE_ID: 'r', SECRETSTORE_SECRET_ID: 's', SECRETSTORE_ADDR: 'http://127.0.0.1:1', SECRETSTORE_AGENT_BINARY: agent, VAULT_TOKEN: 'env-token' },
        stdio: ['ignore', fd, fd],
      });
      fs.closeSync(fd);
      await new Promise((r) => child.once('exit', r));
      const atExit = requests.length;
      // The loop checks the agent every second: no request once it is gone.
      await new Promise((r) => setTimeout(r, 2500));
      return { log: fs.readFileSync(log, 'utf8'), requests, after: requests.length - atExit, gaps: arrivals.slice(1).map((t, i) => t - arrivals[i]) };
    } finally {
      server.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  }

  itWithCurl('POSTs renew-self every second without a token, logs "HTTP 200" and never the body, and stops with the agent', async () => {
    const { log, requests, after, gaps } = await runLoop(200, 3);
    // The agent stops after the third; one more may be on its way while the loop notices.
    expect(requests.length).toBeGreaterThanOrEqual(3);
    expect(requests.length).toBeLessThanOrEqual(4);
    // Every second, never faster (a loaded machine can only make the gaps longer).
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(900);
    for (const r of requests) {
      expect(r[':method']).toBe('POST');
      expect(r[':path']).toBe('/v1/auth/token/renew-self');
      expect(r['x-vault-request']).toBe('true');
      expect(r['x-vault-token']).toBeUndefined();
    }
    expect(after).toBe(0);
    expect(log).toMatch(/^secretstore agent: renew-self every 1 s through http:\/\/127\.0\.0\.1:\d+ with curl$/m);
    expect(log.match(/^secretstore agent: renew-self: HTTP 200$/gm)).toHaveLength(requests.length);
    expect(log).not.toMatch(/stand-in-token|env-token|client_token/);
  });

  itWithCurl('logs the refusal status', async () => {
    const { log } = await runLoop(403, 1);
    expect(log).toMatch(/^secretstore agent: renew-self: HTTP 403$/m);
  });
});
