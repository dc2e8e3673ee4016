/**
 * The narrowing as a patch (issue 47, docs/usage.md §8): `configurationPatch` writes the change of a
 * configuration source as a unified diff that the real `git apply` applies to the text before, giving
 * exactly the text after; random texts and edits (lines removed, added, changed, at either end, the
 * last newline removed or added), and an empty patch for equal texts.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { configurationPatch } from '../../../lib/usage/configuration-patch';
import { SeededRandom } from '../../support/seeded-random';

const FILE = 'stacks/platform.config.ts';
let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-patch-'));
  fs.mkdirSync(path.join(dir, 'stacks'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `before` with `patch` applied by git, in a fresh repository. */
function gitApplied(before: string, patch: string): { status: number | null; text: string; stderr: string } {
  fs.rmSync(path.join(dir, '.git'), { recursive: true, force: true });
  expect(spawnSync('git', ['init', '-q'], { cwd: dir }).status).toBe(0);
  fs.writeFileSync(path.join(dir, FILE), before);
  fs.writeFileSync(path.join(dir, 'change.patch'), patch);
  const r = spawnSync('git', ['apply', '--whitespace=nowarn', 'change.patch'], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, text: fs.readFileSync(path.join(dir, FILE), 'utf8'), stderr: r.stderr };
}

describe('a configuration change as a patch git applies', () => {
  it('equal texts: no patch', () => {
    expect(configurationPatch(FILE, 'a\nb\n', 'a\nb\n')).toBe('');
  });

  it("a narrowing's edit: one line changed, three lines of context, the file named as the repository names it", () => {
    const before = ['export const platformConfig = {', '  accounts: {', '    mirror: {', '      readByCi: true,', '    },', '  },', '};', ''].join('\n');
    const after = before.replace('readByCi: true', 'readByCi: false');
    const patch = configurationPatch(FILE, before, after);
    expect(patch).toBe(
      [`diff --git a/${FILE} b/${FILE}`, `--- a/${FILE}`, `+++ b/${FILE}`, '@@ -1,7 +1,7 @@', ' export const platformConfig = {', '   accounts: {', '     mirror: {', '-      readByCi: true,', '+      readByCi: false,', '     },', '   },', ' };', ''].join('\n'),
    );
    expect(gitApplied(before, patch)).toEqual({ status: 0, text: after, stderr: '' });
  });

  it('random texts and edits: git applies each patch to the text before and gets the text after', () => {
    const random = SeededRandom.fromEnvironment('configuration-patch');
    const words = ['a', 'b', 'c', 'reads: [],', '', '  x', 'readByCi: true,'];
    for (let round = 0; round < 40; round++) {
      const lines = Array.from({ length: random.int(41) }, () => random.pick(words));
      const edited = [...lines];
      for (let e = 1 + random.int(4); e > 0; e--) {
        const at = random.int(edited.length + 1);
        const what = random.int(3);
        if (what === 0 && edited.length > 0) edited.splice(Math.min(at, edited.length - 1), 1);
        else if (what === 1) edited.splice(at, 0, random.pick(words));
        else if (edited.length > 0) edited[Math.min(at, edited.length - 1)] = `changed ${round}`;
      }
      const ending = () => (random.int(5) === 0 ? '' : '\n');
      const before = lines.join('\n') + (lines.length > 0 ? ending() : '');
      const after = edited.join('\n') + (edited.length > 0 ? ending() : '');
      const patch = configurationPatch(FILE, before, after);
      if (before === after) {
        expect(patch).toBe('');
        continue;
      }
      expect([round, gitApplied(before, patch)]).toEqual([round, { status: 0, text: after, stderr: '' }]);
    }
  });
});
