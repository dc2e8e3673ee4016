import { terminalText } from '../private/terminal-text';
import { GuardRefusal } from '../engine/guard-refusal';
import { Command, CommandContext } from './command';
import { ExitCode } from './exit-code';
import { UsageError } from './usage-error';

/**
 * Runs one command with its arguments and turns its errors into a message on standard error and an
 * exit code (2 usage, 4 a guard's refusal, 3 any other): what the CLI does for the command it
 * dispatches to, and what `pipeline` does for the `tf` and `access-diff` it runs in-process.
 * @returns the exit code
 */
export async function runCommand(command: Command, args: readonly string[], context: CommandContext): Promise<number> {
  try {
    return await command.run(args, context);
  } catch (e) {
    if (e instanceof UsageError) {
      context.stderr(terminalText(`secretstore-iac ${command.name}: ${e.message} (see secretstore-iac ${command.name} --help)`));
      return ExitCode.usage;
    }
    // Messages quote the store's text: escaped here too, whatever a message forgot.
    context.stderr(terminalText(`secretstore-iac ${command.name}: ${e instanceof Error ? e.message : String(e)}`));
    return e instanceof GuardRefusal ? ExitCode.destructionRefused : ExitCode.runtime;
  }
}
