/**
 * The configuration pipeline reviews what it applies (issue 36): the merge request's note is computed
 * from the plan jobs' saved plans (`access-diff --plans`), and on the default branch a review job of
 * the same pipeline records each saved plan's SHA-256 (`reviewed-plans.json`), which every apply of a
 * saved plan checks (`tf --reviewed-plans`). Asserted on the rendered YAML, whatever jobs it has, and
 * on the guarded `tf` invocation every `pipeline apply` and `pipeline removals` runs; the review job's
 * command runs here on a job directory. The real commands run under gitlab-ci-local in
 * test/store/configuration-pipeline.store.test.ts.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import {
  ConfigurationPipelineYamlOptions,
  DEFAULT_BRANCH_REVIEW_JOB,
  renderConfigurationPipelineYaml,
  REVIEW_JOB,
  REVIEWED_PLANS_FILE,
  ACCESS_CHANGE_FILE,
  APPROVAL_COMPARISON_FILE,
  CONFIRM_APPLY_JOB,
  CONFIRMATION_FILE,
} from '../../../lib/render/configuration-pipeline-yaml';
import { checkReviewedPlan, readReviewedPlans } from '../../../lib/engine/reviewed-plan-check';
import { pipelineEngineArgs } from '../../../lib/pipeline/pipeline-engine-steps';
import { runCli } from '../../../lib/cli/run-cli';
import { jobDirectory } from '../pipeline/pipeline-fixture';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

const shards = ['app-roles-00', 'app-roles-01', 'app-roles-02', 'app-roles-03', 'app-roles-04'];
/** Pipelines of every shape: stacks of their own, dependencies and input variables, shard job groups. */
const SHAPES: Record<string, ConfigurationPipelineYamlOptions> = {
  plain: PIPELINE_OPTIONS,
  dependencies: {
    ...PIPELINE_OPTIONS,
    stacks: ['app-roles', 'app-roles-a', 'ci-access', 'people'],
    dependencies: { 'app-roles-a': ['app-roles'] },
    inputs: { people: [{ name: 'oidc_client_secret', required: true }] },
  },
  shards: {
    ...PIPELINE_OPTIONS,
    stacks: ['ci-access', 'app-roles', ...shards],
    dependencies: Object.fromEntries(shards.map((s) => [s, ['app-roles']])),
    shardGroups: [{ name: 'app-roles-shards', stacks: shards, jobs: 2 }],
  },
};
const DEFAULT_BRANCH = '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE != "schedule" && $CI_PIPELINE_SOURCE != "merge_request_event"';
const MR = '$CI_PIPELINE_SOURCE == "merge_request_event"';

const render = (options: ConfigurationPipelineYamlOptions) => yaml.load(renderConfigurationPipelineYaml(options)) as Record<string, any>;
const jobNames = (pipeline: Record<string, any>) => Object.keys(pipeline).filter((j) => Array.isArray(pipeline[j]?.script));
const runsOn = (job: any, condition: string) => (job.rules ?? []).some((r: any) => r.if === condition);
/** The commands of a job's script that apply saved plans (`pipeline apply`, `pipeline removals`, `pipeline confirm`). */
const applies = (job: any): string[] => (job.script as string[]).flatMap((item) => item.split('\n')).filter((line) => /\b(pipeline (apply|removals|confirm)|tf .* -- apply)\b/.test(line));
/** The jobs a job waits for and takes artifacts from. */
const upstream = (job: any): string[] => [...(job.needs ?? []), ...(job.dependencies ?? [])];

describe.each(Object.entries(SHAPES))('pipeline %s: the default branch applies only the plans its review recorded', (_shape, options) => {
  const pipeline = render(options);
  const jobs = jobNames(pipeline);
  const applying = jobs.filter((j) => applies(pipeline[j]).length > 0);
  const planJobs = (condition: string) => jobs.filter((j) => j.startsWith('secretstore-iac-plan-') && runsOn(pipeline[j], condition)).sort();

  it('the jobs that apply: every stack apply job, shard apply job, the retired stacks\' and the manual removal and confirmation jobs, all on the default branch only', () => {
    const expected = jobs.filter((j) => /^secretstore-iac-apply-/.test(j)).concat('secretstore-iac-destroy-removed-objects', CONFIRM_APPLY_JOB);
    expect(applying.sort()).toEqual(expected.sort());
    expect(applying.length).toBeGreaterThanOrEqual(4);
    for (const j of applying) expect({ j, rules: pipeline[j].rules.map((r: any) => r.if) }).toEqual({ j, rules: [DEFAULT_BRANCH] });
  });

  it('every apply is of a saved plan, guarded, and checked against the review (--reviewed-plans reviewed-plans.json)', () => {
    // The jobs apply only through the pipeline commands, never the engine directly.
    for (const j of applying) for (const line of applies(pipeline[j])) expect({ j, line }).toEqual({ j, line: expect.stringMatching(/^"\$SECRETSTORE_IAC_BIN" pipeline (apply|removals|confirm)\b/) });
    // And every apply those commands run (test/unit/pipeline/pipeline-stack-jobs.test.ts asserts they run no other).
    for (const removals of [false, true]) {
      expect(pipelineEngineArgs.apply('/job', 'app-roles', removals)).toEqual([
        'tf', 'app-roles', '--refuse-replace', ...(removals ? ['--allow-removals'] : []), '--reviewed-plans', `/job/${REVIEWED_PLANS_FILE}`, '--', 'apply', '-input=false', '-lock-timeout=10m', '/job/secretstore-iac-plans/app-roles.tfplan',
      ]);
    }
    // The one apply of a plan no review read: after the retired stacks' removal, the stacks whose roles
    // kept their grants are applied without moves' override, a plan `tf --released-grants` lets through
    // only when all it does is take those grants away (test/unit/engine/released-grants-check.test.ts).
    expect(pipelineEngineArgs.releaseApply('/job', 'ci-access')).toEqual([
      'tf', 'ci-access', '--refuse-replace', '--released-grants', '/job/secretstore-iac-plans/ci-access.released-grants.json', '--', 'apply', '-input=false', '-lock-timeout=10m', '/job/secretstore-iac-plans/ci-access.released.tfplan',
    ]);
  });

  it('every apply job waits for the review job and takes its artifact (needs or dependencies)', () => {
    for (const j of applying) expect({ j, review: upstream(pipeline[j]).includes(DEFAULT_BRANCH_REVIEW_JOB) }).toEqual({ j, review: true });
  });

  it('the confirmation job (issue 46): manual, on the default branch, after the review, with every plan job\'s saved plans and the verdict; keeps who confirmed', () => {
    const confirm = pipeline[CONFIRM_APPLY_JOB];
    expect(confirm.rules).toEqual([{ if: DEFAULT_BRANCH, when: 'manual', allow_failure: true }]);
    expect([...confirm.dependencies].sort()).toEqual(['secretstore-iac-synth', ...planJobs(DEFAULT_BRANCH), DEFAULT_BRANCH_REVIEW_JOB].sort());
    expect(confirm.extends).toBe(pipeline['secretstore-iac-apply-retired'].extends);
    expect(confirm.script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline confirm']);
    expect(confirm.artifacts).toMatchObject({ when: 'always', paths: [CONFIRMATION_FILE] });
    const stages: string[] = pipeline.stages;
    expect(stages.indexOf(confirm.stage)).toBeGreaterThan(stages.indexOf('apply'));
    // The default branch's review lists the commits since the one before the push: the whole history.
    expect(pipeline[DEFAULT_BRANCH_REVIEW_JOB].variables).toMatchObject({ GIT_DEPTH: '0' });
  });

  it('the review job: default branch only, after every plan job of its pipeline (their saved plans), before every apply; keeps reviewed-plans.json', () => {
    const review = pipeline[DEFAULT_BRANCH_REVIEW_JOB];
    expect(review.rules).toEqual([{ if: DEFAULT_BRANCH }]);
    expect(review.needs).toBeUndefined();
    expect([...review.dependencies].sort()).toEqual(['secretstore-iac-synth', ...planJobs(DEFAULT_BRANCH)].sort());
    expect(planJobs(DEFAULT_BRANCH).length).toBeGreaterThanOrEqual(3);
    const stages: string[] = pipeline.stages;
    expect(stages.indexOf(review.stage)).toBeGreaterThan(stages.indexOf('plan'));
    for (const j of applying) expect(stages.indexOf(pipeline[j].stage)).toBeGreaterThan(stages.indexOf(review.stage));
    // Beside the record: the access change and the verdict of the comparison with the approval (docs/pipelines.md §13).
    expect(review.artifacts.paths).toEqual([REVIEWED_PLANS_FILE, ACCESS_CHANGE_FILE, APPROVAL_COMPARISON_FILE]);
    expect(review.script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline review --default-branch']);
  });

  it('the merge request\'s review job reads every saved plan of its pipeline\'s plan jobs', () => {
    const review = pipeline[REVIEW_JOB];
    expect(review.rules).toEqual([{ if: MR }]);
    expect([...review.dependencies].sort()).toEqual(['secretstore-iac-synth', ...planJobs(MR)].sort());
    expect(review.script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline review --merge-request']);
  });
});

describe('the review, run (what it reads and records: test/unit/pipeline/pipeline-review-job.test.ts)', () => {
  it('default branch without a saved plan (nothing selected): the review records none, and an apply against it is refused', async () => {
    const dir = jobDirectory({});
    const code = await runCli(['pipeline', 'review', '--default-branch'], { env: {}, cwd: dir, isTerminal: false, stdout: () => undefined, stderr: () => undefined });
    expect(code).toBe(0);
    const file = path.join(dir, REVIEWED_PLANS_FILE);
    expect(readReviewedPlans(file)).toEqual([]);
    fs.writeFileSync(path.join(dir, 'ci-access.tfplan'), 'PK');
    expect(() => checkReviewedPlan('ci-access', path.join(dir, 'ci-access.tfplan'), readReviewedPlans(file), file)).toThrow(/read no plan of stack ci-access/);
  });
});
