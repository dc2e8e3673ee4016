#!/usr/bin/env node
// Sums the jest --json reports of a CI run into one closing line, "N passed, N failed", after the
// name of every skipped test (e.g. those SECRETSTORE_IAC_ALLOW_SKIP let go when busybox is missing).
const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const report = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  passed += report.numPassedTests;
  // A suite that fails to run has no failed test, but it is a failure.
  failed += report.numFailedTests + report.numRuntimeErrorTestSuites;
  skipped += report.numPendingTests;
  console.log(`${file.replace(/\.json$/, '')}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
  for (const suite of report.testResults) {
    for (const test of suite.assertionResults.filter((t) => t.status === 'pending')) {
      console.log(`  skipped: ${test.fullName} (${path.relative(process.cwd(), suite.name)})`);
    }
  }
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
