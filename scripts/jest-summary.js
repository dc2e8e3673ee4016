#!/usr/bin/env node
// Sums the jest --json reports of a CI run into one closing line, "N passed, N failed".
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
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
