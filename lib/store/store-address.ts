import { isHttpUrl } from '../private/http-url';

/** Environment variables that may carry the store address, in the order they are consulted. */
export const STORE_ADDRESS_VARIABLES = ['SECRETSTORE_ADDR', 'VAULT_ADDR', 'BAO_ADDR'] as const;

/** Raised when no usable store address is configured (spec §7, first row). */
export class StoreAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreAddressError';
  }
}

/**
 * The secrets store's base address, from the spec's `SECRETSTORE_ADDR` or the store's own
 * `VAULT_ADDR` / `BAO_ADDR`. Fails fast, before any request, when none is set or when they disagree,
 * instead of letting a client call an empty host.
 * @throws StoreAddressError naming the variables and the fix
 */
export function resolveStoreAddress(env: NodeJS.ProcessEnv = process.env): string {
  const set = STORE_ADDRESS_VARIABLES.filter((name) => (env[name] ?? '').trim() !== '').map((name) => ({
    name,
    value: env[name]!.trim().replace(/\/+$/, ''),
  }));
  if (set.length === 0) {
    throw new StoreAddressError(
      'The secrets store address is not set: SECRETSTORE_ADDR (or VAULT_ADDR / BAO_ADDR) is unset or empty, ' +
        'so a login would target an empty host. Fix: define SECRETSTORE_ADDR (in CI as an unmasked group-level variable), ' +
        'e.g. export SECRETSTORE_ADDR=https://secrets.example:8200',
    );
  }
  const distinct = [...new Set(set.map((s) => s.value))];
  if (distinct.length > 1) {
    throw new StoreAddressError(
      `The store address variables disagree: ${set.map((s) => `${s.name}=${s.value}`).join(', ')}. Unset all but one.`,
    );
  }
  const address = distinct[0];
  if (!isHttpUrl(address, { prefixOnly: true })) {
    throw new StoreAddressError(`${set[0].name}="${address}" is not an http(s) URL such as https://secrets.example:8200`);
  }
  return address;
}
