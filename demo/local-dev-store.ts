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

/** The toolchain scripts/toolchain.sh built (the `export NAME=value` lines of its toolchain.env) and its cache (`SECRETSTORE_IAC_CACHE`). */
export function toolchain(): Record<string, string> {
  const cache = process.env.SECRETSTORE_IAC_CACHE || path.join(os.homedir(), '.cache', 'secretstore-iac');
  const file = path.join(cache, 'toolchain.env');
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  // Where the CLI finds the toolchain's provider mirror, whatever HOME a run is given (an engine run
  // writes its own CLI configuration and does not read TF_CLI_CONFIG_FILE, issue 45).
  env.SECRETSTORE_IAC_CACHE = cache;
  return env;
}

/**
 * Where a dev server keeps its data: `memory` (the dev server's own in-memory storage) or `raft`
 * (integrated storage in the work directory, as a production store keeps it).
 *
 * The benchmark needs `raft`: OpenBao's in-memory storage copies the whole store at the start of
 * every storage transaction (`TransactionalInmemBackend.BeginTx`: `radix.NewFromMap(root.ToMap())`,
 * under the backend's lock), and the AppRole method reads and writes each role in a transaction,
 * so one `GET auth/approle/role/<name>` costs in proportion to every object on the store (41-49 ms
 * with 40,000 roles and policies, against 0.5-1 ms on raft): at 20,000 applications a shard's
 * refresh measured the dev server, not the engine (docs/pipelines.md §12).
 */
export type DevStoreStorage = 'memory' | 'raft';

/** The `-config` file a dev server with {@link DevStoreStorage} `raft` reads (HCL). */
export function raftStorageConfig(dataDir: string, apiPort: number, clusterPort: number): string {
  return [
    'storage "raft" {',
    `  path    = ${JSON.stringify(dataDir)}`,
    '  node_id = "bench"',
    '}',
    `api_addr      = "http://127.0.0.1:${apiPort}"`,
    `cluster_addr  = "http://127.0.0.1:${clusterPort}"`,
    'disable_mlock = true',
    '',
  ].join('\n');
}

/**
 * Starts `<binary> server -dev` (`bao` unless told) and waits until `sys/health` answers 200.
 * @param workDir a private directory for the server's log (`store.log`, mode 0600) and, with
 *   `raft` storage, its data (`store-raft/`) and configuration (`store-raft.hcl`)
 * @param storage where the server keeps its data (default `memory`)
 */
export async function startLocalDevStore(workDir: string, binary = toolchain().SECRETSTORE_IAC_BAO, storage: DevStoreStorage = 'memory'): Promise<LocalDevStore> {
  const port = await freePort();
  const rootToken = crypto.randomBytes(24).toString('hex');
  const args = ['server', '-dev', `-dev-listen-address=127.0.0.1:${port}`, `-dev-root-token-id=${rootToken}`];
  if (storage === 'raft') {
    const dataDir = path.join(workDir, 'store-raft');
    fs.mkdirSync(dataDir, { mode: 0o700 });
    const config = path.join(workDir, 'store-raft.hcl');
    fs.writeFileSync(config, raftStorageConfig(dataDir, port, await freePort()), { mode: 0o600 });
    args.push(`-config=${config}`);
  }
  const log = fs.openSync(path.join(workDir, 'store.log'), 'w', 0o600);
  const child = spawn(binary, args, { stdio: ['ignore', log, log] });
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
