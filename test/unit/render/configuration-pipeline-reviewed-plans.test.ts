/**
 * The configuration pipeline reviews what it applies (issue 36): the merge request's note is computed
 * from the plan jobs' saved plans (`access-diff --plans`), and on the default branch a review job of
 * the same pipeline records each saved plan's SHA-256 (`reviewed-plans.json`), which every apply of a
 * saved plan checks (`tf --reviewed-plans`). Asserted on the rendered YAML, whatever jobs it has; the
 * review steps run for real under the runner's `bash -eo pipefail` with an `npx` that logs its calls.
 * The real commands run under gitlab-ci-local in test/store/configuration-pipeline.store.test.ts.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import {
  ConfigurationPipelineYamlOptions,
  DEFAULT_BRANCH_REVIEW_JOB,
  renderConfigurationPipelineYaml,
  REVIEW_JOB,
  REVIEWED_PLANS_FILE,
} from '../../../lib/render/configuration-pipeline-yaml';
import { checkReviewedPlan, readReviewedPlans } from '../../../lib/engine/reviewed-plan-check';
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
const REVIEWED = `--reviewed-plans "$CI_PROJECT_DIR/${REVIEWED_PLANS_FILE}"`;

const render = (options: ConfigurationPipelineYamlOptions) => yaml.load(renderConfigurationPipelineYaml(options)) as Record<string, any>;
const jobNames = (pipeline: Record<string, any>) => Object.keys(pipeline).filter((j) => Array.isArray(pipeline[j]?.script));
const runsOn = (job: any, condition: string) => (job.rules ?? []).some((r: any) => r.if === condition);
/** Every engine `apply` a job's script runs (through `secretstore-iac tf`), one command line each. */
const applies = (job: any): string[] => (job.script as string[]).flatMap((item) => item.split('\n')).filter((line) => /npx secretstore-iac tf .* -- apply\b/.test(line));
/** The jobs a job waits for and takes artifacts from. */
const upstream = (job: any): string[] => [...(job.needs ?? []), ...(job.dependencies ?? [])];

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** Runs script items in a fresh directory holding `files`, with an `npx` that logs its arguments and then runs `npx` (a shell body). */
function runItems(items: readonly string[], files: Record<string, string>, npx = ':') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-review-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'bin'));
  // After `npx`: the risk-flag count a diff writes (none).
  fs.writeFileSync(path.join(dir, 'bin', 'npx'), `#!/bin/sh\necho "$*" >> calls.txt\n${npx}\nwhile [ $# -gt 0 ]; do if [ "$1" = --risk-flag-count ]; then echo 0 > "$2"; fi; shift; done\n`, { mode: 0o755 });
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  const r = spawnSync('bash', ['-eo', 'pipefail', '-c', `${items.join('\n')}\necho "job went on"`], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, HOME: dir, CI_PROJECT_DIR: dir, TF_PLUGIN_CACHE_DIR: path.join(dir, 'plugins') },
  });
  const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : undefined);
  return { dir, code: r.status, output: `${r.stdout}${r.stderr}`, read };
}

describe.each(Object.entries(SHAPES))('pipeline %s: the default branch applies only the plans its review recorded', (_shape, options) => {
  const pipeline = render(options);
  const jobs = jobNames(pipeline);
  const applying = jobs.filter((j) => applies(pipeline[j]).length > 0);
  const planJobs = (condition: string) => jobs.filter((j) => j.startsWith('secretstore-iac-plan-') && runsOn(pipeline[j], condition)).sort();

  it('the jobs that apply: every stack apply job, shard apply job, the retired stacks\' and the manual removal job, all on the default branch only', () => {
    const expected = jobs.filter((j) => /^secretstore-iac-apply-/.test(j)).concat('secretstore-iac-destroy-removed-objects');
    expect(applying.sort()).toEqual(expected.sort());
    expect(applying.length).toBeGreaterThanOrEqual(4);
    for (const j of applying) expect({ j, rules: pipeline[j].rules.map((r: any) => r.if) }).toEqual({ j, rules: [DEFAULT_BRANCH] });
  });

  // The one apply of a plan no review read: after the retired stacks' removal, the stacks whose roles
  // kept their grants are applied without moves' override, a plan `tf --released-grants` lets through
  // only when all it does is take those grants away (test/unit/engine/released-grants-check.test.ts).
  const RELEASE = /^ {2}npx secretstore-iac tf "\$stack" --refuse-replace --released-grants "\$CI_PROJECT_DIR\/secretstore-iac-plans\/\$stack\.released-grants\.json" -- apply -input=false -lock-timeout=10m "\$CI_PROJECT_DIR\/secretstore-iac-plans\/\$stack\.released\.tfplan"$/;

  it('every apply is of a saved plan, guarded, and checked against the review (--reviewed-plans reviewed-plans.json), but the release of kept grants (--released-grants)', () => {
    const releases: string[] = [];
    for (const j of applying) {
      for (const line of applies(pipeline[j])) {
        if (RELEASE.test(line)) {
          releases.push(j);
          continue;
        }
        expect({ j, line, reviewed: line.includes(` --refuse-replace`) && line.includes(` ${REVIEWED} -- apply `) && /-- apply .*"\$CI_PROJECT_DIR\/secretstore-iac-plans\/[^"]+\.tfplan"$/.test(line) }).toEqual({ j, line, reviewed: true });
      }
    }
    expect(releases.sort()).toEqual(['secretstore-iac-apply-retired', 'secretstore-iac-destroy-removed-objects']);
  });

  it('every apply job waits for the review job and takes its artifact (needs or dependencies)', () => {
    for (const j of applying) expect({ j, review: upstream(pipeline[j]).includes(DEFAULT_BRANCH_REVIEW_JOB) }).toEqual({ j, review: true });
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
    expect(review.artifacts.paths).toEqual([REVIEWED_PLANS_FILE]);
    expect(review.script.join('\n')).toContain(`npx secretstore-iac access-diff --plans secretstore-iac-plans --format json > ${REVIEWED_PLANS_FILE}`);
  });

  it('the merge request\'s review job reads every saved plan of its pipeline\'s plan jobs', () => {
    const review = pipeline[REVIEW_JOB];
    expect(review.rules).toEqual([{ if: MR }]);
    expect([...review.dependencies].sort()).toEqual(['secretstore-iac-synth', ...planJobs(MR)].sort());
    expect(review.script.join('\n')).toContain('npx secretstore-iac access-diff --plans secretstore-iac-plans --risk-flag-count access-risk-flags.txt > access-diff.md');
    // The note's access part is not a comparison of two syntheses any more.
    expect(review.script.join('\n')).not.toMatch(/access-diff "\$base"|access-diff cdktf|cdktf\.base\.out/);
  });
});

describe('the review steps, run', () => {
  const pipeline = render(SHAPES.plain);
  /** The review job's steps after the install (the cache holds node_modules). */
  const steps = (job: string) => (pipeline[job].script as string[]).slice(1);
  const PLANS = { 'secretstore-iac-plans/app-roles.tfplan': 'PK-a', 'secretstore-iac-plans/app-roles.removals': 'x\n', 'secretstore-iac-plans/ci-access.tfplan': 'PK-c' };

  it('default branch: each planned stack initialised, then the saved plans reviewed into reviewed-plans.json, printed in the log', () => {
    const r = runItems(steps(DEFAULT_BRANCH_REVIEW_JOB), PLANS, 'case "$*" in *access-diff*) echo \'{"plans":[{"stack":"ci-access"}]}\'; exit 1;; esac');
    expect(r.code).toBe(0);
    expect(r.read('calls.txt')).toBe(
      [
        'secretstore-iac tf app-roles -- init -input=false',
        'secretstore-iac tf ci-access -- init -input=false',
        'secretstore-iac access-diff --plans secretstore-iac-plans --format json',
        '',
      ].join('\n'),
    );
    expect(r.read(REVIEWED_PLANS_FILE)).toBe('{"plans":[{"stack":"ci-access"}]}\n');
    expect(r.output).toContain(`the review of this pipeline's saved plans (artifact ${REVIEWED_PLANS_FILE};`);
    expect(r.output).toContain('{"plans":[{"stack":"ci-access"}]}\njob went on');
  });

  it('default branch: an error of the review (exit 3) fails the job: no review, no apply', () => {
    const r = runItems(steps(DEFAULT_BRANCH_REVIEW_JOB), PLANS, 'case "$*" in *access-diff*) echo "cannot show the plan" >&2; exit 3;; esac');
    expect(r.code).toBe(3);
    expect(r.output).not.toContain('job went on');
  });

  it('default branch without a saved plan (nothing selected): the review records none, and an apply against it is refused', () => {
    const r = runItems(steps(DEFAULT_BRANCH_REVIEW_JOB), {});
    expect(r.code).toBe(0);
    expect(r.read('calls.txt')).toBeUndefined();
    const file = path.join(r.dir, REVIEWED_PLANS_FILE);
    expect(readReviewedPlans(file)).toEqual([]);
    fs.writeFileSync(path.join(r.dir, 'ci-access.tfplan'), 'PK');
    expect(() => checkReviewedPlan('ci-access', path.join(r.dir, 'ci-access.tfplan'), readReviewedPlans(file), file)).toThrow(/read no plan of stack ci-access/);
  });

  it('merge request: each planned stack initialised, the note from access-diff --plans; an error of the review fails the job', () => {
    const ok = runItems(steps(REVIEW_JOB).slice(0, 3), PLANS);
    expect(ok.code).toBe(0);
    expect(ok.read('calls.txt')).toBe(
      [
        'secretstore-iac tf app-roles -- init -input=false',
        'secretstore-iac tf ci-access -- init -input=false',
        'secretstore-iac access-diff --plans secretstore-iac-plans --risk-flag-count access-risk-flags.txt',
        '',
      ].join('\n'),
    );
    const failed = runItems(steps(REVIEW_JOB).slice(0, 3), PLANS, 'case "$*" in *access-diff*) echo "## partial"; exit 3;; esac');
    expect(failed.code).toBe(3);
    expect(failed.output).toContain('## partial');
    expect(failed.output).not.toContain('job went on');
  });
});
