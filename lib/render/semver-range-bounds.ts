/**
 * Whether a comparator set of npm's semver grammar (already checked by `isInstallableRange`'s
 * grammar) admits a version npm would install: the bounds of each comparator intersected, as
 * node-semver reads them (`^0.2.3` is `>=0.2.3 <0.3.0-0`, `1.x` is `>=1.0.0 <2.0.0-0`, `>*` and `<*`
 * admit nothing), and a release version (no prerelease tag) looked for between them; a prerelease
 * only where a comparator names one on the same major.minor.patch (node-semver's rule for
 * prereleases). `>=0.3.0 <0.2.0` or `>1.2.3 <1.2.4` admit none: npm would install nothing.
 */

/** A version: major, minor, patch, prerelease identifiers (empty for a release). */
interface Version {
  readonly tuple: readonly [number, number, number];
  readonly pre: readonly string[];
}

/** One side of an interval: the version, and whether it is included. */
interface Bound {
  readonly at: Version;
  readonly inclusive: boolean;
}

/** The versions a comparator admits: undefined bounds are open ends; `none` admits nothing. */
interface Interval {
  readonly lower?: Bound;
  readonly upper?: Bound;
  readonly none?: boolean;
}

const ZERO: Version = { tuple: [0, 0, 0], pre: [] };

function compareIdentifiers(a: string, b: string): number {
  const an = /^[0-9]+$/.test(a);
  const bn = /^[0-9]+$/.test(b);
  if (an && bn) return Number(a) - Number(b);
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Semver's order: by major, minor, patch, then a prerelease before its release, identifiers compared one by one. */
function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.tuple[i] !== b.tuple[i]) return a.tuple[i] - b.tuple[i];
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const c = compareIdentifiers(a.pre[i], b.pre[i]);
    if (c !== 0) return c;
  }
  return a.pre.length - b.pre.length;
}

const isX = (part: string | undefined) => part === undefined || part === 'x' || part === 'X' || part === '*';

/** A partial version's parts (`v1.2.x-rc.1+b` → ['1', '2', 'x'], ['rc', '1']); build metadata dropped. */
function parts(text: string): { readonly numbers: readonly (string | undefined)[]; readonly pre: readonly string[] } {
  const [main, ...rest] = text.replace(/^v/, '').replace(/\+.*$/, '').split('-');
  const pre = rest.length > 0 ? rest.join('-').split('.') : [];
  const given = main.split('.');
  // Past a wildcard nothing counts (`0.x.12` is `0.x`).
  const wild = given.findIndex((p) => isX(p));
  const numbers = [0, 1, 2].map((i) => (wild >= 0 && i >= wild ? undefined : given[i]));
  return { numbers, pre: wild >= 0 ? [] : pre };
}

/** The version a partial one starts at (`1.2` → 1.2.0). */
function floor(numbers: readonly (string | undefined)[], pre: readonly string[]): Version {
  return { tuple: [Number(isX(numbers[0]) ? 0 : numbers[0]), Number(isX(numbers[1]) ? 0 : numbers[1]), Number(isX(numbers[2]) ? 0 : numbers[2])], pre };
}

/** The first version past a partial one (`1.2` → 1.3.0-0, `1` → 2.0.0-0), undefined for `*`. */
function pastPartial(numbers: readonly (string | undefined)[]): Version | undefined {
  if (isX(numbers[0])) return undefined;
  const [a, b] = [Number(numbers[0]), Number(numbers[1])];
  if (isX(numbers[1])) return { tuple: [a + 1, 0, 0], pre: ['0'] };
  return { tuple: [a, b + 1, 0], pre: ['0'] };
}

/** The interval one comparator admits (`^1.2.3`, `>=1.2`, `1.x`, `<*`). */
function comparatorInterval(comparator: string): Interval {
  const op = /^(?:[<>]=?|=|~|\^)?/.exec(comparator)![0];
  const { numbers, pre } = parts(comparator.slice(op.length));
  const partial = isX(numbers[0]) || isX(numbers[1]) || isX(numbers[2]);
  const at = floor(numbers, pre);
  const from = (v: Version, inclusive = true): Bound => ({ at: v, inclusive });
  const before = (v: Version | undefined): Interval['upper'] => (v === undefined ? undefined : { at: v, inclusive: false });
  switch (op) {
    case '':
    case '=':
      return partial ? { lower: from(at), upper: before(pastPartial(numbers)) } : { lower: from(at), upper: from(at) };
    case '^': {
      if (isX(numbers[0])) return {};
      const [a, b, c] = at.tuple;
      const next: Version =
        a > 0 || isX(numbers[1]) ? { tuple: [a + 1, 0, 0], pre: ['0'] } : b > 0 || isX(numbers[2]) ? { tuple: [0, b + 1, 0], pre: ['0'] } : { tuple: [0, 0, c + 1], pre: ['0'] };
      return { lower: from(at), upper: before(next) };
    }
    case '~': {
      if (isX(numbers[0])) return {};
      const [a, b] = at.tuple;
      return { lower: from(at), upper: before(isX(numbers[1]) ? { tuple: [a + 1, 0, 0], pre: ['0'] } : { tuple: [a, b + 1, 0], pre: ['0'] }) };
    }
    case '>':
      if (isX(numbers[0])) return { none: true };
      return partial ? { lower: from(pastPartial(numbers)!) } : { lower: from(at, false) };
    case '>=':
      return isX(numbers[0]) ? {} : { lower: from(at) };
    case '<':
      if (isX(numbers[0])) return { none: true };
      return { upper: before(partial ? { ...at, pre: ['0'] } : at) };
    default: // '<='
      if (isX(numbers[0])) return {};
      return partial ? { upper: before(pastPartial(numbers)) } : { upper: from(at) };
  }
}

/** Whether `v` is within `interval`. */
function within(v: Version, interval: Interval): boolean {
  if (interval.none) return false;
  const { lower, upper } = interval;
  if (lower !== undefined) {
    const c = compareVersions(v, lower.at);
    if (c < 0 || (c === 0 && !lower.inclusive)) return false;
  }
  if (upper !== undefined) {
    const c = compareVersions(v, upper.at);
    if (c > 0 || (c === 0 && !upper.inclusive)) return false;
  }
  return true;
}

/**
 * Whether the comparator set `set` (comparators separated by spaces, or a hyphen range `A - B`)
 * admits a version npm would install (see the file's comment).
 */
export function comparatorSetAdmitsAVersion(set: string): boolean {
  const hyphen = /^(\S+) - (\S+)$/.exec(set);
  // `A - B` is `>=A <=B`, a partial B reaching to its end (`<=1.2` is `<1.3.0-0`).
  const comparators = hyphen ? [`>=${hyphen[1]}`, `<=${hyphen[2]}`] : set.split(/ +/);
  const intervals = comparators.map(comparatorInterval);
  if (intervals.some((i) => i.none)) return false;
  // The lowest version each lower bound allows is a candidate: the first release at or past it, and,
  // where the bound itself names a prerelease, that prerelease (the only prereleases semver admits).
  const candidates: Version[] = [ZERO];
  for (const i of intervals) {
    const l = i.lower;
    if (l === undefined) continue;
    const [a, b, c] = l.at.tuple;
    candidates.push(l.at.pre.length > 0 ? { tuple: [a, b, c], pre: [] } : l.inclusive ? l.at : { tuple: [a, b, c + 1], pre: [] });
    if (l.at.pre.length > 0) candidates.push(l.inclusive ? l.at : { tuple: [a, b, c], pre: [...l.at.pre, '0'] });
  }
  const prereleaseTuples = comparators.map((c) => parts(c.replace(/^(?:[<>]=?|=|~|\^)?/, ''))).filter((p) => p.pre.length > 0).map((p) => floor(p.numbers, []).tuple.join('.'));
  return candidates.some((v) => (v.pre.length === 0 || prereleaseTuples.includes(v.tuple.join('.'))) && intervals.every((i) => within(v, i)));
}

