import { Construct } from 'constructs';
import { renderConfigurationPipelineYaml } from '../render/configuration-pipeline-yaml';
import { CONFIGURATION_PIPELINE_COPY } from '../render/configuration-gitlab-ci';
import { ValidationProblem } from '../model/validation-problem';
import { ConfigurationPipelineRole } from './configuration-pipeline-role';
import { SecretStoreStack } from './secret-store-stack';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';
import { CheckedProps, expectInstance, expectString, optional, PropsSchema } from '../model/props-check';

/** The run-time checks of {@link ConfigurationPipelineProps}. */
export const CONFIGURATION_PIPELINE_SCHEMA: PropsSchema = {
  applyRole: expectInstance(ConfigurationPipelineRole, 'a ConfigurationPipelineRole construct with access "apply"'),
  planRole: expectInstance(ConfigurationPipelineRole, 'a ConfigurationPipelineRole construct with access "plan"'),
  acknowledgeLabel: optional(expectString),
  noteTokenVariable: optional(expectString),
  installCommand: optional(expectString),
  committedCopy: optional(expectString),
  image: optional(expectString),
};

/** Properties of {@link ConfigurationPipeline}. */
export interface ConfigurationPipelineProps {
  /** Role of the default branch's jobs (apply, drift). */
  readonly applyRole: ConfigurationPipelineRole;
  /** Read-only role of the merge-request jobs (plan). */
  readonly planRole: ConfigurationPipelineRole;
  /**
   * Merge-request label that acknowledges the access diff's risk flags.
   * @default 'access-risk-acknowledged'
   */
  readonly acknowledgeLabel?: string;
  /**
   * CI/CD variable with a project access token (scope `api`) that posts the access diff as a note.
   * @default 'SECRETSTORE_IAC_NOTE_TOKEN'
   */
  readonly noteTokenVariable?: string;
  /**
   * Command that installs the dependencies in every job (the job variable `SECRETSTORE_IAC_INSTALL`).
   * @default 'npm ci --no-audit --no-fund'
   */
  readonly installCommand?: string;
  /**
   * Where the configuration repository commits its copy of the pipeline file (and includes it from).
   * @default '.gitlab/secretstore-iac.gitlab-ci.yml'
   */
  readonly committedCopy?: string;
  /**
   * Job image.
   * @default none (the runner's default image)
   */
  readonly image?: string;
}

/**
 * Writes `ci/secretstore-iac.gitlab-ci.yml`: the pipeline of the repository that holds this
 * configuration (see {@link renderConfigurationPipelineYaml}), with one plan/apply/drift job per stack
 * of the app; a stack's apply job needs those of the stacks it depends on.
 */
export class ConfigurationPipeline extends Construct implements IArtifactSource {
  /** Path of the pipeline file in the output. */
  static readonly PATH = 'ci/secretstore-iac.gitlab-ci.yml';
  private readonly props: ConfigurationPipelineProps;

  constructor(scope: Construct, id: string, props: ConfigurationPipelineProps) {
    super(scope, id);
    const checked = new CheckedProps(CONFIGURATION_PIPELINE_SCHEMA, props);
    // Only well-typed fields are used; the others are reported and left at their defaults.
    props = Object.fromEntries(
      Object.keys(CONFIGURATION_PIPELINE_SCHEMA)
        .map((k) => [k, checked.value<unknown>(k, undefined)])
        .filter(([, v]) => v !== undefined),
    ) as unknown as ConfigurationPipelineProps;
    this.props = props;
    this.node.addValidation({
      validate: () => {
        const problems: ValidationProblem[] = [...checked.problems];
        const label = props.acknowledgeLabel ?? 'access-risk-acknowledged';
        if (!/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/.test(label)) {
          problems.push(new ValidationProblem('acknowledgeLabel', label, 'must be a label name of letters, digits, "_", ".", ":" or "-"'));
        }
        const variable = props.noteTokenVariable ?? 'SECRETSTORE_IAC_NOTE_TOKEN';
        if (!/^[A-Z_][A-Z0-9_]*$/.test(variable)) {
          problems.push(new ValidationProblem('noteTokenVariable', variable, 'must be a CI/CD variable name (upper case, digits, "_")'));
        }
        const copy = props.committedCopy ?? CONFIGURATION_PIPELINE_COPY;
        if (copy.startsWith('/') || copy.split('/').some((seg) => seg === '..' || seg === '') || !/\.ya?ml$/.test(copy)) {
          problems.push(new ValidationProblem('committedCopy', copy, 'must be a relative .yml path inside the repository, without ".."'));
        }
        if (props.applyRole && props.applyRole.access !== 'apply') problems.push(new ValidationProblem('applyRole', props.applyRole.roleName, 'must have access "apply"'));
        if (props.planRole && props.planRole.access !== 'plan') problems.push(new ValidationProblem('planRole', props.planRole.roleName, 'must have access "plan"'));
        return problems.map(String);
      },
    });
  }

  /** The pipeline file. */
  artifacts(): SynthesisArtifact[] {
    const all = this.node.root.node.findAll().filter((c): c is SecretStoreStack => c instanceof SecretStoreStack);
    const stacks = all.map((s) => s.node.id);
    // Only stacks that depend on another (application shards on their mount stack) are listed.
    const dependencies = Object.fromEntries(all.filter((s) => s.dependencies.length > 0).map((s) => [s.node.id, s.dependencies.map((d) => d.node.id)]));
    return [
      {
        path: ConfigurationPipeline.PATH,
        content: renderConfigurationPipelineYaml({
          stacks,
          dependencies,
          // The pipeline roles' own stack first: a change that adds an application also widens the
          // apply role's policy, which the other stacks' applies need (their tokens are made after it).
          firstStack: SecretStoreStack.of(this.props.applyRole).node.id,
          authPath: this.props.applyRole.identityName.split('/')[0],
          audience: this.props.applyRole.audiences[0],
          namespace: SecretStoreStack.of(this.props.applyRole).settings.namespace,
          applyRoleName: this.props.applyRole.roleName,
          planRoleName: this.props.planRole.roleName,
          acknowledgeLabel: this.props.acknowledgeLabel ?? 'access-risk-acknowledged',
          noteTokenVariable: this.props.noteTokenVariable ?? 'SECRETSTORE_IAC_NOTE_TOKEN',
          installCommand: this.props.installCommand ?? 'npm ci --no-audit --no-fund',
          image: this.props.image,
          committedCopy: this.props.committedCopy ?? CONFIGURATION_PIPELINE_COPY,
        }),
      },
    ];
  }
}
