import { PolicyValue } from './policy-item';

/** One `<number><unit>` term of a Go duration, with the unit's length in seconds. */
const GO_DURATION_TERM = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
const UNIT_SECONDS: Readonly<Record<string, number>> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, 'μs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** Go's `time.ParseDuration` in seconds, or undefined for a text it refuses. */
function goDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  while (rest !== '') {
    const term = GO_DURATION_TERM.exec(rest);
    if (!term || (term[1] === '' && (term[2] ?? '') === '')) return undefined;
    total += Number(`${term[1] || '0'}.${term[2] || '0'}`) * UNIT_SECONDS[term[3]];
    rest = rest.slice(term[0].length);
  }
  return sign * total;
}

/**
 * A wrapping TTL as the store reads it (`parseutil.ParseDurationSecond` on the value the HCL 1
 * decoder gives): a number of seconds (a fraction truncated), or a string that is an integer
 * number of seconds, `<n>d` days, or a Go duration (`90m`, `1h30m`); `""` is 0.
 * @returns seconds, or undefined when the store refuses the value
 */
export function parseDurationSeconds(value: PolicyValue | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : undefined;
  if (typeof value !== 'string') return undefined;
  if (value === '') return 0;
  if (/^[+-]?\d+$/.test(value)) return Number(value);
  if (value.endsWith('d')) return /^[+-]?\d+$/.test(value.slice(0, -1)) ? Number(value.slice(0, -1)) * 86400 : undefined;
  return goDuration(value);
}

/** RFC 3339 with or without fractional seconds, as Go's `time.Parse(time.RFC3339Nano, ...)` takes it. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * A rule's `expiration` as OpenBao reads it (the HCL 1 decoder turns a string or an integer into
 * a string, then `parseutil.ParseAbsoluteTime`): RFC 3339 (`2030-01-01T00:00:00Z`) or Unix epoch
 * seconds (`1893456000`); an empty string is no expiration.
 * @returns the time, null for no expiration, undefined when the store refuses the text
 */
export function parseExpiration(text: string): Date | null | undefined {
  if (text === '') return null;
  if (RFC3339.test(text)) {
    const at = new Date(text);
    return Number.isNaN(at.getTime()) ? undefined : at;
  }
  if (/^[+-]?\d+$/.test(text)) {
    const seconds = BigInt(text);
    // strconv.ParseInt(.., 10, 64): out of range is an error.
    if (seconds > 9223372036854775807n || seconds < -9223372036854775808n) return undefined;
    const ms = Number(seconds) * 1000;
    // Beyond what a JavaScript date holds: far past or far future.
    return Math.abs(ms) > 8.64e15 ? new Date(ms > 0 ? 8.64e15 : -8.64e15) : new Date(ms);
  }
  return undefined;
}
