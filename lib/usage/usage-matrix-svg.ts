import { compareStrings } from '../private/compare-strings';
import { terminalLine } from '../private/terminal-text';
import { UsageReport } from './usage-report';

/** What one identity did with one grant (a rule it holds) or one path it was refused. */
export type UsageMatrixState = 'used' | 'unused' | 'denied';

/** One cell of the identity × grant matrix: only cells with a state are drawn. */
export interface UsageMatrixCell {
  readonly identity: string;
  /** The column: a rule's path pattern, or `denied: <path>` for a path no rule of the identity granted. */
  readonly column: string;
  readonly state: UsageMatrixState;
  /** The cell's tooltip: requests, operations, last use or refusal. */
  readonly detail: string;
}

/** The identity × grant matrix of a usage report: rows, columns and the cells that have a state. */
export interface UsageMatrix {
  /** The identities, as the report lists them (by name). */
  readonly rows: readonly string[];
  /** The rules held (sorted), then the refused paths (`denied: <path>`, sorted). */
  readonly columns: readonly string[];
  /** Row by row, column by column. */
  readonly cells: readonly UsageMatrixCell[];
}

const DENIED_PREFIX = 'denied: ';

/**
 * The identity × grant matrix of a usage report (issue 47): per identity and rule path pattern,
 * `used` (requests it allowed in the window), `unused` (held, never used: a least-privilege
 * candidate), and per identity and refused path `denied`. Derived from the report alone, so the
 * picture says what the report's JSON says.
 */
export function usageMatrix(report: UsageReport): UsageMatrix {
  const rules = new Set<string>();
  const denied = new Set<string>();
  for (const u of report.identities) {
    for (const g of u.used) rules.add(g.rule);
    for (const g of u.unused) rules.add(g.rule);
    for (const d of u.denied) denied.add(d.path);
  }
  const columns = [...[...rules].sort(compareStrings), ...[...denied].sort(compareStrings).map((p) => `${DENIED_PREFIX}${p}`)];
  const index = new Map(columns.map((c, i) => [c, i]));
  const cells: UsageMatrixCell[] = [];
  for (const u of report.identities) {
    const row: UsageMatrixCell[] = [];
    for (const g of u.used) row.push({ identity: u.identity, column: g.rule, state: 'used', detail: `${g.operations.join(', ')} × ${g.count}, last ${g.lastUse}` });
    for (const g of u.unused) row.push({ identity: u.identity, column: g.rule, state: 'unused', detail: `${g.capabilities.join(', ')} never used in the window` });
    const byPath = new Map<string, { ops: string[]; count: number; last: string }>();
    for (const d of u.denied) {
      const acc = byPath.get(d.path) ?? { ops: [], count: 0, last: '' };
      acc.ops.push(d.operation);
      acc.count += d.count;
      if (compareStrings(d.lastTime, acc.last) > 0) acc.last = d.lastTime;
      byPath.set(d.path, acc);
    }
    for (const [p, acc] of byPath) row.push({ identity: u.identity, column: `${DENIED_PREFIX}${p}`, state: 'denied', detail: `${[...new Set(acc.ops)].sort(compareStrings).join(', ')} refused × ${acc.count}, last ${acc.last}` });
    cells.push(...row.sort((a, b) => index.get(a.column)! - index.get(b.column)!));
  }
  return { rows: report.identities.map((u) => u.identity), columns, cells };
}

/** Text as SVG character data: control and bidi characters written as `\uXXXX` (terminalLine), then XML-escaped. */
function xmlText(text: string): string {
  return terminalLine(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const CELL = 16;
const CHAR = 7;
const PAD = 8;
const FILL: Readonly<Record<UsageMatrixState, string>> = { used: '#2e7d32', unused: '#f9a825', denied: '#c62828' };
const MARK: Readonly<Record<UsageMatrixState, string>> = { used: '✓', unused: '○', denied: '✕' };

/**
 * The matrix as an SVG picture for the review (`usage --matrix FILE`): one row per identity, one
 * column per rule (then per refused path), a cell per state with a mark and a tooltip (`<title>`),
 * a legend, and per row the counts. Deterministic (same report, same bytes); names written as text,
 * escaped, so a role or path name cannot inject markup. Only cells with a state are drawn: its size
 * grows with the grants, not with rows × columns.
 */
export function renderUsageMatrixSvg(report: UsageReport): string {
  const m = usageMatrix(report);
  const label = (s: string) => terminalLine(s).length;
  const left = PAD + Math.max(8, ...m.rows.map(label)) * CHAR + PAD;
  const top = PAD + 3 * CELL + Math.max(8, ...m.columns.map(label)) * CHAR + PAD;
  const gridWidth = Math.max(1, m.columns.length) * CELL;
  const countsWidth = 34 * CHAR;
  const width = left + gridWidth + PAD + countsWidth;
  const height = top + Math.max(1, m.rows.length) * CELL + PAD;
  const rowIndex = new Map(m.rows.map((r, i) => [r, i]));
  const colIndex = new Map(m.columns.map((c, i) => [c, i]));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="monospace" font-size="12">`,
    `<title>${xmlText(`secretstore-iac usage: ${m.rows.length} identities × ${m.columns.length} grants, window ${report.window.since ?? 'the start of the log'} to ${report.window.until ?? 'the end of the log'}${report.namespace !== undefined ? `, namespace ${report.namespace}` : ''}`)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
  // Legend, top left.
  (['used', 'unused', 'denied'] as const).forEach((state, i) => {
    const x = PAD + i * 15 * CHAR;
    out.push(`<rect x="${x}" y="${PAD}" width="${CELL - 2}" height="${CELL - 2}" fill="${FILL[state]}"/>`, `<text x="${x + CELL + 2}" y="${PAD + CELL - 4}">${state === 'unused' ? 'never used' : state}</text>`);
  });
  // Grid lines: one per row and column.
  for (let r = 0; r <= m.rows.length; r++) out.push(`<line x1="${left}" y1="${top + r * CELL}" x2="${left + gridWidth}" y2="${top + r * CELL}" stroke="#dddddd"/>`);
  for (let c = 0; c <= m.columns.length; c++) out.push(`<line x1="${left + c * CELL}" y1="${top}" x2="${left + c * CELL}" y2="${top + m.rows.length * CELL}" stroke="#dddddd"/>`);
  m.rows.forEach((r, i) => out.push(`<text x="${left - PAD}" y="${top + i * CELL + CELL - 4}" text-anchor="end">${xmlText(r)}</text>`));
  m.columns.forEach((c, i) => {
    const x = left + i * CELL + CELL - 4;
    out.push(`<text x="${x}" y="${top - PAD}" transform="rotate(-90 ${x} ${top - PAD})"${c.startsWith(DENIED_PREFIX) ? ` fill="${FILL.denied}"` : ''}>${xmlText(c)}</text>`);
  });
  for (const cell of m.cells) {
    const x = left + colIndex.get(cell.column)! * CELL;
    const y = top + rowIndex.get(cell.identity)! * CELL;
    out.push(
      `<g data-identity="${xmlText(cell.identity)}" data-grant="${xmlText(cell.column)}" data-state="${cell.state}">` +
        `<title>${xmlText(`${cell.identity} · ${cell.column}: ${cell.state === 'unused' ? 'never used' : cell.state} (${cell.detail})`)}</title>` +
        `<rect x="${x + 1}" y="${y + 1}" width="${CELL - 2}" height="${CELL - 2}" fill="${FILL[cell.state]}"/>` +
        `<text x="${x + CELL / 2}" y="${y + CELL - 4}" text-anchor="middle" fill="#ffffff">${MARK[cell.state]}</text></g>`,
    );
  }
  // Per row: the counts, as the report's first lines give them.
  report.identities.forEach((u, i) => {
    out.push(`<text x="${left + gridWidth + PAD}" y="${top + i * CELL + CELL - 4}">${xmlText(`${u.used.length} used, ${u.unused.length} never used, ${u.denied.length} denied`)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
