import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { checkDirectoryOf, makeCheckDirectory, removeCheckDirectoryLeftovers } from '../../../lib/cli/adopt-check-directory';
import { processRunning, removeWritingLeftovers, writeFileAtomically, writingName } from '../../../lib/private/atomic-file';
import { SEAL_FILE } from '../../../lib/engine/bookkeeping-seal';
import { IMPORT_FILE } from '../../../lib/reconcile/import-blocks';

// Issue 27: a killed adopt leaves nothing the next run could take for a state to put back, and the
// next adopt removes what killed runs left. Killing adopt during its plan check on a real store:
// test/store/adoption-interrupted.store.test.ts.

/** A synthesized output with one stack directory: its configuration, .terraform/, a lock file. */
function output(): { outdir: string; stackDir: string } {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-leftovers-'));
  const stackDir = path.join(outdir, 'stacks', 'app-roles');
  fs.mkdirSync(path.join(stackDir, '.terraform', 'providers'), { recursive: true });
  fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{"resource":{}}');
  fs.writeFileSync(path.join(stackDir, '.terraform.lock.hcl'), '# lock');
  fs.writeFileSync(path.join(stackDir, '.terraform', 'terraform.tfstate'), '{"backend":{}}');
  return { outdir, stackDir };
}

/** A pid no process has (the highest a Linux kernel hands out, plus one). */
const DEAD = 4194305;

describe('leftovers of killed runs', () => {
  it('a dead writer\'s .writing-<pid> file is found and removed; a running writer\'s (this process) is kept', () => {
    const { stackDir } = output();
    const file = path.join(stackDir, IMPORT_FILE);
    fs.writeFileSync(writingName(file, DEAD), '{"import": [');
    fs.writeFileSync(writingName(file), 'mine');
    expect(processRunning(DEAD)).toBe(false);
    expect(removeWritingLeftovers(stackDir, false)).toEqual([writingName(file, DEAD)]);
    expect(fs.existsSync(writingName(file, DEAD))).toBe(true);
    expect(removeWritingLeftovers(stackDir, true)).toEqual([writingName(file, DEAD)]);
    expect(fs.readdirSync(stackDir).sort()).toEqual(['.terraform', '.terraform.lock.hcl', `${IMPORT_FILE}.writing-${process.pid}`, 'cdk.tf.json']);
  });

  it('writeFileAtomically leaves the new file and no temporary one', () => {
    const { stackDir } = output();
    const file = path.join(stackDir, IMPORT_FILE);
    writeFileAtomically(file, '{"import":[]}\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"import":[]}\n');
    expect(fs.existsSync(writingName(file))).toBe(false);
  });

  it('the check directory sits beside the stack (same depth: a relative local state path names the same file), links every entry but the import file, and holds the new import file', () => {
    const { outdir, stackDir } = output();
    fs.writeFileSync(path.join(stackDir, IMPORT_FILE), '{"import":[{"to":"old","id":"old"}]}');
    fs.writeFileSync(writingName(path.join(stackDir, IMPORT_FILE), DEAD), 'half');
    const dir = makeCheckDirectory(stackDir, '{"import":[{"to":"new","id":"new"}]}');
    expect(dir).toBe(path.join(outdir, 'stacks', `.adopt-check-${process.pid}-app-roles`));
    expect(dir).toBe(checkDirectoryOf(stackDir));
    // Its own seal too, recording the new import file (issue 36: every engine run verifies it).
    expect(fs.readdirSync(dir).sort()).toEqual(['.terraform', '.terraform.lock.hcl', IMPORT_FILE, 'cdk.tf.json', SEAL_FILE]);
    for (const name of ['.terraform', '.terraform.lock.hcl', 'cdk.tf.json']) {
      expect(fs.lstatSync(path.join(dir, name)).isSymbolicLink()).toBe(true);
      expect(fs.readlinkSync(path.join(dir, name))).toBe(path.join(stackDir, name));
    }
    expect(fs.lstatSync(path.join(dir, IMPORT_FILE)).isFile()).toBe(true);
    expect(fs.readFileSync(path.join(dir, IMPORT_FILE), 'utf8')).toContain('"new"');
    // The stack's own import file is not touched by the check.
    expect(fs.readFileSync(path.join(stackDir, IMPORT_FILE), 'utf8')).toContain('"old"');
    expect(path.resolve(dir, '../../../terraform.app-roles.tfstate')).toBe(path.resolve(stackDir, '../../../terraform.app-roles.tfstate'));
  });

  it('a dead adopt\'s check directory is found and removed with its links only; a running adopt\'s is kept', () => {
    const { outdir, stackDir } = output();
    const mine = makeCheckDirectory(stackDir, '{}');
    const dead = path.join(outdir, 'stacks', `.adopt-check-${DEAD}-app-roles`);
    fs.renameSync(mine, dead);
    const running = makeCheckDirectory(stackDir, '{}');
    expect(removeCheckDirectoryLeftovers(path.join(outdir, 'stacks'), true)).toEqual([dead]);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(running)).toBe(true);
    // What the links pointed to is all there.
    expect(fs.readdirSync(path.join(stackDir, '.terraform')).sort()).toEqual(['providers', 'terraform.tfstate']);
    expect(fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8')).toBe('{"resource":{}}');
    // A stack directory is never taken for one.
    expect(removeCheckDirectoryLeftovers(path.join(outdir, 'stacks'), false, () => false)).toEqual([running]);
  });
});
