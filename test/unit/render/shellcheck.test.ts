/**
 * shellcheck on every shell file: the templates under lib/ as they are, and the shell artifacts a
 * synthesis writes (the CI login script, every agent entrypoint), all read as POSIX sh (`-s sh`).
 * A missing shellcheck fails these tests: it is a Debian package that .ci/run installs.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Duration } from '../../../lib';
import { renderAgentEntrypoint } from '../../../lib/render/agent-entrypoint';
import { renderCiLoginScript } from '../../../lib/render/ci-login-script';
import { REPO_ROOT } from '../../support/paths';
import { synthesizePlatform, tempOutdir } from '../../support/synthesized-platform';

/** Runs shellcheck on files; its exit status and report. Throws a clear error when it is not installed. */
function shellcheck(files: readonly string[]): { status: number | null; report: string } {
  const result = spawnSync('shellcheck', ['-s', 'sh', '-f', 'gcc', ...files], { encoding: 'utf8' });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new Error('shellcheck is not installed: install the Debian package shellcheck (apt-get install shellcheck; .ci/run does)');
  }
  if (result.error) throw result.error;
  return { status: result.status, report: `${result.stdout}${result.stderr}` };
}

/** Every `.sh` file under a directory, sorted. */
function shellFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? shellFiles(path.join(dir, e.name)) : e.name.endsWith('.sh') ? [path.join(dir, e.name)] : []))
    .sort();
}

describe('shellcheck -s sh', () => {
  it('finds the problem in a script that has one (so that a clean report means something)', () => {
    const file = path.join(path.dirname(tempOutdir()), 'unquoted.sh');
    fs.writeFileSync(file, 'rm -rf $1/tmp\n');
    const { status, report } = shellcheck([file]);
    expect(status).not.toBe(0);
    expect(report).toContain('SC2086');
  });

  it('reports nothing on the shell templates under lib/', () => {
    const files = shellFiles(path.join(REPO_ROOT, 'lib'));
    expect(files.map((f) => path.relative(REPO_ROOT, f))).toEqual(
      expect.arrayContaining(['lib/render/agent-entrypoint.sh', 'lib/render/ci-login.sh']),
    );
    expect(shellcheck(files)).toEqual({ status: 0, report: '' });
  });

  it('reports nothing on the synthesized ci/secretstore-login.sh and agents/*/entrypoint.sh', () => {
    const { outdir } = synthesizePlatform();
    const agents = fs.readdirSync(path.join(outdir, 'agents')).sort();
    expect(agents.length).toBeGreaterThan(0);
    const files = [path.join(outdir, 'ci', 'secretstore-login.sh'), ...agents.map((a) => path.join(outdir, 'agents', a, 'entrypoint.sh'))];
    expect(shellcheck(files)).toEqual({ status: 0, report: '' });
  });

  it('reports nothing on the CI login scripts in a namespace (the header sections), with and without the exported token', () => {
    const dir = path.dirname(tempOutdir());
    const files = [true, false].map((exportVaultToken) => {
      const file = path.join(dir, `login-${exportVaultToken}.sh`);
      fs.writeFileSync(file, renderCiLoginScript({ roleName: 'r', authPath: 'jwt', audience: 'https://ci.example', namespace: 'admin/team', exportVaultToken }));
      return file;
    });
    expect(shellcheck(files)).toEqual({ status: 0, report: '' });
  });

  it('reports nothing on an entrypoint with the other sections: address in the configuration, no renew-self loop', () => {
    const file = path.join(path.dirname(tempOutdir()), 'entrypoint.sh');
    const options = { roleName: 'orchestrator-dev', configFile: '/c/agent.hcl', roleIdFile: '/a/role-id', secretIdFile: '/b/secret-id' };
    fs.writeFileSync(file, renderAgentEntrypoint({ ...options, addressInConfiguration: true }));
    expect(shellcheck([file])).toEqual({ status: 0, report: '' });
    fs.writeFileSync(file, renderAgentEntrypoint({ ...options, addressInConfiguration: false, renewal: { interval: Duration.minutes(45), proxyPort: 8100 } }));
    expect(shellcheck([file])).toEqual({ status: 0, report: '' });
  });

  it("reports nothing on the proxy's entrypoint (apiProxy 'proxy'), with and without the loop, on either store", () => {
    const file = path.join(path.dirname(tempOutdir()), 'proxy-entrypoint.sh');
    const options = { process: 'proxy' as const, roleName: 'orchestrator-dev', configFile: '/c/proxy.hcl', roleIdFile: '/a/role-id', secretIdFile: '/b/secret-id' };
    for (const agentBinary of ['bao', 'vault'] as const) {
      fs.writeFileSync(file, renderAgentEntrypoint({ ...options, agentBinary, addressInConfiguration: false, renewal: { interval: Duration.minutes(45), proxyPort: 8100 } }));
      expect(shellcheck([file])).toEqual({ status: 0, report: '' });
      fs.writeFileSync(file, renderAgentEntrypoint({ ...options, agentBinary, addressInConfiguration: true }));
      expect(shellcheck([file])).toEqual({ status: 0, report: '' });
    }
  });
});
