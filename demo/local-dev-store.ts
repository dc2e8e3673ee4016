/**
 * A throw-away local dev server (OpenBao, or HashiCorp Vault given its binary: the dev flags are the
 * same) for `npm run demo` and `npm run bench:store`: the toolchain
 * scripts/toolchain.sh built, on a free 127.0.0.1 port, with a random root token that stays in
 * memory (the server's banner, which prints it, goes to a 0600 `store.log` in the caller's work dir).
 */
import { ChildProcess, spawn } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

/** A running local dev store. */
export interface LocalDevStore {
  /** `http://127.0.0.1:<port>`. */
  readonly addr: string;
  /** The dev server's root token (never printed). */
  readonly rootToken: string;
  /** The server process. */
  readonly process: ChildProcess;
  /** Stops the server (SIGTERM); idempotent. */
  stop(): void;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `probe` every 250 ms until it returns a value (a thrown error counts as "not yet"). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await Promise.resolve(probe()).catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The toolchain scripts/toolchain.sh built (the `export NAME=value` lines of its toolchain.env). */
export function toolchain(): Record<string, string> {
  const cache = process.env.SECRETSTORE_IAC_CACHE || path.join(os.homedir(), '.cache', 'secretstore-iac');
  const file = path.join(cache, 'toolchain.env');
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  return env;
}

/**
 * Starts `<binary> server -dev` (`bao` unless told) and waits until `sys/health` answers 200.
 * @param workDir a private directory for the server's log (`store.log`, mode 0600)
 */
export async function startLocalDevStore(workDir: string, binary = toolchain().SECRETSTORE_IAC_BAO): Promise<LocalDevStore> {
  const port = await freePort();
  const rootToken = crypto.randomBytes(24).toString('hex');
  const log = fs.openSync(path.join(workDir, 'store.log'), 'w', 0o600);
  const child = spawn(binary, ['server', '-dev', `-dev-listen-address=127.0.0.1:${port}`, `-dev-root-token-id=${rootToken}`], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const addr = `http://127.0.0.1:${port}`;
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  try {
    const state = await waitFor('the store', async () => {
      if (child.exitCode !== null) return 'exited';
      return (await fetch(`${addr}/v1/sys/health`)).status === 200 ? 'up' : undefined;
    });
    if (state === 'exited') throw new Error(`the store exited (${child.exitCode}); see ${path.join(workDir, 'store.log')}`);
  } catch (error) {
    stop();
    throw error;
  }
  return { addr, rootToken, process: child, stop };
}
