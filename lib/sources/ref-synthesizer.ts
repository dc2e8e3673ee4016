import { synthesisIdentity, synthesizeGitRef } from './git-ref-synthesis';
import { SynthesisCache, synthesisKey } from './synthesis-cache';

/**
 * The syntheses of git refs within one run of a command: each tree (with its library) is synthesized
 * at most once, however many refs name it (`changed-stacks HEAD main` when both point at one tree),
 * and not at all when the synthesis cache has it. Outputs stay until {@link RefSynthesizer.dispose}.
 */
export class RefSynthesizer {
  private readonly outputs = new Map<string, Promise<string>>();
  private readonly disposers: Array<() => void> = [];
  private count = 0;

  /**
   * @param repo a directory of the repository the refs belong to (its `node_modules` is used)
   * @param cache the synthesis cache, when there is one
   * @param progress receives one line per step, for a terminal
   * @param runningLibrary the version of the library running (the CLI's), part of a cache key when the checkout locks none
   */
  constructor(
    readonly repo: string,
    readonly cache?: SynthesisCache,
    private readonly progress: (line: string) => void = () => undefined,
    private readonly runningLibrary: string = 'unknown',
  ) {}

  /** Syntheses actually run (not found in this run or in the cache). */
  get synthesized(): number {
    return this.count;
  }

  /**
   * The synthesized output of a commit: of this run when its tree was synthesized already, of the
   * cache when it has the entry, else synthesized now (and stored in the cache).
   * @throws Error when the synthesis fails (not remembered: a later call tries again)
   */
  synthesize(commit: string): Promise<string> {
    return (async () => {
      const identity = await synthesisIdentity(commit, this.repo, this.runningLibrary);
      const key = synthesisKey(identity);
      const known = this.outputs.get(key);
      if (known !== undefined) {
        this.progress(`${commit.slice(0, 12)}: same tree as a configuration synthesized in this run: not synthesized again`);
        return known;
      }
      const output = (async () => {
        const cached = this.cache?.lookup(key, this.progress);
        if (cached !== undefined) {
          this.progress(`${commit.slice(0, 12)}: synthesized output from the synthesis cache (${this.cache!.dir}; ${this.cache!.verification})`);
          return cached;
        }
        this.count++;
        const synthesized = await synthesizeGitRef(commit, this.repo, this.progress);
        if (this.cache === undefined) {
          this.disposers.push(synthesized.dispose);
          return synthesized.outdir;
        }
        try {
          return this.cache.store(identity, synthesized.outdir);
        } finally {
          synthesized.dispose();
        }
      })();
      this.outputs.set(key, output);
      output.catch(() => this.outputs.delete(key));
      return output;
    })();
  }

  /** Deletes the temporary outputs (cache entries stay). */
  dispose(): void {
    this.disposers.splice(0).forEach((d) => d());
    this.outputs.clear();
  }
}
