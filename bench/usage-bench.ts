/**
 * Usage benchmark (not a test): prints figures, asserts nothing.
 *
 * Writes an audit log of `--lines N` lines (or USAGE_BENCH_LINES; default 1,000,000) by repeating the real Vault
 * audit lines of test/fixtures/usage/vault-audit.log with increasing times (a request and a
 * response line per request, as the store writes them), then reads it as `secretstore-iac usage`
 * does against the synthesized base configuration of the access tests, and prints the time, the
 * lines per second and the memory: the peak resident set of the process and the peak heap sampled
 * during the read (memory must stay flat: lines are streamed and aggregated, never held).
 *
 * Run: `npm run bench:usage` (build, then `node dist/bench/usage-bench.js`); another size:
 * `npm run bench:usage -- --lines 100000` (comparing two sizes shows whether memory stays flat).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AccessModel } from '../lib/access/access-model';
import { readStoreConfiguration } from '../lib/access/store-configuration';
import { AuditReadCounts, readAuditEntries } from '../lib/usage/audit-log-reader';
import { UsageAggregator } from '../lib/usage/usage-report';

/** The repository root: the working directory (`npm run` runs scripts there). */
const ROOT = process.cwd();
/** `--lines N` on the command line, else USAGE_BENCH_LINES, else 1,000,000. */
function lineCount(): number {
  const at = process.argv.indexOf('--lines');
  const value = at >= 0 ? process.argv[at + 1] : process.env.USAGE_BENCH_LINES ?? '1000000';
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--lines ${value}: must be a whole number of at least 1`);
  return n;
}
const LINES = lineCount();

/** Writes `LINES` lines to `file`, streaming (back-pressure respected, nothing held). */
async function writeLog(file: string): Promise<void> {
  const templates = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'usage', 'vault-audit.log'), 'utf8').trimEnd().split('\n');
  const out = fs.createWriteStream(file);
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < LINES; i++) {
    const time = new Date(start + i * 10).toISOString();
    const line = templates[i % templates.length].replace(/"time":"[^"]*"/, `"time":"${time}"`);
    if (!out.write(`${line}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-bench-'));
  const file = path.join(dir, 'audit.log');
  try {
    await writeLog(file);
    const configuration = readStoreConfiguration(path.join(ROOT, 'test', 'fixtures', 'access', 'base'));
    const aggregator = new UsageAggregator(await AccessModel.load(configuration), configuration);
    const counts: AuditReadCounts = { lines: 0, responses: 0, malformed: [], malformedCount: 0 };
    let peakHeap = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)), 50);
    const started = process.hrtime.bigint();
    for await (const entry of readAuditEntries([file], {}, counts)) aggregator.add(entry);
    const report = aggregator.report(counts, {});
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    clearInterval(sampler);
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    console.log(`usage: ${counts.lines} lines (${mb(fs.statSync(file).size)}), ${counts.responses} responses, ${report.identities.length} identities`);
    console.log(`  time ${seconds.toFixed(2)} s (${Math.round(counts.lines / seconds)} lines/s)`);
    console.log(`  machine load (/proc/loadavg) ${fs.existsSync('/proc/loadavg') ? fs.readFileSync('/proc/loadavg', 'utf8').trim() : 'unknown'}; ${os.cpus().length} CPUs`);
    console.log(`  peak heap during the read ${mb(peakHeap)}; peak resident set of the process ${mb(process.resourceUsage().maxRSS * 1024)}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
