import * as yaml from 'js-yaml';
import { renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

// Every engine run gets the CLI configuration the tool writes, without a plugin cache, and drops a
// TF_PLUGIN_CACHE_DIR it is given (issue 45): a job variable for one would be dead, and named as
// dropped in every job's log. The jobs that install providers set none.

const pipeline = yaml.load(renderConfigurationPipelineYaml(PIPELINE_OPTIONS)) as Record<string, any>;

/** The jobs whose command may run `init` (every `secretstore-iac pipeline` job but synth and usage, which run no engine: plan, apply, removals, drift, review). */
const installing = Object.entries(pipeline).filter(([, job]) => Array.isArray(job?.script) && job.script.some((item: string) => /SECRETSTORE_IAC_BIN" pipeline (?!synth\b|usage\b)/.test(item)));
/** A job with the hidden jobs it extends merged in, as GitLab merges them (hashes deeply; a list replaced). */
function resolved(name: string): any {
  const job = pipeline[name];
  if (!job.extends) return job;
  const base = resolved(job.extends);
  return { ...base, ...job, variables: { ...base.variables, ...job.variables }, before_script: job.before_script ?? base.before_script };
}

describe('no job sets a plugin cache the engine run would drop', () => {
  it('the plan, apply and drift jobs of both stacks, the retired stacks\' plan and apply jobs, the manual jobs (removals, confirmation) and the review jobs (they show the saved plans) install providers', () => {
    expect(installing.map(([name]) => name).sort()).toEqual(
      ['app-roles', 'ci-access', 'retired']
        .flatMap((s) => [`secretstore-iac-apply-${s}`, `secretstore-iac-drift-${s}`, `secretstore-iac-plan-${s}`, `secretstore-iac-plan-${s}-default-branch`])
        .filter((job) => job !== 'secretstore-iac-drift-retired')
        .concat('secretstore-iac-destroy-removed-objects', 'secretstore-iac-confirm-apply', 'secretstore-iac-access-diff', 'secretstore-iac-access-diff-default-branch')
        .sort(),
    );
  });

  it.each(installing)('%s: no TF_PLUGIN_CACHE_DIR, nothing made for one', (name) => {
    const job = resolved(name);
    expect(job.variables?.TF_PLUGIN_CACHE_DIR).toBeUndefined();
    expect((job.before_script ?? []).join('\n')).not.toContain('TF_PLUGIN_CACHE_DIR');
  });

  it('no pipeline-wide plugin cache', () => {
    expect(pipeline.variables.TF_PLUGIN_CACHE_DIR).toBeUndefined();
  });
});
