/**
 * Issue 47: the identity × grant matrix of a usage report, written as an SVG picture beside the
 * JSON for the review (`usage --matrix FILE`): every cell the report implies (a rule used, a rule
 * never used, a path refused) and no other, names escaped so no role or path writes markup,
 * well-formed, the same bytes for the same report.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { renderUsageMatrixSvg, usageMatrix } from '../../../lib/usage/usage-matrix-svg';
import { USAGE_FILE_FORMAT, USAGE_FILE_VERSION, UsageReport } from '../../../lib/usage/usage-report';
import { runCliIn } from '../../support/cli-in-process';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';

const BASE = path.join(ACCESS_FIXTURES, 'base');
const LOG = path.join(REPO_ROOT, 'test', 'fixtures', 'usage', 'openbao-audit.log');

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-matrix-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]) => runCliIn(dir, args);

const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

/** The cells the picture draws, read back from its `data-*` attributes. */
function drawnCells(svg: string): string[] {
  return [...svg.matchAll(/<g data-identity="([^"]*)" data-grant="([^"]*)" data-state="([^"]*)">/g)].map((m) => `${unescape(m[1])} | ${unescape(m[2])} | ${m[3]}`).sort();
}

/** Well-formed for this generator's subset of XML: every tag closed in order, no raw `<` or stray `&` in text or attributes. */
function expectWellFormed(svg: string): void {
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[A-Za-z][A-Za-z0-9:-]*="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (const m of svg.matchAll(tag)) {
    const text = svg.slice(last, m.index);
    expect(text).not.toMatch(/[<>]|&(?!(amp|lt|gt|quot|#39);)/);
    if (m[1] === '/') expect(stack.pop()).toBe(m[2]);
    else if (m[4] !== '/') stack.push(m[2]);
    expect(m[3]).not.toMatch(/&(?!(amp|lt|gt|quot|#39);)/);
    last = m.index! + m[0].length;
  }
  expect(svg.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
}

describe('usage --matrix FILE: the identity × grant picture of the report', () => {
  it('every cell the report implies, and no other: a rule used, a rule never used, a refused path; the counts per row', async () => {
    const run = await cli(['usage', BASE, '--log', LOG, '--format', 'json', '--matrix', 'matrix.svg']);
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as UsageReport;
    const svg = fs.readFileSync(path.join(dir, 'matrix.svg'), 'utf8');
    const expected = report.identities
      .flatMap((u) => [
        ...u.used.map((g) => `${u.identity} | ${g.rule} | used`),
        ...u.unused.map((g) => `${u.identity} | ${g.rule} | unused`),
        ...[...new Set(u.denied.map((d) => d.path))].map((p) => `${u.identity} | denied: ${p} | denied`),
      ])
      .sort();
    expect(expected.length).toBeGreaterThan(3);
    expect(['used', 'unused', 'denied'].every((s) => expected.some((e) => e.endsWith(`| ${s}`)))).toBe(true);
    expect(drawnCells(svg)).toEqual(expected);
    for (const u of report.identities) expect(svg).toContain(`${u.used.length} used, ${u.unused.length} never used, ${u.denied.length} denied`);
    expectWellFormed(svg);
    // The same report, the same bytes; the report on stdout is unchanged by the option.
    expect(renderUsageMatrixSvg(report)).toBe(svg);
    const plain = await cli(['usage', BASE, '--log', LOG, '--format', 'json']);
    const withoutReadAt = (text: string) => text.replace(/"readAt": "[^"]*"/, '"readAt": "T"');
    expect(withoutReadAt(plain.stdout)).toBe(withoutReadAt(run.stdout));
  });

  it('names from the log and the configuration are text: markup, quotes, control and bidi characters cannot shape the picture', () => {
    const hostile = 'approle/x"><script>alert(1)</script>&\u202e\u0007';
    const report: UsageReport = {
      format: USAGE_FILE_FORMAT,
      version: USAGE_FILE_VERSION,
      window: {},
      seen: {},
      identities: [
        {
          identity: hostile,
          stack: 'app-roles',
          logins: 1,
          used: [{ rule: 'secret/data/<b>/*', policies: ['p'], operations: ['read'], count: 2, lastUse: '2026-12-01T00:00:00Z', requests: [] }],
          unused: [],
          denied: [{ path: "secret/data/a'&b", operation: 'read', count: 1, lastTime: '2026-12-01T00:00:01Z', cause: 'x', grantedBy: [], fix: 'y' }],
        },
      ],
      failedLogins: [],
      counts: { lines: 3, responses: 3, malformed: 0, malformedAt: [], unattributed: 0 },
    };
    const svg = renderUsageMatrixSvg(report);
    expectWellFormed(svg);
    expect(svg).not.toContain('<script');
    expect(svg).not.toMatch(/[\u202e\u0007]/);
    expect(svg).toContain('\\u202e');
    expect(drawnCells(svg)).toEqual(['approle/x"><script>alert(1)</script>&\\u202e\\u0007 | denied: secret/data/a\'&b | denied', 'approle/x"><script>alert(1)</script>&\\u202e\\u0007 | secret/data/<b>/* | used']);
    expect(usageMatrix(report).columns).toEqual(['secret/data/<b>/*', "denied: secret/data/a'&b"]);
  });

  it('a file that cannot be written is a usage error before the log is read', async () => {
    const run = await cli(['usage', BASE, '--log', LOG, '--matrix', path.join(dir, 'no-such-dir', 'm.svg')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--matrix .*: the directory .* does not exist/);
  });
});
