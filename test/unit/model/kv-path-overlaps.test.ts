import { KvMount } from '../../../lib/model/kv-mount';
import { KvPath } from '../../../lib/model/kv-path';
import { overlappingPairs } from '../../../lib/model/kv-path-overlaps';

/** What SSI-R5 compared before the index: every later path against every earlier one, in order. */
function everyPair(paths: readonly KvPath[]): [number, number][] {
  return paths.flatMap((a, i) => paths.slice(0, i).flatMap((b, j): [number, number][] => (a.overlaps(b) ? [[i, j]] : [])));
}

/** A small deterministic generator (no Math.random: a failure must reproduce). */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const MOUNTS = [new KvMount('secret', 2), new KvMount('secret', 1), new KvMount('secret/data', 2), new KvMount('kv', 2), new KvMount('secretx', 2)];
// Segments that make paths meet: shared prefixes, a KV v2 API prefix, an empty segment.
const SEGMENTS = ['acme', 'dev', 'app', 'app-x', 'data', 'metadata', 'a', ''];

function randomPaths(seed: number, count: number): KvPath[] {
  const next = generator(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  return Array.from({ length: count }, () => {
    const logical = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(SEGMENTS)).join('/');
    return next() < 0.5 ? KvPath.subtree(pick(MOUNTS), logical) : KvPath.secret(pick(MOUNTS), logical);
  });
}

describe('overlappingPairs: the pairs KvPath.overlaps finds, without comparing every pair', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])('gives exactly the pairs of comparing every pair, in the same order (seed %i, 60 paths)', (seed) => {
    const paths = randomPaths(seed, 60);
    const expected = everyPair(paths);
    expect(expected.length).toBeGreaterThan(0);
    expect(overlappingPairs(paths)).toEqual(expected);
  });

  it('finds a subtree above a secret, the same secret twice, and not a sibling sharing a name prefix', () => {
    const mount = KvMount.DEFAULT;
    const paths = [KvPath.subtree(mount, 'acme/dev/app'), KvPath.secret(mount, 'acme/dev/app/db'), KvPath.secret(mount, 'acme/dev/app-x'), KvPath.secret(mount, 'acme/dev/app-x')];
    expect(overlappingPairs(paths)).toEqual([
      [1, 0],
      [3, 2],
    ]);
  });

  it('compares paths on nested mounts (secret and secret/data) through their store API paths', () => {
    const paths = [KvPath.secret(new KvMount('secret', 2), 'app'), KvPath.secret(new KvMount('secret/data', 2), 'app')];
    expect(paths[1].overlaps(paths[0])).toBe(true);
    expect(overlappingPairs(paths)).toEqual([[1, 0]]);
  });

  it('a path that is not text is compared like the others and meets nothing', () => {
    const paths = [KvPath.secret(KvMount.DEFAULT, 7 as unknown as string), KvPath.secret(KvMount.DEFAULT, 'a')];
    expect(overlappingPairs(paths)).toEqual([]);
  });
});
