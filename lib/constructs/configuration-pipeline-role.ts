import { Construct } from 'constructs';
import { Capability } from '../model/capability';
import { ValidationProblem } from '../model/validation-problem';
import { AppRoleApplication } from './approle-application';
import { AppRoleAuth } from './approle-auth';
import { CiJwtAuth } from './ci-jwt-auth';
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
 * A JWT role of the configuration project's pipeline (the one that plans and applies the stacks).
 * `apply`: only jobs of that project (`project_id`) on a protected branch (`ref_protected`,
 * `ref_type`) log in. `plan`: any job of that project logs in, and may only read what the stacks manage.
 *
 * Its policy is least privilege, computed from what the app's stacks declare once the app is complete:
 * the auth methods (mount, tune, JWT config), their roles, the policies, and `auth/token/create` (the
 * vault provider works with a child token). It can change nothing the stacks do not manage; in
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
  }

  /** Rules for everything the app's stacks manage, from the constructs that declare it. */
  protected override completePolicy(): void {
    const source = this.node.path;
    const add = (path: string, capabilities: readonly Capability[]) => this.policy.addRule(path, capabilities, source);
    const crud: Capability[] = this.access === 'plan' ? ['read'] : ['create', 'read', 'update', 'delete'];
    add('auth/token/create', ['update']);
    // The provider reads the list of auth methods to find its mounts.
    add('sys/auth', ['read']);
    // `secretstore-iac tf` and `drift` compare the declared KV mounts with the store's mount table
    // before planning (a KV mount of another version would make every declared path wrong).
    add('sys/mounts', ['read']);
    for (const c of this.node.root.node.findAll()) {
      if (c instanceof CiJwtAuth || c instanceof AppRoleAuth) {
        // Enabling or disabling an auth method needs sudo on sys/auth/PATH.
        add(`sys/auth/${c.path}`, this.access === 'plan' ? ['read'] : [...crud, 'sudo']);
        add(`sys/auth/${c.path}/tune`, this.access === 'plan' ? ['read'] : ['read', 'update']);
        add(`sys/mounts/auth/${c.path}/tune`, this.access === 'plan' ? ['read'] : ['read', 'update']);
        // The provider reads an auth method back through its mount (checked on the real store).
        add(`sys/mounts/auth/${c.path}`, ['read']);
        if (c instanceof CiJwtAuth) add(`auth/${c.path}/config`, crud);
      } else if (c instanceof CiJwtRole) {
        add(`auth/${c.identityName.split('/')[0]}/role/${c.roleName}`, crud);
        add(`sys/policies/acl/${c.roleName}`, crud);
      } else if (c instanceof AppRoleApplication) {
        add(`auth/${c.authPath}/role/${c.roleName}`, crud);
        // The role resource reads the Role ID back.
        add(`auth/${c.authPath}/role/${c.roleName}/role-id`, ['read']);
        add(`sys/policies/acl/${c.policy.name}`, crud);
      }
    }
  }
}
