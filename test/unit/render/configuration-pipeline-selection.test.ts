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
    expect(pipeline['secretstore-iac-synth'].script.map((i: string) => i.trim())).toContain('npx secretstore-iac pipeline synth');
    expect(pipeline['secretstore-iac-synth'].artifacts.paths).toEqual(expect.arrayContaining(['cdktf.out/', 'cdktf.base.out/', 'changed-stacks.txt', 'changed-stacks.md', 'retired-stacks.txt']));
    expect(pipeline['secretstore-iac-synth'].variables).toEqual({ GIT_DEPTH: '0', SECRETSTORE_IAC_SYNTH_CACHE: '.secretstore-iac/synth-cache' });
    // First: gitlab-ci-local saves no cache entry listed after one it only pulls.
    expect(pipeline['secretstore-iac-synth'].cache[0]).toEqual({ key: 'secretstore-iac-synth', paths: ['.secretstore-iac/synth-cache'] });
  });
});

describe('every job reuses the synth job\'s work and the pipeline\'s dependencies', () => {
  const jobs = Object.keys(pipeline).filter((j) => j.startsWith('secretstore-iac-') && pipeline[j].script);
  const installItem = (job: string): string => pipeline[job].script.find((i: string) => i.includes('SECRETSTORE_IAC_INSTALL'));

  it('dependencies: node_modules from the cache keyed on the lock file, filled by the build job only; installed only without it', () => {
    for (const job of jobs) {
      const deps = pipeline[job].cache?.find((c: any) => c.key?.prefix === 'secretstore-iac-deps');
      expect({ job, deps }).toEqual({ job, deps: { key: { files: ['package-lock.json'], prefix: 'secretstore-iac-deps' }, paths: ['node_modules'], policy: job === 'secretstore-iac-build' ? 'pull-push' : 'pull' } });
      expect({ job, install: pipeline[job].script.filter((i: string) => i.includes('SECRETSTORE_IAC_INSTALL')).length }).toEqual({ job, install: 1 });
    }
    const item = installItem('secretstore-iac-apply-app-roles');
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
    const text = job.script.join('\n');
    expect(text).toContain('npx secretstore-iac access-diff --plans secretstore-iac-plans --risk-flag-count access-risk-flags.txt > access-diff.md');
    expect(text).not.toMatch(/cdktf\.base\.out|git fetch/);
  });
});

describe('a stack the synth job did not select: its plan and apply jobs finish at once, saying so', () => {
  const jobs = ['secretstore-iac-plan-app-roles-a', 'secretstore-iac-plan-app-roles-a-default-branch', 'secretstore-iac-apply-app-roles-a'];

  it.each(jobs)('%s: first step; skips when unselected, goes on when selected, fails without the selection', (job) => {
    const first: string = pipeline[job].script[0];
    const what = job.includes('apply') ? 'apply' : 'plan';
    const skipped = runItem(first, {}, { 'changed-stacks.txt': 'app-roles\napp-roles-ab\n' });
    expect(skipped.code).toBe(0);
    expect(skipped.output).toBe(`secretstore-iac: stack app-roles-a is unchanged (same content digest as the base, and no stack it depends on changed): nothing to ${what}\n`);
    const selected = runItem(first, {}, { 'changed-stacks.txt': 'ci-access\napp-roles-a\n' });
    expect(selected).toMatchObject({ code: 0, output: 'job went on\n' });
    const missing = runItem(first, {});
    expect(missing.code).toBe(1);
    expect(missing.output).toContain('changed-stacks.txt, the synth job\'s selection of the stacks, is missing');
  });

  it.each(['secretstore-iac-plan-retired', 'secretstore-iac-plan-retired-default-branch', 'secretstore-iac-apply-retired'])(
    '%s: first step; finishes at once without retired stacks, goes on with one, fails without the list',
    (job) => {
      const first: string = pipeline[job].script[0];
      const what = job.includes('apply') ? 'apply' : 'plan';
      expect(runItem(first, {}, { 'retired-stacks.txt': '' })).toMatchObject({
        code: 0,
        output: `secretstore-iac: no retired stack (one the base had and this commit no longer has): nothing to ${what}\n`,
      });
      expect(runItem(first, {}, { 'retired-stacks.txt': 'app-roles-c\n' })).toMatchObject({ code: 0, output: 'job went on\n' });
      const missing = runItem(first, {});
      expect(missing.code).toBe(1);
      expect(missing.output).toContain('retired-stacks.txt, the synth job\'s list of retired stacks, is missing');
    },
  );

  it('a retired stack\'s plan fails the job when its engine fails (the loop does not go on)', () => {
    const loop: string = pipeline['secretstore-iac-plan-retired'].script.find((i: string) => i.startsWith('for stack in'));
    const r = runItem(loop, { CI_PROJECT_DIR: '/nowhere' }, { 'retired-stacks.txt': 'app-roles-c\napp-roles-d\n' }, 'echo "$*" >> calls.txt; case "$3 $*" in "app-roles-c "*" plan "*) exit 1 ;; esac');
    expect(r.code).not.toBe(0);
    expect(r.read('calls.txt')).toBe(
      'secretstore-iac tf app-roles-c -- init -input=false\nsecretstore-iac tf app-roles-c --refuse-replace --allow-removals --removals-file /nowhere/secretstore-iac-plans/app-roles-c.removals -- plan -input=false -lock-timeout=10m -out=/nowhere/secretstore-iac-plans/app-roles-c.tfplan\n',
    );
  });

  it('the drift jobs check every stack', () => {
    expect(pipeline['secretstore-iac-drift-app-roles-a'].script.join('\n')).not.toContain('changed-stacks.txt');
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

  it('a stack\'s apply job leaves a plan with removals to the manual job, naming what it destroys; applies a plan without', () => {
    const step: string = pipeline['secretstore-iac-apply-app-roles-a'].script[1];
    const deferred = runItem(step, { CI_PROJECT_DIR: '.' }, { 'secretstore-iac-plans/app-roles-a.removals': 'auth/approle/role/billing-dev (vault_approle_auth_backend_role.b)\n' });
    expect(deferred.code).toBe(0);
    expect(deferred.output).toBe(
      'secretstore-iac: the plan of app-roles-a destroys objects this configuration declares nowhere any more (a revocation):\n' +
        '  auth/approle/role/billing-dev (vault_approle_auth_backend_role.b)\n' +
        'secretstore-iac: not applied here: the manual job secretstore-iac-destroy-removed-objects applies the plan of app-roles-a (with its other changes) once a person starts it\n',
    );
    expect(runItem(step, { CI_PROJECT_DIR: '.' })).toMatchObject({ code: 0, output: 'job went on\n' });
  });

  it('the retired stacks\' apply job skips a retired stack with removals and applies the others', () => {
    const loop: string = pipeline['secretstore-iac-apply-retired'].script.find((i: string) => i.startsWith('for stack in'));
    const r = runItem(loop, { CI_PROJECT_DIR: '.' }, { 'retired-stacks.txt': 'app-roles-c\npeople\n', 'secretstore-iac-plans/people.removals': 'sys/auth/oidc (vault_jwt_auth_backend.oidc)\n' }, 'echo "$*" >> calls.txt');
    expect(r.code).toBe(0);
    expect(r.read('calls.txt')).toBe('secretstore-iac tf app-roles-c -- init -input=false\nsecretstore-iac tf app-roles-c --refuse-replace --reviewed-plans ./reviewed-plans.json -- apply -input=false -lock-timeout=10m ./secretstore-iac-plans/app-roles-c.tfplan\n');
    expect(r.output).toContain('not applied here: the manual job secretstore-iac-destroy-removed-objects applies the plan of people');
  });

  it('the plan jobs plan with --allow-removals and keep the list beside the saved plan', () => {
    for (const job of ['secretstore-iac-plan-app-roles-a', 'secretstore-iac-plan-app-roles-a-default-branch']) {
      expect(pipeline[job].script.join('\n')).toContain(
        `npx secretstore-iac tf 'app-roles-a' --refuse-replace --allow-removals --removals-file "$CI_PROJECT_DIR/secretstore-iac-plans/app-roles-a.removals" -- plan`,
      );
      expect(pipeline[job].artifacts.paths).toEqual(['secretstore-iac-plans/app-roles-a.*']);
    }
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

  it('the manual job applies, in dependency order and retired stacks last, only the plans with removals, with --allow-removals', () => {
    const run = (files: Record<string, string>) =>
      runItem(destroyJob.script.join('\n'), { CI_PROJECT_DIR: '.', GITLAB_USER_LOGIN: 'alice', TF_PLUGIN_CACHE_DIR: 'cache' }, { 'changed-stacks.txt': 'app-roles\napp-roles-a\n', 'retired-stacks.txt': 'people\n', ...files }, 'echo "$*" >> calls.txt');
    const none = run({});
    expect(none.code).toBe(0);
    expect(none.output).toContain('no plan of this pipeline destroys a removed object: nothing to destroy');
    expect(none.read('calls.txt')).toBeUndefined();
    const some = run({ 'secretstore-iac-plans/people.removals': 'sys/auth/oidc (vault_jwt_auth_backend.oidc)\n', 'secretstore-iac-plans/app-roles-a.removals': 'sys/policies/acl/billing-dev (vault_policy.b)\n' });
    expect(some.code).toBe(0);
    expect(some.output).toContain('started by alice: destroying what the configuration declares nowhere any more:\n  app-roles-a:\n    sys/policies/acl/billing-dev (vault_policy.b)\n  people:\n    sys/auth/oidc (vault_jwt_auth_backend.oidc)\n');
    expect(some.read('calls.txt')).toBe(
      [
        'secretstore-iac tf app-roles-a -- init -input=false',
        'secretstore-iac tf app-roles-a --refuse-replace --allow-removals --reviewed-plans ./reviewed-plans.json -- apply -input=false -lock-timeout=10m ./secretstore-iac-plans/app-roles-a.tfplan',
        'secretstore-iac tf people -- init -input=false',
        'secretstore-iac tf people --refuse-replace --allow-removals --reviewed-plans ./reviewed-plans.json -- apply -input=false -lock-timeout=10m ./secretstore-iac-plans/people.tfplan',
        '',
      ].join('\n'),
    );
    const missing = runItem(destroyJob.script.join('\n'), {}, {});
    expect(missing.code).toBe(1);
    expect(missing.output).toContain('changed-stacks.txt, from the synth job, is missing');
  });

  // After the people removal, ci-access's roles still listed the retired grants (moves' override): its
  // drift job stayed red until some unrelated change to ci-access was applied (issue 37).
  const KEPT = 'cdktf.out/stacks/ci-access/retired-stack-grants_override.tf.json';

  it('the manual job then applies again, without moves\' override, each stack whose roles kept the retired stacks\' grants', () => {
    const r = runItem(
      destroyJob.script.join('\n'),
      { CI_PROJECT_DIR: '.', TF_PLUGIN_CACHE_DIR: 'cache' },
      { 'changed-stacks.txt': 'ci-access\n', 'retired-stacks.txt': 'people\n', 'secretstore-iac-plans/people.removals': 'sys/auth/oidc (vault_jwt_auth_backend.oidc)\n', [KEPT]: '{}', 'cdktf.out/stacks/app-roles/cdk.tf.json': '{}' },
      // Whether the override is there when each guarded engine run starts.
      'echo "$*" >> calls.txt; if [ "$4" = "--refuse-replace" ]; then if [ -f ' + KEPT + ' ]; then echo "  (override kept)" >> calls.txt; else echo "  (no override)" >> calls.txt; fi; fi',
    );
    expect(r.code).toBe(0);
    expect(r.read('calls.txt')).toBe(
      [
        'secretstore-iac tf people -- init -input=false',
        'secretstore-iac tf people --refuse-replace --allow-removals --reviewed-plans ./reviewed-plans.json -- apply -input=false -lock-timeout=10m ./secretstore-iac-plans/people.tfplan',
        '  (override kept)',
        'secretstore-iac tf ci-access -- init -input=false',
        'secretstore-iac tf ci-access --refuse-replace -- plan -input=false -lock-timeout=10m -out=./secretstore-iac-plans/ci-access.released.tfplan',
        '  (no override)',
        'secretstore-iac tf ci-access --refuse-replace --released-grants ./secretstore-iac-plans/ci-access.released-grants.json -- apply -input=false -lock-timeout=10m ./secretstore-iac-plans/ci-access.released.tfplan',
        '  (no override)',
        '',
      ].join('\n'),
    );
    expect(r.output).toContain('secretstore-iac: ci-access kept grants of the retired stacks until their removal: applied again without them');
    // The override, taken out of the stack, is what --released-grants checks the plan against.
    expect(r.read('secretstore-iac-plans/ci-access.released-grants.json')).toBe('{}');
  });

  it('the retired stacks\' apply job does the same when it applied every retired stack itself (none left to the manual job)', () => {
    const script = pipeline['secretstore-iac-apply-retired'].script.join('\n');
    const files = { 'retired-stacks.txt': 'app-roles-c\n', [KEPT]: '{}' };
    const done = runItem(script, { CI_PROJECT_DIR: '.', TF_PLUGIN_CACHE_DIR: 'cache' }, files, 'echo "$*" >> calls.txt');
    expect(done.code).toBe(0);
    expect(done.read('calls.txt')).toContain('secretstore-iac tf ci-access --refuse-replace --released-grants ./secretstore-iac-plans/ci-access.released-grants.json -- apply -input=false -lock-timeout=10m ./secretstore-iac-plans/ci-access.released.tfplan\n');
    const waiting = runItem(script, { CI_PROJECT_DIR: '.', TF_PLUGIN_CACHE_DIR: 'cache' }, { ...files, 'secretstore-iac-plans/app-roles-c.removals': 'x\n' }, 'echo "$*" >> calls.txt');
    expect(waiting.code).toBe(0);
    expect(waiting.output).toContain('the roles keep the retired stacks\' grants until secretstore-iac-destroy-removed-objects applies their removal');
    expect(waiting.read('calls.txt') ?? '').not.toContain('ci-access');
  });
});
