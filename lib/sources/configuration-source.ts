import * as fs from 'fs';
import * as path from 'path';
import { resolveGitCommit, synthesizeGitRef } from './git-ref-synthesis';

/** A synthesized output directory to analyse, however it was obtained. */
export interface ConfigurationSource {
  /** The cdktf output directory. */
  readonly dir: string;
  /** How to call it in a report: the argument as given. */
  readonly label: string;
  /** Releases temporary files (a synthesized git ref). */
  dispose(): void;
}

/** The argument names neither a synthesized output directory nor a git ref. */
export class UnknownSourceError extends Error {}

/**
 * Opens `argument` as a configuration: a synthesized output directory (with `manifest.json`),
 * or else a git ref of the repository around `cwd`, synthesized in a temporary worktree.
 *
 * @throws UnknownSourceError when it is neither
 */
export async function openConfigurationSource(
  argument: string,
  cwd: string,
  progress?: (line: string) => void,
): Promise<ConfigurationSource> {
  const candidate = path.resolve(cwd, argument);
  if (fs.existsSync(candidate) && fs.statSync(candidate).isDirectory()) {
    if (!fs.existsSync(path.join(candidate, 'manifest.json'))) {
      throw new UnknownSourceError(`${argument} is a directory but not a synthesized output (no manifest.json)`);
    }
    return { dir: candidate, label: argument, dispose: () => undefined };
  }
  const commit = await resolveGitCommit(argument, cwd);
  if (!commit) {
    throw new UnknownSourceError(`${argument} is neither a synthesized output directory nor a git ref`);
  }
  const synthesized = await synthesizeGitRef(commit, cwd, progress);
  return { dir: synthesized.outdir, label: argument, dispose: synthesized.dispose };
}
