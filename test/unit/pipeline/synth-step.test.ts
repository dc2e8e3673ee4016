/**
 * `secretstore-iac pipeline synth`, the synth job, run for real in a git repository whose synthesis
 * (`npm run synth`, and cdktf.json's `app` in a worktree) writes two stacks from two files, with the
 * real synthesis cache, `moves` and `changed-stacks`. Its decisions: which base per pipeline source,
 * the base's synthesis from the cache (stored by the base's own pipeline) or, only when missing or
 * not verifiable, compiled in a worktree; this commit's synthesis stored for the next pipelines.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { pipelineBase, sharedSynthesisUse } from '../../../lib/pipeline/pipeline-base';
import { InProcessCommand, runSynthStep } from '../../../lib/pipeline/synth-step';
import { RefSynthesizer } from '../../../lib/sources/ref-synthesizer';

/** The cache's secret, as a protected job has it: without one, no entry is read (a plain seal is recomputable). */
const TEST_CACHE_SECRET = 'test cache secret';

const ZEROS = '0'.repeat(40);
/** The shared copy's directory, as the synth job's cache entry restores it. */
const SHARED = '.secretstore-iac/synth-shared';

describe('secretstore-iac pipeline synth', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-pipeline-synth-'));
  const repo = path.join(root, 'config');
  const counter = path.join(root, 'worktree-syntheses');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  const worktreeSyntheses = () => (fs.existsSync(counter) ? fs.readFileSync(counter, 'utf8').split('\n').filter(Boolean).length : 0);
  // Two stacks, each holding its file's text; a worktree synthesis (CDKTF_OUTDIR set) is counted.
  const synth = `const fs = require('fs'), path = require('path');
const out = process.env.CDKTF_OUTDIR || 'cdktf.out';
if (process.env.CDKTF_OUTDIR) fs.appendFileSync(${JSON.stringify(counter)}, 'run\\n');
const stacks = {};
for (const name of ['one', 'two']) {
  fs.mkdirSync(path.join(out, 'stacks', name), { recursive: true });
  fs.writeFileSync(path.join(out, 'stacks', name, 'cdk.tf.json'), JSON.stringify({ resource: {}, '//': { metadata: { config: fs.readFileSync(name + '.txt', 'utf8') } } }));
  stacks[name] = { synthesizedStackPath: 'stacks/' + name + '/cdk.tf.json', workingDirectory: 'stacks/' + name };
}
fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify({ stacks }));
// As SecretStoreApp says it with the synthesis cache set (incremental synthesis).
if (process.env.SECRETSTORE_IAC_SYNTH_CACHE && !process.env.CDKTF_OUTDIR) console.error('secretstore-iac: incremental synthesis: 1 stacks rendered, 1 reused from the synthesis cache entry 0123456789ab');
`;
  const commits: Record<string, string> = {};

  beforeAll(() => {
    fs.mkdirSync(path.join(repo, 'node_modules'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'synth.js'), synth);
    fs.writeFileSync(path.join(repo, 'cdktf.json'), JSON.stringify({ app: 'node synth.js' }));
    fs.writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ name: 'config', private: true, scripts: { synth: 'node synth.js' } }));
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n.cache/\n*.out/\n*.txt.md\n');
    fs.writeFileSync(path.join(repo, 'one.txt'), 'one\n');
    fs.writeFileSync(path.join(repo, 'two.txt'), 'two\n');
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'base');
    commits.base = git('rev-parse', 'HEAD');
    fs.writeFileSync(path.join(repo, 'two.txt'), 'two, changed\n');
    git('commit', '-q', '-am', 'two changed');
    commits.head = git('rev-parse', 'HEAD');
  });

  beforeEach(() => {
    fs.rmSync(counter, { force: true });
    fs.rmSync(path.join(repo, '.cache'), { recursive: true, force: true });
    fs.rmSync(path.join(repo, SHARED), { recursive: true, force: true });
    git('checkout', '-q', '--detach', commits.head);
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Runs the job at `commit` with `env` (the cache `.cache` unless told otherwise); its JSON result and log. */
  async function job(commit: string, env: Record<string, string>) {
    git('checkout', '-q', '--detach', commit);
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runCli(['pipeline', 'synth', '--format', 'json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SECRETSTORE_IAC_SYNTH_CACHE: '.cache', SECRETSTORE_IAC_SYNTH_CACHE_SECRET: TEST_CACHE_SECRET, CI_COMMIT_SHA: commit, ...env },
      cwd: repo,
      isTerminal: false,
      stdout: (l) => stdout.push(l),
      stderr: (l) => stderr.push(l),
    });
    const read = (file: string) => (fs.existsSync(path.join(repo, file)) ? fs.readFileSync(path.join(repo, file), 'utf8') : undefined);
    return { code, result: code === 0 ? JSON.parse(stdout.join('\n')) : undefined, log: stderr.join('\n'), read };
  }
  /** The default-branch pipeline of the base commit (no commit before it): it stores its synthesis. */
  const basePipeline = (env: Record<string, string> = {}) => job(commits.base, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: ZEROS, ...env });

  it('the base\'s own pipeline stored its synthesis: the next pipeline takes the base from the cache, compiles nothing, and selects only the changed stack', async () => {
    const first = await basePipeline();
    expect(first.result).toMatchObject({ selected: ['one', 'two'], baseOrigin: 'none', stored: true });
    expect(first.read('changed-stacks.md')).toBe('### Stacks planned: every stack (no previous commit to compare with)\n');
    expect(first.log).toContain('secretstore-iac: no previous commit to compare with: every stack is planned');
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base });
    expect(r.result).toMatchObject({ selected: ['two'], retired: [], baseOrigin: 'cache', base: { ref: commits.base, commit: commits.base }, stored: true });
    expect(worktreeSyntheses()).toBe(0);
    expect(r.log).toContain(`base ${commits.base.slice(0, 12)}: its synthesis from the synthesis cache`);
    expect(r.read('changed-stacks.txt')).toBe('two\n');
    expect(r.read('retired-stacks.txt')).toBe('');
    expect(JSON.parse(r.read('cdktf.base.out/secretstore-iac-source.json')!)).toEqual({ ref: commits.base, commit: commits.base });
    expect(r.read('cdktf.base.out/stacks/two/cdk.tf.json')).toContain('"config":"two\\n"');
    expect(r.log).toMatch(/synth steps: this commit \d+\.\d s, store \d+\.\d s, base \d+\.\d s, moves \d+\.\d s, changed-stacks \d+\.\d s/);
  });

  it('the synth steps line says how many of this commit\'s stacks its synthesis rendered and reused (read back from its output)', async () => {
    const r = await basePipeline();
    expect(r.result.stacks).toEqual({ rendered: 1, reused: 1 });
    expect(r.log).toMatch(/synth steps: this commit \d+\.\d s, .* \(this commit's stacks: 1 rendered, 1 reused\)$/m);
    // Its output is read even when the job shares the terminal: the synthesis's own streams are piped.
    const log: string[] = [];
    const io = { env: { PATH: process.env.PATH, HOME: process.env.HOME, CI_PIPELINE_SOURCE: 'schedule' }, cwd: repo, inheritStdio: true, stdout: (l: string) => log.push(l), stderr: (l: string) => log.push(l) };
    const synthesizer = new RefSynthesizer(repo);
    try {
      let inherited: boolean | undefined;
      const result = await runSynthStep(io, {
        synthesizer,
        libraryVersion: 'test',
        moves: async () => 0,
        changedStacks: async () => 0,
        synthesizeHead: async (_script, headIo) => {
          inherited = headIo.inheritStdio;
          fs.mkdirSync(path.join(repo, 'cdktf.out'), { recursive: true });
          headIo.stderr('secretstore-iac: incremental synthesis: 2 stacks rendered, 0 reused from no synthesis in the synthesis cache');
          return 0;
        },
      });
      expect(inherited).toBe(false);
      expect(result.stacks).toEqual({ rendered: 2, reused: 0 });
      expect(log).toContain('secretstore-iac: incremental synthesis: 2 stacks rendered, 0 reused from no synthesis in the synthesis cache');
    } finally {
      synthesizer.dispose();
    }
  });

  it('no entry of the base in the cache: the base is compiled in a worktree, the log says so, and it is stored for the next time', async () => {
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base });
    expect(r.result).toMatchObject({ selected: ['two'], baseOrigin: 'worktree' });
    expect(worktreeSyntheses()).toBe(1);
    expect(r.log).toContain('no synthesis of it in the synthesis cache (no pipeline of its commit stored one this job can verify): compiled and synthesized in a worktree');
    expect((await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base })).result).toMatchObject({ baseOrigin: 'cache' });
    expect(worktreeSyntheses()).toBe(1);
  });

  it('an entry sealed with another secret, or without the secret this job holds, is never read: the base is compiled again', async () => {
    await basePipeline({ SECRETSTORE_IAC_SYNTH_CACHE_SECRET: 'the protected secret' });
    const other = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base, SECRETSTORE_IAC_SYNTH_CACHE_SECRET: 'another secret' });
    expect(other.result).toMatchObject({ selected: ['two'], baseOrigin: 'worktree' });
    expect(other.log).toContain('its seal does not verify with SECRETSTORE_IAC_SYNTH_CACHE_SECRET');
    expect(worktreeSyntheses()).toBe(1);
    // Unsealed (no secret when storing), read by a job that holds one: refused too.
    fs.rmSync(path.join(repo, '.cache'), { recursive: true, force: true });
    await basePipeline();
    const sealed = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base, SECRETSTORE_IAC_SYNTH_CACHE_SECRET: 'the protected secret' });
    expect(sealed.result).toMatchObject({ baseOrigin: 'worktree' });
    expect(worktreeSyntheses()).toBe(2);
    // The same secret on both sides: read.
    expect((await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base, SECRETSTORE_IAC_SYNTH_CACHE_SECRET: 'the protected secret' })).result).toMatchObject({ baseOrigin: 'cache' });
  });

  it('an entry whose output was edited after it was stored is not read', async () => {
    await basePipeline();
    const cache = path.join(repo, '.cache');
    const [entry] = fs.readdirSync(cache).filter((e) => /^[0-9a-f]{64}$/.test(e));
    fs.writeFileSync(path.join(cache, entry, 'out', 'stacks', 'two', 'cdk.tf.json'), '{"resource":{}}');
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base });
    expect(r.result).toMatchObject({ baseOrigin: 'worktree', selected: ['two'] });
    expect(r.log).toContain('stacks/two/cdk.tf.json differs from its recorded digest');
  });

  it('protected and unprotected pipelines keep their entries apart: an unprotected pipeline\'s entry is not a protected one\'s base', async () => {
    await basePipeline({ CI_COMMIT_REF_PROTECTED: 'false' });
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base, CI_COMMIT_REF_PROTECTED: 'true' });
    expect(r.result).toMatchObject({ baseOrigin: 'worktree' });
    expect(fs.readdirSync(path.join(repo, '.cache')).sort()).toEqual(['protected', 'unprotected']);
  });

  it('merge request: the base is its diff base commit, from the cache the default branch\'s pipeline filled', async () => {
    await basePipeline();
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_DIFF_BASE_SHA: commits.base, CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main' });
    expect(r.result).toMatchObject({ selected: ['two'], baseOrigin: 'cache', base: { ref: commits.base } });
    expect(r.read('changed-stacks.md')).toContain('two');
  });

  describe('the base from the target branch\'s pipeline: the copy the protected default branch writes for merge requests', () => {
    /** The protected default branch's pipeline of the base commit, with the secret the protected pipelines hold. */
    const protectedBase = () => basePipeline({ CI_COMMIT_REF_PROTECTED: 'true', CI_COMMIT_BRANCH: 'main', CI_DEFAULT_BRANCH: 'main', SECRETSTORE_IAC_SYNTH_CACHE_SECRET: 'protected secret' });
    /** A merge request's pipeline (unprotected, no secret) whose diff base is `base`. */
    const mergeRequest = (base = commits.base) => job(commits.head, { CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_DIFF_BASE_SHA: base, CI_COMMIT_REF_PROTECTED: 'false', CI_COMMIT_BRANCH: 'feature', CI_DEFAULT_BRANCH: 'main' });

    it('the default branch writes it; the merge request reads it, verified, compiles nothing, and leaves nothing to upload', async () => {
      const first = await protectedBase();
      expect(first.log).toMatch(/this commit's synthesis \(tree [0-9a-f]{12}\) written to \.secretstore-iac\/synth-shared too/);
      expect(fs.existsSync(path.join(repo, SHARED))).toBe(true);
      const r = await mergeRequest();
      expect(r.result).toMatchObject({ selected: ['two'], baseOrigin: 'target-pipeline', base: { ref: commits.base, commit: commits.base } });
      expect(worktreeSyntheses()).toBe(0);
      expect(r.log).toContain(`base ${commits.base.slice(0, 12)}: its synthesis from the target branch's pipeline (the copy its synth job wrote to .secretstore-iac/synth-shared; key, tree and file digests match; unverified: a plain SHA-256 seal, which anyone who can write an unprotected cache can compute again, so it only decides this merge request's base): not compiled`);
      expect(r.read('cdktf.base.out/stacks/two/cdk.tf.json')).toContain('"config":"two\\n"');
      // A merge request's job never writes the shared entry: nothing left for the cache to upload.
      expect(fs.existsSync(path.join(repo, SHARED))).toBe(false);
      // Its own (unprotected) entry of HEAD is stored; the protected, sealed entries it never saw.
      expect(fs.readdirSync(path.join(repo, '.cache')).sort()).toEqual(['protected', 'unprotected']);
    });

    it('without the shared copy a merge request cannot read the protected, sealed entry: the base is compiled in a worktree, the log says so', async () => {
      await protectedBase();
      fs.rmSync(path.join(repo, SHARED), { recursive: true, force: true });
      const r = await mergeRequest();
      expect(r.result).toMatchObject({ baseOrigin: 'worktree' });
      expect(worktreeSyntheses()).toBe(1);
      expect(r.log).toContain(`base ${commits.base.slice(0, 12)}: no copy of its synthesis from the target branch's pipeline in .secretstore-iac/synth-shared that this job can verify`);
    });

    it('a copy of another commit, or one whose file was edited, is not read: compiled in a worktree', async () => {
      await protectedBase();
      // The copy of the base, read for a merge request whose diff base is HEAD's commit (another tree).
      const other = await mergeRequest(commits.head);
      expect(other.result.baseOrigin).not.toBe('target-pipeline');
      expect(other.log).toContain(`base ${commits.head.slice(0, 12)}: no copy of its synthesis from the target branch's pipeline`);
      await protectedBase();
      const [entry] = fs.readdirSync(path.join(repo, SHARED)).filter((e) => /^[0-9a-f]{64}$/.test(e));
      fs.writeFileSync(path.join(repo, SHARED, entry, 'out', 'stacks', 'two', 'cdk.tf.json'), '{"resource":{"edited":{}}}');
      const edited = await mergeRequest();
      expect(edited.result).toMatchObject({ baseOrigin: 'worktree', selected: ['two'] });
      expect(edited.log).toContain('stacks/two/cdk.tf.json differs from its recorded digest');
    });

    it('a protected pipeline never reads it, and only the protected default branch writes it', async () => {
      await protectedBase();
      // The shared copy is there; the next protected pipeline's own sealed cache is empty: it compiles.
      fs.rmSync(path.join(repo, '.cache'), { recursive: true, force: true });
      const next = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base, CI_COMMIT_REF_PROTECTED: 'true', CI_COMMIT_BRANCH: 'main', CI_DEFAULT_BRANCH: 'main', SECRETSTORE_IAC_SYNTH_CACHE_SECRET: 'protected secret' });
      expect(next.result).toMatchObject({ baseOrigin: 'worktree' });
      expect(next.log).not.toContain('from the target branch\'s pipeline');
      // An unprotected branch's pipeline writes no copy.
      fs.rmSync(path.join(repo, SHARED), { recursive: true, force: true });
      await basePipeline({ CI_COMMIT_REF_PROTECTED: 'false', CI_COMMIT_BRANCH: 'main', CI_DEFAULT_BRANCH: 'main' });
      expect(fs.existsSync(path.join(repo, SHARED))).toBe(false);
    });
  });

  it('a checkout with uncommitted changes: its synthesis is not stored as its commit\'s', async () => {
    git('checkout', '-q', '--detach', commits.base);
    fs.writeFileSync(path.join(repo, 'one.txt'), 'edited, not committed\n');
    const stdout: string[] = [];
    const code = await runCli(['pipeline', 'synth', '--format', 'json'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, SECRETSTORE_IAC_SYNTH_CACHE: '.cache', SECRETSTORE_IAC_SYNTH_CACHE_SECRET: TEST_CACHE_SECRET, CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: ZEROS }, cwd: repo, isTerminal: false, stdout: (l) => stdout.push(l), stderr: () => undefined });
    git('checkout', '-q', '--', 'one.txt');
    expect(code).toBe(0);
    expect(JSON.parse(stdout.join('\n'))).toMatchObject({ stored: false });
    expect(fs.existsSync(path.join(repo, '.cache')) ? fs.readdirSync(path.join(repo, '.cache')).filter((e) => /^[0-9a-f]{64}$/.test(e)) : []).toEqual([]);
  });

  it('a base that is no commit: every stack planned, the note says the comparison failed, no base left', async () => {
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: 'f'.repeat(40) });
    expect(r.result).toMatchObject({ selected: ['one', 'two'], baseOrigin: 'failed' });
    expect(r.read('changed-stacks.md')).toBe(`### Stacks planned: every stack (the comparison with \`${'f'.repeat(40)}\` failed: see the synth job)\n`);
    expect(fs.existsSync(path.join(repo, 'cdktf.base.out'))).toBe(false);
  });

  it('a schedule selects nothing (the drift jobs check every stack); the retired list is empty', async () => {
    fs.rmSync(path.join(repo, 'changed-stacks.txt'), { force: true });
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'schedule' });
    expect(r.result).toMatchObject({ retired: [], baseOrigin: 'none' });
    expect(r.result.selected).toBeUndefined();
    expect(r.read('changed-stacks.txt')).toBeUndefined();
    expect(r.read('retired-stacks.txt')).toBe('');
  });

  /** The step at HEAD against the base commit (compiled in a worktree, no cache), with `moves` and `changed-stacks` given. */
  async function stepWith(moves: InProcessCommand, changedStacks: InProcessCommand) {
    const log: string[] = [];
    const io = { env: { PATH: process.env.PATH, HOME: process.env.HOME, CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: commits.base }, cwd: repo, stdout: (l: string) => log.push(l), stderr: (l: string) => log.push(l) };
    const synthesizer = new RefSynthesizer(repo);
    try {
      const result = await runSynthStep(io, { synthesizer, libraryVersion: 'test', moves, changedStacks });
      const read = (file: string) => (fs.existsSync(path.join(repo, file)) ? fs.readFileSync(path.join(repo, file), 'utf8') : undefined);
      return { result, log: log.join('\n'), read };
    } finally {
      synthesizer.dispose();
    }
  }
  const select = (...stacks: string[]): InProcessCommand => async (_, io) => (stacks.forEach((s) => io.stdout(s)), fs.writeFileSync(path.join(repo, 'changed-stacks.md'), '| note |\n'), 0);

  it('moves that cannot be written leave the selection to go on, saying that a plan destroying a moved object will be refused', async () => {
    const r = await stepWith(async () => {
      throw new Error('cannot read the moves');
    }, select('two'));
    expect(r.result.selected).toEqual(['two']);
    expect(r.log).toContain('cannot read the moves');
    expect(r.log).toContain(`the moves since ${commits.base} could not be written (the error is above): a plan that destroys a moved object will be refused`);
  });

  it('a comparison that fails plans every stack, saying why, instead of planning none', async () => {
    const r = await stepWith(async () => 0, async () => 3);
    expect(r.result.selected).toEqual(['one', 'two']);
    expect(r.log).toContain(`the stacks changed since ${commits.base} could not be told (the error is above): every stack is planned`);
    expect(r.read('changed-stacks.txt')).toBe('one\ntwo\n');
    expect(r.read('changed-stacks.md')).toContain(`the comparison with \`${commits.base}\` failed`);
  });

  it('appends the moves\' note to the merge request\'s note, lists the retired stacks (only a moves file) and names them in the note', async () => {
    let given: readonly string[] = [];
    const moves: InProcessCommand = async (args) => {
      given = args;
      fs.writeFileSync(path.join(repo, 'secretstore-iac-moves.md'), '### Objects removed: 3 destroyed on the store, after approval\n');
      for (const stack of ['four', 'three']) {
        fs.mkdirSync(path.join(repo, 'cdktf.out', 'stacks', stack), { recursive: true });
        fs.writeFileSync(path.join(repo, 'cdktf.out', 'stacks', stack, 'moves.tf.json'), '{}');
      }
      fs.writeFileSync(path.join(repo, 'cdktf.out', 'stacks', 'two', 'moves.tf.json'), '{}');
      return 0;
    };
    const r = await stepWith(moves, select('two'));
    expect(given).toEqual(['cdktf.base.out', 'cdktf.out', '--markdown-file', 'secretstore-iac-moves.md', '--approval', 'On the default branch the apply jobs leave a plan that destroys them to the manual job `secretstore-iac-destroy-removed-objects`: a person starts it, after reading this list.']);
    expect(r.result).toMatchObject({ selected: ['two'], retired: ['four', 'three'] });
    expect(r.read('retired-stacks.txt')).toBe('four\nthree\n');
    expect(r.read('changed-stacks.md')).toBe(
      '| note |\n\n### Objects removed: 3 destroyed on the store, after approval\n\n### Retired stacks: their state forgets the objects that moved; what was removed is destroyed only by secretstore-iac-destroy-removed-objects\n\n- `four`\n- `three`\n',
    );
    expect(r.log).toContain('retired stacks, planned and applied after every other stack (forgets; removals only by secretstore-iac-destroy-removed-objects):\nsecretstore-iac:   four\nsecretstore-iac:   three');
  });

  it('a moves note left by an earlier run is not appended', async () => {
    fs.writeFileSync(path.join(repo, 'secretstore-iac-moves.md'), '### stale\n');
    const r = await stepWith(async () => 0, select('two'));
    expect(r.read('changed-stacks.md')).toBe('| note |\n');
    expect(r.result.retired).toEqual([]);
  });

  it('a committed pipeline file that is not the one synthesis wrote fails the job (exit 3), naming the file', async () => {
    const r = await job(commits.head, { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: ZEROS, SECRETSTORE_IAC_PIPELINE_COPY: '.gitlab/pipeline.yml' });
    expect(r.code).toBe(3);
    expect(r.log).toContain('.gitlab/pipeline.yml is not the pipeline this synthesis wrote: copy cdktf.out/ci/secretstore-iac.gitlab-ci.yml to it and commit');
  });
});

describe('secretstore-iac pipeline: one subcommand per job', () => {
  const cli = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { env: {}, cwd: os.tmpdir(), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  };

  it('pipeline synth --help is the subcommand\'s help; pipeline --help lists the jobs', async () => {
    expect(await cli('pipeline', 'synth', '--help')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Usage: secretstore-iac pipeline synth \[--format text\|json\]/) });
    expect((await cli('pipeline', 'synth', '--help')).stdout).toContain('Exit codes: 0 selected');
    expect(await cli('pipeline', '--help')).toMatchObject({ code: 0, stdout: expect.stringContaining('  synth     the synth job:') });
  });

  it('an unknown job, none, an argument too many or an unknown format: usage error (2), naming the jobs or the rule', async () => {
    expect(await cli('pipeline', 'synthesize')).toMatchObject({ code: 2, stderr: 'secretstore-iac pipeline: expects a job: synth, plan, apply, removals, review, drift, confirm, usage, not "synthesize" (see secretstore-iac pipeline --help)' });
    expect(await cli('pipeline')).toMatchObject({ code: 2, stderr: expect.stringContaining('expects a job: synth, plan') });
    expect((await cli('pipeline', 'synth', 'extra')).code).toBe(2);
    expect((await cli('pipeline', 'synth', '--format', 'yaml')).code).toBe(2);
  });
});

describe('the base of the stack selection, per pipeline source', () => {
  it('merge request: its diff base commit; without one, its target branch from origin (fetched)', () => {
    const diffBase = pipelineBase({ CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_DIFF_BASE_SHA: '1a2b3c', CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main' });
    expect(diffBase).toMatchObject({ kind: 'ref', ref: '1a2b3c' });
    expect(diffBase).not.toHaveProperty('fetch');
    expect(pipelineBase({ CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main' })).toMatchObject({ kind: 'ref', ref: 'origin/main', fetch: 'main' });
    expect(pipelineBase({ CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_DIFF_BASE_SHA: ZEROS, CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main' })).toMatchObject({ kind: 'ref', ref: 'origin/main' });
    expect(pipelineBase({ CI_PIPELINE_SOURCE: 'merge_request_event' })).toMatchObject({ kind: 'none' });
  });

  it('default branch: the commit before the push; forty zeros or none: no base (every stack)', () => {
    expect(pipelineBase({ CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: '1a2b3c', CI_MERGE_REQUEST_DIFF_BASE_SHA: '9f9f9f' })).toMatchObject({ kind: 'ref', ref: '1a2b3c' });
    expect(pipelineBase({ CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BEFORE_SHA: ZEROS })).toMatchObject({ kind: 'none' });
    expect(pipelineBase({ CI_PIPELINE_SOURCE: 'web' })).toMatchObject({ kind: 'none' });
  });

  it('schedule: no selection, whatever else is set', () => {
    expect(pipelineBase({ CI_PIPELINE_SOURCE: 'schedule', CI_COMMIT_BEFORE_SHA: '1a2b3c' })).toEqual({ kind: 'schedule' });
  });
});

describe('the shared copy of the default branch\'s synthesis: who writes it, who reads it', () => {
  const protectedPush = { CI_PIPELINE_SOURCE: 'push', CI_COMMIT_REF_PROTECTED: 'true', CI_COMMIT_BRANCH: 'main', CI_DEFAULT_BRANCH: 'main' };

  it('the protected default branch\'s pipeline writes it and reads nothing of it', () => {
    expect(sharedSynthesisUse(protectedPush)).toMatchObject({ kind: 'write' });
    expect(sharedSynthesisUse({ ...protectedPush, CI_PIPELINE_SOURCE: 'web', CI_MERGE_REQUEST_DIFF_BASE_SHA: '1a2b3c' })).toMatchObject({ kind: 'write' });
  });

  it('a merge request reads the copy of its diff base commit; without one, nothing', () => {
    expect(sharedSynthesisUse({ CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_DIFF_BASE_SHA: '1a2b3c', CI_COMMIT_REF_PROTECTED: 'false' })).toEqual({ kind: 'read', commit: '1a2b3c', why: expect.any(String) });
    // Even from a protected source branch: a merge request's pipeline plans with the read-only role and applies nothing.
    expect(sharedSynthesisUse({ CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_DIFF_BASE_SHA: '1a2b3c', CI_COMMIT_REF_PROTECTED: 'true' })).toMatchObject({ kind: 'read' });
    expect(sharedSynthesisUse({ CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_DIFF_BASE_SHA: ZEROS })).toMatchObject({ kind: 'none' });
    expect(sharedSynthesisUse({ CI_PIPELINE_SOURCE: 'merge_request_event' })).toMatchObject({ kind: 'none' });
  });

  it('an unprotected ref, another branch than the default, or a schedule: neither', () => {
    expect(sharedSynthesisUse({ ...protectedPush, CI_COMMIT_REF_PROTECTED: 'false' })).toMatchObject({ kind: 'none' });
    expect(sharedSynthesisUse({ ...protectedPush, CI_COMMIT_REF_PROTECTED: undefined })).toMatchObject({ kind: 'none' });
    expect(sharedSynthesisUse({ ...protectedPush, CI_COMMIT_BRANCH: 'release' })).toMatchObject({ kind: 'none' });
    expect(sharedSynthesisUse({ ...protectedPush, CI_COMMIT_BRANCH: undefined })).toMatchObject({ kind: 'none' });
    expect(sharedSynthesisUse({ ...protectedPush, CI_PIPELINE_SOURCE: 'schedule' })).toMatchObject({ kind: 'none' });
  });
});
