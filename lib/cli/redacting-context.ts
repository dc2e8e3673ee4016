import { CredentialsFileError } from '../store/approle-credentials-file';
import { terminalText } from '../private/terminal-text';
import { CommandContext } from './command';
import { UsageError } from './usage-error';

/** Environment variables whose values an operator command never prints. */
const SECRET_VARIABLES = ['SECRETSTORE_TOKEN', 'VAULT_TOKEN', 'BAO_TOKEN', 'SECRETSTORE_SECRET_ID'];

/** A command context that can never print the values it was told to hide. */
export interface RedactingContext extends CommandContext {
  /** Adds a value (a Secret ID, a token) that must not appear in any output or error. */
  hide(value: string | undefined): void;
}

/**
 * Runs an operator command's body with output that hides every token and Secret ID it knows of (the
 * environment's, and each one the body reads or creates), whatever a message quotes. Errors leave with
 * the same values hidden, for the dispatcher to print.
 */
export async function runOperatorCommand(
  context: CommandContext,
  body: (io: RedactingContext) => Promise<number>,
): Promise<number> {
  const hidden = new Set<string>();
  const redact = (text: string): string => {
    let out = text;
    for (const h of hidden) out = out.split(h).join('<redacted>');
    return out;
  };
  const io: RedactingContext = {
    env: context.env,
    cwd: context.cwd,
    isTerminal: context.isTerminal,
    // Lines quote store answers (accessors, role names, reasons): escaped for the terminal.
    stdout: (line) => context.stdout(terminalText(redact(line))),
    stderr: (line) => context.stderr(terminalText(redact(line))),
    hide: (value) => {
      if (value && value.length >= 4) hidden.add(value);
    },
  };
  for (const name of SECRET_VARIABLES) io.hide(context.env[name]);
  try {
    return await body(io);
  } catch (e) {
    if (!(e instanceof Error)) throw new Error(redact(String(e)));
    // A link, directory or other non-file given as --env-file is a mistake in the argument: exit 2.
    if (e instanceof CredentialsFileError && e.wrongPath) throw new UsageError(redact(e.message));
    const message = redact(e.message);
    if (message === e.message) throw e;
    throw e instanceof UsageError ? new UsageError(message) : new Error(message);
  }
}
