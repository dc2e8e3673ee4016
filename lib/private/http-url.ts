import { ValidationProblem } from '../model/validation-problem';

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

/**
 * Checks a URL against the library's strict URL grammar.
 * @returns the problems found, empty when the URL is acceptable
 */
export function httpUrlProblems(field: string, value: string | undefined): ValidationProblem[] {
  if (typeof value !== 'string' || !URL_GRAMMAR.test(value)) return [new ValidationProblem(field, value, URL_GRAMMAR_RULE)];
  const port = value.match(/^https?:\/\/[^/:]+:([0-9]+)/)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    return [new ValidationProblem(field, value, 'port must be 1-65535')];
  }
  return [];
}
