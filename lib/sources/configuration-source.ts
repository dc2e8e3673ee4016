import * as fs from 'fs';
import * as path from 'path';
import { resolveGitCommit } from './git-ref-synthesis';
import { RefSynthesizer } from './ref-synthesizer';

/** A synthesized output directory to analyse, however it was obtained. */
export interface ConfigurationSource {
  /** The cdktf output directory. */
  readonly dir: string;
  /** How to call it in a report: the argument as given. */
  readonly label: string;
  /** Releases temporary files (a synthesized git ref). */
  dispose(): void;
}

/**
 * The file `secretstore-iac synth-ref` writes into the output it synthesizes: the ref and commit it
 * came from, so a report names them (`origin/main (0123456789ab)`) rather than the directory.
 * Synthesis never writes it; the stacks' digests and the analyses never read it.
 */
export const SOURCE_RECORD = 'secretstore-iac-source.json';

/** Writes {@link SOURCE_RECORD} into a synthesized output. */
export function writeSourceRecord(dir: string, ref: string, commit: string): void {
  fs.writeFileSync(path.join(dir, SOURCE_RECORD), `${JSON.stringify({ ref, commit })}\n`);
}

/**
 * The ref and commit {@link SOURCE_RECORD} records in `dir`, or undefined when it has none (or one
 * `synth-ref` does not write): what tells an output `synth-ref` wrote, which it may replace, from any other folder.
 */
export function readSourceRecord(dir: string): { readonly ref: string; readonly commit: string } | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(path.join(dir, SOURCE_RECORD), 'utf8')) as { ref?: unknown; commit?: unknown };
    if (typeof record.ref === 'string' && typeof record.commit === 'string' && /^[0-9a-f]{40,64}$/.test(record.commit)) return { ref: record.ref, commit: record.commit };
  } catch {
    // No record (or an unreadable one).
  }
  return undefined;
}

/** How to call a synthesized output directory in a report: the ref it was synthesized from, when it records one. */
function directoryLabel(dir: string, argument: string): string {
  const record = readSourceRecord(dir);
  return record === undefined ? argument : `${record.ref} (${record.commit.slice(0, 12)})`;
}

/** The argument names neither a synthesized output directory nor a git ref. */
export class UnknownSourceError extends Error {}

/**
 * Opens `argument` as a configuration: a synthesized output directory (with `manifest.json`),
 * or else a git ref of the repository around `cwd`, synthesized in a temporary worktree.
 *
 * @param synthesizer synthesizes a git ref; give the same one for every side of a comparison, so a
 *   tree is synthesized once per run (the source's dispose leaves its outputs to it). Without it, a
 *   synthesizer of this source alone, without cache.
 * @throws UnknownSourceError when it is neither
 */
export async function openConfigurationSource(
  argument: string,
  cwd: string,
  progress?: (line: string) => void,
  synthesizer?: RefSynthesizer,
): Promise<ConfigurationSource> {
  const candidate = path.resolve(cwd, argument);
  if (fs.existsSync(candidate) && fs.statSync(candidate).isDirectory()) {
    if (!fs.existsSync(path.join(candidate, 'manifest.json'))) {
      throw new UnknownSourceError(`${argument} is a directory but not a synthesized output (no manifest.json)`);
    }
    return { dir: candidate, label: directoryLabel(candidate, argument), dispose: () => undefined };
  }
  const commit = await resolveGitCommit(argument, cwd);
  if (!commit) {
    throw new UnknownSourceError(`${argument} is neither a synthesized output directory nor a git ref`);
  }
  const own = synthesizer === undefined ? new RefSynthesizer(cwd, undefined, progress) : undefined;
  try {
    const dir = await (synthesizer ?? own!).synthesize(commit);
    return { dir, label: argument, dispose: () => own?.dispose() };
  } catch (e) {
    own?.dispose();
    throw e;
  }
}
