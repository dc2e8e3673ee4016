import { ownCdktfAppCommand } from '../sources/cdktf-app-command';
import { ConfigurationSource, UnknownSourceError, openConfigurationSource } from '../sources/configuration-source';
import { CommandContext } from './command';
import { UsageError } from './usage-error';

/** Default SOURCE of the access commands: the synthesized output of `npm run synth`. */
export const DEFAULT_SOURCE = 'cdktf.out';

/** How SOURCE arguments are explained in the commands' help. */
export const SOURCE_HELP = sourceHelp(ownCdktfAppCommand());

function sourceHelp(app: string | undefined): string {
  return [
    'SOURCE is a synthesized output directory (with manifest.json) or a git ref of the repository',
    '(branch, tag, commit); a ref is checked out into a temporary git worktree, compiled and',
    'synthesized there with the `app` command of its cdktf.json, then removed.',
    ...(app === undefined ? [] : [`Here that command is \`${app}\`.`]),
  ].join('\n');
}

/**
 * Opens a SOURCE argument; progress of a git ref synthesis goes to standard error.
 * @throws UsageError when the argument is neither a directory nor a git ref
 */
export async function openSourceArgument(argument: string, context: CommandContext): Promise<ConfigurationSource> {
  try {
    return await openConfigurationSource(argument, context.cwd, (line) => context.stderr(line));
  } catch (e) {
    if (e instanceof UnknownSourceError) throw new UsageError(e.message);
    throw e;
  }
}
