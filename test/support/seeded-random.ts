/**
 * A seeded pseudo-random generator for property tests (mulberry32): the same seed gives the same
 * cases. The seed comes from `SECRETSTORE_IAC_PROPERTY_SEED` or the clock, and is printed, so that a
 * failing run can be repeated exactly: `SECRETSTORE_IAC_PROPERTY_SEED=<seed> npx jest ...`.
 */
export class SeededRandom {
  /** A generator seeded from the environment or the clock; prints the seed with the suite's name. */
  static fromEnvironment(suite: string): SeededRandom {
    const given = process.env.SECRETSTORE_IAC_PROPERTY_SEED;
    const seed = given !== undefined && /^\d+$/.test(given) ? Number(given) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
    process.stdout.write(`${suite}: property seed ${seed} (repeat with SECRETSTORE_IAC_PROPERTY_SEED=${seed})\n`);
    return new SeededRandom(seed);
  }

  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** One element of `items`. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /**
   * A string of up to `maxLength` characters, mostly the ones that end comments, strings, lines and
   * blocks in the output formats: quotes, backslashes, `#`, `${`, `%{`, `{{`, `}}`, braces, line
   * feeds, carriage returns, NEL U+0085, U+2028, U+2029, other controls, and ordinary letters.
   */
  hostileString(maxLength = 24): string {
    const pieces = [
      'a', 'Z', '0', '-', '_', '.', '/', ' ', '\t', '\n', '\r', '\r\n', '\u0085', '\u2028', '\u2029', '\u0000', '\u001b', '\u007f',
      '\u00a0', '\ufeff', '"', "'", '`', '\\', '#', '$', '${', '%{', '{{', '}}', '{', '}', '[', ']', ':', ',', '*', '+', '&', '|',
      ';', '$(', ')', '!', '?', '=', '-', '- ', ': ', '---', '...', 'path "sys/*" { capabilities = ["sudo"] }', '\nkey: value', 'é', '😀',
    ];
    const n = this.int(maxLength + 1);
    let s = '';
    while (s.length < n) s += this.pick(pieces);
    return s;
  }
}
