import { isHttpUrl } from '../model/http-url';
import { isLoopbackHost } from '../private/loopback-host';

/** Environment variables that may carry the store address, in the order they are consulted. */
export const STORE_ADDRESS_VARIABLES = ['SECRETSTORE_ADDR', 'VAULT_ADDR', 'BAO_ADDR'] as const;

/** The variable listing the hosts plain `http://` may reach besides this machine (comma-separated `host[:port]`). */
export const INSECURE_HTTP_HOSTS_VARIABLE = 'SECRETSTORE_IAC_INSECURE_HTTP_HOSTS';

/**
 * A comma-separated list of `host[:port]` from a variable, lower-cased, blanks dropped. An entry
 * without a port matches the host on any port.
 */
export function hostList(env: NodeJS.ProcessEnv, variable: string): string[] {
  return (env[variable] ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
}

/** True when the URL's host (`host` or `host:port`) is in `hosts` ({@link hostList}). */
export function hostListed(url: URL, hosts: readonly string[]): boolean {
  const host = url.host.toLowerCase();
  const name = url.hostname.toLowerCase();
  return hosts.includes(host) || hosts.includes(name);
}

/** The URL with any user info replaced by `***`, for messages. */
function withoutCredentials(text: string): string {
  return text.replace(/^(https?:\/\/)[^/@]*@/i, '$1***@');
}

/**
 * What is wrong with sending store requests (and so the token) to `address`: user info in the URL,
 * or plain `http://` to a host that is neither this machine nor listed in
 * `SECRETSTORE_IAC_INSECURE_HTTP_HOSTS`.
 * @param source how to name the address in the message (`SECRETSTORE_ADDR`, `the redirect target`)
 * @returns the problem, or undefined when the address may be used
 */
export function storeAddressProblem(address: string, insecureHttpHosts: readonly string[], source: string): string | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return `${source}="${withoutCredentials(address)}" is not an http(s) URL such as https://secrets.example:8200`;
  }
  if (url.username !== '' || url.password !== '') {
    return (
      `${source}="${withoutCredentials(address)}" carries credentials (user:password@) in the URL: they would be sent to ` +
      'the store and shown in messages. Remove them; the store token comes from VAULT_TOKEN'
    );
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !hostListed(url, insecureHttpHosts)) {
    return (
      `${source}="${address}" is plain http to a host other than this machine: the token, Role IDs and Secret IDs would ` +
      `cross the network readable and changeable by anyone on the path. Use https://, or, for a network you trust, list ` +
      `the host in ${INSECURE_HTTP_HOSTS_VARIABLE} (comma-separated host[:port])`
    );
  }
  return undefined;
}

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
 * instead of letting a client call an empty host. Refuses credentials inside the URL and plain
 * `http://` to a host other than this machine unless listed in `SECRETSTORE_IAC_INSECURE_HTTP_HOSTS`
 * ({@link storeAddressProblem}).
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
      `The store address variables disagree: ${set.map((s) => `${s.name}=${withoutCredentials(s.value)}`).join(', ')}. Unset all but one.`,
    );
  }
  const address = distinct[0];
  if (!isHttpUrl(address, { prefixOnly: true })) {
    throw new StoreAddressError(`${set[0].name}="${withoutCredentials(address)}" is not an http(s) URL such as https://secrets.example:8200`);
  }
  const problem = storeAddressProblem(address, hostList(env, INSECURE_HTTP_HOSTS_VARIABLE), set[0].name);
  if (problem) throw new StoreAddressError(problem);
  return address;
}
