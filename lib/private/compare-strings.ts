/**
 * Orders two strings by UTF-16 code units, as `Array.prototype.sort` does by default, for sorts by a
 * key: the locale never changes the order, so output stays byte-identical on every machine.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
