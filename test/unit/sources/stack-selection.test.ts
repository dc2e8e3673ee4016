import * as fs from 'fs';
import * as path from 'path';
import { Duration, SecretStoreStack } from '../../../lib';
import { isDigestedFile, readStackDigests, StackDigest, stackDigest } from '../../../lib/sources/stack-digest';
import { selectChangedStacks } from '../../../lib/sources/stack-selection';
import { synthesizePlatform, tempOutdir } from '../../support/synthesized-platform';
import { platformConfig } from '../../support/platform-config';

// The per-stack content digest, and which stacks a change from BASE to HEAD selects.

describe('A stack\'s digest covers the configuration the engine plans in its directory, and nothing else', () => {
  it('the same configuration synthesized into two directories has the same digests; another job timeout changes only ci-access\'s', () => {
    const one = readStackDigests(synthesizePlatform().outdir);
    const two = readStackDigests(synthesizePlatform().outdir);
    expect([...one.keys()]).toEqual(['app-roles', 'ci-access']);
    for (const [name, stack] of one) {
      expect(stack.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(two.get(name)!.digest).toBe(stack.digest);
      expect(stack.files).toEqual(['cdk.tf.json']);
    }
    const longer = readStackDigests(synthesizePlatform({ ...platformConfig, ciJobTimeout: Duration.minutes(77) }).outdir);
    expect(longer.get('ci-access')!.digest).not.toBe(one.get('ci-access')!.digest);
    expect(longer.get('app-roles')!.digest).toBe(one.get('app-roles')!.digest);
  });

  it('moves.tf.json and adopt-imports.tf.json count; the engine\'s files (.terraform/, lock file, saved plans, state, hidden files) do not', () => {
    const outdir = synthesizePlatform().outdir;
    const dir = path.join(outdir, 'stacks', 'ci-access');
    const before = stackDigest(dir).digest;
    fs.mkdirSync(path.join(dir, '.terraform'));
    for (const f of ['.terraform.lock.hcl', 'ci.tfplan', '.hidden.tf.json', 'terraform.tfstate', 'terraform.tfstate.backup', 'ci.removals', 'moves.tf.json.writing-42']) fs.writeFileSync(path.join(dir, f), 'x');
    expect(stackDigest(dir).digest).toBe(before);
    fs.writeFileSync(path.join(dir, 'moves.tf.json'), '{"removed": []}');
    const withMoves = stackDigest(dir);
    expect(withMoves.files).toEqual(['cdk.tf.json', 'moves.tf.json']);
    expect(withMoves.digest).not.toBe(before);
    fs.writeFileSync(path.join(dir, 'adopt-imports.tf.json'), '{"import": []}');
    expect(stackDigest(dir).files).toEqual(['adopt-imports.tf.json', 'cdk.tf.json', 'moves.tf.json']);
  });

  // Issue 45: the digest covered the names the engine loads (a pattern list); `#draft.tf` was
  // skipped though the engines load it (only names that also end in `#` are skipped). Now every file
  // but the engine's data counts: a file the engine may read changes the digest, whatever its name.
  it('every file but the engine\'s data and hidden names counts: #x.tf.json, x#, unknown names too', () => {
    for (const name of ['cdk.tf.json', 'main.tf', 'x.tofu', 'terraform.tfvars', 'a.auto.tfvars.json', 'override.tf', '#x.tf', '#team_override.tf.json', 'x#', 'x.tf~', 'prod.tfvars', 'README.md', 'secretstore-iac-seal.json']) {
      expect({ name, digested: isDigestedFile(name) }).toEqual({ name, digested: true });
    }
    for (const name of ['.terraform.lock.hcl', '.x.tf', 'plan.tfplan', 'terraform.tfstate', 'terraform.tfstate.backup', 'errored.tfstate', 'crash.log', 'app-roles.removals', 'moves.tf.json.writing-123']) {
      expect({ name, digested: isDigestedFile(name) }).toEqual({ name, digested: false });
    }
    const dir = path.join(synthesizePlatform().outdir, 'stacks', 'ci-access');
    const before = stackDigest(dir).digest;
    fs.writeFileSync(path.join(dir, '#team_override.tf.json'), '{}');
    expect(stackDigest(dir).digest).not.toBe(before);
  });

  it('the bytes and the name of each file count: the same bytes under two names are two different digests', () => {
    const dir = path.dirname(tempOutdir());
    fs.writeFileSync(path.join(dir, 'a.tf.json'), '{}');
    const a = stackDigest(dir).digest;
    fs.renameSync(path.join(dir, 'a.tf.json'), path.join(dir, 'b.tf.json'));
    expect(stackDigest(dir).digest).not.toBe(a);
  });

  it('dependencies come from cdktf\'s manifest, by stack name', () => {
    const outdir = synthesizePlatform(platformConfig, (p, app) => {
      const shard = new SecretStoreStack(app, 'app-roles-a', { settings: p.appRoles.settings });
      shard.addDependency(p.appRoles);
    }).outdir;
    const stacks = readStackDigests(outdir);
    expect(stacks.get('app-roles-a')!.dependencies).toEqual(['app-roles']);
    expect(stacks.get('app-roles')!.dependencies).toEqual([]);
  });

  it('a manifest that names no stacks, a working directory outside the output or an unknown dependency is refused, every problem at once', () => {
    const outdir = tempOutdir();
    fs.mkdirSync(outdir);
    fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ stacks: {
      a: { workingDirectory: '../elsewhere', dependencies: [] },
      b: { workingDirectory: 'stacks/b', dependencies: ['nope'] },
    } }));
    fs.mkdirSync(path.join(outdir, 'stacks', 'b'), { recursive: true });
    expect(() => readStackDigests(outdir)).toThrow(
      `${path.join(outdir, 'manifest.json')}: stack "a": "workingDirectory" must be a relative path inside the output; stack "b": depends on "nope", not a stack of this output`,
    );
    fs.writeFileSync(path.join(outdir, 'manifest.json'), '{}');
    expect(() => readStackDigests(outdir)).toThrow('no "stacks" object');
  });
});

/** Stacks for the selection: name → [digest, dependencies]. */
function stacks(spec: Record<string, [string, string[]?]>): Map<string, StackDigest> {
  return new Map(Object.entries(spec).map(([name, [digest, dependencies = []]]) => [name, { name, digest, files: ['cdk.tf.json'], dependencies }]));
}

describe('The stacks a change selects: changed and added ones, and every stack that depends on them, dependencies first', () => {
  const base = stacks({ 'app-roles': ['m1'], 'app-roles-a': ['a1', ['app-roles']], 'app-roles-b': ['b1', ['app-roles']], 'ci-access': ['c1'], people: ['p1'] });

  it('nothing changed: nothing selected', () => {
    const selection = selectChangedStacks(base, base);
    expect(selection.selected).toEqual([]);
    expect(selection.stacks.every((s) => s.change === 'unchanged' && !s.selected)).toBe(true);
  });

  it('one shard changed: that shard only', () => {
    const head = stacks({ 'app-roles': ['m1'], 'app-roles-a': ['a2', ['app-roles']], 'app-roles-b': ['b1', ['app-roles']], 'ci-access': ['c1'], people: ['p1'] });
    expect(selectChangedStacks(base, head).selected).toEqual(['app-roles-a']);
  });

  it('the mount stack changed: every shard too, after it, each saying through which stack', () => {
    const head = stacks({ 'app-roles': ['m2'], 'app-roles-a': ['a1', ['app-roles']], 'app-roles-b': ['b1', ['app-roles']], 'ci-access': ['c1'], people: ['p1'] });
    const selection = selectChangedStacks(base, head);
    expect(selection.selected).toEqual(['app-roles', 'app-roles-a', 'app-roles-b']);
    expect(selection.stacks.find((s) => s.name === 'app-roles-b')).toMatchObject({ change: 'unchanged', selected: true, via: ['app-roles'], baseDigest: 'b1', headDigest: 'b1' });
    expect(selection.stacks.find((s) => s.name === 'app-roles')).toMatchObject({ change: 'changed', selected: true, via: [], baseDigest: 'm1', headDigest: 'm2' });
  });

  it('the closure is transitive and the order puts every stack after its dependencies, whatever the names', () => {
    // z <- m <- a, and b alone; z changed.
    const before = stacks({ z: ['z1'], m: ['m1', ['z']], a: ['a1', ['m']], b: ['b1'] });
    const after = stacks({ z: ['z2'], m: ['m1', ['z']], a: ['a1', ['m']], b: ['b1'] });
    const selection = selectChangedStacks(before, after);
    expect(selection.selected).toEqual(['z', 'm', 'a']);
    expect(selection.stacks.map((s) => s.name)).toEqual(['b', 'z', 'm', 'a']);
    expect(selection.stacks.find((s) => s.name === 'a')!.via).toEqual(['z']);
  });

  it('an added stack is selected with its dependents; a removed one is reported apart and never selected', () => {
    const head = stacks({ 'app-roles': ['m1'], 'app-roles-a': ['a1', ['app-roles']], 'app-roles-c': ['n1', ['app-roles']], 'ci-access': ['c1'] });
    const selection = selectChangedStacks(base, head);
    expect(selection.selected).toEqual(['app-roles-c']);
    expect(selection.removed).toEqual(['app-roles-b', 'people']);
    expect(selection.stacks.slice(-2)).toEqual([
      { name: 'app-roles-b', change: 'removed', baseDigest: 'b1', dependencies: [], selected: false, via: [] },
      { name: 'people', change: 'removed', baseDigest: 'p1', dependencies: [], selected: false, via: [] },
    ]);
    expect(selection.stacks.find((s) => s.name === 'app-roles-c')).toMatchObject({ change: 'added', selected: true });
    expect(selection.stacks.find((s) => s.name === 'app-roles-c')!.baseDigest).toBeUndefined();
  });

  it('a dependency cycle (a hand-edited manifest) is refused, naming the stacks', () => {
    const cycle = stacks({ a: ['1', ['b']], b: ['1', ['a']], c: ['1'] });
    expect(() => selectChangedStacks(cycle, cycle)).toThrow('the stacks "a", "b" cannot be ordered: their dependencies form a cycle');
  });
});
