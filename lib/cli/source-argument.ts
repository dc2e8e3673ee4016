import { ownCdktfAppCommand } from '../sources/cdktf-app-command';
import * as path from 'path';
import { ConfigurationSource, UnknownSourceError, openConfigurationSource } from '../sources/configuration-source';
import { RefSynthesizer } from '../sources/ref-synthesizer';
import { SYNTH_CACHE_SECRET_VARIABLE, SYNTH_CACHE_VARIABLE, SynthesisCache, synthesisCacheDir } from '../sources/synthesis-cache';
import { cliVersion } from './cli-version';
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
    'synthesized there with the `app` command of its cdktf.json, then removed. A tree is synthesized',
    `once per run; with ${SYNTH_CACHE_VARIABLE}=DIR, once per tree and library version (docs/pipelines.md §7).`,
    ...(app === undefined ? [] : [`Here that command is \`${app}\`.`]),
  ].join('\n');
}

/**
 * The synthesizer of git refs for one run of a command: with the synthesis cache of
 * `SECRETSTORE_IAC_SYNTH_CACHE` (relative to the working directory) when set; progress to standard error.
 */
export function refSynthesizer(context: CommandContext): RefSynthesizer {
  const cacheDir = context.env[SYNTH_CACHE_VARIABLE];
  const secret = context.env[SYNTH_CACHE_SECRET_VARIABLE];
  const cache = cacheDir ? new SynthesisCache(synthesisCacheDir(path.resolve(context.cwd, cacheDir), context.env), undefined, secret === '' ? undefined : secret) : undefined;
  // Before any synthesis: a cache that cannot hold the result is named with its fix, not met after minutes.
  const unusable = cache?.unusable();
  if (unusable !== undefined) {
    throw new UsageError(`${SYNTH_CACHE_VARIABLE}=${cacheDir}: the synthesis cache cannot be written (${unusable}): point ${SYNTH_CACHE_VARIABLE} at a writable directory, or unset it to synthesize without a cache`);
  }
  return new RefSynthesizer(context.cwd, cache, (line) => context.stderr(line), cliVersion());
}

/**
 * Opens a SOURCE argument; progress of a git ref synthesis goes to standard error.
 * @param synthesizer the run's synthesizer ({@link refSynthesizer}), shared by the sides of a
 *   comparison; without it, one of this source alone (disposed with it)
 * @throws UsageError when the argument is empty, or neither a directory nor a git ref
 */
export async function openSourceArgument(argument: string, context: CommandContext, synthesizer?: RefSynthesizer): Promise<ConfigurationSource> {
  // '' would resolve to the working directory itself: named as the empty argument it is.
  if (argument === '') throw new UsageError(`SOURCE "" is an empty argument: give a synthesized output directory (${DEFAULT_SOURCE}) or a git ref`);
  const own = synthesizer === undefined ? refSynthesizer(context) : undefined;
  try {
    const source = await openConfigurationSource(argument, context.cwd, (line) => context.stderr(line), synthesizer ?? own);
    return own === undefined ? source : { ...source, dispose: () => own.dispose() };
  } catch (e) {
    own?.dispose();
    if (e instanceof UnknownSourceError) throw new UsageError(e.message);
    throw e;
  }
}
