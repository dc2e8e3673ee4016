import { DEAD, PathPatternAutomaton, REQUEST_PATH_SHAPE } from './path-pattern-automaton';

/**
 * How many classes of request paths one search may tell apart before it gives up with an error
 * (never with a partial answer). Real policies stay far below: their rules share literal prefixes.
 */
export const MAX_PATH_CLASSES = 100_000;

/** Characters tried, in order, for "any character no pattern names". */
const OTHER_CANDIDATES = [...'wxyzqjkvuabcdefghilmnoprst0123456789'];

/** A class of request paths: every path in it matches the same patterns. */
export interface PathClass {
  /** Its shortest path (the first met in breadth-first order: shortest, then by character order). */
  readonly path: string;
  /** True when its paths end with `/`. */
  readonly endsWithSlash: boolean;
  /** True when its paths are clean: no empty segment but a last one, no `.` or `..` segment. */
  readonly clean: boolean;
}

/**
 * Visits every class of non-empty request paths that `patterns` tell apart, in
 * breadth-first order: two paths are in one class when each pattern matches both or neither, and
 * each pattern's automaton is in the same state after both (so their extensions fall in one class
 * too). The classes are the states of the product of the patterns' automata reachable from the
 * empty path (with {@link REQUEST_PATH_SHAPE}, which tells clean paths from others), over the
 * characters the patterns name, `/`, `.` and one character standing for every
 * other; so the visit covers every path, of any length, and is finite.
 *
 * A state where, for some group of `required`, every pattern of the group is dead is not explored:
 * no path from it is matched by that group (a search inside an invariant's paths for a rule that
 * grants a capability needs both).
 *
 * `forget`, when given, may set states to {@link DEAD} where they no longer change what the caller
 * decides (a rule that can never govern again): fewer classes, each still deciding alike.
 * @param required groups of indices into `patterns`
 * @throws Error when more than {@link MAX_PATH_CLASSES} classes would be visited
 */
export function visitPathClasses(
  patterns: readonly PathPatternAutomaton[],
  required: ReadonlyArray<readonly number[]>,
  visit: (c: PathClass) => void,
  forget?: (states: number[]) => void,
): void {
  const named = new Set(patterns.flatMap((p) => p.literals()));
  const other = OTHER_CANDIDATES.find((c) => !named.has(c)) ?? firstUnnamed(named);
  const alive = (states: readonly number[]) => required.every((group) => group.some((i) => states[i] !== DEAD));
  const start = patterns.map((p) => p.start);
  forget?.(start);
  if (!alive(start)) return;
  const seen = new Set<string>([keyOf(REQUEST_PATH_SHAPE.start, start)]);
  let queue: Array<{ shape: number; states: number[]; path: string }> = [{ shape: REQUEST_PATH_SHAPE.start, states: start, path: '' }];
  while (queue.length > 0) {
    const next: typeof queue = [];
    for (const { shape, states, path } of queue) {
      if (REQUEST_PATH_SHAPE.accepts(shape)) visit({ path, endsWithSlash: REQUEST_PATH_SHAPE.endsWithSlash(shape), clean: REQUEST_PATH_SHAPE.clean(shape) });
      // Every character outside these leads where `other` does.
      const chars = new Set<string>(['/', '.']);
      patterns.forEach((p, i) => {
        const c = p.literalAt(states[i]);
        if (c !== undefined) chars.add(c);
      });
      for (const char of [other, ...[...chars].sort(compareCodePoints)]) {
        const nextShape = REQUEST_PATH_SHAPE.step(shape, char);
        if (nextShape === DEAD) continue;
        const nextStates = patterns.map((p, i) => p.step(states[i], char));
        forget?.(nextStates);
        if (!alive(nextStates)) continue;
        const key = keyOf(nextShape, nextStates);
        if (seen.has(key)) continue;
        seen.add(key);
        if (seen.size > MAX_PATH_CLASSES) {
          throw new Error(`the rules tell apart more than ${MAX_PATH_CLASSES} kinds of request path, too many to search; narrow the invariant's paths or split the policies`);
        }
        next.push({ shape: nextShape, states: nextStates, path: path + char });
      }
    }
    queue = next;
  }
}

function keyOf(shape: number, states: readonly number[]): string {
  return `${shape}:${states.join(',')}`;
}

function compareCodePoints(a: string, b: string): number {
  return a.codePointAt(0)! - b.codePointAt(0)!;
}

/** A letter no pattern names, when every usual one is named. */
function firstUnnamed(named: ReadonlySet<string>): string {
  for (let cp = 0x4e00; ; cp++) {
    const c = String.fromCodePoint(cp);
    if (!named.has(c)) return c;
  }
}
