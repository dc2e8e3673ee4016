/**
 * Characters Go's `unicode.IsSpace` takes for white space, which `strings.TrimSpace` strips: the
 * ASCII ones, NEL (U+0085), NO-BREAK SPACE and the other Unicode `White_Space` characters. It
 * differs from JavaScript's `trim()`, which also strips U+FEFF and keeps U+0085.
 */
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING = new RegExp(`^[${GO_SPACE}]+`, 'u');
const TRAILING = new RegExp(`[${GO_SPACE}]+$`, 'u');

/**
 * Lower-cases one code point as Go's `unicode.ToLower` does: the simple case mapping. JavaScript's
 * `toLowerCase` applies the full mapping, which differs for U+0130 (`İ` becomes `i` plus a
 * combining dot there, `i` in Go); a lone code point has no context, so the final-sigma rule
 * never applies.
 */
function goLowerRune(rune: string): string {
  if (rune === '\u0130') return 'i';
  const lower = rune.toLowerCase();
  return [...lower].length === 1 ? lower : rune;
}

/**
 * A policy name as the store files it: surrounding white space trimmed and lower-cased, with Go's
 * rules (`strings.ToLower(strings.TrimSpace(name))`: OpenBao and Vault `PolicyStore.sanitizeName`
 * for policy objects, `policyutil.SanitizePolicies` for the policies a login gives). Every place
 * the analysis compares or looks up policy names goes through this.
 */
export function storePolicyName(name: string): string {
  return goLowerCase(name.replace(LEADING, '').replace(TRAILING, ''));
}

/**
 * Lower-cases a name as Go's `strings.ToLower` does (the AppRole method files role names so:
 * `strings.ToLower(roleName)`).
 */
export function goLowerCase(text: string): string {
  // ASCII fast path, as in Go.
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  return [...text].map(goLowerRune).join('');
}
