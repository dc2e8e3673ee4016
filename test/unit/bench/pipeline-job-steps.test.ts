/** The steps of a pipeline's jobs from a gitlab-ci-local `--timestamps` log (bench/pipeline-job-steps.ts). */
import { durationS, jobTimelines, stepOf, timelineLines } from '../../../bench/pipeline-job-steps';

// A plan job and a review job as gitlab-ci-local 4.69 prints them with --timestamps (shortened).
const LOG = [
  'parsing and downloads finished in 42 ms.',
  '[08:37:46 7.75 ms] secretstore-iac-plan-app-roles-shards-1 starting shell (test)',
  '[08:37:46  300 ms] secretstore-iac-plan-app-roles-shards-1 imported artifacts in 280 ms',
  '[08:37:46  310 ms] secretstore-iac-plan-app-roles-shards-1 $ if [ -d node_modules ]; then echo "secretstore-iac: node_modules from the pipeline\'s cache"; fi',
  '[08:37:46  320 ms] secretstore-iac-plan-app-roles-shards-1 > secretstore-iac: node_modules from the pipeline\'s cache',
  '[08:37:46  330 ms] secretstore-iac-plan-app-roles-shards-1 $ npx secretstore-iac pipeline plan --shard-group app-roles-shards --share 1',
  '[08:37:47  1.10 s] secretstore-iac-plan-app-roles-shards-1 > secretstore-iac pipeline plan: app-roles-shards share 1 of 4 plans app-roles-07',
  '[08:37:47  1.20 s] secretstore-iac-plan-app-roles-shards-1 > Initializing the backend...',
  '[08:37:48  2.40 s] secretstore-iac-plan-app-roles-shards-1 > OpenTofu has been successfully initialized!',
  '[08:37:49  3.00 s] secretstore-iac-plan-app-roles-shards-1 > vault_approle_auth_backend_role.a: Refreshing state... [id=auth/approle/role/a]',
  '[08:37:52  6.00 s] secretstore-iac-plan-app-roles-shards-1 > vault_approle_auth_backend_role.b: Refreshing state... [id=auth/approle/role/b]',
  '[08:37:53  7.50 s] secretstore-iac-plan-app-roles-shards-1 > OpenTofu used the selected providers to generate the following execution',
  '[08:37:54  8.00 s] secretstore-iac-plan-app-roles-shards-1 > secretstore-iac pipeline plan: app-roles-07: plan saved as secretstore-iac-plans/app-roles-07.tfplan (its artifact)',
  '[08:37:54  8.10 s] secretstore-iac-plan-app-roles-shards-1 finished in 8.1 s',
  '[08:37:54  8.10 s] secretstore-iac-plan-app-roles-shards-1 exported artifacts in 400 ms',
  '[08:37:55 2.00 ms] secretstore-iac-access-diff starting shell (test)',
  '[08:37:55  100 ms] secretstore-iac-access-diff $ npx secretstore-iac pipeline review --merge-request',
  '[08:37:56  1.00 s] secretstore-iac-access-diff > secretstore-iac pipeline review: reviewing the saved plans of app-roles-07 (secretstore-iac-plans/, the plan jobs\' artifacts)',
  '[08:37:58  3.50 s] secretstore-iac-access-diff > ## Access changes',
  '[08:37:58  3.60 s] secretstore-iac-access-diff finished in 3.6 s',
  ' PASS  [ 8.1 s] secretstore-iac-plan-app-roles-shards-1',
  'pipeline finished in 12 s',
].join('\n');

describe('gitlab-ci-local durations', () => {
  it('reads ms, s and min', () => {
    expect(durationS('540 ms')).toBeCloseTo(0.54);
    expect(durationS('12.3 s')).toBeCloseTo(12.3);
    expect(durationS('1.5 min')).toBeCloseTo(90);
  });
});

describe('the steps of a job', () => {
  const [plan, review] = jobTimelines(LOG);

  it('splits each job at the lines that begin a step, the refresh lines in one step', () => {
    expect(plan.job).toBe('secretstore-iac-plan-app-roles-shards-1');
    expect(plan.started).toBe('08:37:46');
    expect(plan.steps.map((s) => s.label)).toEqual([
      'job start-up (shell, artifacts in)',
      'after the artifacts import',
      expect.stringMatching(/^\$ if \[ -d node_modules \]/),
      '$ npx secretstore-iac pipeline plan --shard-group app-roles-shards --share 1',
      'plan: app-roles-shards share 1 of 4 plans app-roles-07',
      'engine init',
      'after init: engine start, state read (review: show -json, access-diff)',
      'refresh',
      'plan computed, written, checked',
      'plan: after the plan (guard, plan saved)',
      'artifacts out',
    ]);
    const byLabel = new Map(plan.steps.map((s) => [s.label, s.s]));
    expect(byLabel.get('engine init')).toBeCloseTo(1.2);
    expect(byLabel.get('refresh')).toBeCloseTo(4.5);
    expect(byLabel.get('artifacts out')).toBeCloseTo(0.4);
  });

  it('counts a job from its start to its artifacts exported, the steps summing to it', () => {
    expect(plan.totalS).toBeCloseTo(8.5);
    expect(plan.steps.reduce((a, s) => a + s.s, 0)).toBeCloseTo(8.5);
    expect(review.totalS).toBeCloseTo(3.6);
    expect(review.steps.map((s) => s.label)).toContain('review: review (init of each planned stack, show -json, access-diff)');
  });

  it('the default branch\'s comparison with the approved notes is a step of its own, from its first line to its verdict', () => {
    expect(stepOf('secretstore-iac pipeline review: comparing the plans with what the merge requests merged since 0123456789ab approved (their notes, through the GitLab API)')).toBe(
      'review: the comparison with the approved notes (GitLab API, compare)',
    );
    expect(stepOf('secretstore-iac pipeline review: the plans give exactly the change approved by !7: the apply jobs apply them')).toBe('review: after the comparison (its verdict, the outcome written)');
    expect(stepOf('secretstore-iac pipeline review: the plans differ from what the notes of !7 approved: 2 difference(s): nothing is applied automatically; the manual job x applies them once a person starts it')).toBe(
      'review: after the comparison (its verdict, the outcome written)',
    );
  });

  it('leaves lines of no step to the step before', () => {
    expect(stepOf('random output of a command')).toBeUndefined();
    expect(stepOf('copied artifacts to cwd in 51 ms')).toBeUndefined();
    expect(stepOf('$ ls')).toBe('$ ls');
  });

  it('prints a job with its total, then its steps', () => {
    const lines = timelineLines(plan, '  ');
    expect(lines[0]).toBe('secretstore-iac-plan-app-roles-shards-1 (started 08:37:46): 8.50 s');
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}refresh +4\.50 s$/));
  });
});
