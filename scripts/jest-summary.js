#!/usr/bin/env node
// Sums the jest --json reports of a CI run into one closing line, "N passed, N failed", after the
// name of every skipped test (e.g. those SECRETSTORE_IAC_ALLOW_SKIP let go when busybox is missing),
// and, where Terraform is absent, the line "Terraform absent: N engine-facing tests ran on OpenTofu
// only" (scripts/test-store.sh prints it per store too).
const fs = require('fs');
const path = require('path');

/**
 * The titles' marker of the Terraform tests that did not run (TERRAFORM_ABSENT in
 * test/support/store/engine-matrix.ts, which registers them skipped).
 */
const TERRAFORM_ABSENT = '[Terraform absent';

/** The line saying how many engine-facing tests ran on OpenTofu only, or undefined when none. */
function terraformAbsentLine(reports) {
  let count = 0;
  for (const report of reports) {
    for (const suite of report.testResults) {
      count += suite.assertionResults.filter((t) => t.status === 'pending' && t.title.includes(TERRAFORM_ABSENT)).length;
    }
  }
  return count > 0 ? `Terraform absent: ${count} engine-facing tests ran on OpenTofu only` : undefined;
}

function main(dir) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const reports = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const report = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    reports.push(report);
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
  const absent = terraformAbsentLine(reports);
  if (absent) console.log(absent);
  console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed > 0 ? 1 : 0);
}

module.exports = { terraformAbsentLine };
if (require.main === module) main(process.argv[2]);
