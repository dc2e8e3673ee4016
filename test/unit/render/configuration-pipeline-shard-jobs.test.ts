/**
 * The shards of an application stack are planned and applied by a fixed number of jobs (the
 * configuration pipeline's `shardJobs`), not one per shard: the pipeline's size does not grow with the
 * shards. Each job's command (`pipeline plan|apply --group G --job N`) is given to the share function
 * the command runs (lib/pipeline/job-stacks.ts), with the description synthesized from the same
 * options; what a job then runs: test/unit/pipeline/pipeline-stack-jobs.test.ts; with the real
 * commands under gitlab-ci-local: test/store/configuration-pipeline.store.test.ts.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { ConfigurationPipelineYamlOptions, renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { jobStacks } from '../../../lib/pipeline/job-stacks';
import { describePipeline } from '../../../lib/pipeline/pipeline-description';
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

/**
 * A job's share of the selection: the stacks its command takes (`--group G --job N` read from its
 * script, run through the command's share function with the description of `o`); undefined when it
 * takes none (the job ends at once).
 */
function share(job: { script: string[] }, selection: readonly string[], o: ConfigurationPipelineYamlOptions = options(10, 4)): string[] | undefined {
  const m = /^"\$SECRETSTORE_IAC_BIN" pipeline (plan|apply) --group (\S+) --job (\d+)( --merge-request)?$/.exec(job.script.join('\n'));
  expect(m).not.toBeNull();
  const r = jobStacks({ kind: 'shard', group: m![2], job: Number(m![3]) }, describePipeline(o), { selected: selection, retired: [] }, m![1] as 'plan' | 'apply');
  return r.stacks.length > 0 ? [...r.stacks] : undefined;
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

  it('a job with an empty share takes none (the job ends at once, saying so: test/unit/pipeline/job-stacks.test.ts)', () => {
    expect(share(plans[3], ['ci-access', 'app-roles-07'])).toBeUndefined();
    expect(share(applies[3], [])).toBeUndefined();
  });

  it('the plan jobs keep their saved plans as artifacts and log in as the plan role (merge request) or the apply role', () => {
    expect(plans[0].artifacts.paths).toEqual(['secretstore-iac-plans/']);
    expect(defaultPlans[0].artifacts.paths).toEqual(['secretstore-iac-plans/']);
    expect(plans[0].extends).toBe('.secretstore-iac-plan-login');
    expect(defaultPlans[0].extends).toBe('.secretstore-iac-apply-login');
    expect(applies[0].extends).toBe('.secretstore-iac-apply-login');
    expect(plans[1].script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline plan --group app-roles-shards --job 2 --merge-request']);
    expect(defaultPlans[1].script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline plan --group app-roles-shards --job 2']);
    expect(applies[1].script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline apply --group app-roles-shards --job 2']);
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
