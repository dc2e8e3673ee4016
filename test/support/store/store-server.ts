/**
 * A real, throw-away secrets store for the store tests: `bao server -dev` (in memory, unsealed)
 * on a free loopback port with a random root token.
 *
 * The dev server prints its root token in its start-up banner, so its output goes to a log file
 * in a private temp dir that is never printed and is deleted on stop(). Error messages that quote
 * that log have the token redacted.
 */
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { toolchain } from './toolchain-env';

export interface RunningStore {
  /** e.g. http://127.0.0.1:41234 */
  addr: string;
  rootToken: string;
  pid: number;
  /** Kills the server (by pid), waits for it to exit, and deletes its temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartStoreOptions {
  /** Server binary; default: the toolchain's (SECRETSTORE_IAC_BAO or $CACHE/toolchain.env). */
  binary?: string;
  /** How long to wait for /v1/sys/health to answer 200. Default 60 s. */
  readyTimeoutMs?: number;
  /**
   * Serve the API over TLS with this certificate (a `listener "tcp"` block in a config file next to
   * the dev server's own plain listener, which stays on another loopback port for nothing else):
   * `addr` is then `https://127.0.0.1:<port>`, and readiness is checked through the CA.
   */
  tls?: { certFile: string; keyFile: string; caFile: string };
  /** More environment variables for the server (its environment is otherwise PATH, HOME and TMPDIR only). */
  env?: Readonly<Record<string, string>>;
  /**
   * More server configuration (HCL), passed with `-config` next to the dev server's own: OpenBao
   * 2.4 enables audit devices only there (its API answers "cannot enable audit device via API").
   */
  config?: string;
}

const STOP_GRACE_MS = 10_000;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

function redact(text: string, secret: string): string {
  return secret ? text.split(secret).join('<redacted>') : text;
}

function tailOf(file: string, secret: string, lines = 30): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return redact(text.split('\n').slice(-lines).join('\n'), secret);
  } catch {
    return '';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startStore(options: StartStoreOptions = {}): Promise<RunningStore> {
  const binary = options.binary ?? toolchain().bao;
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  let lastError: Error | undefined;
  // The port is free when probed but could be taken before the server binds it: retry.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(binary, await freePort(), readyTimeoutMs, options.tls, options.env, options.config);
    } catch (err) {
      lastError = err as Error;
      if (!/address already in use|bind/i.test(lastError.message)) break;
    }
  }
  throw lastError;
}

/** The status of GET /v1/sys/health over TLS, trusting only `caFile`. */
function tlsHealthStatus(url: string, caFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${url}/v1/sys/health`, { ca: fs.readFileSync(caFile), agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

async function startOnce(
  binary: string,
  port: number,
  readyTimeoutMs: number,
  tls?: StartStoreOptions['tls'],
  extraEnv?: StartStoreOptions['env'],
  extraConfig?: string,
): Promise<RunningStore> {
  const rootToken = crypto.randomBytes(24).toString('hex');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-store-'));
  fs.chmodSync(tmp, 0o700);
  const extraArgs: string[] = [];
  let addr = `http://127.0.0.1:${port}`;
  if (tls) {
    const tlsPort = await freePort();
    const config = path.join(tmp, 'tls-listener.hcl');
    fs.writeFileSync(
      config,
      `listener "tcp" {\n  address = "127.0.0.1:${tlsPort}"\n  tls_cert_file = ${JSON.stringify(tls.certFile)}\n  tls_key_file = ${JSON.stringify(tls.keyFile)}\n}\n`,
    );
    extraArgs.push(`-config=${config}`);
    addr = `https://127.0.0.1:${tlsPort}`;
  }
  if (extraConfig !== undefined) {
    const config = path.join(tmp, 'extra-config.hcl');
    fs.writeFileSync(config, extraConfig);
    extraArgs.push(`-config=${config}`);
  }
  const logFile = path.join(tmp, 'server.log');
  const logFd = fs.openSync(logFile, 'w', 0o600);

  // HOME points into the temp dir: the dev server stores its root token with the CLI's token
  // helper (~/.vault-token or similar), which must not land in the real home directory.
  const env: NodeJS.ProcessEnv = { ...extraEnv, PATH: process.env.PATH, HOME: tmp, TMPDIR: tmp };
  const child = spawn(
    binary,
    ['server', '-dev', `-dev-root-token-id=${rootToken}`, `-dev-listen-address=127.0.0.1:${port}`, ...extraArgs],
    { cwd: tmp, env, stdio: ['ignore', logFd, logFd], detached: false },
  );
  fs.closeSync(logFd);

  let exited = false;
  let exitInfo = '';
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      exitInfo = signal ? `signal ${signal}` : `code ${code}`;
      resolve();
    });
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  const pid = child.pid;
  const cleanupDir = () => fs.rmSync(tmp, { recursive: true, force: true });
  if (pid === undefined) {
    const err = await spawnError;
    cleanupDir();
    throw new Error(`cannot start store server ${binary}: ${err.message}`);
  }

  // Last resort when the test process ends without stop(): synchronous kill + cleanup.
  const onExit = () => {
    if (!exited && isAlive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    cleanupDir();
  };
  process.on('exit', onExit);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (!exited) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
        const deadline = Date.now() + STOP_GRACE_MS;
        while (!exited && Date.now() < deadline) await Promise.race([exitPromise, sleep(100)]);
        if (!exited) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* already gone */
          }
          await Promise.race([exitPromise, sleep(STOP_GRACE_MS)]);
        }
      }
      process.removeListener('exit', onExit);
      cleanupDir();
    })();
    return stopped;
  };

  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) {
      const tail = tailOf(logFile, rootToken);
      await stop();
      throw new Error(`store server exited during start-up (${exitInfo}); log tail:\n${tail}`);
    }
    try {
      if (tls) {
        if ((await tlsHealthStatus(addr, tls.caFile)) === 200) break;
      } else {
        const res = await fetch(`${addr}/v1/sys/health`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.status === 200) break;
      }
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      const tail = tailOf(logFile, rootToken);
      await stop();
      throw new Error(`store server not healthy after ${readyTimeoutMs} ms; log tail:\n${tail}`);
    }
    await sleep(100);
  }

  return { addr, rootToken, pid, stop };
}

export interface StoreResponse {
  status: number;
  /** Parsed JSON when the body is JSON, else the raw text ('' for an empty body). */
  body: any;
}

/**
 * One HTTP request to the store. `apiPath` may be given with or without the `/v1/` prefix.
 * The token defaults to the root token; pass `null` to send no token.
 */
export async function storeRequest(
  store: Pick<RunningStore, 'addr' | 'rootToken'>,
  method: string,
  apiPath: string,
  body?: unknown,
  token?: string | null,
): Promise<StoreResponse> {
  const p = apiPath.replace(/^\/+/, '');
  const url = `${store.addr}/${p.startsWith('v1/') ? p : `v1/${p}`}`;
  const headers: Record<string, string> = {};
  const tok = token === undefined ? store.rootToken : token;
  if (tok) headers['X-Vault-Token'] = tok;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(url, { method: method.toUpperCase(), headers, body: payload });
  const text = await res.text();
  let parsed: unknown = text;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, body: parsed };
}
