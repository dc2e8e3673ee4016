/**
 * A store the size production runs, for the store tests: three real OpenBao servers (the
 * toolchain's `bao`, no `-dev`) with integrated storage (`storage "raft"`), each in its own private
 * temp dir, listening on free 127.0.0.1 ports (API and cluster port).
 *
 * Start-up follows the operator's path: `sys/init` on the first node (1 key share, threshold 1),
 * unseal it, wait until it is active; `sys/storage/raft/join` on the other two with
 * `leader_api_addr` = the first node, unseal them; then wait until every node names the same
 * leader (`sys/leader`) and `sys/storage/raft/configuration` lists three voters (autopilot promotes
 * a joined node after its stabilization time, 10 s by default: before that, losing the leader
 * would leave no quorum). Every wait is bounded and fails naming what it waited for.
 *
 * The unseal key and the root token stay in this process; no server prints them (no `-dev`). The
 * servers' logs are in the temp dirs; error messages quote their tails with the token redacted.
 * stop() ends every server by pid (SIGTERM, then SIGKILL) and deletes the temp dirs; a process
 * `exit` hook does the same if a test never calls it.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort, RunningStore, storeRequest, StoreResponse } from './store-server';
import { toolchain } from './toolchain-env';

/** One server of the cluster. */
export interface ClusterNode {
  /** `node1`, `node2`, `node3` (also the raft `node_id`). */
  readonly name: string;
  /** API address, `http://127.0.0.1:<port>` (also its `api_addr`). */
  readonly addr: string;
  /** Cluster address, `https://127.0.0.1:<port>` as the store reports it (`cluster_addr`). */
  readonly clusterAddr: string;
  /** Process id of the server. */
  readonly pid: number;
  /** Whether the process is still running. */
  alive(): boolean;
}

/** Options of {@link startRaftCluster}. */
export interface RaftClusterOptions {
  /** Server binary; default the toolchain's. */
  binary?: string;
  /** Nodes; default 3. */
  size?: number;
  /** Bound of the whole start-up (processes, init, unseal, joins, voters). Default 120 s. */
  startTimeoutMs?: number;
}

/** A running cluster. */
export interface RaftCluster {
  readonly nodes: readonly ClusterNode[];
  /** Root token of the cluster (from `sys/init`). */
  readonly rootToken: string;
  /** The node a `RunningStore` view points at: `addr` of that node, the root token, its pid. */
  endpoint(node: ClusterNode): RunningStore;
  /** The active node now, by `sys/leader` of the living nodes (throws when none names one). */
  leader(): Promise<ClusterNode>;
  /**
   * Waits until one living node is active (`sys/health` 200 without `standbyok`) and every living
   * node names it in `sys/leader`; returns it and the milliseconds waited.
   */
  waitForLeader(timeoutMs?: number): Promise<{ node: ClusterNode; ms: number }>;
  /** Kills one server by pid (SIGKILL by default) and waits until the process is gone. */
  kill(node: ClusterNode, signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts a killed server again on its data, address and ports, as an operator restarts a store
   * that died, and unseals it; resolves with the new process once it is active (`sys/health` 200;
   * the node object of the killed process stays dead). Meant for a cluster of one.
   */
  restart(node: ClusterNode, timeoutMs?: number): Promise<ClusterNode>;
  /** Stops every server and deletes the temp dirs. Idempotent. */
  stop(): Promise<void>;
}

const STOP_GRACE_MS = 10_000;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves when the node's process has exited or after `ms`, whichever comes first (no timer left behind). */
function exitedWithin(n: { exited: Promise<void> }, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([n.exited, new Promise<void>((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

interface NodeProcess extends ClusterNode {
  readonly dir: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  exitInfo?: string;
}

/** The HCL configuration of one node. */
function nodeConfig(name: string, dataDir: string, apiPort: number, clusterPort: number): string {
  return [
    'storage "raft" {',
    `  path    = ${JSON.stringify(dataDir)}`,
    `  node_id = ${JSON.stringify(name)}`,
    // 1 = the tightest Raft timings (the docs' recommendation for production servers); the default
    // (0 → 5) makes a leader loss take several times longer to detect.
    '  performance_multiplier = 1',
    '}',
    'listener "tcp" {',
    `  address         = "127.0.0.1:${apiPort}"`,
    `  cluster_address = "127.0.0.1:${clusterPort}"`,
    '  tls_disable     = true',
    '}',
    `api_addr     = "http://127.0.0.1:${apiPort}"`,
    `cluster_addr = "https://127.0.0.1:${clusterPort}"`,
    // OpenBao removed mlock (openbao/openbao#363) and logs "unknown or unsupported field
    // disable_mlock" for it; HashiCorp Vault ≥ 1.20 requires it to be set with integrated storage.
    'disable_mlock = true',
    'ui = false',
    '',
  ].join('\n');
}

function redact(text: string, secrets: readonly string[]): string {
  return secrets.filter(Boolean).reduce((t, s) => t.split(s).join('<redacted>'), text);
}

/** Starts a cluster of real servers; on any failure stops what it started and throws. */
export async function startRaftCluster(options: RaftClusterOptions = {}): Promise<RaftCluster> {
  const binary = options.binary ?? toolchain().bao;
  const size = options.size ?? 3;
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-raft-'));
  fs.chmodSync(root, 0o700);
  const nodes: NodeProcess[] = [];
  let rootToken = '';
  let unsealKey = '';

  const onExit = () => {
    for (const n of nodes) {
      if (n.alive()) {
        try {
          process.kill(n.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await Promise.all(nodes.map((n) => stopNode(n)));
      process.removeListener('exit', onExit);
      fs.rmSync(root, { recursive: true, force: true });
    })();
    return stopped;
  };

  const logTails = (): string =>
    nodes
      .map((n) => {
        let tail = '';
        try {
          tail = fs.readFileSync(n.logFile, 'utf8').split('\n').slice(-15).join('\n');
        } catch {
          /* no log */
        }
        return `--- ${n.name} (${n.addr}, pid ${n.pid}${n.exitInfo ? `, exited: ${n.exitInfo}` : ''})\n${redact(tail, [rootToken, unsealKey])}`;
      })
      .join('\n');

  /** Polls `probe` until it returns a value, or fails after the start-up deadline naming `what`. */
  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    let last = '';
    for (;;) {
      const dead = nodes.find((n) => !n.alive());
      if (dead) throw new Error(`raft cluster: ${dead.name} exited (${dead.exitInfo}) while waiting for ${what}\n${logTails()}`);
      try {
        const value = await probe();
        if (value !== undefined) return value;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`raft cluster: timed out waiting for ${what}${last ? ` (last error: ${last})` : ''}\n${logTails()}`);
      await sleep(200);
    }
  };

  const req = (node: ClusterNode, method: string, apiPath: string, body?: unknown, token: string | null = null): Promise<StoreResponse> =>
    storeRequest({ addr: node.addr, rootToken: rootToken }, method, apiPath, body, token);

  try {
    // Ports distinct across the nodes (a port probed free is released again before the server binds it).
    const ports = new Set<number>();
    const port = async (): Promise<number> => {
      for (;;) {
        const p = await freePort();
        if (!ports.has(p)) {
          ports.add(p);
          return p;
        }
      }
    };
    for (let i = 1; i <= size; i++) {
      nodes.push(await startNode(binary, root, `node${i}`, await port(), await port()));
    }
    const [first, ...others] = nodes;

    // Every node listens and answers sys/health (501: not initialized yet).
    for (const n of nodes) {
      await until(`${n.name} to listen on ${n.addr}`, async () => ((await req(n, 'GET', 'sys/health')).status === 501 ? true : undefined));
    }

    const init = await req(first, 'PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 });
    if (init.status !== 200) throw new Error(`raft cluster: sys/init on ${first.name} answered HTTP ${init.status} ${JSON.stringify(init.body?.errors ?? '')}`);
    unsealKey = init.body.keys_base64[0];
    rootToken = init.body.root_token;

    const unseal = async (n: ClusterNode) => {
      const res = await req(n, 'PUT', 'sys/unseal', { key: unsealKey });
      if (res.status !== 200) throw new Error(`raft cluster: sys/unseal on ${n.name} answered HTTP ${res.status} ${JSON.stringify(res.body?.errors ?? '')}`);
    };
    await unseal(first);
    await until(`${first.name} to become active`, async () => ((await req(first, 'GET', 'sys/health')).status === 200 ? true : undefined));

    // A node joins before it is unsealed (raft as storage): the leader's challenge is answered
    // once it is unsealed with the leader's key.
    for (const n of others) {
      await until(`${n.name} to join ${first.name}`, async () => {
        const res = await req(n, 'POST', 'sys/storage/raft/join', { leader_api_addr: first.addr });
        if (res.status === 200 && res.body?.joined === true) return true;
        throw new Error(`sys/storage/raft/join answered HTTP ${res.status} ${JSON.stringify(res.body?.errors ?? res.body)}`);
      });
      await unseal(n);
    }

    const cluster: RaftCluster = {
      nodes,
      rootToken,
      endpoint: (node) => ({ addr: node.addr, rootToken, pid: node.pid, stop }),
      leader: async () => {
        for (const n of nodes.filter((x) => x.alive())) {
          const res = await req(n, 'GET', 'sys/leader').catch(() => undefined);
          const found = nodes.find((x) => x.addr === res?.body?.leader_address);
          if (found && found.alive()) return found;
        }
        throw new Error('raft cluster: no living node names a living leader (sys/leader)');
      },
      waitForLeader: async (timeoutMs = 60_000) => {
        const started = Date.now();
        const end = started + timeoutMs;
        for (;;) {
          const living = nodes.filter((n) => n.alive());
          const answers = await Promise.all(
            living.map(async (n) => ({
              n,
              health: await req(n, 'GET', 'sys/health').catch(() => undefined),
              leader: await req(n, 'GET', 'sys/leader').catch(() => undefined),
            })),
          );
          const active = answers.filter((a) => a.health?.status === 200);
          if (active.length === 1 && answers.every((a) => a.leader?.body?.leader_address === active[0].n.addr)) {
            return { node: active[0].n, ms: Date.now() - started };
          }
          if (Date.now() > end) {
            const seen = answers.map((a) => `${a.n.name}: sys/health ${a.health?.status ?? 'no answer'}, leader ${a.leader?.body?.leader_address || 'none'}`).join('; ');
            throw new Error(`raft cluster: no leader every living node agrees on after ${timeoutMs} ms (${seen})\n${logTails()}`);
          }
          await sleep(100);
        }
      },
      kill: async (node, signal = 'SIGKILL') => {
        const n = nodes.find((x) => x.pid === node.pid)!;
        if (!n.alive()) return;
        process.kill(n.pid, signal);
        await exitedWithin(n, STOP_GRACE_MS);
        if (n.alive()) throw new Error(`raft cluster: ${n.name} (pid ${n.pid}) still runs ${STOP_GRACE_MS} ms after ${signal}`);
      },
      restart: async (node, timeoutMs = 120_000) => {
        const i = nodes.findIndex((x) => x.name === node.name);
        if (nodes[i].alive()) throw new Error(`raft cluster: ${node.name} (pid ${nodes[i].pid}) still runs: kill it first`);
        const port = (addr: string) => Number(new URL(addr).port);
        const fresh = await startNode(binary, root, node.name, port(node.addr), port(node.clusterAddr));
        nodes[i] = fresh;
        const end = Date.now() + timeoutMs;
        const waitFor = async (what: string, done: (status: number | undefined) => boolean) => {
          for (;;) {
            if (!fresh.alive()) throw new Error(`raft cluster: ${fresh.name} exited (${fresh.exitInfo}) while waiting for ${what}\n${logTails()}`);
            const status = (await req(fresh, 'GET', 'sys/health').catch(() => undefined))?.status;
            if (done(status)) return;
            if (Date.now() > end) throw new Error(`raft cluster: timed out waiting for ${what} (sys/health ${status ?? 'no answer'})\n${logTails()}`);
            await sleep(200);
          }
        };
        // Sealed after a restart (503), then unsealed with the cluster's key.
        await waitFor(`${fresh.name} to listen again on ${fresh.addr}`, (s) => s === 503);
        await unseal(fresh);
        await waitFor(`${fresh.name} to be unsealed and active`, (s) => s === 200);
        return fresh;
      },
      stop,
    };

    // Stable: one leader all nodes name, and all nodes voters (quorum survives one loss).
    await until('a leader every node names', async () => {
      const { node } = await cluster.waitForLeader(5_000);
      return node;
    });
    await until(`${size} voters in sys/storage/raft/configuration`, async () => {
      const res = await req(first, 'GET', 'sys/storage/raft/configuration', undefined, rootToken);
      const servers: any[] = res.body?.data?.config?.servers ?? [];
      return servers.length === size && servers.every((s) => s.voter === true) ? true : undefined;
    });
    return cluster;
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Starts one server process in `<root>/<name>` on the given API and cluster ports. */
async function startNode(binary: string, root: string, name: string, apiPort: number, clusterPort: number): Promise<NodeProcess> {
  const dir = path.join(root, name);
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const config = path.join(dir, 'server.hcl');
  fs.writeFileSync(config, nodeConfig(name, dataDir, apiPort, clusterPort));
  const logFile = path.join(dir, 'server.log');
  const logFd = fs.openSync(logFile, 'w', 0o600);
  // HOME and TMPDIR inside the node's dir: nothing lands in the real home directory.
  const child = spawn(binary, ['server', `-config=${config}`], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, TMPDIR: dir },
    stdio: ['ignore', logFd, logFd],
  });
  fs.closeSync(logFd);
  if (child.pid === undefined) {
    const err = await new Promise<Error>((r) => child.once('error', r));
    throw new Error(`raft cluster: cannot start ${binary}: ${err.message}`);
  }
  let running = true;
  const node: NodeProcess = {
    name,
    addr: `http://127.0.0.1:${apiPort}`,
    clusterAddr: `https://127.0.0.1:${clusterPort}`,
    pid: child.pid,
    dir,
    logFile,
    child,
    alive: () => running,
    exited: new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        running = false;
        node.exitInfo = signal ? `signal ${signal}` : `code ${code}`;
        resolve();
      }),
    ),
  };
  return node;
}

/** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
async function stopNode(n: NodeProcess): Promise<void> {
  if (!n.alive()) return;
  try {
    process.kill(n.pid, 'SIGTERM');
  } catch {
    return;
  }
  await exitedWithin(n, STOP_GRACE_MS);
  if (!n.alive()) return;
  try {
    process.kill(n.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  await exitedWithin(n, STOP_GRACE_MS);
}
