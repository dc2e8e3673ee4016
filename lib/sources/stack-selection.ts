import { compareStrings } from '../private/compare-strings';
import { StackDigest } from './stack-digest';

/** How a stack's content compares between BASE and HEAD. */
export type StackChange = 'added' | 'changed' | 'unchanged' | 'removed';

/** One stack of a {@link StackSelection}. */
export interface SelectedStack {
  /** Stack name. */
  readonly name: string;
  /** Its content's change from BASE to HEAD. */
  readonly change: StackChange;
  /** Its digest in BASE; absent for an added stack. */
  readonly baseDigest?: string;
  /** Its digest in HEAD; absent for a removed stack. */
  readonly headDigest?: string;
  /** The stacks it depends on in HEAD, sorted. */
  readonly dependencies: readonly string[];
  /** True when the pipeline plans and applies it: its content changed, or a stack it depends on (transitively) did. */
  readonly selected: boolean;
  /** For a stack selected only through its dependencies: the changed stacks it depends on, sorted. */
  readonly via: readonly string[];
}

/** Which stacks a change from BASE to HEAD touches. */
export interface StackSelection {
  /** Every stack of HEAD in dependency order (dependencies first, then by name), then the removed stacks by name. */
  readonly stacks: readonly SelectedStack[];
  /** The stacks to plan and apply, in dependency order. */
  readonly selected: readonly string[];
  /** The stacks of BASE that HEAD no longer has, by name: not selected; `secretstore-iac moves` writes their directory for the retired-stacks jobs. */
  readonly removed: readonly string[];
}

/**
 * The stacks of HEAD whose content differs from BASE (added ones included), plus every stack that
 * depends on one of them, directly or not (a change to the mount stack selects every shard), in
 * dependency order: a stack comes after every stack it depends on, ties by name.
 * @throws Error naming the stacks of a dependency cycle (cdktf refuses one; a hand-edited manifest may hold one)
 */
export function selectChangedStacks(base: ReadonlyMap<string, StackDigest>, head: ReadonlyMap<string, StackDigest>): StackSelection {
  const order = dependencyOrder(head);
  const changeOf = (name: string): StackChange => {
    const before = base.get(name);
    if (!before) return 'added';
    return before.digest === head.get(name)!.digest ? 'unchanged' : 'changed';
  };
  // Changed stacks reach their dependents; the order lets one pass carry them all along.
  const reachedFrom = new Map<string, Set<string>>();
  for (const name of order) {
    const via = new Set<string>();
    for (const dependency of head.get(name)!.dependencies) {
      if (changeOf(dependency) !== 'unchanged') via.add(dependency);
      reachedFrom.get(dependency)!.forEach((v) => via.add(v));
    }
    reachedFrom.set(name, via);
  }
  const stacks: SelectedStack[] = order.map((name) => {
    const change = changeOf(name);
    const via = change === 'unchanged' ? [...reachedFrom.get(name)!].sort(compareStrings) : [];
    return {
      name,
      change,
      ...(base.has(name) ? { baseDigest: base.get(name)!.digest } : {}),
      headDigest: head.get(name)!.digest,
      dependencies: head.get(name)!.dependencies,
      selected: change !== 'unchanged' || via.length > 0,
      via,
    };
  });
  const removed = [...base.keys()].filter((name) => !head.has(name)).sort(compareStrings);
  for (const name of removed) {
    stacks.push({ name, change: 'removed', baseDigest: base.get(name)!.digest, dependencies: [], selected: false, via: [] });
  }
  return { stacks, selected: stacks.filter((s) => s.selected).map((s) => s.name), removed };
}

/** The stacks in dependency order: each after those it depends on, the first ready by name. */
function dependencyOrder(stacks: ReadonlyMap<string, StackDigest>): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const pending = [...stacks.keys()].sort(compareStrings);
  while (pending.length > 0) {
    const next = pending.findIndex((name) => stacks.get(name)!.dependencies.every((d) => placed.has(d)));
    if (next < 0) throw new Error(`the stacks ${pending.map((n) => JSON.stringify(n)).join(', ')} cannot be ordered: their dependencies form a cycle`);
    const [name] = pending.splice(next, 1);
    order.push(name);
    placed.add(name);
  }
  return order;
}
