import { StoreError } from '../store/store-client';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { CREDENTIALS_FILE_HELP, CREDENTIALS_FILE_OPTIONS, credentialsFileTarget, STORE_ENVIRONMENT_HELP } from './operator-options';
import { runOperatorCommand } from './redacting-context';
import { terminalJson, terminalLine } from '../private/terminal-text';
import { issueSecretIdForFile, writeCredentials } from './secret-id-issuance';

/** `secretstore-iac rotate-secret-id APP --credentials-file PATH` (spec §5.3). */
export const rotateSecretIdCommand: Command = {
  name: 'rotate-secret-id',
  summary: "replace an application's Secret ID in its env file and destroy the previous one (spec §5.3)",
  usage: [
    'Usage: secretstore-iac rotate-secret-id APP --credentials-file PATH [--owner USER[:GROUP]] [--mount approle] [--keep-previous] [--format text|json]',
    '',
    'Rotates the Secret ID of the AppRole role APP (spec §5.3): generates a new Secret ID, verifies it by a',
    'login, writes it with the Role ID to PATH as provision does (atomically, mode 0600), then destroys the',
    'Secret ID PATH held before, by its accessor, and prints the next steps. Secret IDs are never printed.',
    'Rotate when a server is decommissioned or rebuilt, when compromise is suspected, or by routine.',
    '',
    CREDENTIALS_FILE_HELP,
    '  --format text|json    text (default), or one JSON object: role, roleId, file, secretIdAccessor, verified,',
    '                        previous (none, unknown, kept, destroyed, destroy-failed), previousSecretIdAccessor',
    '  --keep-previous       do not destroy the previous Secret ID',
    '',
    STORE_ENVIRONMENT_HELP,
    '',
    'Exit codes: 0 rotated, 2 usage error, 3 runtime error (including a failed verification login, and a',
    'previous Secret ID that could not be destroyed: the message says what was done).',
  ].join('\n'),
  run(args, context) {
    return runOperatorCommand(context, async (io) => {
      const { values, positionals } = parseCommandArguments(
        args,
        { ...CREDENTIALS_FILE_OPTIONS, 'keep-previous': { type: 'boolean', default: false }, format: { type: 'string' } },
        { min: 1, max: 1, names: 'APP' },
      );
      const json = formatOption(values.format, ['text', 'json'] as const, 'text') === 'json';
      // With --format json the lines become fields of one JSON object printed at the end.
      const say = (line: string) => (json ? undefined : io.stdout(line));
      const progress = json ? { ...io, stdout: io.stderr } : io;
      const report: Record<string, unknown> = { command: 'rotate-secret-id' };
      const role = positionals[0];
      const { file, owner, operator } = credentialsFileTarget(values, context, role);
      // The lock makes concurrent rotations of one file run one after the other: each destroys the
      // Secret ID the file held when it started, so none is left valid outside the file.
      return file.lock(async () => {
        const { previous, roleId, issued } = await issueSecretIdForFile({ file, owner, operator }, role, progress, 'secretstore-iac rotate-secret-id');
        const check = await operator.login(roleId, issued.secretId);
        if (!check.valid) {
          await operator.destroySecretId(role, issued.accessor).catch(() => undefined);
          throw new Error(
            `the new Secret ID failed its verification login (HTTP ${check.status}: ${check.reason}); ` +
              `it was destroyed, ${file.path} is unchanged and the previous Secret ID stays valid. ` +
              'A role with secret_id_bound_cidrs rejects logins from addresses outside them: rotate from an allowed host',
          );
        }
        Object.assign(report, { role, roleId, file: file.path, secretIdAccessor: issued.accessor, verified: true });
        say(`new Secret ID (accessor ${terminalLine(issued.accessor)}) verified by a login as ${terminalLine(check.roleName ?? role)}`);
        await writeCredentials(file, { roleId, secretId: issued.secretId }, owner, progress, { operator, role, secretId: issued });

        let failure: string | undefined;
        if (!previous) {
          report.previous = 'none';
          say(`${file.path} held no Secret ID before: nothing to destroy`);
        } else {
          const found = await operator.accessorOf(role, previous);
          // Printed as escaped text; the store gets the accessor as it gave it.
          const accessor = found === undefined ? undefined : terminalLine(found);
          if (accessor === undefined) {
            report.previous = 'unknown';
            say(`the previous Secret ID in ${file.path} is unknown to the store (expired, destroyed, or of another role): nothing to destroy`);
          } else if (values['keep-previous']) {
            Object.assign(report, { previous: 'kept', previousSecretIdAccessor: found });
            say(
              `kept the previous Secret ID (accessor ${accessor}) as asked; destroy it later: ` +
                `POST auth/${operator.mount}/role/${role}/secret-id-accessor/destroy {"secret_id_accessor":"${accessor}"}`,
            );
          } else {
            try {
              await operator.destroySecretId(role, found!);
              Object.assign(report, { previous: 'destroyed', previousSecretIdAccessor: found });
              say(`destroyed the previous Secret ID (accessor ${accessor})`);
            } catch (e) {
              if (!(e instanceof StoreError)) throw e;
              failure = `the new Secret ID is written, but destroying the previous one (accessor ${accessor}) failed: ${e.message}`;
              Object.assign(report, { previous: 'destroy-failed', previousSecretIdAccessor: found });
            }
          }
        }
        if (json) io.stdout(terminalJson(report));
        say('Next steps (spec §5.3):');
        say(`  1. Re-run the deployment so that the host's env file carries the new Secret ID (nothing to do if ${file.path} is that file).`);
        say(
          `  2. Restart the agent container of ${role}: it read the previous Secret ID at start-up` +
            (values['keep-previous'] || failure ? '.' : ', which no longer exists, and would fail at its next login.'),
        );
        if (failure) throw new Error(failure);
        return ExitCode.ok;
      });
    });
  },
};
