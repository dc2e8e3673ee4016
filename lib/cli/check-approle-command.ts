import * as path from 'path';
import { AppRoleCredentials, AppRoleCredentialsFile, credentialsFromEnvironment } from '../store/approle-credentials-file';
import { AppRoleOperator } from '../store/approle-operator';
import { CREDENTIALS_FILE_ALIAS_HELP, CREDENTIALS_FILE_PATH_OPTIONS, credentialsFilePath } from './operator-options';
import { Duration } from '../model/duration';
import { StoreClient } from '../store/store-client';
import { terminalJson, terminalLine } from '../private/terminal-text';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { runOperatorCommand } from './redacting-context';
import { UsageError } from './usage-error';

/** `secretstore-iac check-approle [--credentials-file PATH]` (spec §5.4). */
export const checkAppRoleCommand: Command = {
  name: 'check-approle',
  summary: 'check a Role ID / Secret ID pair by logging in with it (spec §5.4)',
  usage: [
    'Usage: secretstore-iac check-approle [--credentials-file PATH] [--mount approle] [--format text|json]',
    '',
    'Logs in with a Role ID and Secret ID pair (spec §5.4) and reports "valid" or "invalid" with the fix.',
    'The token the login returns is revoked at once. The pair comes from SECRETSTORE_ROLE_ID and',
    'SECRETSTORE_SECRET_ID in PATH, or else from the environment; never from arguments.',
    '',
    '  --credentials-file PATH  the provisioned env file (e.g. /opt/{org}/orchestrator.env)',
    CREDENTIALS_FILE_ALIAS_HELP,
    '  --format text|json   text (default), or one JSON object: valid, source, role, policies, ttlSeconds,',
    '                       renewable, or status and reason when invalid (never the Secret ID)',
    '  --mount MOUNT     AppRole mount path (default approle)',
    '',
    'Environment:',
    '  SECRETSTORE_ADDR or VAULT_ADDR              store address',
    '  SECRETSTORE_ROLE_ID, SECRETSTORE_SECRET_ID  the pair, when --credentials-file is not given',
    '',
    'Exit codes: 0 valid, 1 invalid, 2 usage error, 3 runtime error (the check could not be made).',
  ].join('\n'),
  run(args, context) {
    return runOperatorCommand(context, async (io) => {
      const { values } = parseCommandArguments(
        args,
        { ...CREDENTIALS_FILE_PATH_OPTIONS, mount: { type: 'string', default: 'approle' }, format: { type: 'string' } },
        { min: 0, max: 0, names: 'no arguments (the pair comes from --credentials-file or the environment)' },
      );
      const format = formatOption(values.format, ['text', 'json'] as const, 'text');
      let pair: AppRoleCredentials | undefined;
      let source: string;
      const credentialsFile = credentialsFilePath(values);
      if (credentialsFile !== undefined) {
        const file = new AppRoleCredentialsFile(path.resolve(context.cwd, credentialsFile));
        pair = file.read();
        source = file.path;
        if (!pair) throw new UsageError(`${file.path} does not exist or lacks SECRETSTORE_ROLE_ID or SECRETSTORE_SECRET_ID`);
      } else {
        pair = credentialsFromEnvironment(context.env);
        source = 'the environment';
        if (!pair) {
          throw new UsageError('no pair to check: give --credentials-file PATH, or set SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID in the environment');
        }
      }
      io.hide(pair.secretId);
      const operator = new AppRoleOperator(StoreClient.fromEnvironment(context.env, false, (line) => io.stderr(line)), String(values.mount));
      const result = await operator.login(pair.roleId, pair.secretId);
      if (result.valid && format === 'json') {
        io.stdout(terminalJson({ command: 'check-approle', valid: true, source, role: result.roleName ?? null, policies: result.policies, ttlSeconds: result.ttlSeconds, renewable: result.renewable }));
        return ExitCode.ok;
      }
      if (result.valid) {
        io.stdout(
          `valid: the store accepted the Role ID / Secret ID pair from ${source}` +
            ` (role ${terminalLine(result.roleName ?? 'unknown')}, policies ${terminalLine(result.policies.join(', '))}, token TTL ${Duration.seconds(result.ttlSeconds)}` +
            `${result.renewable ? ', renewable' : ''}); the check's token was revoked`,
        );
        return ExitCode.ok;
      }
      if (result.status === 403 && !(await operator.isAppRoleMount())) {
        throw new Error(
          `the mount "${operator.mount}" is not an AppRole method on this store: a login there without credentials is refused (HTTP 403) ` +
            `instead of answered by AppRole, so the pair from ${source} was not checked. Fix: pass --mount with the path the AppRole ` +
            'method is mounted at (default approle; `bao auth list` or `vault auth list` shows it)',
        );
      }
      if (format === 'json') {
        io.stdout(terminalJson({ command: 'check-approle', valid: false, source, status: result.status, reason: result.reason }));
        return ExitCode.credentialsInvalid;
      }
      io.stdout(
        `invalid: the store rejected the Role ID / Secret ID pair from ${source} (HTTP ${result.status}: ${result.reason}). ` +
          'Fix (spec §7): reprovision: secretstore-iac rotate-secret-id APP --credentials-file PATH (or provision), ' +
          're-run the deployment, then restart the agent container',
      );
      return ExitCode.credentialsInvalid;
    });
  },
};
