import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { CREDENTIALS_FILE_HELP, CREDENTIALS_FILE_OPTIONS, credentialsFileTarget, STORE_ENVIRONMENT_HELP } from './operator-options';
import { runOperatorCommand } from './redacting-context';
import { terminalLine } from '../private/terminal-text';
import { issueSecretIdForFile, writeCredentials } from './secret-id-issuance';

/** `secretstore-iac provision APP --credentials-file PATH` (spec §4.1 flow 3). */
export const provisionCommand: Command = {
  name: 'provision',
  summary: "write an application's Role ID and a new Secret ID to its env file (spec §4.1 flow 3)",
  usage: [
    'Usage: secretstore-iac provision APP --credentials-file PATH [--owner USER[:GROUP]] [--mount approle]',
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
        const { previous, roleId, issued } = await issueSecretIdForFile({ file, owner, operator }, role, io, 'secretstore-iac provision');
        await writeCredentials(file, { roleId, secretId: issued.secretId }, owner, io, { operator, role, secretId: issued });
        io.stdout(`provisioned ${role}: Role ID ${terminalLine(roleId)}, new Secret ID accessor ${terminalLine(issued.accessor)}`);
        if (previous) {
          io.stderr(
            `note: ${file.path} held a Secret ID, which stays valid in the store; ` +
              `use secretstore-iac rotate-secret-id ${role} --credentials-file ${file.path} to replace and destroy Secret IDs`,
          );
        }
        return ExitCode.ok;
      });
    });
  },
};
