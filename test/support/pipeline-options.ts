import { ConfigurationPipelineYamlOptions } from '../../lib/render/configuration-pipeline-yaml';

/** Options of the configuration pipeline as the platform gives them, for tests that render it directly. */
export const PIPELINE_OPTIONS: ConfigurationPipelineYamlOptions = {
  stacks: ['app-roles', 'ci-access'],
  firstStack: 'ci-access',
  authPath: 'jwt',
  audience: 'https://gitlab.acme.example',
  applyRoleName: 'secretstore-iac-pipeline',
  planRoleName: 'secretstore-iac-plan',
  acknowledgeLabel: 'access-risk-acknowledged',
  noteTokenVariable: 'SECRETSTORE_IAC_NOTE_TOKEN',
  installCommand: 'true',
  committedCopy: '.gitlab/secretstore-iac.gitlab-ci.yml',
};
