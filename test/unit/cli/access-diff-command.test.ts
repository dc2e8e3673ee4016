import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { ACCESS_FIXTURES } from '../../support/paths';

// --risk-flag-count: the number the pipeline's access-diff job gates on.
describe('secretstore-iac access-diff --risk-flag-count FILE', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-flags-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function diff(head: string) {
    const file = path.join(dir, `${head}.txt`);
    const out: string[] = [];
    const code = await runCli(['access-diff', 'base', head, '--risk-flag-count', file], {
      env: {},
      cwd: ACCESS_FIXTURES,
      isTerminal: false,
      stdout: (l) => out.push(l),
      stderr: () => undefined,
    });
    return { code, count: fs.readFileSync(file, 'utf8'), markdown: out.join('\n') };
  }

  it('writes the number of risk flags the Markdown reports', async () => {
    const raised = await diff('head-ttl-raised');
    expect(raised.code).toBe(1);
    // The same number as the Markdown summary line ("N risk flags").
    const reported = raised.markdown.match(/(\d+) risk flags?\./);
    expect(reported).not.toBeNull();
    expect(raised.count).toBe(`${reported![1]}\n`);
    expect(Number(raised.count)).toBeGreaterThan(0);
    const same = await diff('head-nothing-changed');
    expect(same.code).toBe(0);
    expect(same.count).toBe('0\n');
  });
});
