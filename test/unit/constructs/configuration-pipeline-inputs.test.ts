/**
 * The stacks' input variables in the configuration pipeline (issue 26): each variable a stack
 * synthesizes reaches that stack's plan, apply and drift jobs from the CI/CD variable
 * `TF_VAR_<name>`, derived from the synthesis; a merge-request plan without it plans with a
 * placeholder (the variables are ephemeral), a default-branch job without it fails naming it, and
 * the value is never printed. The steps are run here with sh, as the runner runs them.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { TerraformVariable } from 'cdktf';
import { INPUT_PLACEHOLDER } from '../../../lib';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { withPeople } from '../../support/people-config';
import { synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';

const PIPELINE = { configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } };

function pipelineOf(config: PlatformConfig) {
  const platform = synthesizePlatform(config);
  const text = fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8');
  return { platform, text, jobs: yaml.load(text) as Record<string, any> };
}

/** The script step of a job that handles TF_VAR_oidc_client_secret. */
const inputStep = (job: any): string | undefined => (job.script as string[]).find((s) => s.includes('TF_VAR_oidc_client_secret'));

/** Runs a step with sh in an environment of `env` only (in a directory holding `files`), then prints whether the variable is set, and to what. */
function runStep(step: string, env: Record<string, string>, files: Record<string, string> = {}) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-inputs-'));
  try {
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(cwd, name), content);
    const r = spawnSync('sh', ['-c', `${step}\necho "after: \${TF_VAR_oidc_client_secret:-<unset>}"`], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

describe('the people stack\'s client secret in the configuration pipeline', () => {
  const { platform, text, jobs } = pipelineOf({ ...withPeople(), ...PIPELINE });
  const stacks = Object.keys(platform.stacks);

  it('is the people stack\'s input variable, synthesized ephemeral, so the pipeline wires it', () => {
    expect(platform.stacks.people.variable.oidc_client_secret).toMatchObject({ ephemeral: true, sensitive: true });
    expect(text).toMatch(/^# {3}TF_VAR_oidc_client_secret: stack people$/m);
  });

  it('reaches the people stack\'s plan, apply and drift jobs, before the engine runs, and no job of another stack', () => {
    for (const job of ['plan-people', 'plan-people-default-branch', 'apply-people', 'drift-people']) {
      const script = jobs[`secretstore-iac-${job}`].script as string[];
      const step = inputStep(jobs[`secretstore-iac-${job}`]);
      expect({ job, step: step !== undefined }).toEqual({ job, step: true });
      expect(script.indexOf(step!)).toBeLessThan(script.findIndex((s) => s.includes('npx secretstore-iac tf')));
    }
    for (const stack of stacks.filter((s) => s !== 'people')) {
      for (const job of [`plan-${stack}`, `plan-${stack}-default-branch`, `apply-${stack}`, `drift-${stack}`]) {
        expect({ job, step: inputStep(jobs[`secretstore-iac-${job}`]) }).toEqual({ job, step: undefined });
      }
    }
  });

  it('merge request, variable not given (protected): planned with the placeholder, saying so', () => {
    const r = runStep(inputStep(jobs['secretstore-iac-plan-people'])!, {});
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('TF_VAR_oidc_client_secret is not set (merge-request pipelines get no protected variable): oidc_client_secret of stack people is planned with a placeholder');
    expect(r.stdout).toContain(`after: ${INPUT_PLACEHOLDER}`);
  });

  it('merge request, variable given: the value is used as it is and never printed', () => {
    const r = runStep(inputStep(jobs['secretstore-iac-plan-people'])!, { TF_VAR_oidc_client_secret: 's3cr3t-value' });
    expect(r.status).toBe(0);
    expect(r.stdout.replace('after: s3cr3t-value', '')).not.toContain('s3cr3t');
    expect(r.stdout).toContain('after: s3cr3t-value');
  });

  it('default branch (plan, apply, drift), variable not given: the job fails naming the CI/CD variable; given: it goes on, printing nothing of it', () => {
    for (const job of ['plan-people-default-branch', 'apply-people', 'drift-people']) {
      const step = inputStep(jobs[`secretstore-iac-${job}`])!;
      const missing = runStep(step, {});
      expect({ job, status: missing.status, stderr: missing.stderr }).toEqual({
        job,
        status: 1,
        stderr: 'secretstore-iac: stack people declares the input variable oidc_client_secret: set the CI/CD variable TF_VAR_oidc_client_secret (masked, protected; docs/pipelines.md)\n',
      });
      expect(runStep(step, { TF_VAR_oidc_client_secret: '' }).status).toBe(1);
      const given = runStep(step, { TF_VAR_oidc_client_secret: 's3cr3t-value' });
      expect({ job, status: given.status, out: given.stdout + given.stderr }).toEqual({ job, status: 0, out: 'after: s3cr3t-value\n' });
    }
  });
});

describe('the manual job that destroys removed objects applies saved plans: it needs the input variables too', () => {
  // An ephemeral variable is not in the saved plan: applying it asks for the value again.
  const { jobs } = pipelineOf({ ...withPeople(), ...PIPELINE });
  const job = jobs['secretstore-iac-destroy-removed-objects'];
  const step = inputStep(job)!;

  it('checks the people stack\'s variable before the first apply', () => {
    const script = job.script as string[];
    expect(step).toBeDefined();
    expect(script.indexOf(step)).toBeLessThan(script.findIndex((s) => s.includes('npx secretstore-iac tf')));
    expect(script.indexOf(step)).toBeGreaterThan(script.findIndex((s) => s.includes('removal-stacks.txt')));
  });

  it('people\'s plan destroys removed objects, variable not given: the job fails naming the CI/CD variable; given: it goes on, printing nothing of it', () => {
    const files = { 'removal-stacks.txt': 'app-roles\npeople\n' };
    const missing = runStep(step, {}, files);
    expect({ status: missing.status, stderr: missing.stderr }).toEqual({
      status: 1,
      stderr: 'secretstore-iac: stack people declares the input variable oidc_client_secret: set the CI/CD variable TF_VAR_oidc_client_secret (masked, protected; docs/pipelines.md)\n',
    });
    expect(runStep(step, { TF_VAR_oidc_client_secret: '' }, files).status).toBe(1);
    const given = runStep(step, { TF_VAR_oidc_client_secret: 's3cr3t-value' }, files);
    expect({ status: given.status, out: given.stdout + given.stderr }).toEqual({ status: 0, out: 'after: s3cr3t-value\n' });
  });

  it('people\'s plan destroys nothing (only another stack\'s does): the variable is not asked for', () => {
    const r = runStep(step, {}, { 'removal-stacks.txt': 'app-roles\npeople-old\n' });
    expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: 'after: <unset>\n' });
  });
});

describe('stacks without input variables', () => {
  it('the platform without people: no job and no header line names a TF_VAR_ variable', () => {
    expect(pipelineOf({ ...platformConfig, ...PIPELINE }).text).not.toContain('TF_VAR_');
  });
});

describe('input variables the pipeline cannot wire are refused at synthesis', () => {
  it('a variable that is not ephemeral (its value would be in the saved plan, a job artifact), and one whose name is no CI/CD variable key', () => {
    const problems = synthesisProblems({ ...platformConfig, ...PIPELINE }, (p) => {
      new TerraformVariable(p.appRoles, 'region', { type: 'string' });
      new TerraformVariable(p.appRoles, 'api-key', { type: 'string', sensitive: true }).addOverride('ephemeral', true);
    });
    expect(problems).toEqual([
      '[ci-access/pipeline] stacks.app-roles.variables.api-key = "app-roles/api-key": must be named with letters, digits and "_": the pipeline passes it from the CI/CD variable TF_VAR_<name>, and a CI/CD variable key allows no other character',
      '[ci-access/pipeline] stacks.app-roles.variables.region = "app-roles/region": must be ephemeral (addOverride("ephemeral", true)): the pipeline keeps every saved plan as a job artifact, and the engine writes the value of a variable that is not ephemeral into the plan file',
    ]);
  });

  it('without the configuration pipeline, the same variables are the stack\'s own affair: no problem', () => {
    const { configurationProject: _none, ...withoutPipeline } = platformConfig;
    expect(synthesisProblems(withoutPipeline, (p) => void new TerraformVariable(p.appRoles, 'region', { type: 'string' }))).toEqual([]);
  });
});
