import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ownCdktfAppCommand, readCdktfAppCommand } from '../../../lib/sources/cdktf-app-command';
import { REPO_ROOT } from '../../support/paths';

describe('the synthesis command comes from cdktf.json', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const checkout = (content?: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktf-app-'));
    dirs.push(dir);
    if (content !== undefined) fs.writeFileSync(path.join(dir, 'cdktf.json'), content);
    return dir;
  };

  it('reads the app field, and this checkout\'s is the repository\'s cdktf.json', () => {
    expect(readCdktfAppCommand(checkout('{"app": "node synth.js"}'))).toBe('node synth.js');
    expect(ownCdktfAppCommand()).toBe(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'cdktf.json'), 'utf8')).app);
  });

  it('names the file and the field when it cannot', () => {
    const missing = checkout();
    expect(() => readCdktfAppCommand(missing)).toThrow(`${path.join(missing, 'cdktf.json')}: cannot read the synthesis command`);
    const noApp = checkout('{"language": "typescript"}');
    expect(() => readCdktfAppCommand(noApp)).toThrow(
      `${path.join(noApp, 'cdktf.json')}: "app" must be the command that synthesizes the stacks, a non-empty string`,
    );
    expect(() => readCdktfAppCommand(checkout('{"app": " "}'))).toThrow('"app" must be');
    expect(() => readCdktfAppCommand(checkout('null'))).toThrow('"app" must be');
  });
});
