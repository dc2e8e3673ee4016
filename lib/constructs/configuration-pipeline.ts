import { Construct } from 'constructs';
import { ConfigurationPipelineYamlOptions, DEFAULT_NOTE_TOKEN_VARIABLE, renderConfigurationPipelineYaml, ShardJobGroup } from '../render/configuration-pipeline-yaml';
import { describePipeline, PIPELINE_DESCRIPTION_PATH } from '../pipeline/pipeline-description';
import { CONFIGURATION_PIPELINE_COPY } from '../render/configuration-gitlab-ci';
import { ValidationProblem } from '../model/validation-problem';
import { ConfigurationPipelineRole } from './configuration-pipeline-role';
import { configurationPipelineStacks } from './configuration-pipeline-stacks';
import { SecretStoreStack } from './secret-store-stack';
import { stackInputVariables } from './stack-input-variables';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';
import { CheckedProps, expectInstance, expectInteger, expectString, optional, PropsSchema } from '../model/props-check';
import { ApplicationStacks } from './application-stacks';
import { pipelineLocalStateProblems } from './pipeline-local-state';

/** The run-time checks of {@link ConfigurationPipelineProps}. */
export const CONFIGURATION_PIPELINE_SCHEMA: PropsSchema = {
  applyRole: expectInstance(ConfigurationPipelineRole, 'a ConfigurationPipelineRole construct with access "apply"'),
  planRole: expectInstance(ConfigurationPipelineRole, 'a ConfigurationPipelineRole construct with access "plan"'),
  acknowledgeLabel: optional(expectString),
  noteTokenVariable: optional(expectString),
  installCommand: optional(expectString),
  committedCopy: optional(expectString),
  image: optional(expectString),
  shardJobs: optional(expectInteger),
  localStateReason: optional(expectString),
};

/** The default of {@link ConfigurationPipelineProps.shardJobs}. */
export const DEFAULT_SHARD_JOBS = 4;
/** The most {@link ConfigurationPipelineProps.shardJobs} may be. */
export const MAX_SHARD_JOBS = 50;

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
  /**
   * How many plan jobs (and apply jobs) of each stage share the shard stacks of an
   * {@link ApplicationStacks} (its hash, environment or named shards): the pipeline has these jobs,
   * not one per shard, so its size does not grow with the shards, and a change to one shard runs
   * one job that plans it while the others end at once. More jobs plan and apply more changed shards
   * side by side (a library upgrade changes every shard) on as many runners. At most one per shard;
   * from 1 to 50. A shard that declares input variables, or that another shard depends on, keeps
   * jobs of its own.
   * @default 4
   */
  readonly shardJobs?: number;
  /**
   * Why the stacks keep local state files although a pipeline runs them: the opt-out of the rule
   * that every stack the pipeline plans and applies has a shared state backend (`postgresState()`).
   * Only for a runner that keeps its files between jobs (a shell runner with a persistent disk, one
   * runner for every job) and for tests; one line, at least 10 visible characters.
   * @default none: a stack with local state is refused at synthesis
   */
  readonly localStateReason?: string;
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
        const variable = props.noteTokenVariable ?? DEFAULT_NOTE_TOKEN_VARIABLE;
        if (!/^[A-Z_][A-Z0-9_]*$/.test(variable)) {
          problems.push(new ValidationProblem('noteTokenVariable', variable, 'must be a CI/CD variable name (upper case, digits, "_")'));
        }
        const copy = props.committedCopy ?? CONFIGURATION_PIPELINE_COPY;
        if (copy.startsWith('/') || copy.split('/').some((seg) => seg === '..' || seg === '') || !/\.ya?ml$/.test(copy)) {
          problems.push(new ValidationProblem('committedCopy', copy, 'must be a relative .yml path inside the repository, without ".."'));
        }
        problems.push(...inputVariableProblems(configurationPipelineStacks(this)));
        problems.push(...pipelineLocalStateProblems(configurationPipelineStacks(this), props.localStateReason));
        if (props.shardJobs !== undefined && Number.isInteger(props.shardJobs) && (props.shardJobs < 1 || props.shardJobs > MAX_SHARD_JOBS)) {
          problems.push(new ValidationProblem('shardJobs', String(props.shardJobs), `must be from 1 to ${MAX_SHARD_JOBS}`));
        }
        if (props.applyRole && props.applyRole.access !== 'apply') problems.push(new ValidationProblem('applyRole', props.applyRole.roleName, 'must have access "apply"'));
        if (props.planRole && props.planRole.access !== 'plan') problems.push(new ValidationProblem('planRole', props.planRole.roleName, 'must have access "plan"'));
        return problems.map(String);
      },
    });
  }

  /**
   * The pipeline file, and beside it the description its jobs' `secretstore-iac pipeline` commands
   * read (the stacks, dependencies, shard job groups and input variables), both from one set of options.
   */
  artifacts(): SynthesisArtifact[] {
    // The stacks the pipeline roles' policies are computed from: one list for both.
    const all = configurationPipelineStacks(this);
    const stacks = all.map((s) => s.node.id);
    // Only stacks that depend on another (application shards on their mount stack) are listed.
    const dependencies = Object.fromEntries(all.filter((s) => s.dependencies.length > 0).map((s) => [s.node.id, s.dependencies.map((d) => d.node.id)]));
    const options: ConfigurationPipelineYamlOptions = {
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
      noteTokenVariable: this.props.noteTokenVariable ?? DEFAULT_NOTE_TOKEN_VARIABLE,
      installCommand: this.props.installCommand ?? 'npm ci --no-audit --no-fund',
      image: this.props.image,
      committedCopy: this.props.committedCopy ?? CONFIGURATION_PIPELINE_COPY,
      // Each stack's input variables, as it synthesizes them: its jobs take them from TF_VAR_<name>.
      inputs: Object.fromEntries(
        all.map((s) => [s.node.id, stackInputVariables(s).map((v) => ({ name: v.name, required: v.required }))]).filter(([, vars]) => vars.length > 0),
      ),
      shardGroups: shardJobGroups(all, this.props.shardJobs ?? DEFAULT_SHARD_JOBS),
    };
    return [
      { path: ConfigurationPipeline.PATH, content: renderConfigurationPipelineYaml(options) },
      { path: PIPELINE_DESCRIPTION_PATH, content: `${JSON.stringify(describePipeline(options), null, 2)}\n` },
    ];
  }
}

/**
 * The input variables the pipeline cannot wire: a name that is no CI/CD variable key, and a variable
 * that is not ephemeral (the engine writes the value of such a variable into the plan file, which
 * the pipeline keeps as a job artifact).
 */
function inputVariableProblems(stacks: readonly SecretStoreStack[]): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const stack of stacks) {
    for (const v of stackInputVariables(stack)) {
      const field = `stacks.${stack.node.id}.variables.${v.name}`;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.name)) {
        problems.push(new ValidationProblem(field, v.constructPath, 'must be named with letters, digits and "_": the pipeline passes it from the CI/CD variable TF_VAR_<name>, and a CI/CD variable key allows no other character'));
      }
      if (!v.ephemeral) {
        problems.push(new ValidationProblem(field, v.constructPath, 'must be ephemeral (addOverride("ephemeral", true)): the pipeline keeps every saved plan as a job artifact, and the engine writes the value of a variable that is not ephemeral into the plan file'));
      }
    }
  }
  return problems;
}

/**
 * The shard job groups of the pipeline: per {@link ApplicationStacks} with shards, its shards (named
 * `<stack>-shards`), but those whose jobs must stay their own: a shard with input variables (only a
 * stack's own jobs pass them on) and a shard that another shard depends on, or that depends on
 * another (a group's jobs run side by side).
 */
function shardJobGroups(stacks: readonly SecretStoreStack[], jobs: number): ShardJobGroup[] {
  const groups: ShardJobGroup[] = [];
  for (const parent of stacks.filter((s): s is ApplicationStacks => s instanceof ApplicationStacks)) {
    const shards = parent.shards.filter((s) => stacks.includes(s));
    const linked = new Set(shards.flatMap((s) => s.dependencies.filter((d) => shards.includes(d as SecretStoreStack)).flatMap((d) => [s, d])));
    const members = shards.filter((s) => !linked.has(s) && stackInputVariables(s).length === 0).map((s) => s.node.id);
    if (members.length > 0) groups.push({ name: `${parent.node.id}-shards`, stacks: members, jobs });
  }
  return groups;
}
