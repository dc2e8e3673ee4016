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

/** Options shared by `provision` and `rotate-secret-id`. */
export const CREDENTIALS_FILE_OPTIONS: OptionDefinitions = {
  'env-file': { type: 'string' },
  owner: { type: 'string' },
  mount: { type: 'string', default: 'approle' },
};

/** Help lines of {@link CREDENTIALS_FILE_OPTIONS}. */
export const CREDENTIALS_FILE_HELP = [
  '  --env-file PATH       the env file the container definition references (e.g. /opt/{org}/orchestrator.env)',
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
 * @throws UsageError for a missing `--env-file`, a malformed `--owner`, `--mount` or role name
 */
export function credentialsFileTarget(
  values: Readonly<Record<string, unknown>>,
  context: CommandContext,
  role: string,
): CredentialsFileTarget {
  const envFile = values['env-file'];
  if (typeof envFile !== 'string' || envFile === '') throw new UsageError('--env-file PATH is required');
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
