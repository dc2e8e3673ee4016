import { GO_DIGIT_RANGES, GO_LETTER_RANGES, GO_LOWER_RUNS, GO_SPACE_RANGES } from './go-unicode-tables';

/**
 * Go's `unicode` package as the stores use it, from tables generated with the Go release that
 * builds them (lib/model/go-unicode-tables.ts: Unicode 15.0.0, Go 1.21 to 1.26). JavaScript's
 * own tables follow a newer Unicode release: `'\uA7CB'.toLowerCase()` is `'\u0264'` in Node, and
 * the same character is left as it is by Go (it was added in Unicode 16), so a name Node lower-cases
 * is a different name to the store.
 */

const LOWER = new Map<number, number>();
for (const [first, last, step, delta] of GO_LOWER_RUNS) {
  for (let r = first; r <= last; r += step) LOWER.set(r, r + delta);
}

/** True when `rune` lies in one of the sorted, disjoint `[first, last]` ranges. */
function inRanges(ranges: readonly (readonly number[])[], rune: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (rune < ranges[mid][0]) hi = mid - 1;
    else if (rune > ranges[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Go's `unicode.ToLower` of one code point (the simple case mapping of Go's tables). */
export function goToLowerRune(rune: number): number {
  return LOWER.get(rune) ?? rune;
}

/** Go's `unicode.IsLetter`. */
export function goIsLetter(rune: number): boolean {
  return inRanges(GO_LETTER_RANGES, rune);
}

/** Go's `unicode.IsDigit`. */
export function goIsDigit(rune: number): boolean {
  return inRanges(GO_DIGIT_RANGES, rune);
}

/**
 * Go's `unicode.IsSpace`: the ASCII white space, NEL (U+0085), NO-BREAK SPACE and the other
 * Unicode `White_Space` characters. JavaScript's `\s` and `trim()` also take U+FEFF and leave U+0085.
 */
export function goIsSpace(rune: number): boolean {
  return inRanges(GO_SPACE_RANGES, rune);
}

/** Go's `strings.ToLower` (`unicode.ToLower` on every code point). */
export function goLowerCase(text: string): string {
  // ASCII fast path, as in Go.
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  let out = '';
  for (const ch of text) out += String.fromCodePoint(goToLowerRune(ch.codePointAt(0)!));
  return out;
}

/** Go's `strings.TrimSpace`: {@link goIsSpace} characters removed at both ends. */
export function goTrimSpace(text: string): string {
  const runes = [...text];
  let start = 0;
  let end = runes.length;
  while (start < end && goIsSpace(runes[start].codePointAt(0)!)) start++;
  while (end > start && goIsSpace(runes[end - 1].codePointAt(0)!)) end--;
  return runes.slice(start, end).join('');
}
