import { shellQuote } from '../private/shell-quote';

/**
 * The encoders of the output formats the library writes: one per format and position, used at every
 * place a value enters an output, so that no input text can change the structure of the output it is
 * written into (end a comment, a string, a line or a block). Validation refuses most such text first;
 * these make the outputs safe whatever reaches them.
 *
 * Characters every format treats as unsafe: C0 and C1 controls (line feed, carriage return, NEL
 * U+0085), DEL, the Unicode line and paragraph separators U+2028/U+2029 (YAML 1.1, which GitLab's
 * parser implements, and JavaScript take them as line breaks), and the byte order mark U+FEFF.
 */

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g;

/** `\uXXXX` of a UTF-16 code unit: an escape HCL 1 and 2, YAML, JSON and Go templates all read. */
const unicodeEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * The body every double-quoted format here shares (YAML, Go templates, TypeScript; HCL adds to it):
 * `"` and `\` escaped, unsafe characters as `\uXXXX`; the formats differ in what else they need.
 */
const escapedBody = (value: string): string => String(value).replace(/[\\"]/g, (c) => `\\${c}`).replace(UNSAFE, unicodeEscape);

/** {@link escapedBody} between double quotes. */
const doubleQuoted = (value: string): string => `"${escapedBody(value)}"`;

/**
 * Text for a comment of any format (`# ...` in HCL, YAML and shell): one line, every unsafe
 * character written as its visible `\uXXXX` escape, so the comment cannot end early.
 */
export function commentText(text: string): string {
  return String(text).replace(UNSAFE, unicodeEscape);
}

/**
 * A quoted string of HCL (policies, the agent configuration), read the same by HCL 1 (the store,
 * the agent) and HCL 2: `"` and `\` escaped, unsafe characters as `\uXXXX`, and the template
 * introducers `${` and `%{` written `$\u007b` / `%\u007b` (HCL 1 counts braces after `${` inside a
 * string, so a quote there would not end it; HCL 2 would interpolate).
 */
export function hclString(value: string): string {
  return `"${escapedBody(value).replace(/([$%])\{/g, (_m, sigil: string) => `${sigil}\\u007b`)}"`;
}

/**
 * A double-quoted YAML scalar, read the same by YAML 1.1 and 1.2 parsers: `"` and `\` escaped,
 * unsafe characters as `\uXXXX`.
 */
export function yamlScalar(value: string): string {
  return doubleQuoted(value);
}

/**
 * A multi-line YAML value at `indent` spaces: a literal block (`|-`) when every line is safe in one,
 * else the double-quoted scalar of the same text (a line separator inside a literal block would end
 * it for YAML 1.1 parsers).
 * @returns the text to put after `key:` (starting with a space), lines joined with `\n`
 */
export function yamlMultiline(lines: readonly string[], indent: number): string {
  const text = lines.join('\n');
  // A block takes its indentation from its first non-empty line, and `|-` drops final line feeds:
  // text with a line starting with white space, or ending with a line feed, goes quoted.
  if (!isLiteralBlockSafe(text) || text === '' || /\n$/.test(text) || text.split('\n').some((l) => /^[ \t]/.test(l))) {
    return ` ${yamlScalar(text)}`;
  }
  const pad = ' '.repeat(indent);
  return ` |-\n${text
    .split('\n')
    .map((l) => (l.length > 0 ? `${pad}${l}` : ''))
    .join('\n')}`;
}

/**
 * True when `text` can be a YAML literal block's content as it is: no unsafe character besides
 * line feeds and tabs (which a literal block keeps).
 */
export function isLiteralBlockSafe(text: string): boolean {
  return !UNSAFE_IN_LITERAL_BLOCK.test(String(text));
}

/** {@link UNSAFE} but line feed and tab; without the `g` flag, so that `test` keeps no state. */
const UNSAFE_IN_LITERAL_BLOCK = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

/**
 * A POSIX shell word with exactly the value: bare when it holds only characters no shell treats
 * specially (letters, digits, `_ . / - @ % + = : ,`), else single-quoted ({@link shellQuote}).
 */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(value) ? value : shellQuote(value);
}

/** Text inside a Go template comment (`{{/* ... *\/}}`): one line, and `*\/` cannot end it early. */
export function templateCommentText(text: string): string {
  return commentText(text).replace(/\*\//g, '* /');
}

/** A JSON value (for JSON outputs and anything read as JavaScript): U+2028/U+2029 escaped too. */
export function jsonValue(value: unknown): string {
  return JSON.stringify(value).replace(/[\u2028\u2029]/g, unicodeEscape);
}

/** A JSON file's text: {@link jsonValue} indented by two spaces, with a final newline. */
export function jsonDocument(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(/[\u2028\u2029]/g, unicodeEscape)}\n`;
}

/**
 * A string literal of a consul-template (Go `text/template`) action, as the agent's env template
 * uses them (`{{ with secret "..." }}`): a Go interpreted string, `"` and `\` escaped, unsafe
 * characters as `\uXXXX`; the action delimiters `{{` and `}}` are inert inside it.
 */
export function templateString(value: string): string {
  return doubleQuoted(value);
}

/**
 * A TypeScript (and JavaScript) double-quoted string literal: `"` and `\` escaped, unsafe characters
 * (line terminators including U+2028/U+2029, other controls, the byte order mark) as `\uXXXX`, so the
 * literal stays on one line and ends where it should. Plain text comes out as `JSON.stringify` writes it.
 */
export function typescriptString(value: string): string {
  return doubleQuoted(value);
}

/**
 * A literal string for Terraform JSON (`cdk.tf.json`). The engine reads every JSON string there as
 * a template: `${...}` is evaluated (`acme/${"\u002c*"}` becomes `acme/,*`) and `%{...}` is a
 * directive. Writing the introducers as the template escapes `$${` and `%%{` makes the engine
 * apply exactly the text given. Every literal the library synthesizes goes through this; only the
 * references the library builds itself (a role's mount, a policy's name) stay live.
 */
export function terraformString(value: string): string;
/** An absent value stays absent (an optional attribute left out). */
export function terraformString(value: string | undefined): string | undefined;
export function terraformString(value: string | undefined): string | undefined {
  return value === undefined ? undefined : String(value).replace(/([$%])\{/g, '$1$1{');
}

/** {@link terraformString} of each item. */
export function terraformStrings(values: readonly string[]): string[] {
  return values.map((v) => terraformString(v));
}
