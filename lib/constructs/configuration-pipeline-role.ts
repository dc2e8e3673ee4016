import { Construct } from 'constructs';
import { Capability } from '../model/capability';
import { ValidationProblem } from '../model/validation-problem';
import type { StoreAccessRule, StoreObjectKind } from '../catalogue/store-object-kind';
import { CiJwtAuth } from './ci-jwt-auth';
import { grantsOf, pipelineRoleRules, registerPipelineGrantee } from './pipeline-stack-grant';
import type { PipelineStackGrant } from './pipeline-stack-grant';
import { terraformString } from '../render/text-encoders';
import { CiJwtRole } from './ci-jwt-role';
import { Duration, DURATION_HINT } from '../model/duration';
import { CheckedProps, expectEnum, expectInstance, expectString, optional, PropsSchema } from '../model/props-check';

/** The run-time checks of {@link ConfigurationPipelineRoleProps}. */
export const CONFIGURATION_PIPELINE_ROLE_SCHEMA: PropsSchema = {
  auth: expectInstance(CiJwtAuth, 'the CiJwtAuth construct of the role'),
  projectId: expectString,
  access: optional(expectEnum(['apply', 'plan'])),
  roleName: optional(expectString),
  jobTimeout: optional(expectInstance(Duration, DURATION_HINT)),
};

/** The props of the role's CiJwtRole, from props of any type (checked and reported by the role itself). */
function roleProps(props: ConfigurationPipelineRoleProps): ConstructorParameters<typeof CiJwtRole>[2] {
  const checked = new CheckedProps(CONFIGURATION_PIPELINE_ROLE_SCHEMA, props);
  const access = checked.value<'apply' | 'plan'>('access', 'apply');
  const projectId = checked.value('projectId', '');
  return {
    // Passed as given: the role checks and reports them.
    auth: checked.raw('auth') as CiJwtAuth,
    roleName: (checked.raw('roleName') as string | undefined) ?? (access === 'plan' ? 'secretstore-iac-plan' : 'secretstore-iac-pipeline'),
    // Exact comparison: a glob would let `project_id: 1*` through by mistake.
    boundClaimsType: 'string',
    boundClaims: access === 'plan' ? { project_id: projectId } : { project_id: projectId, ref_protected: 'true', ref_type: 'branch' },
    jobTimeout: checked.raw('jobTimeout') as Duration | undefined,
  };
}

/** Properties of {@link ConfigurationPipelineRole}. */
export interface ConfigurationPipelineRoleProps {
  /** The JWT auth method the role belongs to. */
  readonly auth: CiJwtAuth;
  /** Numeric ID of the CI project that holds the configuration (the job token's `project_id` claim). */
  readonly projectId: string;
  /**
   * `apply`: jobs of the project's protected branches, which change the store. `plan`: read-only, for
   * merge-request jobs, which run on unprotected branches.
   * @default 'apply'
   */
  readonly access?: 'apply' | 'plan';
  /**
   * Role name, also the name of its policy.
   * @default 'secretstore-iac-pipeline' (apply), 'secretstore-iac-plan' (plan)
   */
  readonly roleName?: string;
  /**
   * Lifetime of the store token a pipeline job gets.
   * @default Duration.minutes(60)
   */
  readonly jobTimeout?: Duration;
}

/**
 * The rules every configuration pipeline role's own policy holds whatever the stacks declare (they
 * belong to no one store object); SSI-R17 expects them there and nothing else beside the catalogue's:
 * - `auth/token/create` update: the vault provider works with a child token of the job's token
 *   (`skip_child_token` unset);
 * - `sys/auth` read: the provider reads the list of auth methods to find its mounts (every auth
 *   mount resource reads it, and a plan reads it before it knows which mounts exist);
 * - `sys/mounts` read: `secretstore-iac tf` and `drift` compare the declared KV mounts with the
 *   store's mount table before planning (a KV mount of another version would make every declared
 *   path wrong), a read of the whole table, which no declared object is.
 */
export const PIPELINE_ROLE_LEVEL_RULES: readonly StoreAccessRule[] = [
  { path: 'auth/token/create', capabilities: ['update'] },
  { path: 'sys/auth', capabilities: ['read'] },
  { path: 'sys/mounts', capabilities: ['read'] },
];

/**
 * A JWT role of the configuration project's pipeline (the one that plans and applies the stacks).
 * `apply`: only jobs of that project (`project_id`) on a protected branch (`ref_protected`,
 * `ref_type`) log in. `plan`: any job of that project logs in, and may only read what the stacks manage.
 *
 * Its policies are least privilege, computed once the app is complete from the store objects the
 * stacks the pipeline runs declare (every `vault_*` resource, the library's and a user's, through the
 * store object catalogue, `lib/catalogue/`): for `apply` what planning and applying each object needs,
 * for `plan` a read of each (so the plan and the takeover guard's lookups get no 403 for a declared
 * object), plus `auth/token/create`, `sys/auth` and `sys/mounts` (read). The rules on each object's
 * own paths live in its stack, in the role's {@link PipelineStackGrant} for that stack, attached to
 * the role by name (`token_policies`); the role's own policy keeps what does not grow with the
 * number of objects (docs/pipelines.md §9). It can change nothing the stacks do not declare; in
 * particular it reads no secret.
 */
export class ConfigurationPipelineRole extends CiJwtRole {
  /** The configuration project's ID. */
  readonly projectId: string;
  /** Whether the role changes the store (`apply`) or only reads it (`plan`). */
  readonly access: 'apply' | 'plan';

  constructor(scope: Construct, id: string, props: ConfigurationPipelineRoleProps) {
    super(scope, id, roleProps(props));
    const checked = new CheckedProps(CONFIGURATION_PIPELINE_ROLE_SCHEMA, props);
    this.projectId = checked.value('projectId', '');
    this.access = checked.value<'apply' | 'plan'>('access', 'apply');
    this.node.addValidation({
      validate: () =>
        checked
          .with(
            /^[1-9][0-9]*$/.test(this.projectId)
              ? []
              : [new ValidationProblem('projectId', this.projectId, 'must be the numeric project ID (the job token\'s project_id claim)')],
          )
          // The role's own fields (auth, roleName, jobTimeout) are reported once, by the CiJwtRole checks.
          .filter((p) => !['auth', 'roleName', 'jobTimeout'].includes(p.field))
          .map(String),
    });
    registerPipelineGrantee(this);
  }

  /**
   * The role's own rules and its grants' names. The rules for every store object of the stacks the
   * configuration pipeline runs come from the catalogue (each object's
   * {@link StoreObjectKind.pipelineRules} for this role's access, {@link pipelineRoleRules}): the
   * rules on each object's own paths go to the grant of its stack ({@link PipelineStackGrant}), the
   * rest (listings, the role's own stack, the grants themselves) here, merged per path by the policy
   * document. Nothing is enumerated by construct type, so a stack's raw provider resources (a user's
   * `vault_policy`) and every construct added later are covered as soon as the catalogue knows their
   * type; a type it does not know is refused at synthesis (`declaredStoreObjects().uncatalogued`),
   * never silently left without a grant. The role's `token_policies`: its own policy, then its grants
   * by stack name (literal names: a reference would tie this stack to the others' states).
   */
  protected override completePolicy(): void {
    const source = this.node.path;
    const add = (path: string, capabilities: readonly Capability[]) => this.policy.addRule(path, capabilities, source);
    for (const rule of PIPELINE_ROLE_LEVEL_RULES) add(rule.path, rule.capabilities);
    for (const rule of pipelineRoleRules(this).own) add(rule.path, rule.capabilities);
    const grants = grantsOf(this).map((g) => terraformString(g.policyName));
    this.role.tokenPolicies = [this.policyResource.name, ...grants];
  }
}
