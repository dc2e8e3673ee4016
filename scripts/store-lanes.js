#!/usr/bin/env node
// The store suites of both stores on two lanes that share one queue of (store, test file) items
// (scripts/test-store.sh runs it for a whole-suite run with two stores on two or more cpus).
//
// Why a queue: the OpenBao suite holds the gitlab-ci-local pipeline files, which run on OpenBao only,
// so one lane per store left the Vault lane idle for half the run (idle 1,876 s against 985 s; beside
// `stress --cpu 2` 5,025 s against 2,128 s, the whole 90 min limit). Here each lane takes its own
// store's files first and, when they are done, the other store's files from the other end, one jest
// run per file: the lanes end within about one file of each other whatever the split of the work.
//
//   node scripts/store-lanes.js --reports DIR --stores "openbao vault" LANE_DIR_1 LANE_DIR_2
//
// Lane N works in LANE_DIR_N (a repository with node_modules and dist/; the second a copy, because some
// tests rebuild dist/) with SECRETSTORE_IAC_STORE_LANE=lane-N; its home store is the Nth of --stores.
// The first store's toolchain is built before (scripts/test-store.sh); lane 2 builds the rest first
// (`bash scripts/toolchain.sh`, which holds a lock), and no lane takes a file of a store whose toolchain
// is not built. Each file's jest output is printed when it ends, whole, under a line naming the file,
// store, lane, outcome and time. The files' jest reports are merged into DIR/store-<store>.json, the
// reports scripts/jest-summary.js reads. The time each file took is kept in the cache
// (store-test-times.json) so that the next run takes the longest files first. Exit 1 when any file
// failed or a toolchain did not build.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

/** The cache the durations are kept in: the toolchain's (scripts/toolchain.sh). */
function timesFile() {
  const cache = process.env.SECRETSTORE_IAC_CACHE || path.join(os.homedir(), '.cache', 'secretstore-iac');
  return path.join(cache, 'store-test-times.json');
}

/** The durations of an earlier run ({store: {file: seconds}}), or none. */
function readTimes(file) {
  try {
    const times = JSON.parse(fs.readFileSync(file, 'utf8'));
    return times !== null && typeof times === 'object' && !Array.isArray(times) ? times : {};
  } catch {
    return {};
  }
}

/**
 * The order a store's files are taken in: longest first by the earlier run's durations (a file
 * without one first of all: a new file may be long), then by name. The home lane takes from the
 * front, the other lane from the back, so the last files either lane takes are the short ones.
 */
function storeOrder(files, durations) {
  const known = durations || {};
  const weight = (f) => (typeof known[f] === 'number' ? known[f] : Infinity);
  return [...files].sort((a, b) => weight(b) - weight(a) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The next item for a lane: the front of its home store's queue, else the back of another store's
 * queue whose toolchain is built; undefined when neither (`waiting` tells whether a queue still holds
 * files of a store whose toolchain is being built, for which the lane waits).
 * @param queues {store: files[]}, taken from in place
 * @param home the lane's home store
 * @param ready {store: 'built' | 'building' | 'failed'}
 */
function nextItem(queues, home, ready) {
  if (ready[home] === 'built' && queues[home] && queues[home].length > 0) return { item: { store: home, file: queues[home].shift() }, waiting: false };
  let waiting = false;
  for (const store of Object.keys(queues).sort()) {
    if (store === home || queues[store].length === 0) continue;
    if (ready[store] === 'built') return { item: { store, file: queues[store].pop() }, waiting: false };
    if (ready[store] === 'building') waiting = true;
  }
  if (ready[home] === 'building' && queues[home] && queues[home].length > 0) waiting = true;
  return { item: undefined, waiting };
}

/** A report standing for a file whose jest run wrote none (it crashed, or was never run): a failed suite. */
function missingReport(file, message) {
  return {
    numPassedTests: 0,
    numFailedTests: 0,
    numPendingTests: 0,
    numTotalTests: 0,
    numRuntimeErrorTestSuites: 1,
    numFailedTestSuites: 1,
    numPassedTestSuites: 0,
    numPendingTestSuites: 0,
    numTotalTestSuites: 1,
    success: false,
    testResults: [{ name: file, status: 'failed', message, assertionResults: [] }],
  };
}

/** The files' reports of one store as one jest report (counts summed, suites listed in file order). */
function mergeReports(reports) {
  const counts = ['numPassedTests', 'numFailedTests', 'numPendingTests', 'numTotalTests', 'numRuntimeErrorTestSuites', 'numFailedTestSuites', 'numPassedTestSuites', 'numPendingTestSuites', 'numTotalTestSuites'];
  const merged = { success: true, testResults: [] };
  for (const key of counts) merged[key] = 0;
  for (const report of reports) {
    for (const key of counts) merged[key] += report[key] || 0;
    merged.success = merged.success && report.success !== false;
    merged.testResults.push(...(report.testResults || []));
  }
  merged.testResults.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return merged;
}

/** Runs a command in `cwd`, its output (both streams) kept; resolves with the exit code and output. */
function run(command, args, cwd, env, children) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.add(child);
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    const done = (code) => {
      children.delete(child);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8') });
    };
    child.on('error', (e) => {
      chunks.push(Buffer.from(`${command}: ${e.message}\n`));
      done(127);
    });
    child.on('close', (code, signal) => done(code === null ? `signal ${signal}` : code));
  });
}

/** The store test files of a repository, relative to it (jest's own list: the config's testMatch). */
async function listFiles(dir, children) {
  const r = await run(process.execPath, ['node_modules/jest/bin/jest.js', '-c', 'jest.store.config.js', '--listTests', '--json'], dir, process.env, children);
  if (r.code !== 0) throw new Error(`store-lanes: jest --listTests failed in ${dir} (exit ${r.code}):\n${r.output}`);
  return JSON.parse(r.output.trim().split('\n').pop())
    .map((f) => path.relative(dir, f))
    .sort();
}

function parseArguments(argv) {
  const options = { reports: undefined, stores: undefined, lanes: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--reports') options.reports = argv[++i];
    else if (argv[i] === '--stores') options.stores = argv[++i].split(/\s+/).filter(Boolean);
    else options.lanes.push(path.resolve(argv[i]));
  }
  if (!options.reports || !options.stores || options.stores.length !== 2 || options.lanes.length !== 2) {
    throw new Error('usage: store-lanes.js --reports DIR --stores "STORE1 STORE2" LANE_DIR_1 LANE_DIR_2');
  }
  return options;
}

async function main(argv) {
  const { reports, stores, lanes } = parseArguments(argv);
  const children = new Set();
  const stop = (signal) => {
    for (const child of children) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Gone already.
      }
    }
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  const files = await listFiles(lanes[0], children);
  const times = readTimes(timesFile());
  const queues = {};
  for (const store of stores) queues[store] = storeOrder(files, times[store]);
  // The first store's toolchain is built by the caller; the second's by lane 2 before it takes a file.
  const ready = { [stores[0]]: 'built', [stores[1]]: 'building' };
  const itemReports = Object.fromEntries(stores.map((s) => [s, []]));
  const durations = Object.fromEntries(stores.map((s) => [s, { ...(times[s] || {}) }]));
  let failed = false;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-store-items-'));
  // A lane with nothing to take until a toolchain is built waits here.
  const waiters = [];
  const changed = () => new Promise((resolve) => waiters.push(resolve));
  const wake = () => waiters.splice(0).forEach((resolve) => resolve());
  const start = Date.now();
  const seconds = (from) => Math.round((Date.now() - from) / 1000);

  const lane = async (index) => {
    const dir = lanes[index];
    const name = `lane-${index + 1}`;
    const home = stores[index];
    const done = { count: 0, byStore: {} };
    if (index === 1) {
      const from = Date.now();
      const r = await run('bash', ['scripts/toolchain.sh'], dir, { ...process.env, SECRETSTORE_IAC_STORES: stores.join(' ') }, children);
      ready[home] = r.code === 0 ? 'built' : 'failed';
      process.stdout.write(`${r.output}test-store: [${name}] toolchain for ${home}: ${r.code === 0 ? 'built' : `FAILED (exit ${r.code})`} in ${seconds(from)} s\n`);
      if (r.code !== 0) failed = true;
      wake();
    }
    for (;;) {
      const { item, waiting } = nextItem(queues, home, ready);
      if (!item) {
        if (!waiting) break;
        await changed();
        continue;
      }
      const from = Date.now();
      const report = path.join(work, `${item.store}-${item.file.replace(/[^A-Za-z0-9.-]/g, '_')}.json`);
      const env = { ...process.env, SECRETSTORE_IAC_STORE: item.store, SECRETSTORE_IAC_STORE_LANE: name };
      const args = ['node_modules/jest/bin/jest.js', '-c', 'jest.store.config.js', '--runInBand', '--json', `--outputFile=${report}`, '--runTestsByPath', item.file];
      const r = await run(process.execPath, args, dir, env, children);
      const took = seconds(from);
      durations[item.store][item.file] = took;
      let parsed;
      try {
        parsed = JSON.parse(fs.readFileSync(report, 'utf8'));
        // The lane copy's absolute path names the same file as the repository's.
        for (const suite of parsed.testResults || []) suite.name = path.join(lanes[0], path.relative(dir, suite.name));
      } catch {
        parsed = missingReport(path.join(lanes[0], item.file), `jest ended (${r.code}) without a report`);
      }
      itemReports[item.store].push(parsed);
      const ok = r.code === 0 && parsed.success !== false;
      if (!ok) failed = true;
      done.count++;
      done.byStore[item.store] = (done.byStore[item.store] || 0) + 1;
      process.stdout.write(`test-store: [${name}] ${item.store} ${item.file}: ${ok ? 'passed' : `FAILED (exit ${r.code})`} in ${took} s\n${r.output}`);
    }
    const split = Object.entries(done.byStore)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ');
    process.stdout.write(`test-store: [${name}] done after ${seconds(start)} s: ${done.count} files (${split || 'none'})\n`);
  };

  await Promise.all([lane(0), lane(1)]);
  fs.rmSync(work, { recursive: true, force: true });
  const summary = require('./jest-summary.js');
  fs.mkdirSync(reports, { recursive: true });
  for (const store of stores) {
    // A store whose toolchain did not build ran no file: each is a failed suite of its report.
    for (const file of queues[store]) itemReports[store].push(missingReport(path.join(lanes[0], file), `not run: the toolchain for ${store} did not build`));
    const merged = mergeReports(itemReports[store]);
    fs.writeFileSync(path.join(reports, `store-${store}.json`), JSON.stringify(merged));
    console.log(`test-store: store suite on ${store}: ${merged.numPassedTests} passed, ${merged.numFailedTests + merged.numRuntimeErrorTestSuites} failed, ${merged.numPendingTests} skipped`);
    const absent = summary.terraformAbsentLine([merged]);
    if (absent) console.log(`test-store: ${store}: ${absent}`);
  }
  try {
    fs.mkdirSync(path.dirname(timesFile()), { recursive: true });
    fs.writeFileSync(timesFile(), `${JSON.stringify(durations, null, 1)}\n`);
  } catch {
    // The order of the next run is an optimisation only.
  }
  console.log(`test-store: both stores done in ${seconds(start)} s`);
  return failed ? 1 : 0;
}

module.exports = { storeOrder, nextItem, mergeReports, missingReport };
if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e.message);
      process.exit(1);
    },
  );
}
