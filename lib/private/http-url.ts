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
