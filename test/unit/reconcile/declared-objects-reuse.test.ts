/**
 * `moves BASE HEAD` reads both outputs once: a stack of HEAD whose `cdk.tf.json` holds BASE's bytes
 * (every stack a change did not touch) is neither parsed nor resolved again. What it reuses must be
 * exactly what a fresh read gives, and nothing is reused from a stack whose bytes or name differ.
 */
import * as fs from 'fs';
import * as path from 'path';
import { declaredObjectsOf, readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { readSynthOutput, sameDocument } from '../../../lib/sources/synth-output';
import { withPeople } from '../../support/people-config';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

const PIPELINE = { configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } };

describe('reading HEAD against BASE reuses only the stacks whose bytes are the same', () => {
  const base = synthesizePlatform({ ...withPeople(), ...PIPELINE });
  const head = synthesizePlatform({ ...platformConfig, ...PIPELINE });
  const baseStacks = readSynthOutput(base.outdir);
  const headStacks = readSynthOutput(head.outdir, baseStacks);
  const bytes = (file: string) => fs.readFileSync(file);

  it('a stack is shared exactly when its name and bytes are BASE\'s; HEAD\'s own file path is kept', () => {
    const byName = new Map(baseStacks.map((s) => [s.name, s]));
    const shared = headStacks.filter((s) => byName.has(s.name) && sameDocument(byName.get(s.name)!, s));
    const differing = headStacks.filter((s) => !byName.has(s.name) || !bytes(byName.get(s.name)!.file).equals(bytes(s.file)));
    // The fixture has both kinds: removing people changes ci-access (its grants), not every stack.
    expect(shared.length).toBeGreaterThan(0);
    expect(differing.map((s) => s.name)).toContain('ci-access');
    expect(shared.length + differing.length).toBe(headStacks.length);
    for (const s of shared) {
      expect(bytes(byName.get(s.name)!.file).equals(bytes(s.file))).toBe(true);
      expect(path.dirname(path.dirname(s.file))).toBe(path.join(head.outdir, 'stacks'));
    }
    for (const s of differing) expect(byName.has(s.name) && sameDocument(byName.get(s.name)!, s)).toBe(false);
    // What is read against BASE is what a read on its own gives.
    expect(JSON.parse(JSON.stringify(headStacks))).toEqual(JSON.parse(JSON.stringify(readSynthOutput(head.outdir))));
  });

  it('the objects of HEAD read against BASE\'s are the objects a fresh read declares', () => {
    const baseObjects = declaredObjectsOf(baseStacks, base.outdir);
    expect(baseObjects).toEqual(readDeclaredObjects(base.outdir));
    expect(declaredObjectsOf(headStacks, head.outdir, undefined, { stacks: baseStacks, objects: baseObjects })).toEqual(readDeclaredObjects(head.outdir));
  });

  it('objects are reused only from the same document: an earlier stack of the same name read from other bytes gives none', () => {
    // Same names, but each an other parse (as a stack whose bytes differ would be): its objects, marked, must not appear.
    const other = readSynthOutput(head.outdir);
    const marked = declaredObjectsOf(other, head.outdir).map((o) => ({ ...o, address: `${o.address}-earlier` }));
    const objects = declaredObjectsOf(headStacks, head.outdir, undefined, { stacks: other, objects: marked });
    expect(objects).toEqual(readDeclaredObjects(head.outdir));
    expect(objects.some((o) => o.address.endsWith('-earlier'))).toBe(false);
  });
});
