import { IConstruct } from 'constructs';

/**
 * What one synthesis of an app keeps, by app root: from its validation to its last written file the
 * construct tree does not change, so a result computed from the tree (a pipeline role's completed
 * policy, the CI login template's jobs, the artifacts of a construct) holds for the whole round.
 * cdktf reads each resource on two passes, and validation, the platform rules and the renderers ask
 * for the same results again: computed once, they cost what the tree costs, not a multiple of it.
 */
const rounds = new WeakMap<IConstruct, Map<object, Map<string, unknown>>>();

/**
 * Runs `synthesize` as one synthesis round of the app whose root is `root`: results kept with
 * {@link oncePerSynthesis} during it are dropped when it ends, so the next synthesis (after more
 * declarations) computes them again.
 */
export function inSynthesisRound<T>(root: IConstruct, synthesize: () => T): T {
  const outer = rounds.get(root);
  if (outer) return synthesize();
  rounds.set(root, new Map());
  try {
    return synthesize();
  } finally {
    rounds.delete(root);
  }
}

/**
 * The result of `compute` for (`owner`, `what`), computed once per synthesis round of `owner`'s app
 * and kept until the round ends; outside a round (a construct asked directly, in a test or a
 * report), computed on every call.
 */
export function oncePerSynthesis<T>(owner: IConstruct, what: string, compute: () => T): T {
  const round = rounds.get(owner.node.root);
  if (!round) return compute();
  let kept = round.get(owner);
  if (!kept) {
    kept = new Map();
    round.set(owner, kept);
  }
  if (kept.has(what)) return kept.get(what) as T;
  const value = compute();
  kept.set(what, value);
  return value;
}

/** True while a synthesis round of `c`'s app runs ({@link inSynthesisRound}). */
export function isInSynthesisRound(c: IConstruct): boolean {
  return rounds.has(c.node.root);
}
