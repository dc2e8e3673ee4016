import { ValidationProblem } from './validation-problem';

/**
 * Run-time checks of configuration values at the construct boundary.
 *
 * The compiler checks props only in TypeScript code; a configuration loaded from JSON or YAML, or
 * cast with `as any`, reaches the constructs unchecked (`readByCi: 'no'` is truthy, `keys: 'token'`
 * spreads into five keys). Each construct therefore checks its props with these functions before it
 * uses them, normalises a value of the wrong type to a harmless default, and reports the problem with
 * every other problem at synthesis. Maps are read through their own enumerable properties only, so
 * that `constructor` or `valueOf` are names like any other and nothing comes from `Object.prototype`.
 */

/** A check of one value: the problems found, empty when the value is acceptable. */
export type PropCheck = (field: string, value: unknown) => ValidationProblem[];

/** The kind of a value, in words, for messages: `text`, `a number`, `a list`, `null`, `a Duration`. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'text';
    case 'number':
      return Number.isFinite(value) ? 'a number' : `the number ${value}`;
    case 'boolean':
      return 'a boolean';
    case 'undefined':
      return 'nothing';
    case 'function':
      return 'a function';
    case 'object': {
      const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
      return typeof name === 'string' && name !== '' && name !== 'Object' ? `a ${name}` : 'an object';
    }
    default:
      return `a ${typeof value}`;
  }
}

/** True for a map-shaped value: an object that is neither a list nor an instance of a class. */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The value of `key` when it is an own property of `record`, else undefined (never inherited). */
export function ownValue<T>(record: unknown, key: string): T | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  return Object.prototype.hasOwnProperty.call(record, key) ? ((record as Record<string, unknown>)[key] as T) : undefined;
}

/** Own enumerable entries of a map; none for anything that is not a plain object. */
export function ownEntries(record: unknown): [string, unknown][] {
  return isPlainRecord(record) ? Object.keys(record).map((k) => [k, record[k]]) : [];
}

/** `parent.key` for identifier-like keys, `parent["odd key"]` otherwise. */
export function fieldOf(parent: string, key: string): string {
  const name = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return parent === '' ? name.replace(/^\./, '') : `${parent}${name}`;
}

const wrong = (field: string, value: unknown, what: string): ValidationProblem[] => [
  new ValidationProblem(field, value, `must be ${what}, not ${kindOf(value)}`),
];

/** Text (a JavaScript string). */
export const expectString: PropCheck = (field, value) => (typeof value === 'string' ? [] : wrong(field, value, 'text (a string)'));

/** `true` or `false`; `"no"`, `0` and `null` are not booleans. */
export const expectBoolean: PropCheck = (field, value) => (typeof value === 'boolean' ? [] : wrong(field, value, 'true or false'));

/**
 * A finite number: not text (`'8100'`), NaN or Infinity. Whole-number and range checks stay with the
 * construct, which knows why.
 */
export const expectNumber: PropCheck = (field, value) =>
  typeof value === 'number' && Number.isFinite(value) ? [] : wrong(field, value, 'a finite number');

/** A whole number that JavaScript represents exactly. */
export const expectInteger: PropCheck = (field, value) =>
  typeof value === 'number' && Number.isSafeInteger(value)
    ? []
    : typeof value === 'number'
      ? [new ValidationProblem(field, value, 'must be a whole number')]
      : wrong(field, value, 'a whole number');

/** A function. */
export const expectFunction: PropCheck = (field, value) => (typeof value === 'function' ? [] : wrong(field, value, 'a function'));

/** One of the listed values, compared with `===`. */
export function expectEnum(allowed: readonly (string | number)[]): PropCheck {
  return (field, value) =>
    allowed.includes(value as string | number)
      ? []
      : [new ValidationProblem(field, value, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`)];
}

/** An instance of a class (`Duration`, `KvMount`, a construct); `how` says how to make one. */
export function expectInstance(type: { readonly prototype: unknown }, how: string): PropCheck {
  // A class with a private constructor (Duration, JwtKeySource) is still a function at run time.
  const ctor = type as unknown as new () => unknown;
  return (field, value) => (value instanceof ctor ? [] : wrong(field, value, how));
}

/** A list whose every element passes `element` (reported as `field[i]`). */
export function expectArrayOf(element: PropCheck, what = 'a list'): PropCheck {
  return (field, value) => {
    if (!Array.isArray(value)) return wrong(field, value, what);
    return value.flatMap((v, i) => element(`${field}[${i}]`, v));
  };
}

/** A list of text: `keys: 'token'` is text, not a list of one key. */
export const expectStringArray: PropCheck = expectArrayOf(expectString, 'a list of text');

/** A map (plain object) whose every own value passes `entry` (reported as `field.key`). */
export function expectRecord(entry?: PropCheck, what = 'an object of names to values'): PropCheck {
  return (field, value) => {
    if (!isPlainRecord(value)) return wrong(field, value, what);
    return entry ? ownEntries(value).flatMap(([k, v]) => entry(fieldOf(field, k), v)) : [];
  };
}

/** Text, or a list of text (`string | readonly string[]`, as bound claims take). */
export const expectStringOrStringArray: PropCheck = (field, value) =>
  typeof value === 'string' ? [] : Array.isArray(value) ? expectStringArray(field, value) : wrong(field, value, 'text or a list of text');

/** `undefined` (left out) or a value that passes `check`; `null` is not "left out". */
export function optional(check: PropCheck): PropCheck {
  return (field, value) => (value === undefined ? [] : check(field, value));
}

/** The checks of a props interface, one per field. */
export type PropsSchema = Readonly<Record<string, PropCheck>>;

/**
 * An object with the fields of `schema`: each own field checked, and a field the schema does not
 * know reported (a misspelt `readbyCi: false` would otherwise be ignored, and the default granted).
 */
export function expectShape(schema: PropsSchema, what = 'an object'): PropCheck {
  return (field, value) => {
    if (!isPlainRecord(value)) return wrong(field, value, what);
    const problems: ValidationProblem[] = [];
    for (const [key, check] of Object.entries(schema)) problems.push(...check(fieldOf(field, key), ownValue(value, key)));
    for (const key of Object.keys(value).filter((k) => !Object.prototype.hasOwnProperty.call(schema, k))) {
      problems.push(
        new ValidationProblem(fieldOf(field, key), value[key], `is not a field here: the fields are ${Object.keys(schema).join(', ')}`),
      );
    }
    return problems;
  };
}

/**
 * Checks a construct's props object against its schema (fields reported without a prefix).
 * `undefined` props are checked as `{}` when `optionalProps`, so that required fields are reported.
 */
export function checkProps(schema: PropsSchema, props: unknown, optionalProps = false): ValidationProblem[] {
  if (props === undefined && optionalProps) return [];
  if (!isPlainRecord(props)) return wrong('props', props, 'an object of the construct\'s properties');
  return expectShape(schema)('', props);
}

/** The top field of a dotted field name: `accounts.mirror.readByCi` → `accounts`, `keys[0]` → `keys`. */
export function rootField(field: string): string {
  return field.split(/[.[]/)[0];
}

/**
 * The construct's other problems without those of fields that already have a type problem: a field of
 * the wrong type is normalised to a default, and what the default breaks would only be noise.
 */
export function withTypeProblems(typeProblems: readonly ValidationProblem[], other: readonly ValidationProblem[]): ValidationProblem[] {
  const typed = new Set(typeProblems.map((p) => rootField(p.field)));
  return [...typeProblems, ...other.filter((p) => !typed.has(rootField(p.field)))];
}

/** `value` when `check` accepts it, else `fallback`: the defensive read of a props field. */
export function checked<T>(check: PropCheck, value: unknown, fallback: T): T {
  return check('', value).length === 0 ? (value as T) : fallback;
}

/**
 * A construct's props, checked once against its schema: {@link problems} to report at synthesis, and
 * {@link value} to read a field defensively (own property only; the fallback when left out or of the
 * wrong type), so that no constructor crashes on a value of the wrong type before validation runs.
 */
export class CheckedProps {
  /** The type problems of the props (fields without a prefix). */
  readonly problems: ValidationProblem[];

  /**
   * @param schema the checks of the props interface
   * @param props the props as given
   * @param optionalProps true when the constructor's props argument is optional
   */
  constructor(
    private readonly schema: PropsSchema,
    private readonly props: unknown,
    optionalProps = false,
  ) {
    this.problems = checkProps(schema, props, optionalProps);
  }

  /** The field's value when given and well typed, else `fallback`. */
  value<T>(key: string, fallback: T): T {
    const value = ownValue<unknown>(this.props, key);
    if (value === undefined) return fallback;
    const check = ownValue<PropCheck>(this.schema, key);
    return check && check(key, value).length === 0 ? (value as T) : fallback;
  }

  /** The field's value as given (own property only), whatever its type. */
  raw(key: string): unknown {
    return ownValue<unknown>(this.props, key);
  }

  /** `other` without problems of fields that have a type problem ({@link withTypeProblems}). */
  with(other: readonly ValidationProblem[]): ValidationProblem[] {
    return withTypeProblems(this.problems, other);
  }
}
