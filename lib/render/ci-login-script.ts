import { fillTemplate } from '../private/text-template';
import { readRenderAsset } from '../private/render-asset';
import { shellQuote } from '../private/shell-quote';
import { commentText } from './text-encoders';
import { STORE_ADDRESS_VARIABLES } from '../store/store-address';

/**
 * What the CI login script needs to know about the platform. Everything else (which paths a job
 * reads, which registry it logs in to) comes from the job's variables at run time, so one script
 * serves every job template.
 */
export interface CiLoginScriptOptions {
  /** JWT role to log in as (`registry-ci`); ignored when {@link roleVariable} is given. */
  readonly roleName: string;
  /**
   * A job variable naming the role at run time instead of {@link roleName}: one script for the jobs
   * of several roles (the configuration pipeline's one login, extended with the plan or the apply role).
   * @default none: the role is {@link roleName}
   */
  readonly roleVariable?: string;
  /** Mount path of the JWT auth method (`jwt`). */
  readonly authPath: string;
  /** The `aud` the job token must carry (the CI URL), quoted in error messages. */
  readonly audience: string;
  /**
   * Name of the job's ID token variable (spec §2.4a).
   * @default 'SECRETSTORE_ID_TOKEN'
   */
  readonly idTokenVariable?: string;
  /**
   * Registry login command; the job overrides it with `SECRETSTORE_REGISTRY_LOGIN_COMMAND`.
   * @default 'docker login'
   */
  readonly registryLoginCommand?: string;
  /** Name of the hidden job that declares the ID token, quoted in messages (`.secretstore-login`). */
  readonly baseJobName?: string;
  /**
   * Export the store token as `VAULT_TOKEN` after the login, for jobs that talk to the store
   * themselves (the engine's vault provider reads it).
   * @default false: the token is forgotten once the job's secrets are read
   */
  readonly exportVaultToken?: boolean;
  /**
   * Store namespace of the login and the reads (`X-Vault-Namespace`), canonical (`admin/team`).
   * @default none: the root namespace
   */
  readonly namespace?: string;
}

// The four job variables below are spelled out in ci-login.sh (a parameter expansion cannot hold a
// placeholder and stay shell that shellcheck reads); test/unit/render/ci-login-script.test.ts checks
// that the script uses exactly these names.

/** Job variable listing the secrets a job reads (see {@link renderCiLoginScript}). */
export const READ_VARIABLE = 'SECRETSTORE_READ';
/** Job variable listing the registry logins of a job. */
export const REGISTRY_LOGIN_VARIABLE = 'SECRETSTORE_REGISTRY_LOGIN';
/** Job variable naming the registry login command (`docker login`, `podman login`, `buildah login`). */
export const REGISTRY_LOGIN_COMMAND_VARIABLE = 'SECRETSTORE_REGISTRY_LOGIN_COMMAND';
/** The older per-job JWT variable the script falls back to (spec §2.5, older flow). */
export const LEGACY_JOB_JWT_VARIABLE = 'CI_JOB_JWT_V2';

/**
 * Extracts one value from a JSON document on standard input, with nothing but a POSIX awk (mawk,
 * gawk, BusyBox awk): job images may lack jq. `sel` is a dot path (`auth.client_token`,
 * `data.data.password`); a last segment `*` matches every element of an array (`errors.*`, joined by
 * newlines). Strings are decoded (`\"`, `\\`, `\n`, `\uXXXX` with surrogate pairs, to UTF-8).
 *
 * Prints the value without a trailing newline. Exit status: 0 found (a JSON `null` prints nothing),
 * 2 not parsable JSON, 3 not present, 4 present but an object or array. Run it with `LC_ALL=C`, so
 * that strings are handled as bytes. The program is `json-value.awk` next to this module.
 */
export const JSON_VALUE_AWK = readRenderAsset(__dirname, 'json-value.awk').trim();

/** Prints a login response for the job log: `client_token` values redacted, at most 4000 characters. */
const SHOW_RESPONSE_AWK = readRenderAsset(__dirname, 'show-response.awk').trim();

/** Joins lines and runs of white space into single spaces; at most 2000 characters. */
const ONE_LINE_AWK = readRenderAsset(__dirname, 'one-line.awk').trim();

/**
 * The script, `ci-login.sh` next to this module: a complete POSIX sh script (shellcheck reads it as
 * it is) whose `@@NAME@@` placeholders {@link renderCiLoginScript} fills in. The awk programs go
 * inside single quotes, so they must hold none.
 */
const SCRIPT_TEMPLATE = readRenderAsset(__dirname, 'ci-login.sh');

/** A shell variable name, checked: it goes into the script unquoted. */
function checkedVariableName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`CI login script: roleVariable ${JSON.stringify(name)}: must be a shell variable name`);
  return name;
}

/**
 * Renders the CI login script (spec §4.1 flow 1 in a job): a POSIX `sh` script, to be sourced by
 * the job (`. ci/secretstore-login.sh`) so that its exports reach the job's script. The GitLab
 * template embeds the same text as the `before_script` of `.secretstore-login`.
 *
 * Run-time inputs, all optional except the address and the ID token:
 * - `SECRETSTORE_ADDR` (falls back to `VAULT_ADDR`, `BAO_ADDR`; they must agree when several are set)
 * - the ID token variable (`SECRETSTORE_ID_TOKEN`; falls back to the older `CI_JOB_JWT_V2`)
 * - `SECRETSTORE_READ`: whitespace-separated `kv2:<api path>:<key>=<VARIABLE>,...[:when=<VARIABLE>]`
 * - `SECRETSTORE_REGISTRY_LOGIN`: whitespace-separated `<host:port>=<USERNAME VAR>,<PASSWORD VAR>`
 * - `SECRETSTORE_REGISTRY_LOGIN_COMMAND` (default `docker login`), `SECRETSTORE_CACERT`
 *
 * It never prints a secret value, keeps the JWT, the store token and the password off every command
 * line (curl reads them on standard input), and switches shell tracing off while it runs.
 */
export function renderCiLoginScript(options: CiLoginScriptOptions): string {
  const idTokenVariable = options.idTokenVariable ?? 'SECRETSTORE_ID_TOKEN';
  const loginCommand = options.registryLoginCommand ?? 'docker login';
  const baseJob = options.baseJobName ?? '.secretstore-login';
  const fallbacks = STORE_ADDRESS_VARIABLES.filter((v) => v !== 'SECRETSTORE_ADDR');
  const values: Record<string, string> = {
    // In comment lines: one line whatever the value.
    ROLE_NAME: commentText(options.roleVariable !== undefined ? `$${options.roleVariable}` : options.roleName),
    ID_TOKEN_VARIABLE: commentText(idTokenVariable),
    AUDIENCE: commentText(options.audience),
    // A variable's value is expanded once, in double quotes (no word splitting, no globbing).
    ROLE_NAME_SH: options.roleVariable !== undefined ? `"\${${checkedVariableName(options.roleVariable)}:?the job variable ${options.roleVariable} names the role to log in as}"` : shellQuote(options.roleName),
    AUTH_PATH_SH: shellQuote(options.authPath),
    AUDIENCE_SH: shellQuote(options.audience),
    ID_TOKEN_VARIABLE_SH: shellQuote(idTokenVariable),
    BASE_JOB_SH: shellQuote(baseJob),
    ADDRESS_VARIABLES_SH: shellQuote(STORE_ADDRESS_VARIABLES.join(' ')),
    ADDRESS_FALLBACKS_SH: shellQuote(fallbacks.join(', ')),
    LOGIN_COMMAND_SH: shellQuote(loginCommand),
    NAMESPACE_SH: shellQuote(options.namespace ?? ''),
    JSON_VALUE_AWK,
    SHOW_RESPONSE_AWK,
    ONE_LINE_AWK,
  };
  const namespace = options.namespace !== undefined && options.namespace !== '';
  return fillTemplate(
    SCRIPT_TEMPLATE,
    values,
    // The namespace header is written only for a platform in a namespace: the script of one in the
    // root namespace stays as it was. The exported token is valid only in its namespace, so the
    // engine's provider gets VAULT_NAMESPACE with it.
    { EXPORT_VAULT_TOKEN: options.exportVaultToken === true, NAMESPACE: namespace, ROOT_NAMESPACE: !namespace, EXPORT_VAULT_TOKEN_NAMESPACE: namespace && options.exportVaultToken === true },
    'ci-login.sh',
  );
}
