import * as fs from 'fs';
import * as path from 'path';
import { resolveGitCommit } from '../sources/git-ref-synthesis';
import { readSourceRecord, SOURCE_RECORD, writeSourceRecord } from '../sources/configuration-source';
import { PROTECTED_REF_VARIABLE, SYNTH_CACHE_SECRET_VARIABLE, SYNTH_CACHE_VARIABLE } from '../sources/synthesis-cache';
import { terminalLine } from '../private/terminal-text';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { refSynthesizer } from './source-argument';
import { UsageError } from './usage-error';

/** True when `file` is a symbolic link (to anything, or dangling). */
function isSymbolicLink(file: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * `secretstore-iac synth-ref REF OUTDIR`: synthesizes a git ref once into a directory, which
 * `moves`, `changed-stacks` and `access-diff` then read (the configuration pipeline's base).
 */
export const synthRefCommand: Command = {
  name: 'synth-ref',
  summary: 'synthesize a git ref into a directory (from the synthesis cache when it has its tree), for moves, changed-stacks and access-diff',
  usage: [
    'Usage: secretstore-iac synth-ref REF OUTDIR',
    '',
    'Checks REF (branch, tag, commit) out into a temporary git worktree, synthesizes it there with the',
    '`app` command of its cdktf.json (with the secretstore-iac its package-lock.json locks), and writes',
    'the synthesized output to OUTDIR, with secretstore-iac-source.json naming REF and its commit (the',
    'reports of moves, changed-stacks and access-diff call OUTDIR by them). OUTDIR must not exist, be',
    'empty, or be an output synth-ref wrote (it holds secretstore-iac-source.json; replaced): no other',
    'folder is ever deleted.',
    '',
    `With ${SYNTH_CACHE_VARIABLE}=DIR (relative to the working directory), the output is taken from`,
    'the synthesis cache DIR when it holds REF\'s tree synthesized with the same library version, and',
    'stored there otherwise; a corrupt entry is ignored, removed and synthesized again. The',
    'configuration pipeline keeps .secretstore-iac/synth-cache in its cache (docs/pipelines.md §7).',
    `Entries are sealed (key, identity, every file); with ${SYNTH_CACHE_SECRET_VARIABLE} set, with an`,
    'HMAC of that secret, so an entry written without it is never read with it. Without the secret',
    'the seal is a plain SHA-256 anyone who can write the cache can compute again: entries are',
    'unverified and never read (REF is synthesized; the entry is still stored). With',
    `${PROTECTED_REF_VARIABLE} set (CI), protected and unprotected refs keep separate entries (DIR/protected,`,
    'DIR/unprotected). An entry that does not verify is ignored, removed and synthesized again.',
    '',
    'Exit codes: 0 written, 2 usage error (REF is no git ref, OUTDIR holds something else),',
    '3 the synthesis failed (its output\'s tail is printed; OUTDIR is left as it was).',
    '',
    'Example (CI): secretstore-iac synth-ref "origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME" cdktf.base.out',
    '              secretstore-iac changed-stacks cdktf.base.out cdktf.out',
  ].join('\n'),
  async run(args, context) {
    const { positionals } = parseCommandArguments(args, {}, { min: 2, max: 2, names: 'REF and OUTDIR' });
    const [ref, out] = positionals;
    const commit = await resolveGitCommit(ref, context.cwd);
    if (commit === undefined) throw new UsageError(`${ref} is not a git ref of the repository at ${context.cwd}`);
    const outdir = path.resolve(context.cwd, out);
    // Only a folder this command wrote (its source record) is replaced, or an empty one: never a
    // folder that merely holds a manifest.json (cdktf.out, a folder of the user's).
    if (fs.existsSync(outdir) || isSymbolicLink(outdir)) {
      const replaceable = !isSymbolicLink(outdir) && fs.statSync(outdir).isDirectory() && (fs.readdirSync(outdir).length === 0 || readSourceRecord(outdir) !== undefined);
      if (!replaceable) {
        throw new UsageError(
          `OUTDIR ${terminalLine(out)} exists and was not written by synth-ref (it is not an empty folder and has no ${SOURCE_RECORD} naming a ref and commit): not replaced; give a folder that does not exist yet, or remove ${terminalLine(out)} yourself`,
        );
      }
    }
    const synthesizer = refSynthesizer(context);
    try {
      const synthesized = await synthesizer.synthesize(commit);
      // Beside, then renamed: OUTDIR is whole or as it was.
      const staging = `${outdir}.writing-${process.pid}`;
      fs.rmSync(staging, { recursive: true, force: true });
      fs.cpSync(synthesized, staging, { recursive: true });
      writeSourceRecord(staging, ref, commit);
      fs.rmSync(outdir, { recursive: true, force: true });
      fs.renameSync(staging, outdir);
    } finally {
      synthesizer.dispose();
    }
    context.stdout(`Synthesized ${terminalLine(ref)} (${commit.slice(0, 12)}) into ${terminalLine(out)}${synthesizer.synthesized === 0 && synthesizer.cache !== undefined ? ` (from the synthesis cache, ${synthesizer.cache.verification})` : ''}.`);
    return ExitCode.ok;
  },
};
