import { declaredOptions, optionKind, VALUE_OPTION_NAMES } from './engine-options';

/**
 * One option of an engine command line (`-target=vault_policy.p`, `-var x=y`, `-destroy`).
 */
export interface EngineOption {
  /** Its name without dashes or value (`target`, `var`, `destroy`). */
  readonly name: string;
  /** Its value (`-target=ADDR` or `-target ADDR`), undefined for a flag given alone (`-destroy`). */
  readonly value?: string;
  /** The arguments it was written as (`["-var", "x=y"]`), to pass it on unchanged. */
  readonly tokens: readonly string[];
}

/** An OpenTofu or Terraform command line, read the way the engine reads it. */
export interface EngineInvocation {
  /** Options before the subcommand (`-chdir=DIR`). */
  readonly globals: readonly EngineOption[];
  /** The subcommand (`apply`, `state`), undefined when none is given. */
  readonly subcommand?: string;
  /** The second word of a subcommand that has one (`rm` of `state rm`, `delete` of `workspace delete`). */
  readonly action?: string;
  /** The subcommand's options, in order. */
  readonly options: readonly EngineOption[];
  /** Its other arguments (a plan file, addresses, an import id), in order. */
  readonly positionals: readonly string[];
}

/** Subcommands whose first argument is a second word (`state rm`, `workspace delete`). */
const WITH_ACTION = new Set(['state', 'workspace', 'providers', 'metadata']);

/**
 * One option from `args[i]` on: its value is the next argument when the command declares it as
 * taking one (`takesValue`), as Go's flag package reads it.
 */
function readOption(args: readonly string[], i: number, takesValue: (name: string) => boolean): EngineOption {
  const body = args[i].replace(/^--?/, '');
  const eq = body.indexOf('=');
  if (eq >= 0) return { name: body.slice(0, eq), value: body.slice(eq + 1), tokens: [args[i]] };
  if (takesValue(body) && i + 1 < args.length) return { name: body, value: args[i + 1], tokens: [args[i], args[i + 1]] };
  return { name: body, tokens: [args[i]] };
}

/**
 * Whether an option of the command `words` (`apply`, `state rm`) takes a value: as the command
 * declares it (lib/engine/engine-options.ts); for a command the table does not know, as any command
 * declaring that name does.
 */
function valueOptionOf(words: string): (name: string) => boolean {
  const own = declaredOptions(words);
  return own === undefined ? (name) => VALUE_OPTION_NAMES.has(name) : (name) => optionKind(own, name) === 'value';
}

const isOption = (arg: string): boolean => arg.startsWith('-') && arg !== '-' && arg !== '--';

/**
 * Reads an engine command line as OpenTofu and Terraform do (Go's flag package): options before the
 * subcommand are global; after it, options until the first other argument or `--`, then arguments.
 */
export function parseEngineInvocation(args: readonly string[]): EngineInvocation {
  const globals: EngineOption[] = [];
  let i = 0;
  for (; i < args.length && isOption(args[i]); i++) globals.push(readOption([args[i]], 0, () => false));
  const subcommand = args[i];
  if (subcommand === undefined) return { globals, options: [], positionals: [] };
  i++;
  let action: string | undefined;
  if (WITH_ACTION.has(subcommand) && i < args.length && !isOption(args[i])) action = args[i++];
  const options: EngineOption[] = [];
  const takesValue = valueOptionOf([subcommand, action].filter((w) => w !== undefined).join(' '));
  for (; i < args.length && isOption(args[i]); ) {
    const o = readOption(args, i, takesValue);
    options.push(o);
    i += o.tokens.length;
  }
  if (args[i] === '--') i++;
  return { globals, subcommand, ...(action !== undefined ? { action } : {}), options, positionals: args.slice(i) };
}

/** Go's `strconv.ParseBool`: the texts a flag's value may be. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A flag's value as Go's `strconv.ParseBool` reads it (`true`, `false`), or the text itself (the engine refuses it). */
export function flagValue(option: EngineOption): string {
  if (option.value === undefined || TRUE.has(option.value)) return 'true';
  return FALSE.has(option.value) ? 'false' : option.value;
}

/** Whether a flag is set (`-destroy`, `-destroy=true`; `-destroy=false` is not). */
export function flagSet(invocation: EngineInvocation, name: string): boolean {
  const given = invocation.options.filter((o) => o.name === name);
  if (given.length === 0) return false;
  // The last one wins, as with Go's flag package.
  return flagValue(given[given.length - 1]) === 'true';
}

/** The value of an option (the last one given), or undefined. */
export function optionValue(invocation: EngineInvocation, name: string): string | undefined {
  const given = invocation.options.filter((o) => o.name === name && o.value !== undefined);
  return given.length > 0 ? given[given.length - 1].value : undefined;
}

/** The words that name the command (`apply`, `state rm`), for messages. */
export function commandWords(invocation: EngineInvocation): string {
  return [invocation.subcommand, invocation.action].filter((w) => w !== undefined).join(' ');
}
