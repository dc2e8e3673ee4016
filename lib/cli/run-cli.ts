import { Command, CommandContext } from './command';
import { cliVersion } from './cli-version';
import { COMMANDS } from './commands';
import { ExitCode } from './exit-code';
import { runCommand } from './run-command';

/** The general help: synopsis, commands, exit codes. */
export function generalHelp(commands: readonly Command[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: secretstore-iac COMMAND [ARGS...]',
    '       secretstore-iac COMMAND --help',
    '       secretstore-iac --version',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Exit codes: 0 ok (access-diff: no access change), 1 a result that needs attention',
    '            (access-diff: access changed; see each command\'s --help), 2 usage error,',
    '            3 runtime error, 4 refused: the plan would destroy or replace an object,',
    '            5 a declared KV mount does not match the store.',
  ].join('\n');
}

/**
 * Runs the CLI: dispatches to the command named by the first argument, prints help for `--help`,
 * and turns errors into a message on standard error and an exit code (2 usage, 3 runtime).
 * @returns the exit code
 */
export async function runCli(argv: readonly string[], context: CommandContext, commands: readonly Command[] = COMMANDS): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    context.stderr(generalHelp(commands));
    return ExitCode.usage;
  }
  if (name === '--version' || name === '-V') {
    context.stdout(`secretstore-iac ${cliVersion()}`);
    return ExitCode.ok;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((c) => c.name === args[0]) : undefined;
    context.stdout(topic ? topic.usage : generalHelp(commands));
    return ExitCode.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    context.stderr(`secretstore-iac: unknown command "${name}"\n\n${generalHelp(commands)}`);
    return ExitCode.usage;
  }
  if (args.includes('--help') || args.includes('-h')) {
    context.stdout(command.usageFor?.(args) ?? command.usage);
    return ExitCode.ok;
  }
  return runCommand(command, args, context);
}
