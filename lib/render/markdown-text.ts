import { terminalLine } from '../private/terminal-text';

/**
 * Text put into Markdown (merge-request comments, and the terminal): inline code that survives
 * backticks in the value, table cells that survive `|` and line breaks, and prose and messages whose
 * words cannot be Markdown, HTML, a link, a mention or a reference. Values often come from the
 * store or the configuration: control, bidi and line-break characters are shown escaped
 * (lib/private/terminal-text.ts), so a value can neither drive a terminal nor start a new report line.
 */

/** `text` as inline code; a value holding backticks gets a longer fence. */
export function mdCode(value: string): string {
  const text = terminalLine(value);
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = longest > 0 ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** `text` made safe for a table cell. */
export function mdCell(text: string): string {
  return terminalLine(text.replace(/\|/g, '\\|').replace(/[\r\n\u0085\u2028\u2029]+/g, ' '));
}

/** A Markdown table; cells are escaped by the caller (they may hold inline code). */
export function mdTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * A word of prose that is plain text in every Markdown the notes are read with (CommonMark, GitLab,
 * GitHub): letters, digits and punctuation that starts no construct in the middle of a line, and `_`
 * inside a word (`token_ttl`: CommonMark makes no emphasis of an underscore between letters). Anything
 * else (`<`, `[`, `!`, `@`, `#`, `~`, `$`, `%`, `&`, `*`, `|`, backticks, backslashes, a URL, `_` at a
 * word's edge) could be HTML, a link or image, a mention (`@all`), an issue, merge-request or label
 * reference, emphasis or a table cell.
 */
const PLAIN_WORD = /^(?![_])[\p{L}\p{M}\p{N}.,;:'"?()\-\u2013\u2014\u2192\u00a7=+/_]*(?<![_])$/u;
/** An underscore next to something other than a letter or digit: it could open or close emphasis. */
const EDGE_UNDERSCORE = /_(?![\p{L}\p{N}])|(?<![\p{L}\p{N}])_/u;

/** A word that GitLab or GitHub would link without any Markdown: a URL or a `www.` host. */
const AUTOLINKED = /:\/\/|(?:^|[^\p{L}\p{N}])www\./iu;

/**
 * Text from the configuration or the store as Markdown prose: as it is when every word is plain text
 * ({@link PLAIN_WORD}), else the words from the first that is not to the last that is not as one
 * inline code span ({@link mdCode}, control and line-break characters shown escaped), which no
 * Markdown renderer reads as HTML, a link, a mention or a reference. So a `machinePathReason` of
 * `<img src=x>`, `@all` or `[click](https://x)` shows as those characters.
 */
export function mdText(value: string): string {
  const words = String(value).split(/( +)/);
  const plain = (word: string) => word === '' || /^ +$/.test(word) || (PLAIN_WORD.test(word) && !EDGE_UNDERSCORE.test(word) && !AUTOLINKED.test(word));
  const first = words.findIndex((w) => !plain(w));
  if (first < 0) return words.join('');
  let last = words.length - 1;
  while (plain(words[last])) last -= 1;
  return `${words.slice(0, first).join('')}${mdCode(words.slice(first, last + 1).join(''))}${words.slice(last + 1).join('')}`;
}

/**
 * A message of the library (its words, with values between backticks: `` gains `sudo` on `secret/x` ``)
 * as Markdown: the parts between backticks as inline code ({@link mdCode}), the others as prose
 * ({@link mdText}). A value holding backticks of its own shifts the parts, never out of them: every
 * part is code or encoded prose, so nothing in the message is live Markdown.
 */
export function mdMessage(message: string): string {
  const parts = String(message).split('`');
  if (parts.length % 2 === 0) return mdText(message);
  return parts.map((part, i) => (i % 2 === 1 ? mdCode(part) : mdText(part))).join('');
}

/**
 * A value from the configuration or the store (a binding, a claim list): as it is when it is plain
 * text ({@link mdText} leaves it unchanged: `1h`, `true`), else whole as inline code, never as Markdown.
 */
export function mdValue(value: string): string {
  return value === '' || mdText(value) === value ? value : mdCode(value);
}
