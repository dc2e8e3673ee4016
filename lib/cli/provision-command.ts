import * as path from 'path';
import { AppRoleCredentials, AppRoleCredentialsFile, CredentialsFileError, FileOwner, parseOwner } from '../store/approle-credentials-file';
import { AppRoleOperator, IssuedSecretId, mountPathProblem, roleNameProblem } from '../store/approle-operator';
import { StoreClient } from '../store/store-client';
import { Command, CommandContext } from './command';
import { OptionDefinitions, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { RedactingContext, runOperatorCommand, STORE_ENVIRONMENT_HELP } from './operator-command';
import { UsageError } from './usage-error';

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

/**
 * The env file, the owner to give it, and the AppRole operator on the mount, from parsed options.
 * @throws UsageError for a missing `--env-file`, a malformed `--owner`, `--mount` or role name
 */
export function credentialsFileTarget(
  values: Readonly<Record<string, unknown>>,
  context: CommandContext,
  role: string,
): { file: AppRoleCredentialsFile; owner?: FileOwner; operator: AppRoleOperator } {
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
    operator: new AppRoleOperator(StoreClient.fromEnvironment(context.env), mount),
  };
}

/**
 * Writes the pair and says where, with which mode and owner (never the Secret ID). When the write
 * fails, the Secret ID just issued is destroyed, so that no valid Secret ID exists outside the file.
 */
export async function writeCredentials(
  file: AppRoleCredentialsFile,
  credentials: AppRoleCredentials,
  owner: FileOwner | undefined,
  io: RedactingContext,
  issued: { operator: AppRoleOperator; role: string; secretId: IssuedSecretId },
): Promise<void> {
  let given: FileOwner;
  try {
    given = file.write(credentials, owner);
  } catch (e) {
    const accessor = issued.secretId.accessor;
    const reason = e instanceof Error ? e.message : String(e);
    try {
      await issued.operator.destroySecretId(issued.role, accessor);
    } catch (d) {
      throw new Error(
        `${reason}; destroying the Secret ID just issued (accessor ${accessor}) failed too (${(d as Error).message}): destroy it with ` +
          `POST auth/${issued.operator.mount}/role/${issued.role}/secret-id-accessor/destroy {"secret_id_accessor":"${accessor}"}`,
      );
    }
    throw new Error(`${reason}; the Secret ID just issued (accessor ${accessor}) was destroyed, and ${file.path} is unchanged`);
  }
  io.stdout(`wrote SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID to ${file.path} (mode 0600, owner ${given.uid}:${given.gid})`);
}

/** `secretstore-iac provision APP --env-file PATH` (spec §4.1 flow 3). */
export const provisionCommand: Command = {
  name: 'provision',
  summary: "write an application's Role ID and a new Secret ID to its env file (spec §4.1 flow 3)",
  usage: [
    'Usage: secretstore-iac provision APP --env-file PATH [--owner USER[:GROUP]] [--mount approle]',
    '',
    'Reads the Role ID of the AppRole role APP (the role name as declared, e.g. orchestrator-dev), generates',
    'a new Secret ID, and writes SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID to PATH atomically with mode',
    '0600 (spec §2.4). Other lines of an existing PATH are kept. The Secret ID is never printed.',
    '',
    CREDENTIALS_FILE_HELP,
    '',
    STORE_ENVIRONMENT_HELP,
    '',
    'Exit codes: 0 provisioned, 2 usage error, 3 runtime error (store unreachable, permission denied,',
    'unknown application, unwritable file).',
  ].join('\n'),
  run(args, context) {
    return runOperatorCommand(context, async (io) => {
      const { values, positionals } = parseCommandArguments(args, CREDENTIALS_FILE_OPTIONS, { min: 1, max: 1, names: 'APP' });
      const role = positionals[0];
      const { file, owner, operator } = credentialsFileTarget(values, context, role);
      return file.lock(async () => {
        // Checked before the store is asked: a Secret ID is issued only when it can be written.
        file.assertWritable(owner);
        const previous = file.readSecretId();
        io.hide(previous);
        const roleId = await operator.roleId(role);
        const issued = await operator.issueSecretId(role, { issued_by: 'secretstore-iac provision' });
        io.hide(issued.secretId);
        await writeCredentials(file, { roleId, secretId: issued.secretId }, owner, io, { operator, role, secretId: issued });
        io.stdout(`provisioned ${role}: Role ID ${roleId}, new Secret ID accessor ${issued.accessor}`);
        if (previous) {
          io.stderr(
            `note: ${file.path} held a Secret ID, which stays valid in the store; ` +
              `use secretstore-iac rotate-secret-id ${role} --env-file ${file.path} to replace and destroy Secret IDs`,
          );
        }
        return ExitCode.ok;
      });
    });
  },
};
