/**
 * Issue 30, "jobs reuse their work": the configuration is compiled once per pipeline. The synth job
 * compiles it (`npm run build`, no job of its own since issue 39: one job less on the critical path)
 * and marks its `dist/` (an artifact) with the commit; then `secretstore-iac pipeline synth`
 * synthesizes that `dist/` (`npm run synth:built`) instead of `npm run synth`, which would compile
 * again. The synth job's rendered compile steps run under the runner's `bash -eo pipefail` with an
 * `npm` that logs its calls; under gitlab-ci-local with the real npm and tsc:
 * test/store/configuration-pipeline.store.test.ts.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { SYNTH_BUILT_SCRIPT, renderConfigurationPackageJson } from '../../../lib/render/configuration-package-json';
import { runSynthStep, SynthStepFailure } from '../../../lib/pipeline/synth-step';
import { BUILD_MARK, renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { RefSynthesizer } from '../../../lib/sources/ref-synthesizer';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

const pipeline = yaml.load(renderConfigurationPipelineYaml(PIPELINE_OPTIONS)) as Record<string, any>;
const SHA = '0123456789abcdef0123456789abcdef01234567';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** The package.json `secretstore-iac init` writes. */
const TEMPLATE = renderConfigurationPackageJson({ name: 'acme', packageSpec: '^1.0.0', typescriptVersion: '5.9.3', typesNodeVersion: '20.19.9', gitlabCiLocalVersion: '4.69.0' });

/** Runs the job's script items from `first` through `last` (by a text each holds) in a directory holding `files`, with an `npm` that logs its arguments. */
function runJob(job: string, from: string, to: string, files: Record<string, string>, npmExit = 0) {
  const items: string[] = pipeline[job].script;
  const start = items.findIndex((i) => i.includes(from));
  const end = items.findIndex((i) => i.includes(to));
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThanOrEqual(start);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-build-reuse-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.writeFileSync(path.join(dir, 'bin', 'npm'), `#!/bin/sh\necho "npm $*" >> calls.txt\nif [ "$2" = build ]; then mkdir -p dist; fi\nexit ${npmExit}\n`, { mode: 0o755 });
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  const r = spawnSync('bash', ['-eo', 'pipefail', '-c', `${items.slice(start, end + 1).join('\n')}\necho "job went on"`], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, HOME: dir, CI_COMMIT_SHA: SHA },
  });
  const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : undefined);
  return { code: r.status, output: `${r.stdout}${r.stderr}`, read };
}

describe('the configuration is compiled once per pipeline: the synth job compiles, then synthesizes that dist/', () => {
  it('the configuration repository\'s package.json: synth is build, then synth:built, which only runs the compiled entry', () => {
    const scripts = JSON.parse(TEMPLATE).scripts;
    expect(scripts.synth).toBe(`npm run build && npm run ${SYNTH_BUILT_SCRIPT}`);
    expect(scripts[SYNTH_BUILT_SCRIPT]).toBe('node dist/stacks/main.js');
    expect(scripts[SYNTH_BUILT_SCRIPT]).not.toMatch(/tsc|build/);
  });

  it('the synth job compiles and marks its dist/ (an artifact) with the commit, before the bin runs (the library\'s own repository\'s bin is in dist/)', () => {
    expect(pipeline['secretstore-iac-build']).toBeUndefined();
    expect(pipeline['secretstore-iac-synth'].artifacts.paths).toContain('dist/');
    const r = runJob('secretstore-iac-synth', 'npm run build', BUILD_MARK, {});
    expect(r.code).toBe(0);
    expect(r.read('calls.txt')).toBe('npm run build\n');
    expect(r.read(BUILD_MARK)).toBe(`${SHA}\n`);
  });

  /** The synth step (`secretstore-iac pipeline synth`) of a schedule (no base) in a directory holding `files`; the npm scripts it runs, its log and exit. */
  async function synthStep(files: Record<string, string>, exit = 0) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-build-reuse-'));
    dirs.push(dir);
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), content);
    }
    const calls: string[] = [];
    const log: string[] = [];
    const io = { env: { CI_COMMIT_SHA: SHA, CI_PIPELINE_SOURCE: 'schedule' }, cwd: dir, stdout: (l: string) => log.push(l), stderr: (l: string) => log.push(l) };
    const tools = { synthesizer: new RefSynthesizer(dir), libraryVersion: 'test', moves: async () => 0, changedStacks: async () => 0, synthesizeHead: async (script: string) => (calls.push(`npm run ${script}`), exit) };
    const error = await runSynthStep(io, tools).then(() => undefined, (e: Error) => e);
    return { calls, log: log.join('\n'), error };
  }

  it('the synth job runs the synth step, which, given the dist/ its compile marked with its commit, synthesizes it without compiling (npm run synth:built)', async () => {
    // One script item: its comment lines, then the command.
    expect(pipeline['secretstore-iac-synth'].script.map((i: string) => i.trim().split('\n').pop())).toContain('"$SECRETSTORE_IAC_BIN" pipeline synth');
    const r = await synthStep({ 'package.json': TEMPLATE, [BUILD_MARK]: `${SHA}\n` });
    expect(r.error).toBeUndefined();
    expect(r.calls).toEqual([`npm run ${SYNTH_BUILT_SCRIPT}`]);
    expect(r.log).toContain(`secretstore-iac: synthesizing the dist/ the job's npm run build compiled from ${SHA}`);
  });

  it.each([
    ['no dist/ (the command run by hand, without the job\'s compile)', { 'package.json': TEMPLATE }],
    ['a dist/ of another commit (a workspace left by an earlier job)', { 'package.json': TEMPLATE, [BUILD_MARK]: 'fedcba9876543210fedcba9876543210fedcba98\n' }],
    ['a dist/ without the mark', { 'package.json': TEMPLATE, 'dist/stacks/main.js': '' }],
    ['a package.json written before synth:built', { 'package.json': JSON.stringify({ scripts: { build: 'tsc', synth: 'npm run build && node dist/stacks/main.js' } }), [BUILD_MARK]: `${SHA}\n` }],
  ])('%s: npm run synth, which compiles first', async (_, files) => {
    const r = await synthStep(files);
    expect(r.error).toBeUndefined();
    expect(r.calls).toEqual(['npm run synth']);
  });

  it('a failing synthesis fails the step (exit 3 of the command), either way', async () => {
    for (const files of [{ 'package.json': TEMPLATE, [BUILD_MARK]: `${SHA}\n` }, { 'package.json': TEMPLATE }] as Record<string, string>[]) {
      const r = await synthStep(files, 2);
      expect(r.error).toBeInstanceOf(SynthStepFailure);
      expect(r.error?.message).toBe('the synthesis of this commit failed (exit 2; its output is above): nothing selected');
    }
  });
});
