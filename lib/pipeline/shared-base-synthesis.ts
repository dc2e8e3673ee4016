import * as fs from 'fs';
import * as path from 'path';
import { SHARED_SYNTH_DIR } from '../render/configuration-pipeline-yaml';
import { synthesisIdentity } from '../sources/git-ref-synthesis';
import { SynthesisCache, SynthesisIdentity, synthesisKey } from '../sources/synthesis-cache';

/**
 * The copy of the default branch's synthesis that merge-request pipelines read ({@link SHARED_SYNTH_DIR},
 * a cache entry per commit shared with unprotected pipelines; who writes and who reads:
 * `sharedSynthesisUse` in pipeline-base.ts). Sealed with a plain digest, not the protected secret (a
 * merge request's job does not hold it): the seal binds the entry to its key, the key to the commit's
 * tree and library, and every file to its digest, so a copy of another commit, a partial or an edited
 * one is refused; it does not prove who wrote it, which is why no protected pipeline ever reads it.
 */
function sharedCache(cwd: string): SynthesisCache {
  return new SynthesisCache(path.join(cwd, SHARED_SYNTH_DIR), 1, undefined, 'a merge request\'s base, which decides no more than the merge request itself (docs/pipelines.md §7)');
}

/**
 * Writes this commit's synthesis (`outdir`, before anything else is written into it) as the shared
 * copy of its commit (`identity`: the one the synth step stored it under in its own cache): the merge
 * requests whose diff base is this commit read it.
 */
export function writeSharedSynthesis(cwd: string, outdir: string, identity: SynthesisIdentity): void {
  sharedCache(cwd).store(identity, outdir);
}

/**
 * The shared copy of `commit`'s synthesis, verified: its entry's key is the one this clone computes
 * from the commit's tree and the library, its record and seal match that key, and every file has its
 * recorded digest (else it is removed and `progress` says why). The copy is removed from the job's
 * directory afterwards (taken into `into`), so a merge request's job never uploads it again.
 * @returns true when `into` holds the copy
 */
export async function readSharedSynthesis(cwd: string, commit: string, libraryVersion: string, into: string, progress: (line: string) => void): Promise<boolean> {
  const dir = path.join(cwd, SHARED_SYNTH_DIR);
  if (!fs.existsSync(dir)) return false;
  try {
    const identity = await synthesisIdentity(commit, cwd, libraryVersion);
    const out = sharedCache(cwd).lookup(synthesisKey(identity), progress);
    if (out === undefined) return false;
    fs.cpSync(out, into, { recursive: true });
    return true;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
