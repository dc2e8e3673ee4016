import { ValidationProblem } from './validation-problem';

/** How to make a Duration, in words: the rule of a value of another type where a Duration is expected. */
export const DURATION_HINT = "a Duration (Duration.minutes(45), Duration.hours(12), Duration.parse('12h'))";

/** Any value as text, never an exception (`String` throws for `{ toString: 5 }` and objects without a prototype). */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/**
 * A span of time with whole-second resolution, as the store's TTL fields take it.
 *
 * Use the factories (`Duration.hours(12)`) or `Duration.parse('12h')`.
 */
export class Duration {
  /** A duration of `n` seconds. */
  static seconds(n: number): Duration {
    return Duration.of(n, 1);
  }

  /** A duration of `n` minutes. */
  static minutes(n: number): Duration {
    return Duration.of(n, 60);
  }

  /** A duration of `n` hours. */
  static hours(n: number): Duration {
    return Duration.of(n, 3600);
  }

  /** `n` units of `unitSeconds`; a value that is not a number (a JSON config) stays unparsed, for problems() to report. */
  private static of(n: unknown, unitSeconds: number): Duration {
    return typeof n === 'number' ? new Duration(n * unitSeconds) : new Duration(NaN, asText(n));
  }

  /**
   * Parses the store's notation: `0`, `90s`, `45m`, `12h`, `1h30m`, `7d`.
   *
   * Text that is not a duration gives an invalid Duration (never an exception), so that the
   * construct it is given to reports it with every other problem of the synthesis.
   */
  static parse(text: string): Duration {
    const trimmed = asText(text).trim();
    if (/^\d+$/.test(trimmed)) return new Duration(Number(trimmed));
    const parts = [...trimmed.matchAll(/(\d+)([smhd])/g)];
    if (parts.length === 0 || parts.map((p) => p[0]).join('') !== trimmed) return new Duration(NaN, asText(text));
    return new Duration(parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_SECONDS[p[2]], 0));
  }

  private constructor(
    private readonly totalSeconds: number,
    /** The text given to {@link parse} when it was not a duration. */
    private readonly unparsedText?: string,
  ) {}

  /**
   * Problems: text that is not a duration, or a value that is not a whole, non-negative number of
   * seconds; and, when `max` is given, a duration above it (`why` says why the bound exists).
   */
  problems(field: string, max?: { limit: Duration; why: string }): ValidationProblem[] {
    if (this.unparsedText !== undefined) {
      return [new ValidationProblem(field, this.unparsedText, 'is not a duration: use e.g. 45m, 12h, 1h30m or a number of seconds')];
    }
    if (!this.isValid) return [new ValidationProblem(field, this.toString(), 'must be a whole, non-negative number of seconds')];
    if (max && this.totalSeconds > max.limit.totalSeconds) {
      return [new ValidationProblem(field, this.toString(), `must be at most ${max.limit}: ${max.why}`)];
    }
    return [];
  }

  /** The duration in whole seconds (what the provider's `*_ttl` fields take). */
  toSeconds(): number {
    return this.totalSeconds;
  }

  /** True when the value is a whole, non-negative number of seconds. */
  get isValid(): boolean {
    // Safe integers only: 1e300 is an integer to JavaScript, and no TTL field of the store.
    return Number.isSafeInteger(this.totalSeconds) && this.totalSeconds >= 0;
  }

  /** Compact human form, `12h`, `1h30m`, `0s`. */
  toString(): string {
    if (this.unparsedText !== undefined) return this.unparsedText;
    let rest = this.totalSeconds;
    if (!this.isValid) return `${rest}s`;
    if (rest === 0) return '0s';
    let text = '';
    for (const unit of ['d', 'h', 'm', 's']) {
      const size = UNIT_SECONDS[unit];
      if (rest >= size) {
        text += `${Math.floor(rest / size)}${unit}`;
        rest %= size;
      }
    }
    return text;
  }

  /** Serialised as its text form, so that problems and reports read `12h`, not an object. */
  toJSON(): string {
    return this.toString();
  }
}
