import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';
import { testEngine } from '../../support/store/engine-matrix';

const { terraformAbsentLine } = require(path.join(REPO_ROOT, 'scripts', 'jest-summary.js')) as {
  terraformAbsentLine(reports: unknown[]): string | undefined;
};

/** A jest --json report of one file with the given tests. */
function report(tests: Array<{ title: string; status: string }>, failed = 0): any {
  return {
    numPassedTests: tests.filter((t) => t.status === 'passed').length,
    numFailedTests: failed,
    numRuntimeErrorTestSuites: 0,
    numPendingTests: tests.filter((t) => t.status === 'pending').length,
    testResults: [{ name: path.join(REPO_ROOT, 'test/store/engine-paths.store.test.ts'), assertionResults: tests.map((t) => ({ ...t, fullName: `paths ${t.title}` })) }],
  };
}

/** How forEachEngine titles a test of the Terraform copy on a machine without Terraform. */
const absentTitle = (t: string) => testEngine('Terraform', '', 'absent').title(t);

describe('a run without Terraform says how many engine-facing tests ran on OpenTofu only, never a silent skip', () => {
  it('counts the skipped tests forEachEngine marked, in every report; other skipped tests and the tests that ran are not counted', () => {
    const openbao = report([
      { title: 'adopt [OpenTofu 1.12.6]', status: 'passed' },
      { title: absentTitle('adopt'), status: 'pending' },
      { title: absentTitle('moves'), status: 'pending' },
      { title: 'busybox missing, skipped as SECRETSTORE_IAC_ALLOW_SKIP allows: the login script', status: 'pending' },
    ]);
    const vault = report([{ title: absentTitle('adopt'), status: 'pending' }]);
    expect(terraformAbsentLine([openbao, vault])).toBe('Terraform absent: 3 engine-facing tests ran on OpenTofu only');
    expect(terraformAbsentLine([report([{ title: 'adopt [Terraform 1.11.4]', status: 'passed' }])])).toBeUndefined();
  });

  it('the CI summary prints the line before its closing "tests: N passed, N failed" line; none where Terraform ran', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jest-summary-'));
    try {
      fs.writeFileSync(path.join(dir, 'store-openbao.json'), JSON.stringify(report([{ title: 'adopt [OpenTofu 1.12.6]', status: 'passed' }, { title: absentTitle('adopt'), status: 'pending' }])));
      const out = execFileSync('node', [path.join(REPO_ROOT, 'scripts', 'jest-summary.js'), dir], { encoding: 'utf8' }).trim().split('\n');
      expect(out.slice(-2)).toEqual(['Terraform absent: 1 engine-facing tests ran on OpenTofu only', 'tests: 1 passed, 0 failed, 1 skipped']);
      fs.writeFileSync(path.join(dir, 'store-openbao.json'), JSON.stringify(report([{ title: 'adopt [Terraform 1.11.4]', status: 'passed' }])));
      const ran = execFileSync('node', [path.join(REPO_ROOT, 'scripts', 'jest-summary.js'), dir], { encoding: 'utf8' });
      expect(ran).not.toContain('Terraform absent');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
