import { parseArgs } from 'util';
import { UsageError } from './usage-error';

/** Option definitions in `util.parseArgs` form. */
export type OptionDefinitions = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; default?: string | boolean }>;

/** Parsed options and positionals of a command. */
export interface CommandArguments {
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses a command's arguments strictly: unknown options and a wrong number of positionals are
 * usage errors.
 * @param positionals inclusive bounds on the number of positionals, and how to name them in the error
 * @throws UsageError
 */
export function parseCommandArguments(
  args: readonly string[],
  options: OptionDefinitions,
  positionals: { readonly min: number; readonly max: number; readonly names: string },
): CommandArguments {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]);
  }
  const n = parsed.positionals.length;
  if (n < positionals.min || n > positionals.max) {
    throw new UsageError(`expects ${positionals.names}, got ${n === 0 ? 'no argument' : `${n} arguments`}`);
  }
  return { values: parsed.values as CommandArguments['values'], positionals: parsed.positionals };
}

/**
 * The value of a `--format` option, checked against the allowed formats.
 * @throws UsageError for another value
 */
export function formatOption<F extends string>(value: unknown, allowed: readonly F[], fallback: F): F {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as F;
  throw new UsageError(`--format must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
}
