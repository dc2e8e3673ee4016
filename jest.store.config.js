/** Real-store tests: a real OpenBao dev server and a real OpenTofu, built by scripts/toolchain.sh. */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/test/store/**/*.store.test.ts'],
  testTimeout: 600000,
  maxWorkers: 1,
};
