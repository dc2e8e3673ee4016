/**
 * The commands a reader of a Markdown page (README.md) would type, found by one written rule, so
 * that a test can demand that each of them is run somewhere.
 *
 * The rule:
 * - Every line of a ```` ```sh ```` block is a command, after its trailing `  # comment` is cut
 *   off; blank and comment-only lines are not; a line ending in `\` continues on the next.
 * - Other fenced blocks hold no command, and only these languages may be used for them: `ts`
 *   (an example, quoted from `examples/`), `hcl` (a policy), `text` or none (output). Any other
 *   language (```` ```bash ````, ```` ```console ````, ...) is refused, and so is an output line
 *   that reads like a command (the inline rule below, with an optional `$ ` prompt), so that no
 *   command hides in a block the rule does not read.
 * - Outside fenced blocks, an inline code span is a command when it starts, after optional
 *   `NAME=value` assignments, with a program a reader runs from the clone: `npm`, `npx`, `bash`,
 *   `sh`, `node`, `git`, `tofu`, `terraform`, `bao`, `vault`, `export`, `source`, or a path
 *   `./...`. A bare `secretstore-iac NAME` names a command, it is not one (the program is not on
 *   PATH; the runnable form is `npx secretstore-iac ...`).
 * - The same command text found twice is one command, at its first place.
 */

/** One command of the page. */
export interface PageCommand {
  /** The command as written (comment cut off, continuations joined, spaces trimmed). */
  readonly command: string;
  /** 1-based line of its first occurrence. */
  readonly line: number;
  /** Where it was found. */
  readonly form: 'sh block' | 'inline';
}

/** One fenced block of the page. */
export interface FencedBlock {
  /** The info string's first word (`sh`, `ts`, or '' for none). */
  readonly language: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The block's text, without the fences. */
  readonly text: string;
}

/** Fence languages whose lines are commands. */
export const COMMAND_FENCE = 'sh';

/** Fence languages that hold no command (examples, policies, output). */
export const NON_COMMAND_FENCES: readonly string[] = ['ts', 'hcl', 'text', ''];

/** Fence languages for output: a line in them that reads like a command is refused. */
export const OUTPUT_FENCES: readonly string[] = ['text', ''];

/** An inline code span that starts like this (after `NAME=value` assignments) is a command. */
export const INLINE_COMMAND = /^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:(?:npm|npx|bash|sh|node|git|tofu|terraform|bao|vault|export|source)(?:\s|$)|\.\/\S)/;

/** The fenced blocks of a page, in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`line ${i + 1}: fenced block never closed`);
    blocks.push({ language: open[1], line: i + 1, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** A shell line without its comment: a `#` after a blank, outside quotes. */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) {
      return line.slice(0, i);
    }
  }
  return line;
}

/** The commands of one `sh` block's text, with their offsets (0-based lines inside the block). */
function shellLines(text: string): Array<{ command: string; offset: number }> {
  const out: Array<{ command: string; offset: number }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const offset = i;
    let command = lines[i];
    while (/\\\s*$/.test(command) && i + 1 < lines.length) command = `${command.replace(/\s*\\\s*$/, '')} ${lines[++i].trim()}`;
    command = withoutComment(command).trim();
    if (command !== '') out.push({ command, offset });
  }
  return out;
}

/**
 * Every command of the page by the rule above, in the order a reader meets them.
 * @throws Error naming the line of a fenced block in a language the rule does not know
 */
export function pageCommands(markdown: string): PageCommand[] {
  const found: PageCommand[] = [];
  const blocks = fencedBlocks(markdown);
  const inBlock = new Set<number>();
  for (const block of blocks) {
    const lineCount = block.text.split('\n').length + 2;
    for (let l = block.line; l < block.line + lineCount; l++) inBlock.add(l);
    if (block.language === COMMAND_FENCE) {
      for (const { command, offset } of shellLines(block.text)) found.push({ command, line: block.line + 1 + offset, form: 'sh block' });
    } else if (OUTPUT_FENCES.includes(block.language)) {
      // Output only: a line that reads like a command belongs in a ```sh block.
      const offset = block.text.split('\n').findIndex((l) => INLINE_COMMAND.test(l.replace(/^\$\s+/, '').trim()));
      if (offset >= 0) throw new Error(`line ${block.line + 1 + offset}: a command in an output block: put it in a \`\`\`${COMMAND_FENCE} block`);
    } else if (!NON_COMMAND_FENCES.includes(block.language)) {
      throw new Error(
        `line ${block.line}: a \`\`\`${block.language} block: commands go in \`\`\`${COMMAND_FENCE} blocks, ` +
          `other blocks are ${NON_COMMAND_FENCES.map((l) => l || '(none)').join(', ')}`,
      );
    }
  }
  // Block lines blanked, so that a span may wrap over lines of prose but never reaches into a block.
  const prose = markdown
    .split('\n')
    .map((text, index) => (inBlock.has(index + 1) ? '' : text))
    .join('\n');
  for (const span of prose.matchAll(/`([^`]+)`/g)) {
    const command = span[1].replace(/\s+/g, ' ').trim();
    const line = prose.slice(0, span.index).split('\n').length;
    if (INLINE_COMMAND.test(command)) found.push({ command, line, form: 'inline' });
  }
  found.sort((a, b) => a.line - b.line);
  const seen = new Set<string>();
  return found.filter((c) => !seen.has(c.command) && (seen.add(c.command), true));
}
