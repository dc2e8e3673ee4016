/** Unit tests: the model, the constructs and the synthesized JSON. No store, no engine. */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/test/unit/**/*.test.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-setup.ts'],
};
