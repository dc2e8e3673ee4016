import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { readStackDigests } from '../../../lib/sources/stack-digest';
import { readSynthOutput } from '../../../lib/sources/synth-output';

// Issue 36: `moves` and `access-diff` followed a manifest.json's `../../etc/passwd` stack path and
// quoted the file. Every stack path a manifest gives stays inside <outdir>/stacks/.

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-stack-path-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const SECRET_TEXT = 'root:x:0:0:outside-the-output';
const outside = path.join(root, 'outside.json');
fs.writeFileSync(outside, JSON.stringify({ resource: { vault_policy: { x: { name: SECRET_TEXT, policy: '' } } } }));

/** An output whose one stack `s` is given by `synthesizedStackPath` (and its working directory), after `arrange`. */
function output(name: string, stackPath: string, arrange: (dir: string) => void = () => undefined, workingDirectory = 'stacks/s'): string {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, 'stacks', 's'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'stacks', 's', 'cdk.tf.json'), '{"resource":{}}');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ stacks: { s: { synthesizedStackPath: stackPath, workingDirectory } } }));
  arrange(dir);
  return dir;
}

async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli(args, { env: {}, cwd: root, isTerminal: false, stdout: (l) => lines.push(l), stderr: (l) => lines.push(l) });
  return { code, out: lines.join('\n') };
}

describe('stack paths of a manifest.json are confined to the output\'s stacks/ folder', () => {
  it('a stack path inside stacks/ is read', () => {
    expect(readSynthOutput(output('ok', 'stacks/s/cdk.tf.json')).map((s) => s.name)).toEqual(['s']);
  });

  it.each([
    ['a path out of the output', path.relative(path.join(root, 'up'), outside), (): void => undefined, 'leads outside'],
    ['an absolute path', outside, (): void => undefined, 'is an absolute path'],
    ['a path inside the output but outside stacks/', 'manifest.json', (): void => undefined, 'leads outside'],
    ['a symbolic link in stacks/ to a file outside', 'stacks/s/link.json', (dir: string) => fs.symlinkSync(outside, path.join(dir, 'stacks', 's', 'link.json')), 'through a symbolic link'],
    [
      'stacks/ itself a link to a folder outside',
      'stacks/outside.json',
      (dir: string) => {
        fs.rmSync(path.join(dir, 'stacks'), { recursive: true });
        fs.symlinkSync(root, path.join(dir, 'stacks'));
      },
      'through a symbolic link',
    ],
  ])('%s is refused, naming the manifest, the stack, the field and the value, never quoting the file', (label, stackPath, arrange, why) => {
    const dir = output(label.replace(/\W+/g, '-'), stackPath, arrange);
    let message = '';
    try {
      readSynthOutput(dir);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`${path.join(dir, 'manifest.json')}: stack "s": "synthesizedStackPath" ${JSON.stringify(stackPath)} `);
    expect(message).toContain(why);
    expect(message).not.toContain(SECRET_TEXT);
  });

  it('changed-stacks\' digests refuse a working directory that is a link out of stacks/', () => {
    const dir = output('wd-link', 'stacks/s/cdk.tf.json', (d) => fs.symlinkSync(root, path.join(d, 'stacks', 'away')), 'stacks/away');
    expect(() => readStackDigests(dir)).toThrow(/stack "s": "workingDirectory" "stacks\/away" leads outside .* through a symbolic link/);
  });

  it.each([['moves'], ['access-diff']])('%s refuses such an output (exit 3) and does not quote the file', async (command) => {
    const good = output(`${command}-good`, 'stacks/s/cdk.tf.json');
    const bad = output(`${command}-bad`, path.relative(path.join(root, 'x'), outside));
    const r = await cli(command, bad, good);
    expect(r.code).toBe(3);
    expect(r.out).toContain('"synthesizedStackPath"');
    expect(r.out).not.toContain(SECRET_TEXT);
  });
});
