/** Real-store tests: a real OpenBao dev server and a real OpenTofu, built by scripts/toolchain.sh. */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // The configuration in stacks/ imports the package by its name, as a configuration repository does.
  moduleNameMapper: { '^secretstore-iac$': '<rootDir>/lib' },
  testMatch: ['**/test/store/**/*.store.test.ts'],
  testTimeout: 600000,
  maxWorkers: 1,
};
