/**
 * How an engine option is written: a flag (a boolean: `-destroy`, `-lock=false`; Go's flag package
 * never takes the next argument as its value) or an option that takes a value (`-target=ADDR` or
 * `-target ADDR`).
 */
export type EngineOptionKind = 'flag' | 'value';

const F: EngineOptionKind = 'flag';
const V: EngineOptionKind = 'value';

// OpenTofu strips the first six (and `-deprecation=module:LEVEL`) from anywhere in the arguments
// (arguments.ParseView) before a command reads its flags.
const VIEW = { 'no-color': F, 'compact-warnings': F, concise: F, 'consolidate-warnings': F, 'consolidate-errors': F, deprecation: V, json: F, 'json-into': V } as const;
const STATE = { lock: F, 'lock-timeout': V, state: V, 'state-out': V, backup: V, 'ignore-remote-version': F } as const;
const OPERATION = {
  parallelism: V, refresh: F, destroy: F, 'refresh-only': F, target: V, 'target-file': V, exclude: V, 'exclude-file': V, replace: V,
} as const;
const VARS = { var: V, 'var-file': V } as const;

/**
 * The options each engine command declares, as OpenTofu 1.12.6 and Terraform 1.11 declare them
 * (OpenTofu's `internal/command/arguments` flag sets and `ParseView`, Terraform's `-help`; the union
 * of both engines), by the command's words
 * (`apply`, `state rm`, `providers lock`). With Go's flag package only the declared kind tells
 * whether the argument after an option is its value or the next positional (a plan file), so a
 * command line is read with its own command's table.
 */
export const ENGINE_OPTIONS: Readonly<Record<string, Readonly<Record<string, EngineOptionKind>>>> = {
  plan: { ...VIEW, ...STATE, ...OPERATION, ...VARS, out: V, 'detailed-exitcode': F, 'generate-config-out': V, input: F, 'show-sensitive': F },
  apply: { ...VIEW, ...STATE, ...OPERATION, ...VARS, 'auto-approve': F, input: F, 'show-sensitive': F, 'suppress-forget-errors': F },
  destroy: { ...VIEW, ...STATE, ...OPERATION, ...VARS, 'auto-approve': F, input: F, 'show-sensitive': F, 'suppress-forget-errors': F },
  refresh: { ...VIEW, ...STATE, ...OPERATION, ...VARS, input: F },
  init: {
    ...VIEW, ...VARS, lock: F, 'lock-timeout': V, 'ignore-remote-version': F, input: F, backend: F, cloud: F, 'backend-config': V,
    'from-module': V, get: F, upgrade: F, 'plugin-dir': V, lockfile: V, 'test-directory': V, 'force-copy': F, 'migrate-state': F,
    reconfigure: F, 'verify-plugins': F,
  },
  import: { ...VIEW, ...STATE, ...VARS, config: V, 'allow-missing-config': F, input: F, parallelism: V, provider: V },
  taint: { ...VIEW, ...STATE, 'allow-missing': F },
  untaint: { ...VIEW, ...STATE, 'allow-missing': F },
  'state list': { state: V, id: V },
  'state show': { state: V, 'show-sensitive': F },
  'state pull': {},
  'state rm': { ...STATE, 'dry-run': F },
  'state mv': { ...STATE, 'dry-run': F, 'backup-out': V },
  'state push': { ...STATE, force: F },
  'state replace-provider': { ...STATE, 'auto-approve': F },
  providers: { 'test-directory': V },
  'providers lock': { 'fs-mirror': V, 'net-mirror': V, platform: V, 'enable-plugin-cache': F },
  'providers mirror': { platform: V, 'lock-file': F },
  'providers schema': { json: F },
  output: { ...VIEW, state: V, raw: F, 'show-sensitive': F },
  show: { ...VIEW, ...VARS, 'show-sensitive': F, state: F, plan: V, config: F, module: V },
  validate: { ...VIEW, 'no-tests': F, 'test-directory': V },
  console: { ...VIEW, ...STATE, ...VARS, plan: F },
  graph: { ...VARS, plan: V, 'draw-cycles': F, type: V, 'module-depth': V, verbose: F },
  get: { 'no-color': F, update: F, 'test-directory': V },
  'force-unlock': { force: F },
  'workspace list': {},
  'workspace show': {},
  'workspace select': { 'or-create': F },
  'workspace new': { lock: F, 'lock-timeout': V, state: V },
  'workspace delete': { force: F, lock: F, 'lock-timeout': V },
  version: { json: F },
  fmt: { list: F, write: F, diff: F, check: F, recursive: F },
  'metadata functions': { json: F },
  modules: { json: F },
  test: { ...VIEW, ...VARS, filter: V, 'test-directory': V, verbose: F },
  login: {},
  logout: {},
  help: {},
};

/** An option the guard accepts: any value, or only these (a flag's value read as Go's `strconv.ParseBool`: `true` / `false`). */
export type AcceptedOption = true | readonly string[];

const ACCEPTED_VIEW = { 'no-color': true, 'compact-warnings': true, concise: true, 'consolidate-warnings': true, 'consolidate-errors': true, deprecation: true, json: true, 'json-into': true } as const;
const PLAN_SHAPING = {
  destroy: true, 'refresh-only': true, refresh: true, replace: true, target: true, 'target-file': true, exclude: true, 'exclude-file': true,
  var: true, 'var-file': true, parallelism: true,
} as const;
/** The stack's own state, locked: a state-writing command holds the lock (or waits for it). */
const LOCKED = { lock: ['true'], 'lock-timeout': true } as const;

/**
 * The options `tf --refuse-replace` passes to the engine, by command (the commands it runs as given
 * or reviews; every other command is refused): an option not listed, or a value not listed, is
 * refused before the engine runs (lib/engine/invocation-guard.ts). An allowlist of what the tool
 * needs and can review, not a list of what is known to be dangerous: an option a later engine adds
 * is refused until someone reads what it does.
 */
export const GUARD_ACCEPTS: Readonly<Record<string, Readonly<Record<string, AcceptedOption>>>> = {
  // A plan writes no state: -lock=false is the guard's own plan (a saved plan made without the lock
  // whose state changed in between is refused by the engine as stale).
  plan: { ...ACCEPTED_VIEW, ...PLAN_SHAPING, lock: true, 'lock-timeout': true, out: true, 'detailed-exitcode': true, input: true, 'show-sensitive': true },
  apply: { ...ACCEPTED_VIEW, ...PLAN_SHAPING, ...LOCKED, 'auto-approve': true, input: true, 'show-sensitive': true },
  destroy: { ...ACCEPTED_VIEW, ...PLAN_SHAPING, ...LOCKED, 'auto-approve': true, input: true, 'show-sensitive': true },
  refresh: { ...ACCEPTED_VIEW, ...LOCKED, target: true, 'target-file': true, exclude: true, 'exclude-file': true, var: true, 'var-file': true, parallelism: true, input: true },
  // The forms of init the tool needs: providers from the tool's mirror, the lock kept as it is.
  init: { ...ACCEPTED_VIEW, ...LOCKED, input: true, get: true, upgrade: ['false'], lockfile: ['readonly'] },
  untaint: { 'no-color': true, ...LOCKED, 'allow-missing': true },
  'state list': { id: true },
  'state show': { 'show-sensitive': true },
  'state pull': {},
  'state rm': { ...LOCKED, 'dry-run': true },
  'state mv': { ...LOCKED, 'dry-run': true },
  providers: {},
  'providers schema': { json: true },
  output: { ...ACCEPTED_VIEW, raw: true, 'show-sensitive': true },
  show: { ...ACCEPTED_VIEW, 'show-sensitive': true, state: true, plan: true, config: true, module: true },
  validate: { ...ACCEPTED_VIEW, 'no-tests': true },
  console: { var: true, 'var-file': true, plan: true },
  graph: { plan: true, 'draw-cycles': true, type: true, 'module-depth': true },
  get: { 'no-color': true },
  'workspace list': {},
  'workspace show': {},
  'workspace select': {},
  version: { json: true },
  fmt: { list: true, write: true, diff: true, check: true, recursive: true },
  'metadata functions': { json: true },
  modules: { json: true },
  login: {},
  logout: {},
  help: {},
};

/**
 * Commands that write the stack's state (or its lock): `-lock=false` is refused on them with or
 * without `--refuse-replace` (two runs at once write one state; what one of them creates ends up in
 * neither).
 */
export const STATE_WRITING_COMMANDS: ReadonlySet<string> = new Set([
  'apply', 'destroy', 'refresh', 'import', 'init', 'taint', 'untaint', 'state rm', 'state mv', 'state push', 'state replace-provider',
  'workspace new', 'workspace delete',
]);

/** Every option name any command declares that takes a value. */
export const VALUE_OPTION_NAMES: ReadonlySet<string> = new Set(
  Object.values(ENGINE_OPTIONS).flatMap((options) => Object.entries(options).filter(([, kind]) => kind === 'value').map(([name]) => name)),
);

/** Every option name any command declares as a flag. */
export const FLAG_OPTION_NAMES: ReadonlySet<string> = new Set(
  Object.values(ENGINE_OPTIONS).flatMap((options) => Object.entries(options).filter(([, kind]) => kind === 'flag').map(([name]) => name)),
);

/** `table[words]` when the table itself holds it (never a property of `Object.prototype`: `constructor`). */
function ownEntry<T>(table: Readonly<Record<string, T>>, words: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(table, words) ? table[words] : undefined;
}

/** The options the command `words` (`apply`, `state rm`) declares ({@link ENGINE_OPTIONS}), or undefined for a command the table does not know. */
export function declaredOptions(words: string): Readonly<Record<string, EngineOptionKind>> | undefined {
  return ownEntry(ENGINE_OPTIONS, words);
}

/** The options `tf --refuse-replace` passes for the command `words` ({@link GUARD_ACCEPTS}), or undefined when it passes the command in no form. */
export function guardAccepts(words: string): Readonly<Record<string, AcceptedOption>> | undefined {
  return ownEntry(GUARD_ACCEPTS, words);
}

/** How `option` is declared in `options` (one command's table), or undefined. */
export function optionKind(options: Readonly<Record<string, EngineOptionKind>>, option: string): EngineOptionKind | undefined {
  return ownEntry(options, option);
}

/** How `accepted` (one command's {@link GUARD_ACCEPTS}) takes `option`, or undefined when it does not. */
export function acceptedOption(accepted: Readonly<Record<string, AcceptedOption>>, option: string): AcceptedOption | undefined {
  return ownEntry(accepted, option);
}
