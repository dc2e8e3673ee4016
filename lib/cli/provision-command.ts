import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { CREDENTIALS_FILE_HELP, CREDENTIALS_FILE_OPTIONS, credentialsFileTarget, STORE_ENVIRONMENT_HELP } from './operator-options';
import { runOperatorCommand } from './redacting-context';
import { terminalJson, terminalLine } from '../private/terminal-text';
import { issueSecretIdForFile, writeCredentials } from './secret-id-issuance';

/** `secretstore-iac provision APP --credentials-file PATH` (spec §4.1 flow 3). */
export const provisionCommand: Command = {
  name: 'provision',
  summary: "write an application's Role ID and a new Secret ID to its env file (spec §4.1 flow 3)",
  usage: [
    'Usage: secretstore-iac provision APP --credentials-file PATH [--owner USER[:GROUP]] [--mount approle] [--format text|json]',
    '',
    'Reads the Role ID of the AppRole role APP (the role name as declared, e.g. orchestrator-dev), generates',
    'a new Secret ID, and writes SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID to PATH atomically with mode',
    '0600 (spec §2.4). Other lines of an existing PATH are kept. The Secret ID is never printed.',
    '',
    CREDENTIALS_FILE_HELP,
    '  --format text|json    text (default), or one JSON object: role, roleId, secretIdAccessor, file,',
    '                        previousSecretIdKept (the Secret ID itself is never in it)',
    '',
    STORE_ENVIRONMENT_HELP,
    '',
    'Exit codes: 0 provisioned, 2 usage error, 3 runtime error (store unreachable, permission denied,',
    'unknown application, unwritable file).',
  ].join('\n'),
  run(args, context) {
    return runOperatorCommand(context, async (io) => {
      const { values, positionals } = parseCommandArguments(args, { ...CREDENTIALS_FILE_OPTIONS, format: { type: 'string' } }, { min: 1, max: 1, names: 'APP' });
      const format = formatOption(values.format, ['text', 'json'] as const, 'text');
      const role = positionals[0];
      const { file, owner, operator } = credentialsFileTarget(values, context, role);
      // With --format json standard output holds the one JSON object: the progress lines go to standard error.
      const progress = format === 'json' ? { ...io, stdout: io.stderr } : io;
      return file.lock(async () => {
        const { previous, roleId, issued } = await issueSecretIdForFile({ file, owner, operator }, role, progress, 'secretstore-iac provision');
        await writeCredentials(file, { roleId, secretId: issued.secretId }, owner, progress, { operator, role, secretId: issued });
        if (format === 'json') {
          io.stdout(terminalJson({ command: 'provision', role, roleId, secretIdAccessor: issued.accessor, file: file.path, previousSecretIdKept: Boolean(previous) }));
        } else {
          io.stdout(`provisioned ${role}: Role ID ${terminalLine(roleId)}, new Secret ID accessor ${terminalLine(issued.accessor)}`);
        }
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
