import * as fs from 'fs';
import * as path from 'path';
import { GuardRefusal } from './guard-refusal';

/**
 * What the tool does with an engine environment variable: `refused` (it changes what is planned or
 * applied, or where state lives, out of the guards' sight), `allowed` (harmless: output, prompts,
 * caches, retries), `allowed-unprinted` (allowed, its value never printed: input variables the plan
 * review covers, registry credentials), `checked` (allowed once what it names was read: the CLI
 * configuration).
 */
export type EngineVariableVerdict = 'refused' | 'allowed' | 'allowed-unprinted' | 'checked';

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
  /** For a refused variable: a value that changes nothing, allowed (`TF_WORKSPACE=default`). */
  readonly harmlessValue?: string;
  /** For a refused variable: what to do instead. */
  readonly fix?: string;
}

const ARGUMENTS_FIX = 'unset it and give the arguments after `--` (`secretstore-iac tf STACK -- plan -target=...`), where the guards read them';

/**
 * Every environment variable OpenTofu 1.12 and Terraform 1.11 document (CLI "Environment Variables"
 * and debugging pages, OpenTofu's state encryption, the `pg` and `http` backends' settings), with its
 * effect and what the tool does with it. A variable that says where state lives is refused unless
 * the synthesized backend leaves it to the environment on purpose (`PG_CONN_STR`, which holds a
 * password); credentials of a backend are allowed, never printed.
 * Checked before every engine run of the tool (`tf`, guarded or not, `adopt`, the guards' own plans
 * and state reads): the guards then review exactly the invocation the engine runs. A `TF_` or `TOFU_`
 * variable this table does not name is refused too: a newer engine may read it to change a plan.
 * docs/operators.md ("The engine's environment") shows this table.
 */
export const ENGINE_ENVIRONMENT: readonly EngineVariable[] = [
  { name: 'TF_CLI_ARGS', engines: 'both', verdict: 'refused', effect: 'adds arguments to every engine command (`-destroy`, `-replace=`, `-target=`, `-state=`, `-var`) that the guards never see', fix: ARGUMENTS_FIX },
  { name: 'TF_CLI_ARGS_', prefix: true, engines: 'both', verdict: 'refused', effect: 'adds arguments to one engine command (`TF_CLI_ARGS_apply=-destroy`) that the guards never see', fix: ARGUMENTS_FIX },
  { name: 'TF_WORKSPACE', engines: 'both', verdict: 'refused', harmlessValue: 'default', effect: 'selects another workspace: another state than the one the guards and `drift` read', fix: 'unset it (or set it to `default`): each stack has one state, in its default workspace' },
  { name: 'TF_DATA_DIR', engines: 'both', verdict: 'refused', harmlessValue: '.terraform', effect: 'moves the working directory data (backend configuration, providers, selected workspace) elsewhere: another state and provider than the stack\'s', fix: 'unset it: `secretstore-iac tf STACK -- init` keeps them in the stack\'s `.terraform`' },
  { name: 'TF_REATTACH_PROVIDERS', engines: 'both', verdict: 'refused', effect: 'uses an already running provider process instead of the installed, locked provider: what it sends to the store is not what the plan says', fix: 'unset it: the engine starts the provider `init` installed and the lock file names' },
  { name: 'TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE', engines: 'both', verdict: 'refused', effect: 'installs providers from the plugin cache without checking them against the lock file', fix: 'unset it: the committed lock file (locks/<stack>/) lists the providers\' checksums' },
  { name: 'TF_ENCRYPTION', engines: 'OpenTofu', verdict: 'refused', effect: 'replaces the state and plan encryption configuration: the state and saved plans are read and written differently from the stack\'s', fix: 'unset it; configure encryption in the stacks (synthesized), where the review sees it' },
  { name: 'TF_DISABLE_PLUGIN_TLS', engines: 'both', verdict: 'refused', effect: 'talks to provider processes without TLS (a development setting): another local process may answer', fix: 'unset it: it is for provider development only' },
  { name: 'TF_SKIP_PROVIDER_VERIFY', engines: 'both', verdict: 'refused', effect: 'skips the provider signature check (older engines)', fix: 'unset it: providers are checked against the lock file' },
  { name: 'TF_FORCE_LOCAL_BACKEND', engines: 'Terraform', verdict: 'refused', effect: 'runs a remote backend\'s operations locally: another state handling than the stack\'s', fix: 'unset it: the stack\'s backend is synthesized' },
  { name: 'TF_CLOUD_ORGANIZATION', engines: 'Terraform', verdict: 'refused', effect: 'fills in a `cloud` block: where state lives', fix: 'unset it: the stack\'s backend is synthesized' },
  { name: 'TF_CLOUD_HOSTNAME', engines: 'Terraform', verdict: 'refused', effect: 'fills in a `cloud` block: where state lives', fix: 'unset it: the stack\'s backend is synthesized' },
  { name: 'TF_CLOUD_PROJECT', engines: 'Terraform', verdict: 'refused', effect: 'fills in a `cloud` block: where state lives', fix: 'unset it: the stack\'s backend is synthesized' },
  // The pg backend (postgresState()): the stack synthesizes the schema, the environment gives the connection.
  { name: 'PG_CONN_STR', engines: 'both', verdict: 'allowed-unprinted', effect: 'the connection string of a `pg` backend (postgresState()), left out of the synthesized stack on purpose: it holds the database password. It names the database; the schema (one per stack) is synthesized, and the guards review the plan made with it; never printed' },
  { name: 'PG_SCHEMA_NAME', engines: 'both', verdict: 'refused', effect: 'the schema of a `pg` backend that names none: another state than the stack\'s', fix: 'unset it: postgresState() synthesizes each stack\'s schema (its `schemaPrefix`)' },
  { name: 'PG_TABLE_NAME', engines: 'OpenTofu', verdict: 'refused', harmlessValue: 'states', effect: 'the table of a `pg` backend\'s states: another state than the stack\'s', fix: 'unset it (or set it to `states`): the states are in each schema\'s `states` table' },
  { name: 'PG_INDEX_NAME', engines: 'OpenTofu', verdict: 'allowed', effect: 'the name of the index a `pg` backend creates on its states table (not where state lives)' },
  { name: 'PG_SKIP_SCHEMA_CREATION', engines: 'both', verdict: 'allowed', effect: 'a `pg` backend does not create its schema (a database user without CREATE); not where state lives' },
  { name: 'PG_SKIP_TABLE_CREATION', engines: 'both', verdict: 'allowed', effect: 'a `pg` backend does not create its table; not where state lives' },
  { name: 'PG_SKIP_INDEX_CREATION', engines: 'both', verdict: 'allowed', effect: 'a `pg` backend does not create its index; not where state lives' },
  // The http backend (GitLab-managed Terraform state): not offered (docs/configuration-repository.md).
  { name: 'TF_HTTP_ADDRESS', engines: 'both', verdict: 'refused', effect: 'the state address of an `http` backend (GitLab-managed Terraform state): where state lives, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_UPDATE_METHOD', engines: 'both', verdict: 'refused', effect: 'how an `http` backend writes the state: where state lives, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_LOCK_ADDRESS', engines: 'both', verdict: 'refused', effect: 'the lock address of an `http` backend: which lock guards the state, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_LOCK_METHOD', engines: 'both', verdict: 'refused', effect: 'how an `http` backend locks the state, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_UNLOCK_ADDRESS', engines: 'both', verdict: 'refused', effect: 'the unlock address of an `http` backend, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_UNLOCK_METHOD', engines: 'both', verdict: 'refused', effect: 'how an `http` backend unlocks the state, outside the synthesized stack', fix: 'unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)' },
  { name: 'TF_HTTP_USERNAME', engines: 'both', verdict: 'allowed-unprinted', effect: 'the user name of an `http` backend (credentials, not where state lives); never printed' },
  { name: 'TF_HTTP_PASSWORD', engines: 'both', verdict: 'allowed-unprinted', effect: 'the password of an `http` backend (credentials, not where state lives); never printed' },
  { name: 'TF_HTTP_CLIENT_CA_CERTIFICATE_PEM', engines: 'both', verdict: 'allowed-unprinted', effect: 'the CA an `http` backend trusts (TLS, not where state lives); never printed' },
  { name: 'TF_HTTP_CLIENT_CERTIFICATE_PEM', engines: 'both', verdict: 'allowed-unprinted', effect: 'the client certificate of an `http` backend (credentials); never printed' },
  { name: 'TF_HTTP_CLIENT_PRIVATE_KEY_PEM', engines: 'both', verdict: 'allowed-unprinted', effect: 'the client key of an `http` backend (credentials); never printed' },
  { name: 'TF_HTTP_RETRY_MAX', engines: 'both', verdict: 'allowed', effect: 'retries of an `http` backend' },
  { name: 'TF_HTTP_RETRY_WAIT_MIN', engines: 'both', verdict: 'allowed', effect: 'shortest wait between an `http` backend\'s retries' },
  { name: 'TF_HTTP_RETRY_WAIT_MAX', engines: 'both', verdict: 'allowed', effect: 'longest wait between an `http` backend\'s retries' },
  { name: 'TF_CLI_CONFIG_FILE', engines: 'both', verdict: 'checked', effect: 'names the CLI configuration (provider installation, plugin cache, credentials); the tool sets it to the toolchain\'s provider mirror. Refused when it, or a CLI configuration the engine also reads (~/.terraformrc, ~/.tofurc, ~/.terraform.d/*.tfrc), has `dev_overrides` (another provider binary) or `plugin_cache_may_break_dependency_lock_file`' },
  { name: 'TF_VAR_', prefix: true, engines: 'both', verdict: 'allowed-unprinted', effect: 'input variable values: what they change is in the plan the guards review; never printed' },
  { name: 'TF_TOKEN_', prefix: true, engines: 'both', verdict: 'allowed-unprinted', effect: 'credentials for a registry host; never printed' },
  { name: 'TF_IN_AUTOMATION', engines: 'both', verdict: 'allowed', effect: 'shorter output, no suggested next commands' },
  { name: 'TF_INPUT', engines: 'both', verdict: 'allowed', effect: '`0`/`false`: no prompts for missing values' },
  { name: 'TF_LOG', engines: 'both', verdict: 'allowed', effect: 'log level on standard error' },
  { name: 'TF_LOG_PATH', engines: 'both', verdict: 'allowed', effect: 'log file' },
  { name: 'TF_LOG_CORE', engines: 'both', verdict: 'allowed', effect: 'log level of the engine itself' },
  { name: 'TF_LOG_PROVIDER', engines: 'both', verdict: 'allowed', effect: 'log level of providers' },
  { name: 'TF_LOG_PROVIDER_', prefix: true, engines: 'both', verdict: 'allowed', effect: 'log level of one provider' },
  { name: 'TF_PLUGIN_CACHE_DIR', engines: 'both', verdict: 'allowed', effect: 'provider cache directory (providers still checked against the lock file)' },
  { name: 'TF_REGISTRY_DISCOVERY_RETRY', engines: 'both', verdict: 'allowed', effect: 'registry request retries' },
  { name: 'TF_REGISTRY_CLIENT_TIMEOUT', engines: 'both', verdict: 'allowed', effect: 'registry request timeout' },
  { name: 'TF_PROVIDER_DOWNLOAD_RETRY', engines: 'both', verdict: 'allowed', effect: 'provider download retries' },
  { name: 'TF_STATE_PERSIST_INTERVAL', engines: 'both', verdict: 'allowed', effect: 'how often a running apply saves the state' },
  { name: 'TF_IGNORE', engines: 'both', verdict: 'allowed', effect: 'traces which files `.terraformignore` excludes from an upload' },
  { name: 'TF_APPEND_USER_AGENT', engines: 'both', verdict: 'allowed', effect: 'text added to the HTTP user agent' },
  { name: 'TF_ACC', engines: 'both', verdict: 'allowed', effect: 'provider acceptance tests only; no effect on a plan or apply' },
];

/** The namespaces of the engines' variables: a name in them that {@link ENGINE_ENVIRONMENT} lacks is refused. */
const ENGINE_PREFIXES = ['TF_', 'TOFU_'];

/** The row of {@link ENGINE_ENVIRONMENT} that governs `name` (an exact name before a prefix), if any. */
export function engineVariable(name: string): EngineVariable | undefined {
  return ENGINE_ENVIRONMENT.find((v) => !v.prefix && v.name === name) ?? ENGINE_ENVIRONMENT.find((v) => v.prefix === true && name.startsWith(v.name));
}

/** Settings of a CLI configuration that swap the provider binary or skip the lock file's checks. */
const CLI_CONFIG_REFUSED = [
  { setting: 'dev_overrides', effect: 'runs a provider binary from a local directory instead of the installed, locked provider' },
  { setting: 'plugin_cache_may_break_dependency_lock_file', effect: 'installs providers from the plugin cache without checking them against the lock file' },
];

/**
 * The CLI configuration files the engine reads with this environment: `TF_CLI_CONFIG_FILE`, else
 * `~/.terraformrc` (Terraform, OpenTofu) and `~/.tofurc`, OpenTofu's `$XDG_CONFIG_HOME/opentofu/tofurc`;
 * and always the `*.tfrc` / `*.tfrc.json` of `~/.terraform.d`. Only those that exist.
 */
export function cliConfigFiles(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME ?? '';
  const files: string[] = [];
  if (env.TF_CLI_CONFIG_FILE) files.push(env.TF_CLI_CONFIG_FILE);
  else if (home !== '') {
    files.push(path.join(home, '.terraformrc'), path.join(home, '.tofurc'), path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'opentofu', 'tofurc'));
  }
  if (home !== '') {
    const dir = path.join(home, '.terraform.d');
    try {
      for (const name of fs.readdirSync(dir).sort()) if (/\.tfrc(\.json)?$/.test(name)) files.push(path.join(dir, name));
    } catch {
      // No such directory: nothing more to read.
    }
  }
  return files.filter((f) => {
    try {
      return fs.statSync(f).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * What in an engine environment the tool refuses, one line each (`NAME: effect. Fix: ...`), in
 * {@link ENGINE_ENVIRONMENT}'s terms; values are never quoted (they may be secrets). An empty value
 * is unset for the engines.
 */
export function engineEnvironmentProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    const row = engineVariable(name);
    if (row === undefined) {
      if (ENGINE_PREFIXES.some((p) => name.startsWith(p))) {
        problems.push(`${name}: an engine variable secretstore-iac does not know: it cannot tell whether it changes what the engine plans or applies, or where the state lives. Fix: unset it (the variables the tool allows: docs/operators.md, "The engine's environment")`);
      }
      continue;
    }
    if (row.verdict !== 'refused' || value === row.harmlessValue) continue;
    problems.push(`${name}: ${row.effect}. Fix: ${row.fix}`);
  }
  for (const file of cliConfigFiles(env)) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      problems.push(`${file} (CLI configuration): cannot be read (${(e as Error).message}): the tool cannot tell which provider the engine runs. Fix: make it readable, or point TF_CLI_CONFIG_FILE at another file`);
      continue;
    }
    for (const refused of CLI_CONFIG_REFUSED) {
      if (new RegExp(`\\b${refused.setting}\\b`).test(text)) {
        problems.push(`${file} (CLI configuration) has \`${refused.setting}\`: ${refused.effect}. Fix: remove it, or point TF_CLI_CONFIG_FILE at a CLI configuration without it`);
      }
    }
  }
  return problems;
}

/**
 * Thrown when the engine's environment holds what the tool refuses ({@link ENGINE_ENVIRONMENT}):
 * nothing was run; the CLI exits with `ExitCode.destructionRefused` (4).
 */
export class EngineEnvironmentRefused extends GuardRefusal {
  constructor(
    /** One line per variable or CLI configuration file: what it does and the fix. */
    readonly problems: readonly string[],
  ) {
    super(
      `nothing run: the engine's environment changes what it would plan or apply, or where the state lives, out of the guards' sight (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n  ${problems.join('\n  ')}`,
    );
    this.name = 'EngineEnvironmentRefused';
  }
}

/**
 * Refuses an engine environment with any of {@link engineEnvironmentProblems}, all named at once.
 * @throws EngineEnvironmentRefused (exit 4), before the engine runs
 */
export function refuseEngineEnvironment(env: NodeJS.ProcessEnv): void {
  const problems = engineEnvironmentProblems(env);
  if (problems.length > 0) throw new EngineEnvironmentRefused(problems);
}
