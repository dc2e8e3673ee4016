/**
 * The configuration pipeline file is data (the `yaml` package's document API): short, deterministic,
 * the CI login in one hidden job, and each job's script one `secretstore-iac pipeline` command (what
 * the commands do: test/unit/pipeline/; the note and its posting: pipeline-review-job.test.ts).
 */
import * as yaml from 'js-yaml';
import { BIN_VARIABLE, ConfigurationPipelineYamlOptions, DEFAULT_BIN, renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { describePipeline } from '../../../lib/pipeline/pipeline-description';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

const shards = ['app-roles-00', 'app-roles-01', 'app-roles-02'];
const OPTIONS: ConfigurationPipelineYamlOptions = {
  ...PIPELINE_OPTIONS,
  stacks: ['ci-access', 'app-roles', ...shards, 'people'],
  dependencies: Object.fromEntries(shards.map((s) => [s, ['app-roles']])),
  shardGroups: [{ name: 'app-roles-shards', stacks: shards, jobs: 2 }],
  inputs: { people: [{ name: 'oidc_client_secret', required: true }] },
};
const text = renderConfigurationPipelineYaml(OPTIONS);
const pipeline = yaml.load(text) as Record<string, any>;
const jobs = Object.keys(pipeline).filter((j) => !j.startsWith('.') && pipeline[j]?.script);

describe('the pipeline file', () => {
  it('is deterministic: the same file whatever the order of the stacks, groups and dependencies given', () => {
    const shuffled = renderConfigurationPipelineYaml({
      ...OPTIONS,
      stacks: [...OPTIONS.stacks].reverse(),
      dependencies: Object.fromEntries(Object.entries(OPTIONS.dependencies!).reverse()),
      shardGroups: [{ ...OPTIONS.shardGroups![0], stacks: [...shards].reverse() }],
    });
    expect(shuffled).toBe(text);
    expect(renderConfigurationPipelineYaml(OPTIONS)).toBe(text);
    expect(JSON.stringify(describePipeline({ ...OPTIONS, stacks: [...OPTIONS.stacks].reverse() }))).toBe(JSON.stringify(describePipeline(OPTIONS)));
  });

  it('the usage job (docs/usage.md §9): on schedules and the default branch only when SECRETSTORE_IAC_AUDIT_LOG is set, after synth, no store login, its usage file and picture kept 90 days with the narrowing (patch and description), also when the narrowing fails', () => {
    expect(pipeline['secretstore-iac-usage']).toEqual({
      stage: 'plan',
      extends: '.secretstore-iac-job',
      rules: [
        { if: '$CI_PIPELINE_SOURCE == "schedule" && $SECRETSTORE_IAC_AUDIT_LOG' },
        { if: '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE != "schedule" && $CI_PIPELINE_SOURCE != "merge_request_event" && $SECRETSTORE_IAC_AUDIT_LOG' },
      ],
      needs: ['secretstore-iac-synth'],
      script: ['"$SECRETSTORE_IAC_BIN" pipeline usage'],
      artifacts: { when: 'always', paths: ['usage.json', 'usage.svg', 'narrowing.patch', 'narrowing.md'], expire_in: '90 days' },
    });
  });

  it('is plain YAML (no custom tags: any YAML reader loads it)', () => {
    expect(() => yaml.load(text, { schema: yaml.CORE_SCHEMA })).not.toThrow();
  });

  it('logs in in one place: one hidden job holds the ID token and where to log in (the jobs\' own command logs in: no shell login, no token in a shell variable); every job that talks to the store extends it through its role\'s hidden job', () => {
    expect(text).not.toContain('_ss_role=');
    expect(text).not.toContain('VAULT_TOKEN=');
    expect(pipeline['.secretstore-iac-login'].before_script).toBeUndefined();
    expect(pipeline['.secretstore-iac-login'].variables).toEqual({ SECRETSTORE_IAC_LOGIN_MOUNT: expect.any(String), SECRETSTORE_IAC_LOGIN_AUDIENCE: pipeline['.secretstore-iac-login'].id_tokens.SECRETSTORE_ID_TOKEN.aud });
    expect(Object.keys(pipeline).filter((j) => pipeline[j]?.id_tokens)).toEqual(['.secretstore-iac-login']);
    expect(pipeline['.secretstore-iac-plan-login']).toEqual({ extends: '.secretstore-iac-login', variables: { SECRETSTORE_IAC_LOGIN_ROLE: 'secretstore-iac-plan' } });
    expect(pipeline['.secretstore-iac-apply-login']).toEqual({ extends: '.secretstore-iac-login', variables: { SECRETSTORE_IAC_LOGIN_ROLE: 'secretstore-iac-pipeline' } });
    for (const job of jobs) expect({ job, before_script: pipeline[job].before_script }).toEqual({ job, before_script: undefined });
  });

  it('each job but synth runs one `secretstore-iac pipeline` command', () => {
    for (const job of jobs.filter((j) => j !== 'secretstore-iac-synth')) {
      expect({ job, script: pipeline[job].script }).toEqual({ job, script: [expect.stringMatching(/^"\$SECRETSTORE_IAC_BIN" pipeline (plan|apply|removals|review|drift|confirm|usage)( --[a-z-]+( [A-Za-z0-9_.-]+)?)*$/)] });
    }
  });

  it('runs the bin one variable names, defined once (default: the bin npm links), never through npx', () => {
    expect(pipeline.variables[BIN_VARIABLE]).toBe(DEFAULT_BIN);
    expect(DEFAULT_BIN).toBe('node_modules/.bin/secretstore-iac');
    // Defined in the file's variables only: no job sets it (a CI/CD variable of that name overrides it).
    expect(text.split(`${BIN_VARIABLE}:`).length).toBe(2);
    expect(text).not.toMatch(/\bnpx\b/);
    // Every job, synth included, runs it: no build job, and the synth job compiles before the bin runs.
    expect(jobs).not.toContain('secretstore-iac-build');
    const synth: string[] = pipeline['secretstore-iac-synth'].script;
    const build = synth.findIndex((i) => /^npm run build$/m.test(i));
    const run = synth.findIndex((i) => i.split('\n').includes(`"$${BIN_VARIABLE}" pipeline synth`));
    expect([build >= 0, run > build]).toEqual([true, true]);
    for (const job of jobs) expect({ job, runs: pipeline[job].script.join('\n').includes(`"$${BIN_VARIABLE}" pipeline `) }).toEqual({ job, runs: true });
  });

  it('names the note\'s token variable, the acknowledgement label and the input variables in its header, never a value', () => {
    expect(text).toContain('(needs SECRETSTORE_IAC_NOTE_TOKEN)');
    expect(text).toContain('"access-risk-acknowledged" or SECRETSTORE_IAC_ACCEPT_RISK is "true"');
    expect(text).toMatch(/^# {3}TF_VAR_oidc_client_secret: stack people$/m);
  });

  it('stays short: its size does not grow with the shards (the jobs share them) beyond a drift job each', () => {
    const many = Array.from({ length: 100 }, (_, i) => `app-roles-${String(i).padStart(3, '0')}`);
    const lines = (s: string[]) => renderConfigurationPipelineYaml({ ...OPTIONS, stacks: ['ci-access', 'app-roles', ...s, 'people'], dependencies: Object.fromEntries(s.map((x) => [x, ['app-roles']])), shardGroups: [{ name: 'app-roles-shards', stacks: s, jobs: 2 }] }).split('\n').length;
    // A drift job: its name, stage, extends, rule, needs and command, and a blank line.
    const driftJobLines = 9;
    expect(lines(many) - lines(shards)).toBe((many.length - shards.length) * driftJobLines);
  });
});
