/**
 * What an engine run gets of a caller's engine variable (lib/engine/engine-run-environment.ts):
 * `dropped` (it would change what is planned or applied, or where state lives, out of the guards'
 * sight: the engine never sees it), `passed` (harmless: output, prompts, retries), `passed-unprinted`
 * (passed, its value never printed: input variables the plan review covers, credentials), `set`
 * (the caller's value is dropped and the tool sets its own: the CLI configuration).
 */
export type EngineVariableVerdict = 'dropped' | 'passed' | 'passed-unprinted' | 'set';

/** One row of {@link ENGINE_ENVIRONMENT}: an environment variable OpenTofu or Terraform reads. */
export interface EngineVariable {
  /** The name (`TF_WORKSPACE`), or the prefix of a family (`TF_CLI_ARGS_`, with {@link prefix}). */
  readonly name: string;
  /** True when {@link name} is a prefix: every variable starting with it (`TF_VAR_region`). */
  readonly prefix?: boolean;
  /** Which engines read it. */
  readonly engines: 'both' | 'OpenTofu' | 'Terraform';
  /** What it does to an engine run. */
  readonly effect: string;
  /** What the tool does with it. */
  readonly verdict: EngineVariableVerdict;
  /** For a dropped variable: what to do instead. */
  readonly fix?: string;
  /** Its value names a file: a relative one is made absolute against the caller's working directory (the engine runs in a directory of its own). */
  readonly file?: boolean;
}

const ARGUMENTS_FIX = 'unset it and give the arguments after `--` (`secretstore-iac tf STACK -- plan -target=...`), where the guards read them';

/**
 * Every environment variable OpenTofu 1.12 and Terraform 1.11 document (CLI "Environment Variables"
 * and debugging pages, OpenTofu's state encryption, the `pg` and `http` backends' settings), with its
 * effect and what an engine run gets of it. A variable that says where state lives is dropped unless
 * the synthesized backend leaves it to the environment on purpose (`PG_CONN_STR`, which holds a
 * password); credentials of a backend pass, never printed. The rows that pass are part of the
 * allowlist the engine run's environment is built from (`engineRunVariable`,
 * lib/engine/engine-run-environment.ts); a name no row passes (a `TF_` or `TOFU_` variable a newer
 * engine reads, `TERRAFORM_CONFIG`) never reaches the engine. docs/reference.md shows this table.
 */
export const ENGINE_ENVIRONMENT: readonly EngineVariable[] = [
  { name: 'TF_CLI_ARGS', engines: 'both', verdict: 'dropped', effect: 'adds arguments to every engine command (`-destroy`, `-replace=`, `-target=`, `-state=`, `-var`) that the guards never see', fix: ARGUMENTS_FIX },
  { name: 'TF_CLI_ARGS_', prefix: true, engines: 'both', verdict: 'dropped', effect: 'adds arguments to one engine command (`TF_CLI_ARGS_apply=-destroy`) that the guards never see', fix: ARGUMENTS_FIX },
  { name: 'TF_WORKSPACE', engines: 'both', verdict: 'dropped', effect: 'selects another workspace: another state than the one the guards and `drift` read', fix: 'unset it: each stack has one state, in its default workspace' },
  { name: 'TF_DATA_DIR', engines: 'both', verdict: 'dropped', effect: 'moves the working directory data (backend configuration, providers, selected workspace) elsewhere: another state and provider than the stack\'s', fix: 'unset it: `secretstore-iac tf STACK -- init` keeps them in the stack\'s `.terraform`' },
  { name: 'TF_REATTACH_PROVIDERS', engines: 'both', verdict: 'dropped', effect: 'uses an already running provider process instead of the installed, locked provider: what it sends to the store is not what the plan says', fix: 'unset it: the engine starts the provider `init` installed and the lock file names' },
  { name: 'TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE', engines: 'both', verdict: 'dropped', effect: 'installs providers from the plugin cache without checking them against the lock file', fix: 'unset it: the committed lock file (locks/<stack>/) lists the providers\' checksums' },
  { name: 'TF_ENCRYPTION', engines: 'OpenTofu', verdict: 'dropped', effect: 'replaces the state and plan encryption configuration: the state and saved plans are read and written differently from the stack\'s', fix: 'unset it; configure encryption in the stacks (synthesized), where the review sees it' },
  { name: 'TF_DISABLE_PLUGIN_TLS', engines: 'both', verdict: 'dropped', effect: 'talks to provider processes without TLS (a development setting): another local process may answer', fix: 'unset it: it is for provider development only' },
  { name: 'TF_SKIP_PROVIDER_VERIFY', engines: 'both', verdict: 'dropped', effect: 'skips the provider signature check (older engines)', fix: 'unset it: providers are checked against the lock file' },
  { name: 'TF_FORCE_LOCAL_BACKEND', engines: 'Terraform', verdict: 'dropped', effect: 'runs a remote backend\'s operations locally: another state handling than the stack\'s', fix: 'unset it: the stack\'s backend is synthesized' },
  { name: 'TF_CLOUD_ORGANIZATION', engines: 'Terraform', verdict: 'dropped', effect: 'fills in a `cloud` block: where state lives', fix: 'unset it: the stack\'s backend is synthesized' },
  { name: 'TF_CLOUD_HOSTNAME', engines: 'Terraform', verdict: 'dropped', effect: 'fills in a `cloud` block: where state lives', fix: 'unset it: the stack\'s backend is synthesized' },
  { name: 'TF_CLOUD_PROJECT', engines: 'Terraform', verdict: 'dropped', effect: 'fills in a `cloud` block: where state lives', fix: 'unset it: the stack\'s backend is synthesized' },
  // The pg backend (postgresState()): the stack synthesizes the schema, the environment gives the connection.
  { name: 'PG_CONN_STR', engines: 'both', verdict: 'passed-unprinted', effect: 'the connection string of a `pg` backend (postgresState()), left out of the synthesized stack on purpose: it holds the database password. It names the database; the schema (one per stack) is synthesized, and the guards review the plan made with it; never printed' },
  { name: 'PG_SCHEMA_NAME', engines: 'both', verdict: 'dropped', effect: 'the schema of a `pg` backend that names none: another state than the stack\'s', fix: 'unset it: postgresState() synthesizes each stack\'s schema (its `schemaPrefix`)' },
  { name: 'PG_TABLE_NAME', engines: 'OpenTofu', verdict: 'dropped', effect: 'the table of a `pg` backend\'s states: another state than the stack\'s', fix: 'unset it: the states are in each schema\'s `states` table' },
  { name: 'PG_INDEX_NAME', engines: 'OpenTofu', verdict: 'passed', effect: 'the name of the index a `pg` backend creates on its states table (not where state lives)' },
  { name: 'PG_SKIP_SCHEMA_CREATION', engines: 'both', verdict: 'passed', effect: 'a `pg` backend does not create its schema (a database user without CREATE); not where state lives' },
  { name: 'PG_SKIP_TABLE_CREATION', engines: 'both', verdict: 'passed', effect: 'a `pg` backend does not create its table; not where state lives' },
  { name: 'PG_SKIP_INDEX_CREATION', engines: 'both', verdict: 'passed', effect: 'a `pg` backend does not create its index; not where state lives' },
  // The http backend (GitLab-managed Terraform state): not offered (docs/configuration-repository.md).
  { name: 'TF_HTTP_ADDRESS', engines: 'both', verdict: 'dropped', effect: 'the state address of an `http` backend (GitLab-managed Terraform state): where state lives, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_UPDATE_METHOD', engines: 'both', verdict: 'dropped', effect: 'how an `http` backend writes the state: where state lives, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_LOCK_ADDRESS', engines: 'both', verdict: 'dropped', effect: 'the lock address of an `http` backend: which lock guards the state, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_LOCK_METHOD', engines: 'both', verdict: 'dropped', effect: 'how an `http` backend locks the state, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_UNLOCK_ADDRESS', engines: 'both', verdict: 'dropped', effect: 'the unlock address of an `http` backend, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_UNLOCK_METHOD', engines: 'both', verdict: 'dropped', effect: 'how an `http` backend unlocks the state, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_USERNAME', engines: 'both', verdict: 'passed-unprinted', effect: 'the user name of an `http` backend (credentials, not where state lives); never printed' },
  { name: 'TF_HTTP_PASSWORD', engines: 'both', verdict: 'passed-unprinted', effect: 'the password of an `http` backend (credentials, not where state lives); never printed' },
  { name: 'TF_HTTP_CLIENT_CA_CERTIFICATE_PEM', engines: 'both', verdict: 'passed-unprinted', effect: 'the CA an `http` backend trusts (TLS, not where state lives); never printed' },
  { name: 'TF_HTTP_CLIENT_CERTIFICATE_PEM', engines: 'both', verdict: 'passed-unprinted', effect: 'the client certificate of an `http` backend (credentials); never printed' },
  { name: 'TF_HTTP_CLIENT_PRIVATE_KEY_PEM', engines: 'both', verdict: 'passed-unprinted', effect: 'the client key of an `http` backend (credentials); never printed' },
  { name: 'TF_HTTP_RETRY_MAX', engines: 'both', verdict: 'passed', effect: 'retries of an `http` backend' },
  { name: 'TF_HTTP_RETRY_WAIT_MIN', engines: 'both', verdict: 'passed', effect: 'shortest wait between an `http` backend\'s retries' },
  { name: 'TF_HTTP_RETRY_WAIT_MAX', engines: 'both', verdict: 'passed', effect: 'longest wait between an `http` backend\'s retries' },
  { name: 'TF_CLI_CONFIG_FILE', engines: 'both', verdict: 'set', effect: 'names the CLI configuration (provider installation, dev_overrides, plugin cache, credentials): set to the one the tool writes for the run (its provider mirror, nothing else)', fix: 'name the provider mirror with SECRETSTORE_IAC_PROVIDER_MIRROR' },
  { name: 'TERRAFORM_CONFIG', engines: 'both', verdict: 'set', effect: 'the older name of TF_CLI_CONFIG_FILE, still read when it is unset: set to the same file', fix: 'name the provider mirror with SECRETSTORE_IAC_PROVIDER_MIRROR' },
  { name: 'TF_VAR_', prefix: true, engines: 'both', verdict: 'passed-unprinted', effect: 'input variable values: what they change is in the plan the guards review; never printed' },
  { name: 'TF_TOKEN_', prefix: true, engines: 'both', verdict: 'passed-unprinted', effect: 'credentials for a registry host; never printed' },
  { name: 'TF_IN_AUTOMATION', engines: 'both', verdict: 'passed', effect: 'shorter output, no suggested next commands' },
  { name: 'TF_INPUT', engines: 'both', verdict: 'passed', effect: '`0`/`false`: no prompts for missing values' },
  { name: 'TF_LOG', engines: 'both', verdict: 'passed', effect: 'log level on standard error' },
  { name: 'TF_LOG_PATH', engines: 'both', verdict: 'passed', effect: 'log file (a relative path is taken from the working directory `tf` was started in)', file: true },
  { name: 'TF_LOG_CORE', engines: 'both', verdict: 'passed', effect: 'log level of the engine itself' },
  { name: 'TF_LOG_PROVIDER', engines: 'both', verdict: 'passed', effect: 'log level of providers' },
  { name: 'TF_LOG_PROVIDER_', prefix: true, engines: 'both', verdict: 'passed', effect: 'log level of one provider' },
  { name: 'TF_PLUGIN_CACHE_DIR', engines: 'both', verdict: 'dropped', effect: 'a provider cache directory: providers from a directory the tool did not fill (and, with the lock file bypass, unchecked); `init` links `.terraform/` into it', fix: 'unset it: `init` installs from the tool\'s provider mirror' },
  { name: 'TF_REGISTRY_DISCOVERY_RETRY', engines: 'both', verdict: 'passed', effect: 'registry request retries' },
  { name: 'TF_REGISTRY_CLIENT_TIMEOUT', engines: 'both', verdict: 'passed', effect: 'registry request timeout' },
  { name: 'TF_PROVIDER_DOWNLOAD_RETRY', engines: 'both', verdict: 'passed', effect: 'provider download retries' },
  { name: 'TF_STATE_PERSIST_INTERVAL', engines: 'both', verdict: 'passed', effect: 'how often a running apply saves the state' },
  { name: 'TF_IGNORE', engines: 'both', verdict: 'passed', effect: 'traces which files `.terraformignore` excludes from an upload' },
  { name: 'TF_APPEND_USER_AGENT', engines: 'both', verdict: 'passed', effect: 'text added to the HTTP user agent' },
  { name: 'TF_ACC', engines: 'both', verdict: 'passed', effect: 'provider acceptance tests only; no effect on a plan or apply' },
];

/** The row of {@link ENGINE_ENVIRONMENT} that governs `name` (an exact name before a prefix), if any. */
export function engineVariable(name: string): EngineVariable | undefined {
  return ENGINE_ENVIRONMENT.find((v) => !v.prefix && v.name === name) ?? ENGINE_ENVIRONMENT.find((v) => v.prefix === true && name.startsWith(v.name));
}
