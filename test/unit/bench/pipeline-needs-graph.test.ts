/**
 * The pipeline bench's critical path follows the jobs' `needs` (issue 48): GitLab starts a job with
 * `needs` when those have ended, one without when every job of the earlier stages has; the critical
 * path is the longest chain of the jobs that ran (bench/pipeline-needs-graph.ts).
 */
import { longestNeedsChain, pipelineJobGraph } from '../../../bench/pipeline-needs-graph';
import { renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

const YAML = `
stages: [synth, plan, review, apply]
.login:
  stage: plan
  needs: [synth]
synth:
  stage: synth
plan-a:
  extends: .login
plan-b:
  extends: .login
review:
  stage: review
apply-first:
  stage: apply
  needs: [synth, plan-a, review]
apply-second:
  stage: apply
  needs: [{ job: apply-first }, plan-b, never-ran]
lint: {}
`;

describe('the job graph as GitLab reads it', () => {
  it('takes stage and needs from the job or what it extends, and GitLab\'s stage test for a job without one', () => {
    const graph = pipelineJobGraph(YAML);
    expect(graph.stages).toEqual(['synth', 'plan', 'review', 'apply']);
    expect([...graph.jobs.keys()]).toEqual(['apply-first', 'apply-second', 'lint', 'plan-a', 'plan-b', 'review', 'synth']);
    expect(graph.jobs.get('plan-a')).toEqual({ stage: 'plan', needs: ['synth'] });
    expect(graph.jobs.get('apply-second')).toEqual({ stage: 'apply', needs: ['apply-first', 'plan-b', 'never-ran'] });
    expect(graph.jobs.get('review')).toEqual({ stage: 'review' });
    expect(graph.jobs.get('lint')).toEqual({ stage: 'test' });
    expect(() => pipelineJobGraph('a:\n  extends: .nothing\n')).toThrow('a: extends .nothing, which is no job of the pipeline');
  });
});

describe('the critical path is the longest chain through needs and stages', () => {
  const graph = pipelineJobGraph(YAML);
  it('a chain of applies counts every apply of it, not the slowest of the stage', () => {
    const chain = longestNeedsChain(graph, new Map([['synth', 5], ['plan-a', 3], ['plan-b', 4], ['review', 2], ['apply-first', 3], ['apply-second', 6]]));
    // review waits for both plans (no needs: every job of the stages before); apply-second for apply-first.
    expect(chain).toEqual({ jobs: ['synth', 'plan-b', 'review', 'apply-first', 'apply-second'], s: 20 });
  });

  it('a job that did not run is not waited for; a job without needs waits for the slowest of the earlier stages', () => {
    expect(longestNeedsChain(graph, new Map([['synth', 5], ['plan-a', 1], ['plan-b', 9], ['apply-second', 1]]))).toEqual({ jobs: ['synth', 'plan-b', 'apply-second'], s: 15 });
    expect(longestNeedsChain(graph, new Map([['synth', 1], ['plan-a', 2], ['review', 1]]))).toEqual({ jobs: ['synth', 'plan-a', 'review'], s: 4 });
    expect(longestNeedsChain(graph, new Map())).toEqual({ jobs: [], s: 0 });
  });

  it('the generated pipeline: the default branch\'s apply of app-roles waits for ci-access\'s, so both are on the path', () => {
    const real = pipelineJobGraph(renderConfigurationPipelineYaml(PIPELINE_OPTIONS));
    const ran = [...real.jobs.keys()].filter((j) => /^secretstore-iac-(synth|plan-.*-default-branch|apply-.*)$/.test(j) || real.jobs.get(j)!.stage === 'review');
    expect(ran).toEqual(expect.arrayContaining(['secretstore-iac-apply-ci-access', 'secretstore-iac-apply-app-roles']));
    const chain = longestNeedsChain(real, new Map(ran.map((j) => [j, 1])));
    expect(chain.jobs.indexOf('secretstore-iac-apply-ci-access')).toBeGreaterThan(0);
    expect(chain.jobs.indexOf('secretstore-iac-apply-app-roles')).toBeGreaterThan(chain.jobs.indexOf('secretstore-iac-apply-ci-access'));
    expect(chain.jobs[0]).toBe('secretstore-iac-synth');
  });
});
