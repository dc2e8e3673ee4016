import { ValidationProblem } from './validation-problem';

/**
 * Characters refused in free text (descriptions, `usedBy`, construct ids): C0/C1 controls (line
 * feed, carriage return, escape, NEL U+0085), the Unicode line and paragraph separators U+2028/U+2029
 * (YAML and JavaScript treat them as line breaks), and the bidirectional overrides and isolates
 * U+202A-U+202E, U+2066-U+2069 (they make text display in a different order than it is parsed).
 */
const REFUSED_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** Longest free text accepted: it is shown in comments and reports, not a document. */
export const MAX_FREE_TEXT_LENGTH = 200;

/** The code point of a refused character, as `U+2028`. */
function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Checks text written by people that ends up in comments and reports of several output formats
 * (policy HCL, CI YAML, shell, access reports): one line of printable characters, so that no
 * encoder has to decide what a line break inside it means.
 *
 * @returns the problems found, empty when the text is acceptable
 */
export function freeTextProblems(field: string, value: string): ValidationProblem[] {
  if (typeof value !== 'string') return [new ValidationProblem(field, value, 'must be text')];
  const refused = value.match(REFUSED_CHARACTERS);
  if (refused) {
    return [
      new ValidationProblem(
        field,
        value,
        `must be one line of printable text; it contains ${codePoint(refused[0])} (control characters, line separators and bidirectional overrides are refused: they change how comments and reports are read)`,
      ),
    ];
  }
  if (value.length > MAX_FREE_TEXT_LENGTH) {
    return [new ValidationProblem(field, value, `must be at most ${MAX_FREE_TEXT_LENGTH} characters`)];
  }
  return [];
}

/**
 * A grapheme a reader does not see: made only of format characters (`\p{Cf}`: zero-width space,
 * joiner and non-joiner, BOM, soft hyphen, word joiner, ...), other default-ignorable code points
 * (fillers such as U+3164, variation selectors), white space, controls, marks with no base, and the
 * braille blank U+2800 (a symbol that prints as nothing).
 */
const INVISIBLE_GRAPHEME = /^[\p{Cf}\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Cc}\p{Mn}\p{Me}\u2800]*$/u;

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * How many characters of `text` a reader sees: its graphemes (a letter with its accents, an emoji
 * sequence) that hold something visible. White space and invisible characters count for nothing, so
 * that ten zero-width spaces do not pass for a ten-character reason. The one measure of every
 * minimum-length rule of free text (a description, `usedBy`, a `machinePathReason`); maximum lengths
 * count every character instead, since every character is written.
 */
export function visibleLength(text: string): number {
  if (typeof text !== 'string') return 0;
  let visible = 0;
  for (const { segment } of graphemes.segment(text)) if (!INVISIBLE_GRAPHEME.test(segment)) visible++;
  return visible;
}

/** What {@link visibleLength} leaves out, in words, for the messages of minimum-length rules. */
export const VISIBLE_TEXT_NOTE = 'white space and invisible characters (zero-width, format characters) do not count';

/** True when the text holds a character {@link freeTextProblems} refuses. */
export function hasRefusedCharacter(value: string): boolean {
  return REFUSED_CHARACTERS.test(value);
}

/**
 * Text with every refused character written as its `\uXXXX` escape: for showing text that failed
 * {@link freeTextProblems} (a construct path in an error report) on one line, as it is.
 */
export function escapeRefusedCharacters(text: string): string {
  return String(text).replace(new RegExp(REFUSED_CHARACTERS.source, 'gu'), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
