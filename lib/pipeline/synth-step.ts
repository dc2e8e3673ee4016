import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { terminalLine } from '../private/terminal-text';
import {
  BASE_OUTPUT,
  BUILD_MARK,
  CHANGED_STACKS_FILE,
  CHANGED_STACKS_NOTE,
  DESTROY_REMOVED_JOB,
  MOVES_NOTE,
  REMOVALS_APPROVAL,
  RETIRED_STACKS_FILE,
  SHARED_SYNTH_DIR,
} from '../render/configuration-pipeline-yaml';
import { SYNTH_BUILT_SCRIPT } from '../render/configuration-package-json';
import { writeSourceRecord } from '../sources/configuration-source';
import { resolveGitCommit, synthesisIdentity } from '../sources/git-ref-synthesis';
import { RefSynthesizer } from '../sources/ref-synthesizer';
import { readStackDigests } from '../sources/stack-digest';
import { selectChangedStacks } from '../sources/stack-selection';
import { SynthesisIdentity, synthesisKey } from '../sources/synthesis-cache';
import { parseIncrementalSummary } from '../sources/incremental-synthesis-summary';
import { pipelineBase, sharedSynthesisUse } from './pipeline-base';
import { readSharedSynthesis, writeSharedSynthesis } from './shared-base-synthesis';

/** This commit's synthesized output, which every later job reads (the synth job's artifact). */
export const HEAD_OUTPUT = 'cdktf.out';
/** The pipeline file synthesis writes, compared with the committed copy. */
const SYNTHESIZED_PIPELINE = 'cdktf.out/ci/secretstore-iac.gitlab-ci.yml';
/** The CI variable naming the committed copy of the pipeline file (set by the pipeline file itself). */
export const PIPELINE_COPY_VARIABLE = 'SECRETSTORE_IAC_PIPELINE_COPY';

/**
 * Where the base of the selection came from: the job's own synthesis cache, the copy the target
 * branch's pipeline wrote for merge requests (`target-pipeline`), a worktree compile, none, or it failed.
 */
export type BaseOrigin = 'cache' | 'target-pipeline' | 'worktree' | 'none' | 'failed';

/** What the synth step decided, for its log, `--format json` and its tests. */
export interface SynthStepResult {
  /** The stacks to plan and apply, in dependency order (undefined on a schedule: no selection). */
  readonly selected?: readonly string[];
  /** Stacks the base had and this commit holds only as a moves file. */
  readonly retired: readonly string[];
  /** The base ref compared with, and its commit, when there was one. */
  readonly base?: { readonly ref: string; readonly commit?: string; readonly why: string };
  /** Where the base's synthesis came from ({@link BaseOrigin}). */
  readonly baseOrigin: BaseOrigin;
  /** True when this commit's synthesis was stored in the synthesis cache (for the next pipelines' base). */
  readonly stored: boolean;
  /** Seconds per step, in the order run: `this commit`, `store`, `base`, `moves`, `changed-stacks`. */
  readonly seconds: Readonly<Record<string, number>>;
  /** This commit's stacks rendered and reused from an earlier synthesis (incremental synthesis, with the synthesis cache); undefined when its synthesis did not say. */
  readonly stacks?: { readonly rendered: number; readonly reused: number };
}

/** What the synth step sees of its process (a CLI command's context is one). */
export interface SynthStepIo {
  /** The job's environment: its CI variables. */
  readonly env: NodeJS.ProcessEnv;
  /** The project directory. */
  readonly cwd: string;
  /** Writes one line to standard output. */
  stdout(line: string): void;
  /** Writes one line to standard error. */
  stderr(line: string): void;
  /** True when child processes may share this process's standard streams. */
  readonly inheritStdio?: boolean;
}

/** How the step synthesizes this commit (`npm run <script>`): the job runs the project's npm script, tests give their own. */
export type HeadSynthesis = (script: string, io: SynthStepIo) => Promise<number>;

/** A command of the CLI the step runs in-process (one node start-up for the whole job): its exit code. */
export type InProcessCommand = (args: readonly string[], io: SynthStepIo) => Promise<number>;

/** What the step works with, given by the CLI command that runs it. */
export interface SynthStepTools {
  /** The synthesizer of git refs, with the job's synthesis cache (`SECRETSTORE_IAC_SYNTH_CACHE`, sealed). */
  readonly synthesizer: RefSynthesizer;
  /** The version of the library running, part of a cache key when the checkout locks none. */
  readonly libraryVersion: string;
  /** `secretstore-iac moves`. */
  readonly moves: InProcessCommand;
  /** `secretstore-iac changed-stacks`. */
  readonly changedStacks: InProcessCommand;
  /** This commit's synthesis; default {@link npmRunScript}. */
  readonly synthesizeHead?: HeadSynthesis;
}

/** Exit code of a process that ended without one. */
const NO_EXIT_CODE = 3;

/** Runs `npm run <script>` in the working directory, its output line by line to the context. */
export const npmRunScript: HeadSynthesis = (script, context) =>
  new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', script], { cwd: context.cwd, env: context.env, stdio: context.inheritStdio ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'] });
    const forward = (stream: NodeJS.ReadableStream | null, write: (line: string) => void) => {
      let pending = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const lines = (pending + chunk).split('\n');
        pending = lines.pop() ?? '';
        lines.forEach(write);
      });
      return () => pending && write(pending);
    };
    const flushOut = forward(child.stdout, (l) => context.stdout(l));
    const flushErr = forward(child.stderr, (l) => context.stderr(l));
    child.on('error', reject);
    child.on('close', (code) => {
      flushOut();
      flushErr();
      resolve(code ?? NO_EXIT_CODE);
    });
  });

/** A step failed in a way that ends the job (this commit does not synthesize, the committed pipeline is stale). */
export class SynthStepFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SynthStepFailure';
  }
}

function git(args: readonly string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', () => resolve({ code: 127, output }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** Seconds since `start` (`process.hrtime.bigint()`), one decimal. */
function since(start: bigint): number {
  return Math.round(Number(process.hrtime.bigint() - start) / 1e8) / 10;
}

/**
 * The synth job (`secretstore-iac pipeline synth`), in the project directory:
 *
 * 1. synthesizes this commit once into `cdktf.out` (the `dist/` the job's `npm run build` compiled, when from
 *    this commit and the project has `npm run synth:built`, else `npm run synth`), and fails when the
 *    committed pipeline file is not the one synthesis wrote;
 * 2. stores that synthesis in the synthesis cache, sealed, keyed by its commit's tree and library
 *    (only from a checkout that is its commit: nothing uncommitted), so the next pipelines whose base
 *    is this commit take it from there instead of compiling it;
 * 3. decides the base ({@link pipelineBase}), takes its synthesis from the cache (an entry this job
 *    cannot verify is never read) or, only when it is missing, compiles it in a worktree, saying so,
 *    into `cdktf.base.out`;
 * 4. writes the moves since the base (`moves`), the stacks to plan and apply (`changed-stacks`), the
 *    retired stacks and the merge request's note. A base that cannot be synthesized or compared: every
 *    stack is planned, saying why (too much is safe, too little is not).
 */
export async function runSynthStep(context: SynthStepIo, tools: SynthStepTools): Promise<SynthStepResult> {
  const say = (line: string) => context.stdout(`secretstore-iac: ${line}`);
  const warn = (line: string) => context.stderr(`secretstore-iac: ${line}`);
  const at = (file: string) => path.join(context.cwd, file);
  const seconds: Record<string, number> = {};

  // 1. This commit, synthesized once: every later job reads this cdktf.out (artifact), none synthesizes again.
  let start = process.hrtime.bigint();
  const commitSha = context.env.CI_COMMIT_SHA;
  const mark = fs.existsSync(at(BUILD_MARK)) ? fs.readFileSync(at(BUILD_MARK), 'utf8').trim() : undefined;
  const scripts = (JSON.parse(fs.readFileSync(at('package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  const built = commitSha !== undefined && mark === commitSha && scripts[SYNTH_BUILT_SCRIPT] !== undefined;
  const compileWhy = mark === undefined ? 'no dist/ marked by the job\'s npm run build' : mark !== commitSha ? 'dist/ was not compiled from this commit' : `no ${SYNTH_BUILT_SCRIPT} script in package.json`;
  say(built ? `synthesizing the dist/ the job's npm run build compiled from ${commitSha}: npm run ${SYNTH_BUILT_SCRIPT}` : `synthesizing this commit: npm run synth, which compiles first (${compileWhy})`);
  // A synthesis replaces its output: no stack directory of an earlier run is taken for this commit's (a retired stack).
  fs.rmSync(at(HEAD_OUTPUT), { recursive: true, force: true });
  // Its output piped line by line (not the terminal shared), so that the incremental synthesis's line is read back.
  let stacks: SynthStepResult['stacks'];
  const heard = (line: string) => (stacks = parseIncrementalSummary(line) ?? stacks);
  const headIo: SynthStepIo = { ...context, inheritStdio: false, stdout: (l) => (heard(l), context.stdout(l)), stderr: (l) => (heard(l), context.stderr(l)) };
  const code = await (tools.synthesizeHead ?? npmRunScript)(built ? SYNTH_BUILT_SCRIPT : 'synth', headIo);
  if (code !== 0) throw new SynthStepFailure(`the synthesis of this commit failed (exit ${code}; its output is above): nothing selected`);
  // npm makes a package's bin executable only when it links it: keep this project's own bin runnable as the later jobs' SECRETSTORE_IAC_BIN.
  if (fs.existsSync(at('dist/bin/secretstore-iac.js'))) fs.chmodSync(at('dist/bin/secretstore-iac.js'), 0o755);
  seconds['this commit'] = since(start);
  const copy = context.env[PIPELINE_COPY_VARIABLE];
  if (copy !== undefined && copy !== '') {
    const same = fs.existsSync(at(SYNTHESIZED_PIPELINE)) && fs.existsSync(at(copy)) && fs.readFileSync(at(SYNTHESIZED_PIPELINE)).equals(fs.readFileSync(at(copy)));
    if (!same) throw new SynthStepFailure(`${terminalLine(copy)} is not the pipeline this synthesis wrote: copy ${SYNTHESIZED_PIPELINE} to it and commit`);
  }

  const synthesizer = tools.synthesizer;
  // 2. Stored for the next pipelines (their base), before `moves` writes into cdktf.out.
  start = process.hrtime.bigint();
  const storedAs = await storeHeadSynthesis(context, synthesizer, tools.libraryVersion, say);
  const stored = storedAs !== undefined;
  const share = sharedSynthesisUse(context.env);
  if (storedAs !== undefined && share.kind === 'write') {
    writeSharedSynthesis(context.cwd, at(HEAD_OUTPUT), storedAs);
    say(`this commit's synthesis (tree ${storedAs.tree.slice(0, 12)}) written to ${SHARED_SYNTH_DIR} too, the cache entry of this commit that merge-request pipelines read (${share.why})`);
  }
  seconds.store = since(start);

  // 3. The base.
  fs.writeFileSync(at(RETIRED_STACKS_FILE), '');
  const decision = pipelineBase(context.env);
  if (decision.kind === 'schedule') {
    say('schedule: every stack is checked for drift, none is selected');
    return { retired: [], baseOrigin: 'none', stored, seconds, stacks };
  }
  const head = readStackDigests(at(HEAD_OUTPUT));
  const every = selectChangedStacks(new Map(), head).selected;
  const planEvery = (why: string, note: string): string[] => {
    fs.writeFileSync(at(CHANGED_STACKS_FILE), every.map((s) => `${s}\n`).join(''));
    fs.writeFileSync(at(CHANGED_STACKS_NOTE), `### Stacks planned: every stack (${note})\n`);
    warn(`${why}: every stack is planned`);
    return [...every];
  };
  fs.rmSync(at(BASE_OUTPUT), { recursive: true, force: true });
  if (decision.kind === 'none') {
    const selected = planEvery(decision.why, 'no previous commit to compare with');
    report(say, selected, [], 'nothing', seconds, stacks);
    return { selected, retired: [], baseOrigin: 'none', stored, seconds, stacks };
  }
  start = process.hrtime.bigint();
  if (decision.fetch !== undefined) await git(['fetch', '--quiet', 'origin', decision.fetch], context.cwd);
  const commit = await resolveGitCommit(decision.ref, context.cwd);
  const base = { ref: decision.ref, commit, why: decision.why };
  let baseOrigin: BaseOrigin = 'failed';
  if (commit === undefined) {
    warn(`the base ${terminalLine(decision.ref)} (${decision.why}) is no commit of this clone`);
  } else {
    say(`base: ${terminalLine(decision.ref)} (${commit.slice(0, 12)}), ${decision.why}`);
    try {
      const staging = `${at(BASE_OUTPUT)}.writing-${process.pid}`;
      fs.rmSync(staging, { recursive: true, force: true });
      // A merge request: first the copy its target branch's pipeline wrote of this commit (verified).
      const shared = share.kind === 'read' && share.commit === decision.ref && (await readSharedSynthesis(context.cwd, commit, tools.libraryVersion, staging, warn));
      if (shared) {
        baseOrigin = 'target-pipeline';
        say(`base ${commit.slice(0, 12)}: its synthesis from the target branch's pipeline (the copy its synth job wrote to ${SHARED_SYNTH_DIR}; key, tree and file digests match; unverified: a plain SHA-256 seal, which anyone who can write an unprotected cache can compute again, so it only decides this merge request's base): not compiled`);
      } else {
        if (share.kind === 'read') say(`base ${commit.slice(0, 12)}: no copy of its synthesis from the target branch's pipeline in ${SHARED_SYNTH_DIR} that this job can verify`);
        const before = synthesizer.synthesized;
        const synthesized = await synthesizer.synthesize(commit);
        baseOrigin = synthesizer.synthesized === before ? 'cache' : 'worktree';
        say(
          baseOrigin === 'cache'
            ? `base ${commit.slice(0, 12)}: its synthesis from the synthesis cache (stored by a pipeline of its commit; ${synthesizer.cache?.verification ?? 'no cache'})`
            : `base ${commit.slice(0, 12)}: no synthesis of it in the synthesis cache (no pipeline of its commit stored one this job can verify): compiled and synthesized in a worktree`,
        );
        fs.cpSync(synthesized, staging, { recursive: true });
      }
      writeSourceRecord(staging, decision.ref, commit);
      fs.renameSync(staging, at(BASE_OUTPUT));
    } catch (e) {
      warn(`${terminalLine(decision.ref)} could not be synthesized: ${(e as Error).message}`);
      fs.rmSync(at(BASE_OUTPUT), { recursive: true, force: true });
      baseOrigin = 'failed';
    }
  }
  seconds.base = since(start);
  if (baseOrigin === 'failed') {
    fs.rmSync(at(MOVES_NOTE), { force: true });
    const selected = planEvery(`${terminalLine(decision.ref)} could not be synthesized (the error is above): no moves written`, `the comparison with \`${decision.ref}\` failed: see the synth job`);
    report(say, selected, [], decision.ref, seconds, stacks);
    return { selected, retired: [], base, baseOrigin, stored, seconds, stacks };
  }

  // 4. Objects that moved between stacks since the base (sharding): removed blocks where they were,
  // import blocks where they are now, so no plan recreates them; renames; removals listed for the note.
  start = process.hrtime.bigint();
  fs.rmSync(at(MOVES_NOTE), { force: true });
  const moves = await runQuietly(() => tools.moves([BASE_OUTPUT, HEAD_OUTPUT, '--markdown-file', MOVES_NOTE, '--approval', REMOVALS_APPROVAL], context), warn);
  if (moves !== 0) warn(`the moves since ${terminalLine(decision.ref)} could not be written (the error is above): a plan that destroys a moved object will be refused`);
  seconds.moves = since(start);

  start = process.hrtime.bigint();
  const lines: string[] = [];
  const selection = await runQuietly(() => tools.changedStacks([BASE_OUTPUT, HEAD_OUTPUT, '--markdown-file', CHANGED_STACKS_NOTE], { ...context, stdout: (l) => lines.push(l) }), warn);
  seconds['changed-stacks'] = since(start);
  let selected: string[];
  if (selection !== 0) {
    selected = planEvery(`the stacks changed since ${terminalLine(decision.ref)} could not be told (the error is above)`, `the comparison with \`${decision.ref}\` failed: see the synth job`);
  } else {
    selected = lines.join('\n').split('\n').map((l) => l.trim()).filter(Boolean);
    fs.writeFileSync(at(CHANGED_STACKS_FILE), selected.map((s) => `${s}\n`).join(''));
  }
  if (fs.existsSync(at(MOVES_NOTE)) && fs.statSync(at(MOVES_NOTE)).size > 0) fs.appendFileSync(at(CHANGED_STACKS_NOTE), `\n${fs.readFileSync(at(MOVES_NOTE), 'utf8')}`);

  // A stack the base had and this commit no longer has holds only its moves file: planned and applied
  // after every other stack (the retired-stacks jobs); what was removed is destroyed only by the manual job.
  const stacksDir = at(path.join(HEAD_OUTPUT, 'stacks'));
  const retired = fs.existsSync(stacksDir)
    ? fs
        .readdirSync(stacksDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && fs.existsSync(path.join(stacksDir, d.name, 'moves.tf.json')) && !fs.existsSync(path.join(stacksDir, d.name, 'cdk.tf.json')))
        .map((d) => d.name)
        .sort()
    : [];
  fs.writeFileSync(at(RETIRED_STACKS_FILE), retired.map((s) => `${s}\n`).join(''));
  if (retired.length > 0) {
    fs.appendFileSync(
      at(CHANGED_STACKS_NOTE),
      `\n### Retired stacks: their state forgets the objects that moved; what was removed is destroyed only by ${DESTROY_REMOVED_JOB}\n\n${retired.map((s) => `- \`${s}\`\n`).join('')}`,
    );
  }
  report(say, selected, retired, decision.ref, seconds, stacks);
  return { selected, retired, base, baseOrigin, stored, seconds, stacks };
}

/** A command run in-process: its failure is a result (the job goes on, planning every stack), its message printed. */
async function runQuietly(run: () => Promise<number>, warn: (line: string) => void): Promise<number> {
  try {
    return await run();
  } catch (e) {
    warn((e as Error).message);
    return NO_EXIT_CODE;
  }
}

/** The job log's summary: what is planned, in which order, and how long each step took. */
function report(say: (line: string) => void, selected: readonly string[], retired: readonly string[], against: string, seconds: Readonly<Record<string, number>>, stacks: SynthStepResult['stacks']): void {
  say(`stacks to plan and apply, in dependency order (against ${terminalLine(against)}):`);
  selected.forEach((s) => say(`  ${s}`));
  if (retired.length > 0) {
    say(`retired stacks, planned and applied after every other stack (forgets; removals only by ${DESTROY_REMOVED_JOB}):`);
    retired.forEach((s) => say(`  ${s}`));
  }
  const rendering = stacks === undefined ? '' : ` (this commit's stacks: ${stacks.rendered} rendered, ${stacks.reused} reused)`;
  say(`synth steps: ${Object.entries(seconds).map(([step, s]) => `${step} ${s.toFixed(1)} s`).join(', ')}${rendering}`);
}

/**
 * Stores this commit's synthesis (`cdktf.out`, before anything is written into it) in the synthesis
 * cache as the entry of its commit's tree and library, unless the cache already has it or the
 * checkout holds uncommitted changes to tracked files (then the synthesis is not its commit's).
 * @returns true when an entry of this commit is in the cache afterwards
 */
async function storeHeadSynthesis(context: SynthStepIo, synthesizer: RefSynthesizer, libraryVersion: string, say: (line: string) => void): Promise<SynthesisIdentity | undefined> {
  const cache = synthesizer.cache;
  if (cache === undefined) return undefined;
  const commit = await resolveGitCommit('HEAD', context.cwd);
  if (commit === undefined) return undefined;
  const status = await git(['status', '--porcelain', '--untracked-files=no'], context.cwd);
  if (status.code !== 0 || status.output.trim() !== '') {
    say('this commit\'s synthesis is not stored in the synthesis cache: the checkout differs from its commit');
    return undefined;
  }
  const identity = await synthesisIdentity(commit, context.cwd, libraryVersion);
  if (cache.lookup(synthesisKey(identity)) !== undefined) {
    say(`this commit's synthesis (tree ${identity.tree.slice(0, 12)}) is in the synthesis cache already`);
    return identity;
  }
  cache.store(identity, path.join(context.cwd, HEAD_OUTPUT));
  say(`this commit's synthesis (tree ${identity.tree.slice(0, 12)}) stored in the synthesis cache (${cache.dir}), sealed: the pipelines whose base is this commit take it from there`);
  return identity;
}
