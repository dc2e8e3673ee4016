import * as path from 'path';
import { AppRoleCredentialsFile, CredentialsFileError, FileOwner, parseOwner } from '../store/approle-credentials-file';
import { AppRoleOperator, mountPathProblem, roleNameProblem } from '../store/approle-operator';
import { StoreClient } from '../store/store-client';
import { CommandContext } from './command';
import { OptionDefinitions } from './command-arguments';
import { UsageError } from './usage-error';

/** Help text of the store environment, shared by the operator commands. */
export const STORE_ENVIRONMENT_HELP = [
  'Environment:',
  '  SECRETSTORE_ADDR or VAULT_ADDR   store address (https://secrets.example:8200)',
  '  VAULT_TOKEN (or BAO_TOKEN / SECRETSTORE_TOKEN)',
  '                                   privileged token; never taken from arguments',
].join('\n');

/**
 * The options naming the provisioned env file: `--credentials-file`, and `--env-file`, its older name.
 * Node 20 takes `--env-file` for itself wherever it stands on its command line when a script is
 * started as `node script ...`, as `npx` starts itself: `npx secretstore-iac provision APP --env-file F`
 * then ends in `node: F: not found` (exit 9) before this tool runs, or loads F into npx's own environment.
 */
export const CREDENTIALS_FILE_PATH_OPTIONS: OptionDefinitions = {
  'credentials-file': { type: 'string' },
  'env-file': { type: 'string' },
};

/** Help line of {@link CREDENTIALS_FILE_PATH_OPTIONS}, after the option's own description. */
export const CREDENTIALS_FILE_ALIAS_HELP =
  '                        (--env-file PATH is the same option; with npx on Node 20, node itself takes --env-file and stops: use --credentials-file)';

/**
 * The env file named by `--credentials-file` or `--env-file`; undefined when neither is given.
 * @throws UsageError when both are given with different paths
 */
export function credentialsFilePath(values: Readonly<Record<string, unknown>>): string | undefined {
  const given = (['credentials-file', 'env-file'] as const).map((k) => values[k]).filter((v): v is string => typeof v === 'string' && v !== '');
  if (given.length === 2 && given[0] !== given[1]) {
    throw new UsageError(`--credentials-file ${given[0]} and --env-file ${given[1]} name two files: --env-file is the older name of --credentials-file; give one`);
  }
  return given[0];
}

/** Options shared by `provision` and `rotate-secret-id`. */
export const CREDENTIALS_FILE_OPTIONS: OptionDefinitions = {
  ...CREDENTIALS_FILE_PATH_OPTIONS,
  owner: { type: 'string' },
  mount: { type: 'string', default: 'approle' },
};

/** Help lines of {@link CREDENTIALS_FILE_OPTIONS}. */
export const CREDENTIALS_FILE_HELP = [
  '  --credentials-file PATH  the env file the container definition references (e.g. /opt/{org}/orchestrator.env)',
  CREDENTIALS_FILE_ALIAS_HELP,
  "  --owner USER[:GROUP]  owner of PATH (names or ids; default: the existing file's owner, else the current user)",
  '  --mount MOUNT         AppRole mount path (default approle)',
].join('\n');

/** Where an operator command writes: the env file, the owner to give it, the operator on the mount. */
export interface CredentialsFileTarget {
  /** The env file. */
  readonly file: AppRoleCredentialsFile;
  /** The owner to give it; undefined keeps the existing file's owner, else the current user. */
  readonly owner?: FileOwner;
  /** The AppRole operator on the mount. */
  readonly operator: AppRoleOperator;
}

/**
 * The env file, the owner to give it, and the AppRole operator on the mount, from parsed options.
 * @throws UsageError for a missing `--credentials-file`, a malformed `--owner`, `--mount` or role name
 */
export function credentialsFileTarget(
  values: Readonly<Record<string, unknown>>,
  context: CommandContext,
  role: string,
): CredentialsFileTarget {
  const envFile = credentialsFilePath(values);
  if (envFile === undefined) throw new UsageError('--credentials-file PATH is required');
  const mount = String(values.mount ?? 'approle');
  const problem = roleNameProblem(role) ?? mountPathProblem(mount);
  if (problem) throw new UsageError(problem);
  let owner: FileOwner | undefined;
  try {
    owner = typeof values.owner === 'string' ? parseOwner(values.owner) : undefined;
  } catch (e) {
    throw e instanceof CredentialsFileError ? new UsageError(e.message) : e;
  }
  return {
    file: new AppRoleCredentialsFile(path.resolve(context.cwd, envFile)),
    owner,
    operator: new AppRoleOperator(StoreClient.fromEnvironment(context.env, true, (line) => context.stderr(line)), mount),
  };
}
