/**
 * The store suites' two lanes share one queue of (store, test file) items (scripts/store-lanes.js, run
 * by scripts/test-store.sh for the whole suite): each lane takes its own store's files first, then
 * the other store's from the other end; every item runs once; the files' reports are merged per store;
 * a failure is named where it happens and every other file still runs. Run here with stand-in lane
 * directories whose `node_modules/jest/bin/jest.js` and `scripts/toolchain.sh` record each call, so
 * that no real suite runs.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const lanes = require(path.join(REPO_ROOT, 'scripts', 'store-lanes.js')) as {
  storeOrder(files: string[], durations?: Record<string, number>): string[];
  nextItem(queues: Record<string, string[]>, home: string, ready: Record<string, string>): { item?: { store: string; file: string }; waiting: boolean };
};

/**
 * A stand-in jest: `--listTests --json` lists FILES; a run of one file records
 * `<lane> <store> <file>` in CALLS, and then, per the file's name: `fail-*` fails a test, `crash-*`
 * exits 1 without a report, `a-wait*` (on openbao; first in the order by name) waits until lane-2 has run an openbao file (it
 * gives up after 120 s, failing: the other lane never took one); any other passes one test.
 */
const STAND_IN_JEST = String.raw`
const fs = require('fs');
const path = require('path');
const args = process.argv.slice(2);
const files = JSON.parse(process.env.STAND_IN_FILES);
if (args.includes('--listTests')) {
  console.log(JSON.stringify(files.map((f) => path.join(process.cwd(), f))));
  process.exit(0);
}
const file = args[args.indexOf('--runTestsByPath') + 1];
const out = args.find((a) => a.startsWith('--outputFile=')).slice('--outputFile='.length);
const store = process.env.SECRETSTORE_IAC_STORE;
const lane = process.env.SECRETSTORE_IAC_STORE_LANE;
fs.appendFileSync(process.env.STAND_IN_CALLS, lane + ' ' + store + ' ' + file + '\n');
const base = path.basename(file);
if (base.startsWith('crash-')) process.exit(1);
if (base.startsWith('a-wait') && store === 'openbao') {
  const until = Date.now() + 120000;
  const stolen = () => fs.readFileSync(process.env.STAND_IN_CALLS, 'utf8').split('\n').some((l) => l.startsWith('lane-2 openbao '));
  while (!stolen() && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  if (!stolen()) process.exit(3);
}
const failing = base.startsWith('fail-');
const title = 'a test of ' + base + ' on ' + store;
fs.writeFileSync(out, JSON.stringify({
  success: !failing, numPassedTests: failing ? 0 : 1, numFailedTests: failing ? 1 : 0, numPendingTests: 0, numTotalTests: 1,
  numRuntimeErrorTestSuites: 0, numFailedTestSuites: failing ? 1 : 0, numPassedTestSuites: failing ? 0 : 1, numPendingTestSuites: 0, numTotalTestSuites: 1,
  testResults: [{ name: path.join(process.cwd(), file), status: failing ? 'failed' : 'passed', assertionResults: [{ title, fullName: title, status: failing ? 'failed' : 'passed' }] }],
}));
console.log((failing ? 'FAIL ' : 'PASS ') + file);
process.exit(failing ? 1 : 0);
`;

interface LanesRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** `<lane> <store> <file>` per jest run, in the order they started. */
  readonly calls: string[];
  /** The merged report of each store. */
  readonly reports: Record<string, { numPassedTests: number; numFailedTests: number; numRuntimeErrorTestSuites: number; testResults: Array<{ name: string; message?: string }> }>;
  readonly times: Record<string, Record<string, number>>;
  readonly lane1: string;
}

/** Runs scripts/store-lanes.js on two stand-in lanes holding `files`; `toolchainFails` makes lane 2's build fail. */
function runLanes(files: readonly string[], options: { toolchainFails?: boolean; times?: object } = {}): LanesRun {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-store-lanes-'));
  try {
    const laneDirs = ['lane1', 'lane2'].map((name) => {
      const dir = path.join(home, name);
      fs.mkdirSync(path.join(dir, 'node_modules', 'jest', 'bin'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'node_modules', 'jest', 'bin', 'jest.js'), STAND_IN_JEST);
      fs.mkdirSync(path.join(dir, 'scripts'));
      fs.writeFileSync(path.join(dir, 'scripts', 'toolchain.sh'), options.toolchainFails ? 'echo "vault: did not build" >&2; exit 1\n' : 'echo "toolchain: up to date"\n');
      return dir;
    });
    const cache = path.join(home, 'cache');
    fs.mkdirSync(cache);
    if (options.times) fs.writeFileSync(path.join(cache, 'store-test-times.json'), JSON.stringify(options.times));
    const calls = path.join(home, 'calls');
    fs.writeFileSync(calls, '');
    const reports = path.join(home, 'reports');
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'store-lanes.js'), '--reports', reports, '--stores', 'openbao vault', ...laneDirs], {
      env: { ...process.env, STAND_IN_FILES: JSON.stringify(files), STAND_IN_CALLS: calls, SECRETSTORE_IAC_CACHE: cache },
      encoding: 'utf8',
    });
    const read = (f: string) => (fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, 'utf8')) : undefined);
    return {
      status: result.status,
      stdout: result.stdout,
      stderr: result.stderr,
      calls: fs.readFileSync(calls, 'utf8').trim().split('\n').filter(Boolean),
      reports: { openbao: read(path.join(reports, 'store-openbao.json')), vault: read(path.join(reports, 'store-vault.json')) },
      times: read(path.join(cache, 'store-test-times.json')),
      lane1: laneDirs[0],
    };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

const items = (calls: readonly string[]) => calls.map((c) => c.split(' ').slice(1).join(' ')).sort();
const every = (files: readonly string[]) => ['openbao', 'vault'].flatMap((s) => files.map((f) => `${s} ${f}`)).sort();

describe('the order a store\'s files are taken in', () => {
  it('longest first by the earlier run, a file the earlier run did not have first of all, then by name', () => {
    expect(lanes.storeOrder(['a', 'b', 'c', 'd'], { a: 10, b: 300, d: 10 })).toEqual(['c', 'b', 'a', 'd']);
    expect(lanes.storeOrder(['b', 'a'])).toEqual(['a', 'b']);
  });

  it("a lane takes its own store's front, then another store's back once that store's toolchain is built, and waits only for one being built", () => {
    const queues = { openbao: ['long', 'mid', 'short'], vault: [] as string[] };
    expect(lanes.nextItem(queues, 'vault', { openbao: 'built', vault: 'built' }).item).toEqual({ store: 'openbao', file: 'short' });
    expect(lanes.nextItem(queues, 'openbao', { openbao: 'built', vault: 'built' }).item).toEqual({ store: 'openbao', file: 'long' });
    const pending = { openbao: [] as string[], vault: ['v'] };
    expect(lanes.nextItem(pending, 'openbao', { openbao: 'built', vault: 'building' })).toEqual({ item: undefined, waiting: true });
    expect(lanes.nextItem(pending, 'openbao', { openbao: 'built', vault: 'failed' })).toEqual({ item: undefined, waiting: false });
    expect(pending.vault).toEqual(['v']);
  });
});

describe('two lanes share one queue of (store, file)', () => {
  it("every file runs once on each store; the lane whose store is done takes the other's files (lane 1 waits on its first file until lane 2 took one)", () => {
    const files = ['test/store/a-wait.store.test.ts', 'test/store/b.store.test.ts', 'test/store/c.store.test.ts', 'test/store/d.store.test.ts'];
    const r = runLanes(files);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(items(r.calls)).toEqual(every(files));
    // Lane 2 ran a file of lane 1's store: the queue is shared, not split by store.
    expect(r.calls.some((c) => c.startsWith('lane-2 openbao '))).toBe(true);
    expect(r.calls.filter((c) => c.startsWith('lane-1 openbao ')).length).toBeGreaterThan(0);
    for (const store of ['openbao', 'vault']) {
      expect(r.reports[store].numPassedTests).toBe(files.length);
      // Each suite named by the repository's path, whichever lane ran it.
      expect(r.reports[store].testResults.map((t) => path.relative(r.lane1, t.name))).toEqual([...files].sort());
    }
    expect(r.stdout).toMatch(/test-store: \[lane-2\] toolchain for vault: built in \d+ s/);
    expect(r.stdout).toContain('test-store: store suite on openbao: 4 passed, 0 failed, 0 skipped');
    expect(r.stdout).toMatch(/test-store: \[lane-1\] done after \d+ s: \d files \(openbao \d/);
    // The durations kept for the next run's order, per store and file.
    expect(Object.keys(r.times.openbao).sort()).toEqual([...files].sort());
    expect(Object.keys(r.times.vault).sort()).toEqual([...files].sort());
  });

  it('a failing file and a file whose jest wrote no report are each named where they end and counted as failed; every other file still runs; exit 1', () => {
    const files = ['test/store/a.store.test.ts', 'test/store/fail-b.store.test.ts', 'test/store/crash-c.store.test.ts'];
    const r = runLanes(files);
    expect(r.status).toBe(1);
    expect(items(r.calls)).toEqual(every(files));
    expect(r.stdout).toMatch(/test-store: \[lane-\d\] openbao test\/store\/fail-b\.store\.test\.ts: FAILED \(exit 1\) in \d+ s\nFAIL test\/store\/fail-b/);
    expect(r.stdout).toMatch(/test-store: \[lane-\d\] vault test\/store\/crash-c\.store\.test\.ts: FAILED \(exit 1\) in \d+ s/);
    expect(r.reports.openbao.numPassedTests).toBe(1);
    expect(r.reports.openbao.numFailedTests).toBe(1);
    expect(r.reports.openbao.numRuntimeErrorTestSuites).toBe(1);
    expect(r.reports.vault.testResults.find((t) => t.name.endsWith('crash-c.store.test.ts'))?.message).toBe('jest ended (1) without a report');
    expect(r.stdout).toContain('test-store: store suite on vault: 1 passed, 2 failed, 0 skipped');
  });

  it("the second store's toolchain not built: its files are failed suites saying so, the first store's all run, exit 1", () => {
    const files = ['test/store/a.store.test.ts', 'test/store/b.store.test.ts'];
    const r = runLanes(files, { toolchainFails: true });
    expect(r.status).toBe(1);
    expect(items(r.calls)).toEqual(files.map((f) => `openbao ${f}`).sort());
    expect(r.stdout).toContain('vault: did not build');
    expect(r.stdout).toMatch(/test-store: \[lane-2\] toolchain for vault: FAILED \(exit 1\) in \d+ s/);
    expect(r.reports.vault.numRuntimeErrorTestSuites).toBe(2);
    expect(r.reports.vault.testResults.map((t) => t.message)).toEqual(['not run: the toolchain for vault did not build', 'not run: the toolchain for vault did not build']);
    expect(r.reports.openbao.numPassedTests).toBe(2);
  });

  it("the earlier run's durations order each store's files: lane 1 starts with the longest", () => {
    const files = ['test/store/a.store.test.ts', 'test/store/b.store.test.ts', 'test/store/c.store.test.ts'];
    const r = runLanes(files, { times: { openbao: { 'test/store/a.store.test.ts': 5, 'test/store/b.store.test.ts': 50, 'test/store/c.store.test.ts': 1 } } });
    expect(r.status).toBe(0);
    expect(r.calls.find((c) => c.startsWith('lane-1 '))).toBe('lane-1 openbao test/store/b.store.test.ts');
  });
});
