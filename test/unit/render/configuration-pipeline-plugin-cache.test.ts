import * as yaml from 'js-yaml';
import { renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

// The plan jobs of the stacks run at the same time: a plugin cache shared between them races
// (test/store/configuration-pipeline.store.test.ts). Every job that installs providers has its own.

const pipeline = yaml.load(renderConfigurationPipelineYaml(PIPELINE_OPTIONS)) as Record<string, any>;

const installing = Object.entries(pipeline).filter(([, job]) => Array.isArray(job?.script) && job.script.some((item: string) => / -- init /.test(item)));

describe('no two jobs share a provider install directory', () => {
  it('the plan, apply and drift jobs of both stacks, the retired stacks\' plan and apply jobs, the removals\' manual job and the review jobs (they show the saved plans) install providers', () => {
    expect(installing.map(([name]) => name).sort()).toEqual(
      ['app-roles', 'ci-access', 'retired']
        .flatMap((s) => [`secretstore-iac-apply-${s}`, `secretstore-iac-drift-${s}`, `secretstore-iac-plan-${s}`, `secretstore-iac-plan-${s}-default-branch`])
        .filter((job) => job !== 'secretstore-iac-drift-retired')
        .concat('secretstore-iac-destroy-removed-objects', 'secretstore-iac-access-diff', 'secretstore-iac-access-diff-default-branch')
        .sort(),
    );
  });

  it.each(installing)('%s: its own plugin cache (per job id), made before init', (_name, job: any) => {
    expect(job.variables.TF_PLUGIN_CACHE_DIR).toBe('$CI_PROJECT_DIR/.secretstore-iac-plugin-cache/$CI_JOB_ID');
    const make = job.script.findIndex((item: string) => item.trim() === 'mkdir -p "$TF_PLUGIN_CACHE_DIR"');
    const init = job.script.findIndex((item: string) => / -- init /.test(item));
    expect(make).toBeGreaterThanOrEqual(0);
    expect(make).toBeLessThan(init);
  });

  it('no pipeline-wide plugin cache', () => {
    expect(pipeline.variables.TF_PLUGIN_CACHE_DIR).toBeUndefined();
  });
});
