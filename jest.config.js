/** Unit tests: the model, the constructs and the synthesized JSON. No store, no engine. */
module.exports = {
  // A shared runner can be ten times slower than an idle machine: no unit test races the clock
  // (timeouts only end a test that hangs; the store config has its own).
  testTimeout: 600_000,
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // The configuration in stacks/ imports the package by its name, as a configuration repository does.
  moduleNameMapper: { '^secretstore-iac$': '<rootDir>/lib' },
  testMatch: ['**/test/unit/**/*.test.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-setup.ts'],
};
