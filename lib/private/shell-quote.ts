/**
 * Quotes a value for a POSIX shell: `'...'`, every `'` written as `'\''`; nothing else is escaped, so
 * `$`, `` ` ``, `\`, `"`, spaces and newlines arrive unchanged (no expansion inside single quotes).
 * `it's` → `'it'\''s'`.
 */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
