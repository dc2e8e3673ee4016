/**
 * The one encoder every piece of store-supplied text passes through before it reaches a terminal
 * (reports, messages, errors). A hostile or broken store answers with text of its choosing; printed
 * raw, escape sequences clear the screen, recolour, set the window title or move the cursor, a
 * carriage return or line break forges report lines (`## Drift: in sync`), and bidirectional
 * overrides make text read differently from what it is.
 *
 * Characters shown escaped, as `\uXXXX`: C0 controls (ESC, CR, line feed, ...), DEL, C1 controls
 * (CSI U+009B, NEL U+0085, ...), the bidirectional marks, embeddings, overrides and isolates
 * (U+061C, U+200E/U+200F, U+202A–U+202E, U+2066–U+2069), the line and paragraph separators
 * U+2028/U+2029 and the byte order mark U+FEFF. The library's own styling
 * (lib/cli/terminal-highlight.ts) is added after this encoding and is not touched by it.
 */

/** Every character {@link terminalLine} escapes. */
const TERMINAL_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/g;

/** The same, except line feed and tab: the layout characters of a multi-line text. */
const TERMINAL_UNSAFE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/g;

/** How much store text an error message quotes, in characters. */
export const STORE_TEXT_LIMIT = 500;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * One value for one line of terminal output: every unsafe character, line feeds and tabs
 * included, written as its visible `\uXXXX` escape, so the value cannot start a new line or
 * control the terminal.
 */
export function terminalLine(text: string): string {
  return String(text).replace(TERMINAL_UNSAFE, escape);
}

/**
 * A multi-line text for the terminal (a whole report or message): line feeds and tabs kept,
 * every other unsafe character escaped as in {@link terminalLine}. Values that must stay on their
 * line go through {@link terminalLine} first.
 */
export function terminalText(text: string): string {
  return String(text).replace(TERMINAL_UNSAFE_IN_TEXT, escape);
}

/**
 * Store text quoted in a message (an error body, a `Location`): cut to `limit` characters, with how
 * much was left out, then made one safe line by {@link terminalLine}.
 */
export function storeText(text: string, limit: number = STORE_TEXT_LIMIT): string {
  const chars = Array.from(String(text));
  const cut = chars.length > limit ? `${chars.slice(0, limit).join('')}… (${chars.length - limit} more characters)` : chars.join('');
  return terminalLine(cut);
}

/**
 * A value as indented JSON safe on a terminal: `JSON.stringify` already escapes C0 controls; DEL,
 * C1 controls, bidi controls and the separators are written `\uXXXX` too (they can only occur inside
 * strings, where the escape reads back as the same character).
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(TERMINAL_UNSAFE_IN_TEXT, escape);
}
