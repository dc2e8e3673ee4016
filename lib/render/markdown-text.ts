import { terminalLine } from '../private/terminal-text';

/**
 * Text put into Markdown (merge-request comments, and the terminal): inline code that survives
 * backticks in the value, and table cells that survive `|` and line breaks. Values often come from
 * the store: control, bidi and line-break characters are shown escaped (lib/private/terminal-text.ts),
 * so a value can neither drive a terminal nor start a new report line.
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
