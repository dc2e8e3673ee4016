import * as path from 'path';

/** The repository root, wherever the test file that imports this sits. */
export const REPO_ROOT = path.join(__dirname, '..', '..');

/** The synthesized-output fixtures of the access report and diff tests. */
export const ACCESS_FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'access');
