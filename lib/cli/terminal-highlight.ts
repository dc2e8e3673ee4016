/** ANSI styles used on a terminal. */
const BOLD = '\u001b[1m';
const YELLOW = '\u001b[33m';
const RESET = '\u001b[0m';

/**
 * Markdown made easier to scan on a terminal: headings bold, risk flags and problems yellow.
 * Output that is not a terminal (a file, a pipe, a merge-request comment) is never styled, and
 * neither is a terminal when `NO_COLOR` is set.
 */
export function highlightMarkdown(text: string, enabled: boolean): string {
  if (!enabled) return text;
  return text
    .split('\n')
    .map((line) => {
      if (/^#{1,6} /.test(line)) return `${BOLD}${line}${RESET}`;
      if (/^- \*\*|^\*\*(Problem|Access changed)/.test(line)) return `${YELLOW}${line}${RESET}`;
      return line;
    })
    .join('\n');
}

/** True when output may be styled: a terminal, and `NO_COLOR` unset or empty. */
export function stylingEnabled(isTerminal: boolean, env: NodeJS.ProcessEnv): boolean {
  return isTerminal && !env.NO_COLOR;
}
