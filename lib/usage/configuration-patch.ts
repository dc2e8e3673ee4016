/** Lines of context around each change, as `git diff` and `diff -u` write them. */
const CONTEXT = 3;

/**
 * The change from `before` to `after` of the file `file` (a path relative to the repository's
 * root) as a unified diff that `git apply` (and `patch -p1`) applies: what the narrowing changes,
 * kept by the pipeline's usage job for a person to apply in a merge request. Lines are compared
 * whole (longest common subsequence); `''` when the texts are equal.
 */
export function configurationPatch(file: string, before: string, after: string): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  // Common head and tail first: a narrowing changes a few lines of a long file.
  let head = 0;
  while (head < a.length && head < b.length && sameLine(a[head], b[head])) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && sameLine(a[a.length - 1 - tail], b[b.length - 1 - tail])) tail++;
  const ops: { kind: ' ' | '-' | '+'; line: Line }[] = [];
  for (let i = 0; i < head; i++) ops.push({ kind: ' ', line: a[i] });
  ops.push(...middle(a.slice(head, a.length - tail), b.slice(head, b.length - tail)));
  for (let i = a.length - tail; i < a.length; i++) ops.push({ kind: ' ', line: a[i] });
  const out = [`diff --git a/${file} b/${file}`, `--- a/${file}`, `+++ b/${file}`];
  let i = 0;
  while (i < ops.length) {
    if (ops[i].kind === ' ') {
      i++;
      continue;
    }
    // A hunk: from CONTEXT lines before this change to CONTEXT lines after the last change within 2 * CONTEXT of the next.
    let end = i;
    for (let j = i; j < ops.length; j++) {
      if (ops[j].kind !== ' ') end = j;
      else if (j - end > 2 * CONTEXT) break;
    }
    const from = Math.max(0, i - CONTEXT);
    const to = Math.min(ops.length, end + 1 + CONTEXT);
    const aStart = ops.slice(0, from).filter((o) => o.kind !== '+').length;
    const bStart = ops.slice(0, from).filter((o) => o.kind !== '-').length;
    const hunk = ops.slice(from, to);
    const aCount = hunk.filter((o) => o.kind !== '+').length;
    const bCount = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aCount === 0 ? aStart : aStart + 1},${aCount} +${bCount === 0 ? bStart : bStart + 1},${bCount} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.line.text}`, ...(o.line.newline ? [] : ['\\ No newline at end of file']));
    i = to;
  }
  return `${out.join('\n')}\n`;
}

/** A line, and whether a newline ends it (the last line of a file may have none). */
interface Line {
  readonly text: string;
  readonly newline: boolean;
}

function sameLine(x: Line, y: Line): boolean {
  return x.text === y.text && x.newline === y.newline;
}

function splitLines(text: string): Line[] {
  if (text === '') return [];
  const parts = text.split('\n');
  const last = parts.pop()!;
  const lines = parts.map((t) => ({ text: t, newline: true }));
  if (last !== '') lines.push({ text: last, newline: false });
  return lines;
}

/** The edit script of `a` to `b` by their longest common subsequence (both short: what lies between the common head and tail). */
function middle(a: readonly Line[], b: readonly Line[]): { kind: ' ' | '-' | '+'; line: Line }[] {
  const same = sameLine;
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = same(a[i], b[j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops: { kind: ' ' | '-' | '+'; line: Line }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && same(a[i], b[j])) {
      ops.push({ kind: ' ', line: a[i++] });
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push({ kind: '-', line: a[i++] });
    else ops.push({ kind: '+', line: b[j++] });
  }
  return ops;
}
