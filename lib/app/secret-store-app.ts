import * as fs from 'fs';
import * as path from 'path';
import { App, AppConfig, Aspects } from '../framework/framework';
import { PlatformDeclarations } from '../constructs/platform-declarations';
import { PLATFORM_RULES } from '../rules/platform-rules';
import { IConstruct } from 'constructs';
import { escapeRefusedCharacters, hasRefusedCharacter } from '../model/free-text';
import { ValidationProblem } from '../model/validation-problem';
import { recordDeclaredKvMounts } from '../constructs/declared-kv-mounts';
import { recordMachinePathReasons } from '../constructs/machine-path-reasons';
import { IArtifactSource, isArtifactSource, SynthesisArtifact } from '../constructs/synthesis-artifact';
import { artifactLayoutProblems } from '../constructs/artifact-layout';
import { compareStrings } from '../private/compare-strings';
import { OutputUpdate, updateOutputDirectory } from '../constructs/output-update';
import { startedByCdkCli } from './cdktf-cli-run';
import { inSynthesisRound, oncePerSynthesis } from '../constructs/synthesis-round';
import { declarePipelineStackGrants } from '../constructs/pipeline-stack-grant';
import { declareMountDependencies } from '../constructs/mount-dependencies';
import { FinalStackDocument } from '../constructs/final-stack-document';
import { IncrementalSynthesis, RENDER_KEYS_FILE } from '../sources/incremental-synthesis';
import { incrementalSummaryLine, IncrementalSynthesisSummary } from '../sources/incremental-synthesis-summary';
import { cliVersion } from '../cli/cli-version';

/** Configuration of a {@link SecretStoreApp}: cdktf's, and the incremental synthesis. */
export interface SecretStoreAppConfig extends AppConfig {
  /**
   * Reuse the stacks an earlier synthesis rendered when nothing they derive from changed
   * (lib/sources/incremental-synthesis.ts); `false`: render every stack.
   * @default from the environment: with `SECRETSTORE_IAC_SYNTH_CACHE` set (the pipeline's synth job), from that cache
   */
  readonly incremental?: IncrementalSynthesis | false;
}

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
 * the platform rules, reporting all problems together; only then does it write: cdktf into a staging
 * directory, from which only the files whose bytes changed replace theirs in the output directory
 * (lib/constructs/output-update.ts), so a failed synthesis writes nothing, an unchanged file is never
 * rewritten, and an interrupted one never leaves a half-written `cdktf.out`.
 */
export class SecretStoreApp extends App {
  private static stagingDir(finalDir: string): string {
    // A recursive mkdir of an existing directory still costs a failed mkdir: look first.
    if (!fs.existsSync(path.dirname(finalDir))) fs.mkdirSync(path.dirname(finalDir), { recursive: true });
    const staging = `${finalDir}.staging-${process.pid}`;
    fs.rmSync(staging, { recursive: true, force: true });
    return staging;
  }

  /** Where the synthesized stacks end up. */
  readonly finalOutdir: string;

  private readonly incremental: IncrementalSynthesis | false | undefined;

  /** @param config cdktf app config; `outdir` defaults to `$CDKTF_OUTDIR` or `cdktf.out` */
  constructor(config: SecretStoreAppConfig = {}) {
    const finalOutdir = path.resolve(config.outdir ?? process.env.CDKTF_OUTDIR ?? 'cdktf.out');
    const { incremental, ...cdktfConfig } = config;
    // cdktf's own per-stack validation is replaced by problems(), which covers every stack at once.
    // Stack traces are only kept for cdktf's annotations, which this library does not emit; skip the cost.
    super({ stackTraces: false, ...cdktfConfig, outdir: SecretStoreApp.stagingDir(finalOutdir), skipValidation: true });
    this.finalOutdir = finalOutdir;
    this.incremental = incremental;
    // cdktf creates the staging directory (and its stacks/) at construction; remove it until synth()
    // writes, so that a declaration that fails, or an app never synthesized, leaves nothing behind.
    // Both are empty: two rmdir, where a recursive removal costs milliseconds on a slow disk.
    fs.rmdirSync(path.join(this.outdir, 'stacks'));
    fs.rmdirSync(this.outdir);
  }

  private readonly declarationProblems: SynthesisProblem[] = [];

  /**
   * Runs `declare` (the code that adds stacks and constructs to this app) and turns an exception it
   * throws (two constructs with the same id, a construct library's own check) into a problem that
   * {@link synth} reports with every other problem, instead of a stack trace.
   * @returns this app
   */
  define(declare: (app: this) => void): this {
    try {
      declare(this);
    } catch (error) {
      this.declarationProblems.push(SecretStoreApp.declarationProblem(error));
    }
    return this;
  }

  private static declarationProblem(error: unknown): SynthesisProblem {
    const message = error instanceof Error ? error.message : String(error);
    const duplicate = message.match(/^There is already a Construct with name '(.*)' in \S+(?: \[(.*)\])?$/s);
    if (duplicate) {
      return {
        constructPath: duplicate[2] ?? '',
        message: String(
          new ValidationProblem('id', duplicate[1], 'is already the id of another construct in this scope: construct ids are unique within their parent'),
        ),
      };
    }
    return { constructPath: '', message: `declaration failed: ${message.split('\n')[0]}` };
  }

  /**
   * Every problem of every construct and platform rule, sorted by construct path. The platform
   * rules read each stack's final document (lib/constructs/final-stack-document.ts): the JSON the
   * engine loads, after every override.
   */
  problems(): SynthesisProblem[] {
    return inSynthesisRound(this, () => this.findProblems());
  }

  private findProblems(): SynthesisProblem[] {
    // The declarations are complete: the pipeline roles' grants join every stack they run, as store objects like any other.
    declarePipelineStackGrants(this);
    // A raw role under a mount its stack enables, written with the mount's path as text, waits for the mount.
    declareMountDependencies(this);
    // The records are part of the documents the rules read and cdktf writes: made before either renders.
    let recordFailure: unknown;
    try {
      // The stacks never create the KV mount: record which one they rely on, for tf, drift and adopt.
      recordDeclaredKvMounts(this);
      // Why people read a machine's path, for the access diff's reviewer (nothing without a reason).
      recordMachinePathReasons(this);
    } catch (e) {
      // Invalid declarations the validations below report; thrown if they report nothing.
      recordFailure = e;
    }
    const problems: SynthesisProblem[] = [...this.declarationProblems];
    // cdktf writes HCL when given hclOutput or SYNTH_HCL_OUTPUT=true: text the rules would not have read.
    if (this.hclOutput) {
      problems.push({ constructPath: '', message: String(new ValidationProblem('hclOutput', true, 'must be false (and SYNTH_HCL_OUTPUT unset): the engine would load HCL that no rule read; the rules read the JSON documents')) });
    }
    const renderable: IArtifactSource[] = [];
    for (const c of this.node.findAll()) {
      const idProblem = constructIdProblem(c);
      if (idProblem) problems.push({ constructPath: c.node.scope?.node.path ?? '', message: String(idProblem) });
      if (Aspects.of(c).all.length > 0) {
        problems.push({
          constructPath: c.node.path,
          message: String(new ValidationProblem('aspects', Aspects.of(c).all.map((a) => a.constructor.name), 'must be empty: cdktf runs aspects while it writes the stacks, after the rules read them; make the change in the declarations')),
        });
      }
      const own = c.node.validate();
      own.forEach((message) => problems.push({ constructPath: c.node.path, message }));
      // A source with problems of its own may not render; its layout is checked once they are fixed.
      if (own.length === 0 && this.writesArtifactsOf(c)) renderable.push(c);
    }
    // Where the artifacts go is checked with everything else, before anything is written.
    artifactLayoutProblems(renderable, (source) => this.artifactsOf(source)).forEach((p) => problems.push({ constructPath: p.constructPath, message: String(p.problem) }));
    const declarations = PlatformDeclarations.of(this);
    const constructProblems = problems.length;
    for (const rule of PLATFORM_RULES) {
      try {
        rule.check(declarations).forEach((f) => problems.push({ constructPath: f.constructPath, message: String(f.problem) }));
      } catch (e) {
        // A stack whose declarations are invalid may not render: its own problems say why.
        if (constructProblems === 0) {
          problems.push({ constructPath: '', message: `${rule.id}: the synthesized documents could not be read: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}` });
        }
      }
    }
    if (problems.length === 0) {
      // What the validations did not explain: an element that cannot render stops the synthesis here, as a problem.
      for (const stack of declarations.stacks) {
        FinalStackDocument.of(stack).unrendered.forEach((u) => problems.push({ constructPath: u.constructPath, message: `could not be rendered: ${u.message}` }));
      }
    }
    if (problems.length === 0 && recordFailure !== undefined) throw recordFailure;
    // A construct path holds the ids as given: one with a line break would split the report's lines.
    return problems
      .map((p) => ({ constructPath: escapeRefusedCharacters(p.constructPath), message: p.message }))
      .sort((a, b) => compareStrings(a.constructPath, b.constructPath));
  }

  /**
   * Whether this app writes the artifacts of `c`: every artifact source's. A subclass that writes
   * only the stacks (the synthesis benchmark's) says no, and neither renders nor checks them.
   */
  protected writesArtifactsOf(c: IConstruct): c is IArtifactSource {
    return isArtifactSource(c);
  }

  /** The artifacts of every artifact source, sorted by path. */
  collectArtifacts(): SynthesisArtifact[] {
    return this.node
      .findAll()
      .filter((c): c is IArtifactSource => this.writesArtifactsOf(c))
      .flatMap((c) => this.artifactsOf(c))
      .sort((a, b) => compareStrings(a.path, b.path));
  }

  /** The artifacts of `source`, rendered once per synthesis: its layout check and its writing share one rendering. */
  private artifactsOf(source: IArtifactSource): readonly SynthesisArtifact[] {
    return oncePerSynthesis(source, 'artifacts', () => source.artifacts());
  }

  /** Paths (relative to the output directory) of the artifacts the last synthesis produced, sorted, whether or not their bytes changed. */
  get writtenArtifacts(): readonly string[] {
    return this.produced;
  }

  private produced: readonly string[] = [];

  /** What the last synthesis changed in {@link finalOutdir}: the files it wrote and those it removed; both empty when nothing changed. */
  get lastUpdate(): OutputUpdate {
    return this.update;
  }

  private update: OutputUpdate = { written: [], removed: [] };

  /** What the last synthesis rendered and reused, when it was incremental ({@link SecretStoreAppConfig.incremental}). */
  get lastIncremental(): IncrementalSynthesisSummary | undefined {
    return this.incrementalSummary;
  }

  private incrementalSummary?: IncrementalSynthesisSummary;

  /** The artifacts, each path checked once more before anything is written. */
  private checkedArtifacts(): SynthesisArtifact[] {
    const seen = new Set<string>();
    const artifacts = this.collectArtifacts();
    for (const artifact of artifacts) {
      // problems() refused these already (artifactLayoutProblems); kept as the last guard before a write.
      if (artifact.path.split('/').some((s) => s === '..' || s === '') || path.isAbsolute(artifact.path)) {
        throw new Error(`artifact path "${artifact.path}" must be relative, without ".." or empty segments`);
      }
      if (seen.has(artifact.path)) throw new Error(`two constructs write the artifact "${artifact.path}"`);
      seen.add(artifact.path);
    }
    return artifacts;
  }

  /**
   * Validates, then brings {@link finalOutdir} to the synthesized stacks and artifacts, writing only
   * the files whose bytes changed (lib/constructs/output-update.ts): a synthesis with no change
   * writes nothing, and what the engine keeps in a stack's directory stays.
   * @throws SecretStoreValidationError listing every problem; the output directory is left untouched
   */
  synth(): void {
    inSynthesisRound(this, () => this.synthesize());
  }

  private synthesize(): void {
    // Attached before the rules render the stacks: the documents they read are the ones written, reused or not.
    const incremental = this.incremental === false ? undefined : (this.incremental ?? IncrementalSynthesis.fromEnvironment(process.env, cliVersion()));
    incremental?.attach(this);
    try {
      const problems = this.problems();
      if (problems.length > 0) {
        fs.rmSync(this.outdir, { recursive: true, force: true });
        throw new SecretStoreValidationError(problems);
      }
      fs.mkdirSync(this.outdir);
      fs.mkdirSync(path.join(this.outdir, 'stacks'));
      super.synth();
      const artifacts = this.checkedArtifacts();
      if (incremental !== undefined) {
        // Checked before anything reaches the output directory: a reused stack is the bytes it was.
        const { record, summary } = incremental.verifyWritten(this.outdir);
        artifacts.push({ path: RENDER_KEYS_FILE, content: record });
        this.incrementalSummary = summary;
        // Said in the synth job's log (which reads it back); an app given its incremental synthesis reads lastIncremental.
        if (this.incremental === undefined) process.stderr.write(`${incrementalSummaryLine(summary)}\n`);
      }
      this.update = updateOutputDirectory(this.outdir, this.finalOutdir, artifacts, { leaveRetiredStackDirectories: startedByCdkCli() });
      this.produced = artifacts.map((a) => a.path);
    } finally {
      incremental?.detach(this);
      // A first synthesis renamed the staging directory into place; an update leaves what did not change.
      if (fs.existsSync(this.outdir)) fs.rmSync(this.outdir, { recursive: true, force: true });
    }
  }
}

/**
 * Construct ids reach the outputs (policy comments, the CI template, reports, Terraform addresses):
 * letters, digits, `.`, `_` and `-`, at most 100 characters, so that no id can end a comment or a
 * string of any output format.
 */
const CONSTRUCT_ID = /^[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9_])?$/;

/** The problem of a construct whose id breaks {@link CONSTRUCT_ID}, reported at its parent's path. */
function constructIdProblem(c: IConstruct): ValidationProblem | undefined {
  const id = c.node.id;
  if (c.node.scope === undefined || CONSTRUCT_ID.test(id)) return undefined;
  const why = hasRefusedCharacter(id) ? 'it contains a control character or line separator' : 'it contains other characters';
  return new ValidationProblem(
    'id',
    id,
    `must be letters, digits, ".", "_" and "-", at most 100 characters (${why}): construct ids are written into policies, CI templates and reports`,
  );
}
