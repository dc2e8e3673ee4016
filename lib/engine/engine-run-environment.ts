import * as fs from 'fs';
import * as path from 'path';
import { makeOwnedDirectory, OwnedDirectoryKind, removeOwnedDirectoryLeftovers } from '../private/dead-process-leftovers';
import { STORE_TLS_SETTINGS, vaultTlsVariables } from '../store/store-tls';
import { temporaryDirectory } from './guard-directory';
import { engineToken } from './kv-mount-guard';
import { ENGINE_ENVIRONMENT } from './engine-variables';
import { TOOLCHAIN_MIRROR_DIR, toolchainCache } from './toolchain-cache';

/**
 * A variable an engine run passes on from its caller, other than the engines' own
 * ({@link ENGINE_ENVIRONMENT}): what the vault provider, the state backend or the engine's process
 * needs to reach the store and the database.
 */
export interface PassedVariable {
  /** The name (`VAULT_CACERT`), or the prefix of a family (`LC_`, with {@link prefix}). */
  readonly name: string;
  /** True when {@link name} is a prefix. */
  readonly prefix?: boolean;
  /** Who reads it. */
  readonly reader: 'vault provider' | 'pg backend' | 'process';
  /** What it does. */
  readonly effect: string;
  /** Its value is a credential: never printed. */
  readonly unprinted?: boolean;
  /**
   * Its value names a file or directory: a relative one is made absolute against the caller's
   * working directory, since the engine runs in a directory of its own ({@link resolveFileVariables}).
   */
  readonly file?: boolean;
}

/** The TLS settings whose values name files or directories (the others are a name and a switch). */
const TLS_FILE_SETTINGS: ReadonlySet<string> = new Set(['CACERT', 'CAPATH', 'CLIENT_CERT', 'CLIENT_KEY']);

/**
 * What the vault provider (terraform-provider-vault 5.x, "Provider Arguments": each argument's
 * environment variable, and the Vault API client's TLS settings), the `pg` backend (libpq's
 * credential and TLS settings; the connection string is an engine row) and the engine's process
 * read, besides the engines' variables. `VAULT_AGENT_ADDR`, `VAULT_PROXY_ADDR` (another address than
 * `VAULT_ADDR`), `VAULT_CONFIG_PATH` (a token helper: a program), `TERRAFORM_VAULT_NAMESPACE_IMPORT`,
 * `TERRAFORM_VAULT_USERNAME`/`_PASSWORD` (logins the stacks never configure), `PGHOST`,
 * `PGDATABASE`, `PGSERVICE`, `PGPASSFILE` (another database or file than the connection string's),
 * `GODEBUG` (the TLS rules of the Go runtime) and everything else are not listed: they never reach
 * the engine.
 */
export const PASSED_VARIABLES: readonly PassedVariable[] = [
  { name: 'VAULT_ADDR', reader: 'vault provider', effect: 'the store address: set to the one the tool resolved (SECRETSTORE_ADDR, VAULT_ADDR or BAO_ADDR, which must agree)' },
  { name: 'VAULT_TOKEN', reader: 'vault provider', unprinted: true, effect: 'the token: VAULT_TOKEN, else SECRETSTORE_TOKEN or BAO_TOKEN, else the caller\'s ~/.vault-token (the run\'s HOME is its own)' },
  { name: 'VAULT_NAMESPACE', reader: 'vault provider', effect: 'the namespace: set to the one the tool resolved (the stack\'s settings.namespace, VAULT_NAMESPACE or BAO_NAMESPACE, which must agree)' },
  ...STORE_TLS_SETTINGS.map((s): PassedVariable => ({ name: `VAULT_${s}`, reader: 'vault provider', effect: `TLS to the store (the provider's ${s.toLowerCase()} setting; BAO_${s} is copied to it when it is unset)`, ...(TLS_FILE_SETTINGS.has(s) ? { file: true } : {}) })),
  { name: 'VAULT_TOKEN_NAME', reader: 'vault provider', effect: 'the display name of the provider\'s child token' },
  { name: 'TERRAFORM_VAULT_SKIP_CHILD_TOKEN', reader: 'vault provider', effect: 'use the token itself, not a child token (a namespace token, a proxy)' },
  { name: 'TERRAFORM_VAULT_MAX_TTL', reader: 'vault provider', effect: 'the TTL of the provider\'s child token' },
  { name: 'VAULT_MAX_RETRIES', reader: 'vault provider', effect: 'retries on a 5xx answer' },
  { name: 'VAULT_MAX_RETRIES_CCC', reader: 'vault provider', effect: 'retries of a request waiting for a replicated write' },
  { name: 'VAULT_CLIENT_TIMEOUT', reader: 'vault provider', effect: 'the timeout of one request' },
  { name: 'PGPASSWORD', reader: 'pg backend', unprinted: true, effect: 'the database password, when PG_CONN_STR holds none' },
  { name: 'PGUSER', reader: 'pg backend', effect: 'the database user, when PG_CONN_STR names none' },
  { name: 'PGSSLMODE', reader: 'pg backend', effect: 'TLS to the database' },
  { name: 'PGSSLCERT', reader: 'pg backend', effect: 'TLS to the database: the client certificate', file: true },
  { name: 'PGSSLKEY', reader: 'pg backend', effect: 'TLS to the database: the client key', file: true },
  { name: 'PGSSLROOTCERT', reader: 'pg backend', effect: 'TLS to the database: the CA', file: true },
  { name: 'PGCONNECT_TIMEOUT', reader: 'pg backend', effect: 'the connection timeout' },
  { name: 'PATH', reader: 'process', effect: 'where programs are found (the engine itself is started by its path)' },
  { name: 'TMPDIR', reader: 'process', effect: 'temporary files', file: true },
  { name: 'LANG', reader: 'process', effect: 'the locale of messages' },
  { name: 'LC_', prefix: true, reader: 'process', effect: 'the locale of messages' },
  { name: 'TERM', reader: 'process', effect: 'the terminal\'s kind (colours)' },
  { name: 'SSL_CERT_FILE', reader: 'process', effect: 'the system CAs the Go runtime trusts (registry, store without VAULT_CACERT)', file: true },
  { name: 'SSL_CERT_DIR', reader: 'process', effect: 'the system CAs the Go runtime trusts', file: true },
  ...['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'].map((name): PassedVariable => ({ name, reader: 'process', unprinted: true, effect: 'the HTTP proxy (registry downloads, the store): it sees TLS, never a token' })),
];

/** Whether a row names `name` exactly, or as a prefix followed by ASCII letters, digits, `_` and `-` only (an input variable may be `TF_VAR_my-name`). */
const rowNames = (row: { readonly name: string; readonly prefix?: boolean }, name: string): boolean =>
  row.prefix === true ? name.startsWith(row.name) && name.length > row.name.length && /^[A-Za-z0-9_-]+$/.test(name.slice(row.name.length)) : row.name === name;

/**
 * Whether the engine run passes the caller's `name` on: only the rows of {@link PASSED_VARIABLES}
 * and the `passed` / `passed-unprinted` rows of {@link ENGINE_ENVIRONMENT}, by exact name (the
 * engines' names are case-sensitive); nothing else, whatever it is called.
 */
export function passesToEngine(name: string): boolean {
  return PASSED_VARIABLES.some((row) => rowNames(row, name)) || ENGINE_ENVIRONMENT.some((row) => (row.verdict === 'passed' || row.verdict === 'passed-unprinted') && rowNames(row, name));
}

/** Whether the passed variable `name` names a file or directory (the `file` rows of both tables). */
function namesFile(name: string): boolean {
  return PASSED_VARIABLES.some((row) => row.file === true && rowNames(row, name)) || ENGINE_ENVIRONMENT.some((row) => row.file === true && rowNames(row, name));
}

/**
 * `env` with every passed variable that names a file made absolute against `cwd` (the caller's
 * working directory): the engine runs in a directory laid fresh for the run, where a relative
 * `TF_LOG_PATH=tf.log` or `VAULT_CACERT=ca.pem` would name a file that is not there (or is removed
 * with the directory). Empty values are left alone (the engines read them as unset).
 */
export function resolveFileVariables(env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '' || path.isAbsolute(value) || !namesFile(name)) continue;
    out[name] = path.resolve(cwd, value);
  }
  return out;
}

/** The variables the tool sets for every engine run, to files inside the run's own directory. */
export const SET_VARIABLES = ['HOME', 'TF_CLI_CONFIG_FILE', 'TERRAFORM_CONFIG', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'CHECKPOINT_DISABLE'] as const;

/** The variables the tool reads itself (the store's address and token, its own settings): used, not dropped. */
const TOOL_VARIABLES = /^(SECRETSTORE_|BAO_)/;

/**
 * Dropped names that some engine, provider, backend or the Go runtime could read: named in the
 * dropped line (the decision is the allowlist; this only picks what to name, the rest is counted).
 */
const NAMED_WHEN_DROPPED = /^(TF|TOFU|OPENTOFU|TERRAFORM|VAULT|PG|GO|XDG|CHECKPOINT|KUBE|AWS|GOOGLE|AZURE|ARM)/i;

/**
 * Whether `name` is `TF_CLI_CONFIG_FILE` naming the toolchain's own CLI configuration
 * (`$SECRETSTORE_IAC_CACHE/tofurc`, written by scripts/toolchain.sh beside the mirror the run's
 * configuration names): superseded by the run's, not worth naming as dropped. Still not passed.
 */
function toolchainCliConfiguration(name: string, caller: NodeJS.ProcessEnv): boolean {
  const cache = toolchainCache(caller);
  return name === 'TF_CLI_CONFIG_FILE' && cache !== undefined && path.resolve(caller[name] ?? '') === path.join(path.resolve(cache), 'tofurc');
}

/** The kind of directory an engine run owns: `<tmp>/secretstore-iac-run-<pid>-XXXXXX`. */
const RUN_DIRECTORY: OwnedDirectoryKind = { prefix: 'secretstore-iac-run-', ownerFile: '.secretstore-iac-run-owner' };

/** The variables each live run directory of this process sets, by its HOME. */
const liveRuns = new Map<string, Readonly<Record<(typeof SET_VARIABLES)[number], string>>>();

let exitHook = false;

/**
 * The provider mirror the tool's CLI configuration names: `SECRETSTORE_IAC_PROVIDER_MIRROR`, else
 * the one `npm run toolchain` built (`$SECRETSTORE_IAC_CACHE/provider-mirror`, else
 * `~/.cache/secretstore-iac/provider-mirror`), else none (the engine's registry).
 * @throws Error when SECRETSTORE_IAC_PROVIDER_MIRROR names no directory, or a path the CLI configuration cannot quote
 */
export function providerMirror(caller: NodeJS.ProcessEnv): string | undefined {
  const named = (caller.SECRETSTORE_IAC_PROVIDER_MIRROR ?? '').trim();
  let mirror: string | undefined;
  if (named !== '') {
    if (!fs.existsSync(named) || !fs.statSync(named).isDirectory()) {
      throw new Error(`SECRETSTORE_IAC_PROVIDER_MIRROR=${named} is not a directory: point it at a provider mirror (\`tofu providers mirror DIR\`), or unset it to install from the registry`);
    }
    mirror = path.resolve(named);
  } else {
    const cache = toolchainCache(caller);
    const built = cache ? path.join(cache, TOOLCHAIN_MIRROR_DIR) : undefined;
    mirror = built && fs.existsSync(built) && fs.statSync(built).isDirectory() ? built : undefined;
  }
  // The path is written between quotes: nothing there may end the string or start an expression.
  if (mirror !== undefined && /["\\$%\u0000-\u001f\u007f]/.test(mirror)) {
    throw new Error(`the provider mirror ${JSON.stringify(mirror)} holds a quote, backslash, \`$\`, \`%\` or control character, which the engine's CLI configuration would read as more than a path: move it`);
  }
  return mirror;
}

/**
 * The CLI configuration of an engine run: providers only from `mirror` (nothing else: no registry,
 * no `dev_overrides`, no plugin cache, no credentials), or from the registry when there is none.
 */
export function engineCliConfiguration(mirror: string | undefined): string {
  const source = mirror === undefined ? ['  direct {}'] : ['  filesystem_mirror {', `    path = "${mirror}"`, '  }'];
  return ['# Written by secretstore-iac for one engine run: where providers are installed from, nothing else.', 'provider_installation {', ...source, '}', ''].join('\n');
}

/** The environment of one engine run, and what it dropped of the caller's. */
export interface EngineRunEnvironment {
  /** The environment every engine start of the run gets (pass it to `runEngine`, `runEngineCollected`, `engineVersion`). */
  readonly env: NodeJS.ProcessEnv;
  /** The caller's variables that were dropped, sorted (names only). */
  readonly dropped: readonly string[];
  /** The CLI configuration the run uses (written by the tool, inside {@link directory}). */
  readonly cliConfig: string;
  /** The provider mirror it names, or undefined (the registry). */
  readonly providerMirror?: string;
  /** The run's own directory (its HOME, CLI configuration, XDG directories). */
  readonly directory: string;
  /** Removes the run's directory (also done when the process exits). */
  dispose(): void;
}

/** What an engine run needs besides the caller's environment. */
export interface EngineRunOptions {
  /** The store address the tool resolved (VAULT_ADDR for the provider). */
  readonly address: string;
  /** The namespace the tool resolved, if any (VAULT_NAMESPACE for the provider). */
  readonly namespace?: string;
  /** The caller's working directory: relative file variables are taken from it ({@link resolveFileVariables}). */
  readonly cwd: string;
}

/**
 * Builds the environment of an engine run from an allowlist, never from the caller's environment
 * minus a list: the caller's variables that {@link passesToEngine} (the provider's, the backend's,
 * input variables, output and locale settings), the store's address, token and namespace as the
 * tool resolved them, the `BAO_*` TLS settings under their `VAULT_*` names; and `HOME`,
 * `TF_CLI_CONFIG_FILE`, `TERRAFORM_CONFIG` and the XDG directories pointed into a directory of its
 * own holding a CLI configuration the tool wrote ({@link engineCliConfiguration}): no
 * `~/.terraformrc`, `~/.tofurc`, `~/.terraform.d/*.tfrc` or `$XDG_CONFIG_HOME/opentofu/tofurc` of
 * the caller is read. Every engine start of the tool checks its environment came from here
 * ({@link engineProcessEnvironment}).
 * @throws Error when the provider mirror cannot be named ({@link providerMirror})
 */
export function buildEngineRunEnvironment(caller: NodeJS.ProcessEnv, options: EngineRunOptions): EngineRunEnvironment {
  const mirror = providerMirror(caller);
  const tmp = temporaryDirectory(caller);
  removeOwnedDirectoryLeftovers(true, tmp, RUN_DIRECTORY);
  const directory = makeOwnedDirectory(tmp, RUN_DIRECTORY);
  const cliConfig = path.join(directory, 'cli.tfrc');
  for (const sub of ['home', 'config', 'data', 'cache']) fs.mkdirSync(path.join(directory, sub), { mode: 0o700 });
  fs.writeFileSync(cliConfig, engineCliConfiguration(mirror), { mode: 0o600 });
  const set = {
    HOME: path.join(directory, 'home'),
    TF_CLI_CONFIG_FILE: cliConfig,
    TERRAFORM_CONFIG: cliConfig,
    XDG_CONFIG_HOME: path.join(directory, 'config'),
    XDG_DATA_HOME: path.join(directory, 'data'),
    XDG_CACHE_HOME: path.join(directory, 'cache'),
    CHECKPOINT_DISABLE: '1',
  };
  liveRuns.set(set.HOME, set);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const home of liveRuns.keys()) fs.rmSync(path.dirname(home), { recursive: true, force: true });
    });
  }
  const passed: NodeJS.ProcessEnv = {};
  const dropped: string[] = [];
  for (const name of Object.keys(caller).sort()) {
    if (caller[name] === undefined) continue;
    if (passesToEngine(name)) passed[name] = caller[name];
    else if (!TOOL_VARIABLES.test(name) && !toolchainCliConfiguration(name, caller)) dropped.push(name);
  }
  const token = [caller.VAULT_TOKEN, caller.SECRETSTORE_TOKEN, caller.BAO_TOKEN].map((t) => (t ?? '').trim()).find((t) => t !== '') ?? engineToken({ HOME: caller.HOME });
  const env: NodeJS.ProcessEnv = {
    ...resolveFileVariables({ ...passed, ...vaultTlsVariables(caller) }, options.cwd),
    ...(token ? { VAULT_TOKEN: token } : {}),
    ...(options.namespace ? { VAULT_NAMESPACE: options.namespace } : {}),
    VAULT_ADDR: options.address,
    ...set,
  };
  return {
    env,
    dropped,
    cliConfig,
    ...(mirror !== undefined ? { providerMirror: mirror } : {}),
    directory,
    dispose: () => {
      liveRuns.delete(set.HOME);
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The one line naming what an engine run dropped of its caller's environment (names only, never a
 * value), or undefined when it dropped nothing an engine, provider or backend could read: those are
 * named, the others counted.
 */
export function droppedVariablesLine(command: string, dropped: readonly string[]): string | undefined {
  const named = dropped.filter((n) => NAMED_WHEN_DROPPED.test(n) && n !== 'HOME');
  if (named.length === 0) return undefined;
  // The caller's HOME is replaced by the run's on every run: not worth a word.
  const others = dropped.filter((n) => n !== 'HOME').length - named.length;
  return `secretstore-iac ${command}: not passed to the engine (its environment is built from an allowlist: docs/operators.md, "The engine's environment"): ${named.join(', ')}${others > 0 ? ` (and ${others} other variable${others === 1 ? '' : 's'} of no engine, provider or backend)` : ''}`;
}

/**
 * The environment an engine process is started with, from one {@link buildEngineRunEnvironment}
 * built (and has not disposed): its allowlisted variables (so a variable added since, like
 * `TF_CLI_ARGS`, is dropped again) and the run's own `HOME`, CLI configuration and XDG directories.
 * Every engine start of the tool goes through it (`runEngine`, `runEngineCollected`, `engineVersion`).
 * @throws Error when `env` is not a live run's (a start that bypassed the builder: nothing started)
 */
export function engineProcessEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const set = env.HOME !== undefined ? liveRuns.get(env.HOME) : undefined;
  if (set === undefined || !fs.existsSync(set.TF_CLI_CONFIG_FILE)) {
    throw new Error('secretstore-iac: an engine start without an environment built by buildEngineRunEnvironment (or after its run ended): nothing started');
  }
  const out: NodeJS.ProcessEnv = {};
  for (const name of Object.keys(env).sort()) if (env[name] !== undefined && passesToEngine(name)) out[name] = env[name];
  return { ...out, ...set };
}
