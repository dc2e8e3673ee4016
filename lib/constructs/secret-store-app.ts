import * as fs from 'fs';
import * as path from 'path';
import { App, AppConfig } from 'cdktf';
import { PlatformDeclarations } from '../rules/platform-declarations';
import { PLATFORM_RULES } from '../rules/platform-rules';
import { isArtifactSource, SynthesisArtifact } from './synthesis-artifact';
import { compareStrings } from '../private/compare-strings';

/** One problem of a synthesis: where, and what. */
export interface SynthesisProblem {
  /** Construct path (`ci-access/svc-executor`). */
  readonly constructPath: string;
  /** `field = "value": rule`, prefixed with a rule id for platform rules. */
  readonly message: string;
}

/** Thrown by {@link SecretStoreApp.synth} when any declaration is invalid; nothing has been written. */
export class SecretStoreValidationError extends Error {
  constructor(readonly problems: readonly SynthesisProblem[]) {
    super(
      `secretstore-iac: ${problems.length} problem${problems.length === 1 ? '' : 's'} found; nothing was written:\n` +
        problems.map((p) => `  [${p.constructPath}] ${p.message}`).join('\n'),
    );
    this.name = 'SecretStoreValidationError';
  }
}

/**
 * The cdktf App of a platform. Synthesis first validates every construct of every stack and runs
 * the platform rules, reporting all problems together; only then does it write, into a staging
 * directory that replaces the output directory in one rename, so a failed or interrupted synthesis
 * never leaves a half-written `cdktf.out`.
 */
export class SecretStoreApp extends App {
  private static stagingDir(finalDir: string): string {
    fs.mkdirSync(path.dirname(finalDir), { recursive: true });
    const staging = `${finalDir}.staging-${process.pid}`;
    fs.rmSync(staging, { recursive: true, force: true });
    return staging;
  }

  /** Where the synthesized stacks end up. */
  readonly finalOutdir: string;

  /** @param config cdktf app config; `outdir` defaults to `$CDKTF_OUTDIR` or `cdktf.out` */
  constructor(config: AppConfig = {}) {
    const finalOutdir = path.resolve(config.outdir ?? process.env.CDKTF_OUTDIR ?? 'cdktf.out');
    // cdktf's own per-stack validation is replaced by problems(), which covers every stack at once.
    // Stack traces are only kept for cdktf's annotations, which this library does not emit; skip the cost.
    super({ stackTraces: false, ...config, outdir: SecretStoreApp.stagingDir(finalOutdir), skipValidation: true });
    this.finalOutdir = finalOutdir;
  }

  /**
   * Moves what the engine keeps in a stack's working directory (`.terraform/`, the provider lock
   * file) from the previous output into the new one, so that a re-synthesis needs no new `init`.
   */
  private carryOverEngineFiles(previousDir: string, newDir: string): void {
    const stacks = path.join(previousDir, 'stacks');
    if (!fs.existsSync(stacks)) return;
    for (const stack of fs.readdirSync(stacks)) {
      const target = path.join(newDir, 'stacks', stack);
      if (!fs.existsSync(target)) continue;
      for (const name of SecretStoreApp.ENGINE_FILES) {
        const source = path.join(stacks, stack, name);
        if (fs.existsSync(source)) fs.renameSync(source, path.join(target, name));
      }
    }
  }

  /**
   * Files and directories the engine writes into a stack directory, kept across syntheses; with
   * them the import blocks `secretstore-iac adopt` writes, so that a re-synthesis between adopt
   * and apply does not silently turn the imports back into creates.
   */
  static readonly ENGINE_FILES = ['.terraform', '.terraform.lock.hcl', 'adopt-imports.tf.json'];

  /** Every problem of every construct and platform rule, sorted by construct path. */
  problems(): SynthesisProblem[] {
    const problems: SynthesisProblem[] = [];
    for (const c of this.node.findAll()) {
      c.node.validate().forEach((message) => problems.push({ constructPath: c.node.path, message }));
    }
    const declarations = new PlatformDeclarations(this);
    for (const rule of PLATFORM_RULES) {
      rule.check(declarations).forEach((f) => problems.push({ constructPath: f.constructPath, message: String(f.problem) }));
    }
    return problems.sort((a, b) => compareStrings(a.constructPath, b.constructPath));
  }

  /** The artifacts of every artifact source, sorted by path. */
  collectArtifacts(): SynthesisArtifact[] {
    return this.node
      .findAll()
      .filter(isArtifactSource)
      .flatMap((c) => c.artifacts())
      .sort((a, b) => compareStrings(a.path, b.path));
  }

  /** Paths (relative to the output directory) of the artifacts the last synthesis wrote, sorted. */
  get writtenArtifacts(): readonly string[] {
    return [...this.written];
  }

  private written = new Set<string>();

  private writeArtifacts(dir: string): void {
    const seen = (this.written = new Set<string>());
    for (const artifact of this.collectArtifacts()) {
      if (artifact.path.split('/').some((s) => s === '..' || s === '') || path.isAbsolute(artifact.path)) {
        throw new Error(`artifact path "${artifact.path}" must be relative, without ".." or empty segments`);
      }
      if (seen.has(artifact.path)) throw new Error(`two constructs write the artifact "${artifact.path}"`);
      seen.add(artifact.path);
      const file = path.join(dir, ...artifact.path.split('/'));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, artifact.content, { mode: artifact.mode ?? 0o644 });
      fs.chmodSync(file, artifact.mode ?? 0o644);
    }
  }

  /**
   * Validates, then writes all stacks to {@link finalOutdir}.
   * @throws SecretStoreValidationError listing every problem; the output directory is left untouched
   */
  synth(): void {
    const problems = this.problems();
    if (problems.length > 0) {
      fs.rmSync(this.outdir, { recursive: true, force: true });
      throw new SecretStoreValidationError(problems);
    }
    try {
      super.synth();
      this.writeArtifacts(this.outdir);
      // Swap by renames: the old output stays complete until the new one is complete.
      const previous = `${this.finalOutdir}.previous-${process.pid}`;
      this.carryOverEngineFiles(this.finalOutdir, this.outdir);
      if (fs.existsSync(this.finalOutdir)) fs.renameSync(this.finalOutdir, previous);
      fs.renameSync(this.outdir, this.finalOutdir);
      fs.rmSync(previous, { recursive: true, force: true });
    } finally {
      fs.rmSync(this.outdir, { recursive: true, force: true });
    }
  }
}
