import { ValidationProblem } from './validation-problem';
import { isLoopbackHost } from '../private/loopback-host';

/** How strictly {@link isHttpUrl} reads the text. */
export interface HttpUrlCheck {
  /**
   * Characters refused besides white space, in the host and the path: `{}` (placeholders left in),
   * `"\` (text embedded in a quoted HCL string).
   * @default none
   */
  readonly forbidden?: string;
  /**
   * Check only that the text starts with a scheme and a host; what follows the host is not read.
   * @default false (the whole text must be scheme, host and an optional path)
   */
  readonly prefixOnly?: boolean;
}

/**
 * Whether `text` is an `http://` or `https://` URL with a host (and optional port), the one shape
 * every address the platform takes (CI URL, JWT key URLs, store address) must have.
 */
export function isHttpUrl(text: string | undefined, check: HttpUrlCheck = {}): boolean {
  if (!text) return false;
  // Inside a character class only \ ] ^ - are special.
  const forbidden = (check.forbidden ?? '').replace(/[\\\]^-]/g, '\\$&');
  const host = `^https?://[^\\s/${forbidden}]+`;
  return new RegExp(check.prefixOnly ? host : `${host}(/[^\\s${forbidden}]*)?$`).test(text);
}

/**
 * The URLs the library writes into the store's configuration and into CI scripts: `http(s)://`,
 * a host name or IPv4 address, an optional port, and an optional path of unreserved characters.
 * No user info, query, fragment, percent-escapes, white space or shell characters: a URL that
 * needs them is not the address of a CI system, and each of them changes what a script or the
 * store does with the text.
 */
const URL_GRAMMAR = /^https?:\/\/[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?(?:\/[A-Za-z0-9._~-]+)*\/?$/;

/** What a URL must look like, in words. */
export const URL_GRAMMAR_RULE =
  'must be an http(s) URL of host, optional port and path (letters, digits, ".", "_", "~", "-"), without credentials, query, fragment, spaces or shell characters';

/** What the platform allows of plain `http://` (see `PlatformSettingsProps.insecureHttpHosts`). */
export interface HttpUrlPolicy {
  /**
   * Hosts besides loopback that may be reached over plain `http://` (lower-case comparison).
   * @default none
   */
  readonly insecureHttpHosts?: readonly string[];
}

/** The rule of a URL with user info. */
export const URL_CREDENTIALS_RULE =
  'must not hold credentials (user:password@): the URL is written into committed CI files, agent.hcl and the store\'s configuration; give credentials through the tools\' own variables';

/** The rule of a plain-http URL to a host that is not this machine. */
export const PLAIN_HTTP_RULE =
  'uses plain http to a host that is not this machine, so anyone on the network can read and change the traffic: use https, or list the host in settings.insecureHttpHosts';

/** The host of an `http(s)://` URL, lower-case, without port (undefined when there is none). */
export function urlHost(value: string): string | undefined {
  return value.match(/^https?:\/\/([^/:?#]+)/i)?.[1]?.toLowerCase();
}

/** True when `value` has user info (`scheme://user[:password]@host`). */
export function hasUrlCredentials(value: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*@/.test(value);
}

/**
 * Problems of plain `http://` to a host that is neither loopback nor listed in the policy; none for
 * `https://` or for text that is not an http URL (the grammar reports that).
 */
export function plainHttpProblems(field: string, value: string, policy: HttpUrlPolicy = {}): ValidationProblem[] {
  if (!/^http:\/\//i.test(value)) return [];
  const host = urlHost(value);
  if (host === undefined || isLoopbackHost(host)) return [];
  const allowed = (Array.isArray(policy.insecureHttpHosts) ? policy.insecureHttpHosts : []).map((h) => String(h).toLowerCase());
  return allowed.includes(host) ? [] : [new ValidationProblem(field, value, PLAIN_HTTP_RULE)];
}

/**
 * Checks a URL against the library's strict URL grammar, refuses credentials in it, and refuses plain
 * `http://` to a host that is not loopback unless `policy.insecureHttpHosts` lists it.
 * @returns the problems found, empty when the URL is acceptable
 */
export function httpUrlProblems(field: string, value: string | undefined, policy: HttpUrlPolicy = {}): ValidationProblem[] {
  if (typeof value === 'string' && hasUrlCredentials(value)) return [new ValidationProblem(field, value, URL_CREDENTIALS_RULE)];
  if (typeof value !== 'string' || !URL_GRAMMAR.test(value)) return [new ValidationProblem(field, value, URL_GRAMMAR_RULE)];
  const port = value.match(/^https?:\/\/[^/:]+:([0-9]+)/)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    return [new ValidationProblem(field, value, 'port must be 1-65535')];
  }
  return plainHttpProblems(field, value, policy);
}
