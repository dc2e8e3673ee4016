/** Real-store tests: a real OpenBao dev server and a real OpenTofu, built by scripts/toolchain.sh. */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // The configuration in stacks/ imports the package by its name, as a configuration repository does.
  moduleNameMapper: { '^secretstore-iac$': '<rootDir>/lib' },
  testMatch: ['**/test/store/**/*.store.test.ts'],
  // A hang guard, not a speed claim: shared runners are loaded (a test that took 500 s idle took 1,203 s
  // at load 6-19), and CI's own 90 min limit is the bound. No store test sets a shorter one of its own;
  // speed is shown by the benchmark scripts, never by a timeout.
  testTimeout: 1_800_000,
  maxWorkers: 1,
};
