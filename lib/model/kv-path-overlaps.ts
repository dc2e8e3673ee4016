import { KvPath } from './kv-path';

/**
 * Every pair of `paths` that overlap ({@link KvPath.overlaps}), as `[later, earlier]` indices, for
 * each later index ascending and then each earlier index ascending: the order of comparing every
 * pair, without comparing every pair.
 *
 * Comparing all pairs made synthesis quadratic in the number of applications (two thirds of the time
 * at 5,000). Paths on one mount whose logical path is plain text, the regular case, overlap exactly
 * when the logical paths are equal or one is a subtree above the other; those are found through an
 * index of logical paths by mount, in time linear in the paths times their depth. Every other pair
 * that could meet (nested mounts, a logical path starting with a KV v2 API prefix, which validation
 * refuses, or one that is not text) is still compared with {@link KvPath.overlaps}.
 */
export function overlappingPairs(paths: readonly KvPath[]): [number, number][] {
  const earlierByLater = new Map<number, Set<number>>();
  const add = (i: number, j: number) => {
    if (i === j) return;
    const [later, earlier] = i > j ? [i, j] : [j, i];
    let set = earlierByLater.get(later);
    if (!set) earlierByLater.set(later, (set = new Set()));
    set.add(earlier);
  };

  // Regular paths, by mount path, then by logical path.
  const byMount = new Map<string, Map<string, number[]>>();
  const irregular: number[] = [];
  paths.forEach((p, i) => {
    if (!p.isPlainLogicalPath) {
      irregular.push(i);
      return;
    }
    const mount = String(p.mount.path);
    let byLogical = byMount.get(mount);
    if (!byLogical) byMount.set(mount, (byLogical = new Map()));
    const same = byLogical.get(p.logical);
    if (same) same.push(i);
    else byLogical.set(p.logical, [i]);
  });

  // One mount: the same logical path, or a subtree above it.
  for (const byLogical of byMount.values()) {
    for (const [logical, indices] of byLogical) {
      indices.forEach((i, n) => indices.slice(0, n).forEach((j) => add(i, j)));
      const segments = logical.split('/');
      for (let depth = 1; depth < segments.length; depth++) {
        const above = byLogical.get(segments.slice(0, depth).join('/'));
        above?.filter((j) => paths[j].subtree).forEach((j) => indices.forEach((i) => add(i, j)));
      }
    }
  }

  // Nested mounts (`secret` and `secret/data`): the API paths may meet; compared pair by pair.
  const mounts = [...byMount.keys()];
  for (const a of mounts) {
    for (const b of mounts) {
      if (a < b && (`${a}/`.startsWith(`${b}/`) || `${b}/`.startsWith(`${a}/`))) {
        const left = [...byMount.get(a)!.values()].flat();
        const right = [...byMount.get(b)!.values()].flat();
        left.forEach((i) => right.forEach((j) => paths[i].overlaps(paths[j]) && add(i, j)));
      }
    }
  }

  // The rest against every path.
  irregular.forEach((i) => paths.forEach((p, j) => i !== j && paths[i].overlaps(p) && add(i, j)));

  return [...earlierByLater.keys()]
    .sort((x, y) => x - y)
    .flatMap((later) => [...earlierByLater.get(later)!].sort((x, y) => x - y).map((earlier): [number, number] => [later, earlier]));
}
