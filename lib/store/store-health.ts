/**
 * Default time the health check waits for the store: long enough for a store across a WAN, short
 * enough that a stopped store is reported in seconds instead of after the engine's own retries.
 */
export const STORE_HEALTH_TIMEOUT_MS = 5_000;

/** Why the store cannot serve the engine. */
export type StoreHealthProblem = 'unreachable' | 'timeout' | 'sealed' | 'not-initialized' | 'dr-secondary' | 'unexpected';

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
 * Checks `GET /v1/sys/health` (no token needed) before the engine runs, so that a stopped, sealed
 * or uninitialised store is reported in seconds with its address and the reason. Standbys and
 * performance standbys count as healthy (`standbyok`, `perfstandbyok`): they forward to the active
 * node.
 * @throws StoreHealthError naming the address, the reason and the fix
 */
export async function checkStoreHealth(address: string, timeoutMs: number = STORE_HEALTH_TIMEOUT_MS): Promise<void> {
  const base = address.replace(/\/+$/, '');
  const url = `${base}/v1/sys/health?standbyok=true&perfstandbyok=true`;
  let status: number;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    status = res.status;
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') {
      throw new StoreHealthError(
        'timeout',
        `the secrets store at ${base} did not answer GET /v1/sys/health within ${timeoutMs / 1000}s: ` +
          'check SECRETSTORE_ADDR / VAULT_ADDR, the network path and that the store is running',
      );
    }
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e as Error).message;
    throw new StoreHealthError(
      'unreachable',
      `cannot reach the secrets store at ${base} (${why}): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`,
    );
  }
  if (status === 200 || status === 429 || status === 473) return;
  if (status === 503) {
    throw new StoreHealthError('sealed', `the secrets store at ${base} is sealed (GET /v1/sys/health: HTTP 503): unseal it (bao operator unseal) before planning or applying`, status);
  }
  if (status === 501) {
    throw new StoreHealthError('not-initialized', `the secrets store at ${base} is not initialized (GET /v1/sys/health: HTTP 501): initialize and unseal it first (bao operator init)`, status);
  }
  if (status === 472) {
    throw new StoreHealthError('dr-secondary', `the secrets store at ${base} is a disaster-recovery secondary (GET /v1/sys/health: HTTP 472): point SECRETSTORE_ADDR / VAULT_ADDR at the primary`, status);
  }
  throw new StoreHealthError(
    'unexpected',
    `${base} does not answer GET /v1/sys/health like a secrets store (HTTP ${status}): check SECRETSTORE_ADDR / VAULT_ADDR`,
    status,
  );
}

/**
 * The check `secretstore-iac tf` runs before the engine: {@link checkStoreHealth} when the engine
 * subcommand talks to the store ({@link engineNeedsStore}), nothing otherwise.
 * @throws StoreHealthError
 */
export async function checkStoreBeforeEngine(address: string, engineArgs: readonly string[], timeoutMs?: number): Promise<void> {
  if (engineNeedsStore(engineArgs)) await checkStoreHealth(address, timeoutMs);
}
