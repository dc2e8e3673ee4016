/**
 * The stacks' input variables in the configuration pipeline (issue 26): each variable a stack
 * synthesizes reaches that stack's plan, apply and drift jobs from the CI/CD variable
 * `TF_VAR_<name>`, derived from the synthesis (the pipeline description beside the pipeline file);
 * a merge-request plan without it plans with a placeholder (the variables are ephemeral), a
 * default-branch job without it fails naming it, and the value is never printed. The jobs'
 * `secretstore-iac pipeline` functions run here with a recording engine.
 */
import * as fs from 'fs';
import { APPROVED_OUTCOME } from '../pipeline/pipeline-fixture';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { TerraformVariable } from 'cdktf';
import { INPUT_PLACEHOLDER } from '../../../lib';
import { jobStacks } from '../../../lib/pipeline/job-stacks';
import { readPipelineDescription } from '../../../lib/pipeline/pipeline-description';
import { PipelineJobContext } from '../../../lib/pipeline/pipeline-job-context';
import { PipelineJobLog } from '../../../lib/pipeline/pipeline-job-log';
import { runApplyJob } from '../../../lib/pipeline/pipeline-apply-job';
import { runDriftJob } from '../../../lib/pipeline/pipeline-drift-job';
import { runPlanJob } from '../../../lib/pipeline/pipeline-plan-job';
import { runRemovalsJob } from '../../../lib/pipeline/pipeline-removals-job';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { withPeople } from '../../support/people-config';
import { synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';

const PIPELINE = { configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } };
const SECRET = 's3cr3t-value';

function pipelineOf(config: PlatformConfig) {
  const platform = synthesizePlatform(config);
  const text = fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8');
  return { platform, text, jobs: yaml.load(text) as Record<string, any>, description: readPipelineDescription(platform.outdir) };
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A job context with the synthesized description, `env`, `files` in its directory, and an engine that records the environment each call adds. */
function jobContext(description: ReturnType<typeof readPipelineDescription>, env: NodeJS.ProcessEnv, files: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-inputs-'));
  dirs.push(dir);
  // The default-branch review's verdict: the plans give what was approved (docs/pipelines.md §13).
  for (const [name, content] of Object.entries({ 'approval-comparison.json': APPROVED_OUTCOME, ...files })) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  const lines: string[] = [];
  const calls: { stack: string; env: Record<string, string> }[] = [];
  const ctx: PipelineJobContext = {
    dir,
    description,
    env,
    log: new PipelineJobLog('test', (l) => lines.push(l)),
    engine: async (args, added) => {
      calls.push({ stack: args[1], env: { ...added } });
      return 0;
    },
  };
  return { ctx, lines, calls };
}

describe('the people stack\'s client secret in the configuration pipeline', () => {
  const { platform, text, jobs, description } = pipelineOf({ ...withPeople(), ...PIPELINE });
  const stacks = Object.keys(platform.stacks);
  const selection = { selected: stacks, retired: [] };
  const own = (stack: string) => jobStacks({ kind: 'stack', stack }, description, selection, 'plan');

  it('is the people stack\'s input variable, synthesized ephemeral, so the pipeline wires it', () => {
    expect(platform.stacks.people.variable.oidc_client_secret).toMatchObject({ ephemeral: true, sensitive: true });
    expect(text).toMatch(/^# {3}TF_VAR_oidc_client_secret: stack people$/m);
    expect(description.inputs).toEqual({ people: [{ name: 'oidc_client_secret', required: true }] });
  });

  it('the people stack keeps jobs of its own (only they pass input variables on); no job\'s script names the variable', () => {
    for (const job of ['plan-people', 'plan-people-default-branch', 'apply-people', 'drift-people']) expect(jobs[`secretstore-iac-${job}`].script).toHaveLength(1);
    expect(description.shardGroups.flatMap((g) => g.stacks)).not.toContain('people');
    for (const [name, job] of Object.entries(jobs)) expect({ name, text: JSON.stringify((job as any).script ?? []) }).not.toEqual({ name, text: expect.stringContaining('TF_VAR_') });
  });

  it('merge request, variable not given (protected): planned with the placeholder, saying so; no other stack gets it', async () => {
    for (const stack of stacks) {
      const r = jobContext(description, {});
      await runPlanJob(own(stack), true, r.ctx);
      const expected = stack === 'people' ? { TF_VAR_oidc_client_secret: INPUT_PLACEHOLDER } : {};
      expect({ stack, envs: r.calls.map((c) => c.env) }).toEqual({ stack, envs: [expected, expected] });
    }
    const r = jobContext(description, {});
    await runPlanJob(own('people'), true, r.ctx);
    expect(r.lines.join('\n')).toContain('TF_VAR_oidc_client_secret is not set (merge-request pipelines get no protected variable): oidc_client_secret of stack people is planned with a placeholder');
  });

  it('merge request, variable given: the value is used as it is (the job\'s environment) and never printed', async () => {
    const r = jobContext(description, { TF_VAR_oidc_client_secret: SECRET });
    await runPlanJob(own('people'), true, r.ctx);
    expect(r.calls.map((c) => c.env)).toEqual([{}, {}]);
    expect(JSON.stringify([r.lines, r.ctx.log.decisions])).not.toContain(SECRET);
  });

  it('default branch (plan, apply, drift), variable not given (or empty): the job fails naming the CI/CD variable before the engine runs; given: it goes on, printing nothing of it', async () => {
    const message = 'stack people declares the input variable oidc_client_secret: set the CI/CD variable TF_VAR_oidc_client_secret (masked, protected; docs/pipelines.md)';
    const plans = { 'secretstore-iac-plans/people.tfplan': 'PK' };
    const kinds: [string, (ctx: PipelineJobContext) => Promise<unknown>][] = [
      ['plan', (ctx) => runPlanJob(own('people'), false, ctx)],
      ['apply', (ctx) => runApplyJob(own('people'), ctx)],
      ['drift', (ctx) => runDriftJob('people', ctx)],
    ];
    for (const [kind, run] of kinds) {
      for (const env of [{}, { TF_VAR_oidc_client_secret: '' }]) {
        const missing = jobContext(description, env, plans);
        await expect(run(missing.ctx)).rejects.toThrow(message);
        expect({ kind, calls: missing.calls }).toEqual({ kind, calls: [] });
      }
      const given = jobContext(description, { TF_VAR_oidc_client_secret: SECRET }, plans);
      await run(given.ctx);
      expect({ kind, calls: given.calls.length }).toEqual({ kind, calls: 2 });
      expect(JSON.stringify([given.lines, given.calls])).not.toContain(SECRET);
    }
  });
});

describe('the manual job that destroys removed objects applies saved plans: it needs the input variables too', () => {
  // An ephemeral variable is not in the saved plan: applying it asks for the value again.
  const { description } = pipelineOf({ ...withPeople(), ...PIPELINE });
  const removals = { 'secretstore-iac-plans/app-roles.removals': 'a\n', 'secretstore-iac-plans/people.removals': 'b\n' };

  it('people\'s plan destroys removed objects, variable not given: the job fails naming the CI/CD variable before the first apply; given: it goes on, printing nothing of it', async () => {
    const missing = jobContext(description, {}, removals);
    await expect(runRemovalsJob({ selected: ['app-roles', 'people'], retired: [] }, missing.ctx)).rejects.toThrow('nothing destroyed: stack people declares the input variable oidc_client_secret: set the CI/CD variable TF_VAR_oidc_client_secret');
    expect(missing.calls).toEqual([]);
    const given = jobContext(description, { TF_VAR_oidc_client_secret: SECRET }, removals);
    await runRemovalsJob({ selected: ['app-roles', 'people'], retired: [] }, given.ctx);
    expect(given.calls.map((c) => c.stack)).toEqual(['app-roles', 'app-roles', 'people', 'people']);
    expect(JSON.stringify(given.lines)).not.toContain(SECRET);
  });

  it('people\'s plan destroys nothing (only another stack\'s does): the variable is not asked for', async () => {
    const r = jobContext(description, {}, { 'secretstore-iac-plans/app-roles.removals': 'a\n', 'secretstore-iac-plans/people.tfplan': 'PK' });
    await runRemovalsJob({ selected: ['app-roles', 'people'], retired: [] }, r.ctx);
    expect(r.calls.map((c) => c.stack)).toEqual(['app-roles', 'app-roles']);
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
