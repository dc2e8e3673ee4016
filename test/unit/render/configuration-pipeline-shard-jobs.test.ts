/**
 * The shards of an application stack are planned and applied by a fixed number of jobs (the
 * configuration pipeline's `shardJobs`), not one per shard: the pipeline's size does not grow with the
 * shards. The jobs' steps run for real under the runner's `bash -eo pipefail`, with an `npx` that only
 * logs its calls; the pipeline with the real commands runs under gitlab-ci-local in
 * test/store/configuration-pipeline.store.test.ts and configuration-pipeline-people.store.test.ts.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { ConfigurationPipelineYamlOptions, renderConfigurationPipelineYaml, SHARD_JOB_STACKS_FILE } from '../../../lib/render/configuration-pipeline-yaml';
import { synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';
import { REPO_ROOT } from '../../support/paths';

const shardNames = (count: number) => Array.from({ length: count }, (_, i) => `app-roles-${String(i).padStart(2, '0')}`);

/** The pipeline of ci-access, app-roles and `count` shards of it, their jobs shared by `jobs` jobs. */
function options(count: number, jobs = 4, extra: Partial<ConfigurationPipelineYamlOptions> = {}): ConfigurationPipelineYamlOptions {
  const shards = shardNames(count);
  return {
    ...PIPELINE_OPTIONS,
    stacks: ['ci-access', 'app-roles', ...shards],
    dependencies: Object.fromEntries(shards.map((s) => [s, ['app-roles']])),
    shardGroups: [{ name: 'app-roles-shards', stacks: shards, jobs }],
    ...extra,
  };
}
const render = (o: ConfigurationPipelineYamlOptions) => yaml.load(renderConfigurationPipelineYaml(o)) as Record<string, any>;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** Runs script items in a fresh directory holding `files`, with an `npx` that logs its arguments to calls.txt. */
function runItems(items: readonly string[], files: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shard-jobs-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.writeFileSync(path.join(dir, 'bin', 'npx'), '#!/bin/sh\necho "$*" >> calls.txt\n', { mode: 0o755 });
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  const r = spawnSync('bash', ['-eo', 'pipefail', '-c', `${items.join('\n')}\necho "job went on"`], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, HOME: dir, CI_PROJECT_DIR: '.', TF_PLUGIN_CACHE_DIR: 'cache', SECRETSTORE_IAC_INSTALL: 'true' },
  });
  const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : undefined);
  return { code: r.status, output: `${r.stdout}${r.stderr}`, read };
}

/** A job's share of the selection: what its first step writes, or undefined when it ends the job. */
function share(job: { script: string[] }, selection: readonly string[]): string[] | undefined {
  const r = runItems([job.script[0]], { 'changed-stacks.txt': selection.map((s) => `${s}\n`).join('') });
  expect(r.code).toBe(0);
  return r.output.endsWith('job went on\n') ? r.read(SHARD_JOB_STACKS_FILE)!.split('\n').filter(Boolean) : undefined;
}

describe('the pipeline\'s size does not grow with the shards', () => {
  const jobNames = (count: number) => Object.keys(render(options(count))).filter((j) => !j.startsWith('secretstore-iac-drift-'));

  it('5 shards and 100 shards: the same plan and apply jobs (4 of each kind for the shards); a drift job per stack', () => {
    expect(jobNames(100)).toEqual(jobNames(5));
    const shardJobs = jobNames(100).filter((j) => j.includes('app-roles-shards'));
    expect(shardJobs.sort()).toEqual(
      [1, 2, 3, 4].flatMap((n) => [`secretstore-iac-apply-app-roles-shards-${n}`, `secretstore-iac-plan-app-roles-shards-${n}`, `secretstore-iac-plan-app-roles-shards-${n}-default-branch`]).sort(),
    );
    const drift = Object.keys(render(options(100))).filter((j) => j.startsWith('secretstore-iac-drift-'));
    expect(drift).toHaveLength(102);
  });

  it('passes gitlab-ci-local\'s GitLab CI schema validation and lists the shard jobs', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shard-jobs-schema-'));
    dirs.push(dir);
    const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...a], { cwd: dir, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(dir, '.gitlab-ci.yml'), renderConfigurationPipelineYaml(options(100)));
    git('add', '.');
    git('commit', '-q', '-m', 'pipeline');
    const r = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'gitlab-ci-local'), ['--list-all', '--json-schema-validation'], { cwd: dir, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toContain('json schema validated');
    expect(r.stdout).toMatch(/secretstore-iac-apply-app-roles-shards-4\s/);
    expect(r.status).toBe(0);
  });

  it('no more jobs than shards: 3 shards, 3 jobs of each kind', () => {
    const pipeline = render(options(3));
    expect(Object.keys(pipeline).filter((j) => /^secretstore-iac-apply-app-roles-shards-\d+$/.test(j))).toEqual([1, 2, 3].map((n) => `secretstore-iac-apply-app-roles-shards-${n}`));
  });
});

describe('every selected shard is planned by one job and applied by the apply job of the same number', () => {
  const pipeline = render(options(10, 4));
  const plans = [1, 2, 3, 4].map((n) => pipeline[`secretstore-iac-plan-app-roles-shards-${n}`]);
  const defaultPlans = [1, 2, 3, 4].map((n) => pipeline[`secretstore-iac-plan-app-roles-shards-${n}-default-branch`]);
  const applies = [1, 2, 3, 4].map((n) => pipeline[`secretstore-iac-apply-app-roles-shards-${n}`]);

  it.each([
    ['one shard changed', ['app-roles-07']],
    ['the mount stack and every shard (a change to the mount stack)', ['ci-access', 'app-roles', ...shardNames(10)]],
    ['five shards among other stacks', ['ci-access', 'app-roles-09', 'app-roles-01', 'people', 'app-roles-04', 'app-roles-05', 'app-roles-02']],
  ])('%s', (_name, selection) => {
    const shares = plans.map((job) => share(job, selection) ?? []);
    // Together the jobs plan exactly the selected shards, each once, in the selection's order within a job.
    const selected = selection.filter((s) => s.startsWith('app-roles-'));
    expect(shares.flat().sort()).toEqual([...selected].sort());
    for (const s of shares) expect(s).toEqual(selected.filter((x) => s.includes(x)));
    // Spread: no job has two more than another.
    expect(Math.max(...shares.map((s) => s.length)) - Math.min(...shares.map((s) => s.length))).toBeLessThanOrEqual(1);
    // The default branch's plan job and the apply job of a number take the same share.
    expect(defaultPlans.map((job) => share(job, selection) ?? [])).toEqual(shares);
    expect(applies.map((job) => share(job, selection) ?? [])).toEqual(shares);
  });

  it('a job with an empty share ends at once, successfully, saying so; a missing selection fails the job', () => {
    const r = runItems([plans[3].script[0]], { 'changed-stacks.txt': 'ci-access\napp-roles-07\n' });
    expect(r.code).toBe(0);
    expect(r.output).toBe('secretstore-iac: none of the 1 selected stacks of app-roles-shards is job 4\'s (of 4; 10 stacks in the group, the others unchanged): nothing to plan\n');
    expect(runItems([applies[3].script[0]], { 'changed-stacks.txt': '' }).output).toContain('nothing to apply');
    const missing = runItems([plans[0].script[0]]);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain('changed-stacks.txt, the synth job\'s selection of the stacks, is missing');
  });

  it('a plan job plans its share one stack after the other, with --refuse-replace --allow-removals, the plans its artifact', () => {
    const r = runItems(plans[0].script, { 'changed-stacks.txt': 'app-roles-03\napp-roles-01\napp-roles-05\napp-roles-02\napp-roles-08\n' });
    expect(r.code).toBe(0);
    expect(r.output).toContain('secretstore-iac: job 1 of 4 of app-roles-shards plans, in this order:\napp-roles-03\napp-roles-08\n');
    expect(r.read('calls.txt')).toBe(
      ['app-roles-03', 'app-roles-08']
        .flatMap((s) => [
          `secretstore-iac tf ${s} -- init -input=false`,
          `secretstore-iac tf ${s} --refuse-replace --allow-removals --removals-file ./secretstore-iac-plans/${s}.removals -- plan -input=false -lock-timeout=10m -out=./secretstore-iac-plans/${s}.tfplan`,
        ])
        .join('\n') + '\n',
    );
    expect(plans[0].artifacts.paths).toEqual(['secretstore-iac-plans/']);
    expect(plans[0].extends).toBe('.secretstore-iac-plan-login');
    expect(defaultPlans[0].extends).toBe('.secretstore-iac-apply-login');
  });

  it('an apply job applies its share\'s saved plans, leaving a plan with removals to the manual job', () => {
    const r = runItems(applies[1].script, {
      'changed-stacks.txt': 'app-roles-00\napp-roles-01\napp-roles-02\napp-roles-03\napp-roles-04\napp-roles-05\n',
      'secretstore-iac-plans/app-roles-05.removals': 'auth/approle/role/billing-dev (vault_approle_auth_backend_role.b)\n',
    });
    expect(r.code).toBe(0);
    expect(r.output).toContain('secretstore-iac: the plan of app-roles-05 destroys objects this configuration declares nowhere any more (a revocation):\n  auth/approle/role/billing-dev');
    expect(r.read('calls.txt')).toBe('secretstore-iac tf app-roles-01 -- init -input=false\nsecretstore-iac tf app-roles-01 --refuse-replace --reviewed-plans ./reviewed-plans.json -- apply -input=false -lock-timeout=10m ./secretstore-iac-plans/app-roles-01.tfplan\n');
  });
});

describe('the order of the applies: after the stacks the shards depend on, before those depending on a shard', () => {
  it('a shard apply job needs the first stack\'s and the mount stack\'s apply jobs, and its own plan job', () => {
    const pipeline = render(options(10));
    expect(pipeline['secretstore-iac-apply-app-roles-shards-2'].needs).toEqual([
      'secretstore-iac-synth', 'secretstore-iac-plan-app-roles-shards-2-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-ci-access', 'secretstore-iac-apply-app-roles',
    ]);
    expect(pipeline['secretstore-iac-apply-app-roles-shards-2'].resource_group).toBe('secretstore-iac-app-roles-shards-2');
  });

  it('a stack that depends on a shard applies after every shard apply job', () => {
    const o = options(10, 3);
    const pipeline = render({ ...o, stacks: [...o.stacks, 'reports'], dependencies: { ...o.dependencies, reports: ['app-roles-04'] } });
    expect(pipeline['secretstore-iac-apply-reports'].needs).toEqual([
      'secretstore-iac-synth', 'secretstore-iac-plan-reports-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-ci-access',
      ...[1, 2, 3].map((n) => `secretstore-iac-apply-app-roles-shards-${n}`),
    ]);
  });

  it('the manual removal job gets every default-branch plan: the shard jobs\' too', () => {
    const pipeline = render(options(10, 2));
    expect(pipeline['secretstore-iac-destroy-removed-objects'].dependencies).toEqual([
      'secretstore-iac-synth', 'secretstore-iac-plan-app-roles-default-branch', 'secretstore-iac-plan-ci-access-default-branch',
      'secretstore-iac-plan-app-roles-shards-1-default-branch', 'secretstore-iac-plan-app-roles-shards-2-default-branch', 'secretstore-iac-plan-retired-default-branch',
      'secretstore-iac-access-diff-default-branch',
    ]);
  });
});

describe('a group the jobs cannot share is refused, every problem at once', () => {
  it('names each broken rule', () => {
    const o = options(3);
    expect(() =>
      renderConfigurationPipelineYaml({
        ...o,
        stacks: [...o.stacks, 'app-roles-shards-1'],
        dependencies: { ...o.dependencies, 'app-roles-02': ['app-roles', 'app-roles-01'] },
        inputs: { 'app-roles-00': [{ name: 'token', required: true }] },
        shardGroups: [
          { name: 'app-roles-shards', stacks: ['app-roles-00', 'app-roles-01', 'app-roles-02', 'ci-access', 'missing'], jobs: 2 },
          { name: 'other', stacks: ['app-roles-01'], jobs: 0 },
        ],
      }),
    ).toThrow(
      'configuration pipeline: ' +
        [
          'shard job group "app-roles-shards": its job 1 would have the jobs of stack "app-roles-shards-1"',
          'shard job group "app-roles-shards": "app-roles-00" declares input variables, which only a stack\'s own jobs pass on',
          'shard job group "app-roles-shards": "app-roles-02" depends on "app-roles-01" of the same group, whose jobs run side by side',
          'shard job group "app-roles-shards": "ci-access" is the first stack, which applies before every other one',
          'shard job group "app-roles-shards": "missing" is not one of the stacks',
          'shard job group "other": jobs 0: must be a whole number of at least 1',
          'shard job group "other": "app-roles-01" is in group "app-roles-shards" too',
        ].join('; '),
    );
  });
});

describe('the platform\'s pipeline: shardJobs', () => {
  const pipelineOf = (props: Record<string, unknown>) => {
    // 40 applications more in 8 hash shards: every shard has some.
    const platform = synthesizePlatform({ ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON, ...props }, applicationSharding: { by: 'hash', shards: 8 } }, (p) => {
      for (let i = 0; i < 40; i++) p.appRoles.addApplication(`extra-${i}`, { name: `extra${i}`, environment: 'prod' });
    });
    expect(Object.keys(platform.stacks).filter((s) => /^app-roles-\d+$/.test(s))).toHaveLength(8);
    return yaml.load(fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8')) as Record<string, any>;
  };
  const applyShardJobs = (pipeline: Record<string, any>) => Object.keys(pipeline).filter((j) => /^secretstore-iac-apply-app-roles-shards-\d+$/.test(j));

  it('4 jobs of each kind by default, as many as asked', () => {
    expect(applyShardJobs(pipelineOf({}))).toHaveLength(4);
    expect(applyShardJobs(pipelineOf({ shardJobs: 2 }))).toHaveLength(2);
  });

  it.each([0, 51, 2.5, '4'])('shardJobs %p is reported with the field and the rule', (value) => {
    const problems = synthesisProblems({ ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON, shardJobs: value } } as never);
    expect(problems.filter((p) => p.includes('shardJobs'))).toHaveLength(1);
  });
});
