/**
 * One broken rule found in a declaration: which field, which value, which rule.
 *
 * Problems are collected, never thrown one by one, so that a synthesis reports every problem of the
 * whole platform at once (the construct path is added by the construct that owns the declaration).
 */
export class ValidationProblem {
  /**
   * @param field the property that is wrong, as the user wrote it (`name`, `boundClaims.project_id`)
   * @param value the offending value
   * @param rule what the value must satisfy, in words
   * @param ruleId a stable rule identifier for cross-construct rules (`SSI-R3`), if any
   */
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly rule: string,
    readonly ruleId?: string,
  ) {}

  /** `field = "value": rule`, the form used in synthesis errors. */
  toString(): string {
    const prefix = this.ruleId ? `${this.ruleId} ` : '';
    // JSON.stringify leaves U+0085, U+2028 and U+2029 raw; escape them so the message stays one line,
    // and the format characters (zero-width, BOM, bidi controls), so that the value shows what it holds.
    const value = displayValue(this.value).replace(
      /[\u0085\u2028\u2029\p{Cf}]/gu,
      // Each UTF-16 unit, as JSON writes a character outside the BMP (U+E0001 as a surrogate pair).
      (c) => c.split('').map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    );
    return `${prefix}${this.field} = ${value}: ${this.rule}`;
  }
}

/**
 * A value as JSON, the way problems show it, for any value a configuration can hold: NaN and
 * Infinity as themselves (JSON would say null), functions and values JSON cannot write (a construct,
 * which refers to itself; a bigint) by their kind, never an exception.
 */
function displayValue(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'function') return '<function>';
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return `<${typeof name === 'string' && name ? name : 'object'}>`;
  }
}
