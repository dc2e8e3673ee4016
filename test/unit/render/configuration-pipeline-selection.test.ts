/**
 * The configuration pipeline plans and applies only the stacks the synth job selects: the rendered
 * steps run for real under the runner's `bash -eo pipefail`. Only `secretstore-iac changed-stacks`
 * is a prepared answer here (an `npx` on PATH); the pipeline with the real command runs under
 * gitlab-ci-local in test/store/configuration-pipeline.store.test.ts.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { ConfigurationPipelineYamlOptions, renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

const OPTIONS: ConfigurationPipelineYamlOptions = {
  ...PIPELINE_OPTIONS,
  stacks: ['app-roles', 'app-roles-a', 'app-roles-b', 'ci-access'],
  dependencies: { 'app-roles-a': ['app-roles'], 'app-roles-b': ['app-roles'] },
};
const pipeline = yaml.load(renderConfigurationPipelineYaml(OPTIONS)) as Record<string, any>;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** Runs one script item in a fresh directory holding `files`, with an `npx` that runs `npx` (a shell body). */
function runItem(item: string, env: Record<string, string>, files: Record<string, string> = {}, npx = 'exit 127') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-selection-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.writeFileSync(path.join(dir, 'bin', 'npx'), `#!/bin/sh\n${npx}\n`, { mode: 0o755 });
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  const r = spawnSync('bash', ['-eo', 'pipefail', '-c', `${item}\necho "job went on"`], { cwd: dir, encoding: 'utf8', env: { PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, HOME: dir, ...env } });
  const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : undefined);
  return { code: r.status, output: `${r.stdout}${r.stderr}`, read };
}

describe('the synth job selects the stacks to plan and apply', () => {
  it('runs secretstore-iac pipeline synth (its decisions: test/unit/pipeline/synth-step.test.ts); keeps the selection, its note and the base it synthesized as artifacts, with the whole history to compare with and its synthesis cache', () => {
    // One script item: its comment lines, then the command.
    expect(pipeline['secretstore-iac-synth'].script.map((i: string) => i.trim().split('\n').pop())).toContain('"$SECRETSTORE_IAC_BIN" pipeline synth');
    expect(pipeline['secretstore-iac-synth'].artifacts.paths).toEqual(expect.arrayContaining(['cdktf.out/', 'cdktf.base.out/', 'changed-stacks.txt', 'changed-stacks.md', 'retired-stacks.txt']));
    expect(pipeline['secretstore-iac-synth'].variables).toEqual({ GIT_DEPTH: '0', SECRETSTORE_IAC_SYNTH_CACHE: '.secretstore-iac/synth-cache' });
    expect(pipeline['secretstore-iac-synth'].cache[1]).toEqual({ key: 'secretstore-iac-synth', paths: ['.secretstore-iac/synth-cache'] });
  });

  it("lists the dependencies' cache first in every job, pushed by the synth job only: gitlab-ci-local names an entry keyed on files after its place in the list, so one place gives every job the synth job's node_modules", () => {
    const deps = { key: { files: ['package-lock.json'], prefix: 'secretstore-iac-deps' }, paths: ['node_modules'] };
    // Every job but synth has its cache from the hidden job it extends.
    const withCache = Object.entries(pipeline).filter(([, job]: [string, any]) => Array.isArray(job?.cache));
    expect(withCache.map(([name]) => name).sort()).toEqual(['.secretstore-iac-job', 'secretstore-iac-synth']);
    for (const [name, job] of withCache as Array<[string, any]>) {
      expect([name, job.cache[0]]).toEqual([name, { ...deps, policy: name === 'secretstore-iac-synth' ? 'pull-push' : 'pull' }]);
      // gitlab-ci-local saves no entry listed after one it only pulls: a pulled entry is the job's only one.
      if (job.cache[0].policy === 'pull') expect([name, job.cache.length]).toEqual([name, 1]);
    }
  });

  it('keeps the copy merge requests read in a cache entry of its own per commit, shared with unprotected pipelines: the commit the default branch writes, the diff base a merge request reads', () => {
    const synth = pipeline['secretstore-iac-synth'];
    expect(synth.cache[2]).toEqual({ key: 'secretstore-iac-synth-shared-$SECRETSTORE_IAC_SHARED_SYNTH_COMMIT', paths: ['.secretstore-iac/synth-shared'], unprotect: true });
    // The sealed entries stay protected (no `unprotect`): GitLab keeps a protected pipeline's apart.
    expect(synth.cache[1].unprotect).toBeUndefined();
    const commitOf = (source: string) => synth.rules.find((r: any) => r.if.startsWith(`$CI_PIPELINE_SOURCE == "${source}"`) || (source === 'push' && r.if.startsWith('$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH')))?.variables?.SECRETSTORE_IAC_SHARED_SYNTH_COMMIT;
    expect(commitOf('merge_request_event')).toBe('$CI_MERGE_REQUEST_DIFF_BASE_SHA');
    expect(commitOf('push')).toBe('$CI_COMMIT_SHA');
    expect(commitOf('schedule')).toBe('none');
    // Not an artifact: no later job reads it.
    expect(synth.artifacts.paths.filter((p: string) => p.includes('synth-shared'))).toEqual([]);
  });
});

describe('every job reuses the synth job\'s work and the pipeline\'s dependencies', () => {
  const jobs = Object.keys(pipeline).filter((j) => j.startsWith('secretstore-iac-') && pipeline[j].script);
  /** The hidden jobs a job extends, nearest first. */
  const chain = (job: string): string[] => (pipeline[job].extends ? [pipeline[job].extends, ...chain(pipeline[job].extends)] : []);

  it('dependencies: node_modules from the cache keyed on the lock file, filled by the synth job only; installed only without it', () => {
    const deps = (job: string) => pipeline[job].cache?.find((c: any) => c.key?.prefix === 'secretstore-iac-deps');
    const expected = (policy: string) => ({ key: { files: ['package-lock.json'], prefix: 'secretstore-iac-deps' }, paths: ['node_modules'], policy });
    expect(deps('secretstore-iac-synth')).toEqual(expected('pull-push'));
    expect(deps('.secretstore-iac-job')).toEqual(expected('pull'));
    // Every other job takes the cache and the install from the one hidden job (directly or through the login).
    for (const job of jobs.filter((j) => j !== 'secretstore-iac-synth')) {
      expect({ job, cache: pipeline[job].cache, extends: chain(job).at(-1) }).toEqual({ job, cache: undefined, extends: '.secretstore-iac-job' });
    }
    const item: string = pipeline['.secretstore-iac-job'].before_script[0];
    expect(pipeline['.secretstore-iac-login'].before_script).toBeUndefined();
    const cached = runItem(item, { SECRETSTORE_IAC_INSTALL: 'echo installed > installed.txt' }, { 'node_modules/x/package.json': '{}' });
    expect(cached).toMatchObject({ code: 0, output: "secretstore-iac: node_modules from the pipeline's cache\njob went on\n" });
    expect(cached.read('installed.txt')).toBeUndefined();
    const fresh = runItem(item, { SECRETSTORE_IAC_INSTALL: 'echo installed > installed.txt' });
    expect(fresh.read('installed.txt')).toBe('installed\n');
    expect(runItem(item, { SECRETSTORE_IAC_INSTALL: 'exit 7' }).code).toBe(7);
  });

  it('only the synth job synthesizes (npm run synth, synth-ref, pipeline synth); the other jobs read its artifacts', () => {
    for (const job of jobs.filter((j) => j !== 'secretstore-iac-synth')) {
      const text = pipeline[job].script.join('\n');
      expect({ job, synth: /npm run synth|synth-ref|pipeline synth/.test(text) }).toEqual({ job, synth: false });
    }
    for (const job of jobs.filter((j) => /-(plan|apply|drift)-/.test(j) || j === 'secretstore-iac-access-diff')) {
      const needsSynth = pipeline[job].needs?.includes('secretstore-iac-synth') || pipeline[job].dependencies?.includes('secretstore-iac-synth');
      expect({ job, needsSynth }).toEqual({ job, needsSynth: true });
    }
  });

  it('the plan jobs need only the synth job: the shards plan in parallel; an apply job waits only for its plan, the stacks it depends on and ci-access', () => {
    for (const s of OPTIONS.stacks) {
      expect(pipeline[`secretstore-iac-plan-${s}`].needs).toEqual(['secretstore-iac-synth']);
      expect(pipeline[`secretstore-iac-plan-${s}-default-branch`].needs).toEqual(['secretstore-iac-synth']);
    }
    const jobs = yaml.load(renderConfigurationPipelineYaml({ ...OPTIONS, stacks: [...OPTIONS.stacks, 'app-roles-c'] })) as Record<string, any>;
    // app-roles-c depends on nothing: it waits for ci-access only, not for the other shards.
    expect(jobs['secretstore-iac-apply-app-roles-c'].needs).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-app-roles-c-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-ci-access']);
  });

  it('the access diff reads this pipeline\'s saved plans (the plan jobs\' artifacts), not the two syntheses; it synthesizes nothing and fetches no branch', () => {
    const job = pipeline['secretstore-iac-access-diff'];
    expect(job.needs).toBeUndefined();
    expect(job.stage).toBe('review');
    expect(job.dependencies).toEqual(['secretstore-iac-synth', ...OPTIONS.stacks.map((s) => `secretstore-iac-plan-${s}`), 'secretstore-iac-plan-retired']);
    expect(job.script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline review --merge-request']);
  });
});

describe('each plan, apply and drift job is one `secretstore-iac pipeline` command naming its job (what it takes: test/unit/pipeline/job-stacks.test.ts)', () => {
  it.each([
    ['secretstore-iac-plan-app-roles-a', 'plan --stack app-roles-a --merge-request'],
    ['secretstore-iac-plan-app-roles-a-default-branch', 'plan --stack app-roles-a'],
    ['secretstore-iac-apply-app-roles-a', 'apply --stack app-roles-a'],
    ['secretstore-iac-plan-retired', 'plan --retired --merge-request'],
    ['secretstore-iac-plan-retired-default-branch', 'plan --retired'],
    ['secretstore-iac-apply-retired', 'apply --retired'],
    ['secretstore-iac-drift-app-roles-a', 'drift --stack app-roles-a'],
    ['secretstore-iac-destroy-removed-objects', 'removals'],
    ['secretstore-iac-access-diff-default-branch', 'review --default-branch'],
  ])('%s: pipeline %s', (job, command) => {
    expect(pipeline[job].script).toEqual([`"$SECRETSTORE_IAC_BIN" pipeline ${command}`]);
  });

  it('the merge request\'s plans log in with the plan role, every other job that talks to the store with the apply role', () => {
    for (const [job, def] of Object.entries(pipeline)) {
      const command = (def as any).script?.[0] ?? '';
      if (!/pipeline (plan|apply|removals|drift)/.test(command)) continue;
      expect({ job, login: (def as any).extends }).toEqual({ job, login: command.includes('--merge-request') ? '.secretstore-iac-plan-login' : '.secretstore-iac-apply-login' });
    }
  });
});

describe('apply order: a stack after the stacks it depends on, and after the pipeline roles\' stack', () => {
  it('each apply job needs its plan and the apply jobs of its dependencies and of ci-access', () => {
    const needs = (s: string) => pipeline[`secretstore-iac-apply-${s}`].needs;
    expect(needs('ci-access')).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-ci-access-default-branch', 'secretstore-iac-access-diff-default-branch']);
    expect(needs('app-roles')).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-app-roles-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-ci-access']);
    expect(needs('app-roles-a')).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-app-roles-a-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-ci-access', 'secretstore-iac-apply-app-roles']);
  });

  it('the pipeline roles\' stack depending on another: that one applies before it, not after (no cycle of needs)', () => {
    const jobs = yaml.load(renderConfigurationPipelineYaml({ ...OPTIONS, dependencies: { 'ci-access': ['app-roles'], 'app-roles-a': ['app-roles'] } })) as Record<string, any>;
    expect(jobs['secretstore-iac-apply-ci-access'].needs).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-ci-access-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-app-roles']);
    expect(jobs['secretstore-iac-apply-app-roles'].needs).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-app-roles-default-branch', 'secretstore-iac-access-diff-default-branch']);
    expect(jobs['secretstore-iac-apply-app-roles-a'].needs).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-app-roles-a-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-ci-access', 'secretstore-iac-apply-app-roles']);
  });

  it('a dependency on a stack the pipeline does not have, or on itself, is refused', () => {
    expect(() => renderConfigurationPipelineYaml({ ...OPTIONS, dependencies: { 'app-roles-a': ['nope', 'app-roles-a'] } })).toThrow(
      'configuration pipeline: stack "app-roles-a": depends on "nope", which is not one of the stacks; stack "app-roles-a": depends on "app-roles-a", which is itself',
    );
  });
});

describe('removals (objects the configuration declares nowhere any more): planned, applied only by the manual job a person starts', () => {
  const destroyJob = pipeline['secretstore-iac-destroy-removed-objects'];

  it('a plan job keeps its saved plans and their removals lists as its artifact', () => {
    for (const job of ['secretstore-iac-plan-app-roles-a', 'secretstore-iac-plan-app-roles-a-default-branch']) expect(pipeline[job].artifacts.paths).toEqual(['secretstore-iac-plans/app-roles-a.*']);
    for (const job of ['secretstore-iac-plan-retired', 'secretstore-iac-plan-retired-default-branch']) expect(pipeline[job].artifacts.paths).toEqual(['secretstore-iac-plans/']);
  });

  it('the manual job: default branch only, started by a person, last stage, with every default-branch plan', () => {
    expect(destroyJob.rules).toEqual([{ if: pipeline['secretstore-iac-apply-app-roles'].rules[0].if, when: 'manual', allow_failure: true }]);
    expect(destroyJob.stage).toBe('remove');
    expect(pipeline.stages[pipeline.stages.length - 1]).toBe('remove');
    expect(destroyJob.extends).toBe('.secretstore-iac-apply-login');
    expect(destroyJob.needs).toBeUndefined();
    expect(destroyJob.dependencies).toEqual([
      'secretstore-iac-synth',
      ...['app-roles', 'app-roles-a', 'app-roles-b', 'ci-access'].map((s) => `secretstore-iac-plan-${s}-default-branch`),
      'secretstore-iac-plan-retired-default-branch',
      'secretstore-iac-access-diff-default-branch',
    ]);
  });

  it('removals only through the manual job: it is the one job running `pipeline removals`, and it is manual', () => {
    const removing = Object.keys(pipeline).filter((j) => (pipeline[j].script ?? []).some((i: string) => /pipeline removals|--allow-removals/.test(i)));
    expect(removing).toEqual(['secretstore-iac-destroy-removed-objects']);
  });

  // The release of the grants ci-access's roles kept of retired stacks (after the people removal its drift
  // job stayed red, issue 37) is the removals and retired apply jobs' last step: test/unit/pipeline/pipeline-stack-jobs.test.ts.
});
