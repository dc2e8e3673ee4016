import { StoreTarget } from '../model/store-target';
import { storeText } from '../private/terminal-text';
import { STORE_TRANSPORT_VARIABLES, StoreTransport, StoreTransportError } from './store-transport';

/**
 * Default time the health check waits for the store: long enough for a store across a WAN, short
 * enough that a stopped store is reported in seconds instead of after the engine's own retries.
 */
export const STORE_HEALTH_TIMEOUT_MS = 5_000;

/** Why the store cannot serve the engine. */
export type StoreHealthProblem =
  | 'unreachable'
  | 'timeout'
  | 'sealed'
  | 'not-initialized'
  | 'dr-secondary'
  | 'standby-without-active'
  | 'removed'
  | 'tls'
  | 'redirect'
  | 'too-large'
  | 'address'
  | 'unexpected';

/** The store cannot serve requests: the message names the address, the reason and the fix. */
export class StoreHealthError extends Error {
  constructor(
    readonly problem: StoreHealthProblem,
    message: string,
    /** HTTP status of `sys/health`, when the store answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'StoreHealthError';
  }
}

/**
 * The statuses of `sys/health` (Vault and OpenBao defaults) and what each means. Standbys and
 * performance standbys serve requests (forwarded to the active node), so they count as up.
 */
export const STORE_HEALTH_STATUSES: Readonly<Record<number, { up: boolean; problem?: StoreHealthProblem; meaning: string }>> = {
  200: { up: true, meaning: 'active' },
  429: { up: true, meaning: 'standby' },
  472: { up: false, problem: 'dr-secondary', meaning: 'a disaster-recovery secondary' },
  473: { up: true, meaning: 'performance standby' },
  474: { up: false, problem: 'standby-without-active', meaning: 'a standby that cannot reach the active node' },
  501: { up: false, problem: 'not-initialized', meaning: 'not initialized' },
  503: { up: false, problem: 'sealed', meaning: 'sealed' },
  530: { up: false, problem: 'removed', meaning: 'a node removed from its cluster' },
};

/** What to do about each problem; `cli` is the answering store's CLI (`bao` or `vault`). */
const FIX: Partial<Record<StoreHealthProblem, (cli: string) => string>> = {
  'dr-secondary': () => 'point SECRETSTORE_ADDR / VAULT_ADDR at the primary',
  'standby-without-active': () => 'check the cluster: the active node is down or unreachable from this node',
  'not-initialized': (cli) => `initialize and unseal it first (${cli} operator init)`,
  sealed: (cli) => `unseal it (${cli} operator unseal) before planning or applying`,
  removed: () => 'point SECRETSTORE_ADDR / VAULT_ADDR at a node of the cluster',
};

/** True when `body` is the store's `sys/health` JSON: an object with boolean `initialized` and `sealed`. */
export function isHealthAnswer(body: unknown): body is { initialized: boolean; sealed: boolean } {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && typeof (body as any).initialized === 'boolean' && typeof (body as any).sealed === 'boolean';
}

/** What a node that serves requests is, by its `sys/health` answer. */
export type StoreNodeRole = 'active' | 'standby' | 'performance-standby';

/** A store that can serve the engine: what `sys/health` (and, for a standby, `sys/leader`) said. */
export interface StoreHealthReport {
  /** The address asked, without trailing slash. */
  readonly address: string;
  /** HTTP status of `sys/health` (200 for a standby too: the check asks with `standbyok`). */
  readonly status: number;
  /** Active node, standby or performance standby. */
  readonly role: StoreNodeRole;
  /**
   * For a standby: the active node's API address, `leader_address` of `GET /v1/sys/leader`,
   * terminal-escaped; undefined for the active node and when the standby did not name it.
   */
  readonly leaderAddress?: string;
  /**
   * For a standby: one line for the operator saying it talks to a standby and which node leads (or
   * why the leader is not known); undefined for the active node.
   */
  readonly notice?: string;
}

/**
 * The role a serving node's `sys/health` answer gives: 473 or `"performance_standby": true` is a
 * performance standby, 429 or `"standby": true` a standby, anything else the active node. With
 * `standbyok`/`perfstandbyok` a standby answers 200, so the body decides (OpenBao 2.4 answers
 * `"standby": true` with 200 on a raft standby, test/store/raft-cluster.store.test.ts).
 */
export function storeNodeRole(status: number, body: unknown): StoreNodeRole {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (status === 473 || b.performance_standby === true) return 'performance-standby';
  if (status === 429 || b.standby === true) return 'standby';
  return 'active';
}

/** The leader a standby names (`GET /v1/sys/leader`, no token), or why it is not known. */
async function leaderOf(base: string, via: StoreTransport): Promise<{ address?: string; why?: string }> {
  try {
    const { status, text } = await via.request({ method: 'GET', url: `${base}/v1/sys/leader` });
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      return { why: `HTTP ${status}, not the store's JSON` };
    }
    const leader = body?.leader_address;
    if (status === 200 && typeof leader === 'string' && leader.trim() !== '') return { address: storeText(leader.trim(), 200) };
    return { why: status === 200 ? 'no leader_address in the answer' : `HTTP ${status}` };
  } catch (e) {
    if (e instanceof StoreTransportError) return { why: e.reason };
    throw e;
  }
}

/**
 * Checks `GET /v1/sys/health` (no token needed) before the engine runs, so that a stopped, sealed
 * or uninitialised store is reported in seconds with its address and the reason. The answer must
 * be the store's health JSON ({@link isHealthAnswer}) with a status of {@link STORE_HEALTH_STATUSES}:
 * anything else (an HTML page, other JSON) "does not answer like a secrets store". Standbys and
 * performance standbys count as healthy (`standbyok`, `perfstandbyok`): they forward to the active
 * node. For a standby the report names the leader (`GET /v1/sys/leader`); a leader that cannot be
 * read is said in the notice and does not fail the check. The requests go through the
 * {@link StoreTransport} (no redirect to another origin, size limit, deadline, TLS settings).
 * @param transport the transport, or a deadline in milliseconds for a default one
 * @returns what the node is, and for a standby the leader and a notice line
 * @throws StoreHealthError naming the address, the reason and the fix
 */
export async function checkStoreHealth(address: string, transport: StoreTransport | number = STORE_HEALTH_TIMEOUT_MS): Promise<StoreHealthReport> {
  const base = address.replace(/\/+$/, '');
  const via = typeof transport === 'number' ? new StoreTransport({ timeoutMs: transport }) : transport;
  let status: number;
  let text: string;
  try {
    ({ status, text } = await via.request({ method: 'GET', url: `${base}/v1/sys/health?standbyok=true&perfstandbyok=true` }));
  } catch (e) {
    if (!(e instanceof StoreTransportError)) throw e;
    if (e.kind === 'timeout') {
      throw new StoreHealthError(
        'timeout',
        `the secrets store at ${base} did not answer GET /v1/sys/health within ${via.deadline}: ` +
          `check SECRETSTORE_ADDR / VAULT_ADDR, the network path and that the store is running (${STORE_TRANSPORT_VARIABLES.timeout} sets the deadline)`,
      );
    }
    if (e.kind === 'unreachable') {
      throw new StoreHealthError(
        'unreachable',
        `cannot reach the secrets store at ${base} (${e.reason}): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`,
      );
    }
    throw new StoreHealthError(e.kind === 'settings' ? 'address' : e.kind, `secrets store at ${base}: ${e.message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const known = STORE_HEALTH_STATUSES[status];
  if (!known || !isHealthAnswer(body)) {
    const answer = text.trim() === '' ? 'an empty answer' : `"${storeText(text.trim(), 120)}"`;
    throw new StoreHealthError(
      'unexpected',
      `${base} does not answer GET /v1/sys/health like a secrets store (HTTP ${status}, ${answer}; the store answers JSON with ` +
        'boolean "initialized" and "sealed"): check SECRETSTORE_ADDR / VAULT_ADDR',
      status,
    );
  }
  if (!known.up) {
    const problem = known.problem!;
    throw new StoreHealthError(problem, `the secrets store at ${base} is ${known.meaning} (GET /v1/sys/health: HTTP ${status}): ${FIX[problem]!(StoreTarget.cliNamed(body))}`, status);
  }
  const role = storeNodeRole(status, body);
  if (role === 'active') return { address: base, status, role };
  // A standby serves (it forwards to the active node); say so and name the leader, without failing.
  const leader = await leaderOf(base, via);
  const what = role === 'standby' ? 'a standby node' : 'a performance standby node';
  const said = status === 200 ? `HTTP 200, "${role === 'standby' ? 'standby' : 'performance_standby'}": true` : `HTTP ${status}`;
  const forwards = role === 'standby' ? 'it forwards requests to the active node' : 'it serves reads itself and forwards writes to the active node';
  const who = leader.address !== undefined ? `the leader is ${leader.address} (GET /v1/sys/leader)` : `the leader is not known (GET /v1/sys/leader: ${leader.why})`;
  return {
    address: base,
    status,
    role,
    leaderAddress: leader.address,
    notice: `the secrets store at ${base} is ${what} (GET /v1/sys/health: ${said}): ${forwards}; ${who}`,
  };
}

/** Engine subcommands that call the store through the vault provider (the others work offline). */
const STORE_SUBCOMMANDS = new Set(['plan', 'apply', 'destroy', 'refresh', 'import', 'console']);

/**
 * True when the engine arguments run a subcommand that talks to the store (`plan`, `apply`,
 * `destroy`, `refresh`, `import`, `console`); `init`, `validate`, `state list`, `show` and the
 * like work without it and are not held up by a stopped store.
 */
export function engineNeedsStore(engineArgs: readonly string[]): boolean {
  const sub = engineArgs.find((a) => !a.startsWith('-'));
  return sub !== undefined && STORE_SUBCOMMANDS.has(sub);
}

/**
 * The check `secretstore-iac tf` runs before the engine: {@link checkStoreHealth} when the engine
 * subcommand talks to the store ({@link engineNeedsStore}), nothing otherwise.
 * @returns the report, or undefined when the subcommand works offline
 * @throws StoreHealthError
 */
export async function checkStoreBeforeEngine(
  address: string,
  engineArgs: readonly string[],
  transport?: StoreTransport | number,
): Promise<StoreHealthReport | undefined> {
  return engineNeedsStore(engineArgs) ? checkStoreHealth(address, transport) : undefined;
}
