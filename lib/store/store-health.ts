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

/**
 * Checks `GET /v1/sys/health` (no token needed) before the engine runs, so that a stopped, sealed
 * or uninitialised store is reported in seconds with its address and the reason. The answer must
 * be the store's health JSON ({@link isHealthAnswer}) with a status of {@link STORE_HEALTH_STATUSES}:
 * anything else (an HTML page, other JSON) "does not answer like a secrets store". Standbys and
 * performance standbys count as healthy (`standbyok`, `perfstandbyok`): they forward to the active
 * node. The request goes through the {@link StoreTransport} (no redirect to another origin, size
 * limit, deadline, TLS settings).
 * @param transport the transport, or a deadline in milliseconds for a default one
 * @throws StoreHealthError naming the address, the reason and the fix
 */
export async function checkStoreHealth(address: string, transport: StoreTransport | number = STORE_HEALTH_TIMEOUT_MS): Promise<void> {
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
  if (known.up) return;
  const problem = known.problem!;
  throw new StoreHealthError(problem, `the secrets store at ${base} is ${known.meaning} (GET /v1/sys/health: HTTP ${status}): ${FIX[problem]!(StoreTarget.cliNamed(body))}`, status);
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
 * @throws StoreHealthError
 */
export async function checkStoreBeforeEngine(address: string, engineArgs: readonly string[], transport?: StoreTransport | number): Promise<void> {
  if (engineNeedsStore(engineArgs)) await checkStoreHealth(address, transport);
}
