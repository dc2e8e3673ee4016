import { Construct } from 'constructs';
import { AppRoleApplication, AppRoleApplicationProps } from './approle-application';
import { AppRoleAuth, AppRoleAuthProps } from './approle-auth';
import { SECRET_STORE_STACK_SCHEMA, SecretStoreStack, SecretStoreStackProps, StateBackendFactory } from './secret-store-stack';
import {
  ApplicationSharding,
  applicationShardingProblems,
  applicationStackName,
  applicationStackProblems,
} from '../model/application-sharding';
import { checked, checkProps, expectFunction, expectString, optional, ownValue, PropsSchema } from '../model/props-check';
import { ValidationProblem } from '../model/validation-problem';

/**
 * The run-time checks of {@link ApplicationStacksProps} beyond a stack's own (which SecretStoreStack
 * reports): unknown fields; `auth` goes to AppRoleAuth and `sharding` to
 * {@link applicationShardingProblems}, which report under their own names.
 */
export const APPLICATION_STACKS_SCHEMA: PropsSchema = {
  ...Object.fromEntries(Object.keys(SECRET_STORE_STACK_SCHEMA).map((k) => [k, () => []])),
  auth: () => [],
  sharding: () => [],
};

/** Properties of {@link ApplicationStacks}. */
export interface ApplicationStacksProps extends SecretStoreStackProps {
  /**
   * The AppRole auth mount, declared in this (the mount) stack.
   * @default AppRoleAuth's defaults (`approle/`)
   */
  readonly auth?: AppRoleAuthProps;
  /**
   * How applications are split across stacks (docs/sharding.md). Every shard is a stack of its own,
   * with its own state (the same backend factory as this stack), applied after this one.
   * @default { by: 'none' }: every application in this stack
   */
  readonly sharding?: ApplicationSharding;
}

/** Properties of one application added through {@link ApplicationStacks.addApplication}. */
export interface ShardedApplicationProps extends Omit<AppRoleApplicationProps, 'auth'> {
  /**
   * The application's own stack, `<mount stack>-<stack>` (`app-roles-payments`), whatever the
   * sharding: lower-case letters, digits and inner hyphens, at most 32 characters.
   * @default the stack the sharding gives (docs/sharding.md)
   */
  readonly stack?: string;
}

/**
 * The application stacks of a platform: this stack holds the AppRole auth mount (and whatever else
 * is declared in it), and each application goes into the stack its shard key names, created on
 * first use beside this one (same scope, same state backend, same provider version) and depending
 * on it (cdktf's manifest records it; the pipeline applies this stack first). With sharding `none`
 * (the default) every application stays in this stack and the output is what it was before sharding.
 *
 * An application in a shard names its mount by a literal path, never by a reference to this stack's
 * resource: cdktf would turn that into a remote-state data source, tying the shard's plan to this
 * stack's state.
 *
 * ```ts
 * const apps = new ApplicationStacks(app, 'app-roles', { settings, sharding: { by: 'hash', shards: 8 } });
 * apps.addApplication('orchestrator-dev', { name: 'orchestrator', environment: 'dev' });
 * ```
 */
export class ApplicationStacks extends SecretStoreStack {
  /** The AppRole auth method, in this stack. */
  readonly auth: AppRoleAuth;
  /** The sharding as given (well typed), `{}` when left out. */
  readonly sharding: ApplicationSharding;
  private readonly shardStacks = new Map<string, SecretStoreStack>();
  private readonly added: AppRoleApplication[] = [];
  private readonly stackProps: SecretStoreStackProps;
  private readonly applicationProblems: ValidationProblem[] = [];

  constructor(scope: Construct, id: string, props: ApplicationStacksProps) {
    // The stack's own fields are checked by SecretStoreStack; the others here.
    super(scope, id, Object.fromEntries(Object.keys(SECRET_STORE_STACK_SCHEMA).filter((k) => ownValue(props, k) !== undefined).map((k) => [k, ownValue(props, k)])) as unknown as SecretStoreStackProps);
    const ownProblems = checkProps(APPLICATION_STACKS_SCHEMA, props);
    this.stackProps = {
      settings: this.settings,
      // Only well-typed values are handed on: this stack reports the others, once.
      stateBackend: checked<StateBackendFactory | undefined>(optional(expectFunction), ownValue(props, 'stateBackend'), undefined),
      providerVersion: checked<string | undefined>(optional(expectString), ownValue(props, 'providerVersion'), undefined),
    };
    // AppRoleAuth checks the mount's fields under its own path (`app-roles/approle`).
    this.auth = new AppRoleAuth(this, 'approle', ownValue<AppRoleAuthProps>(props, 'auth') ?? {});
    const sharding = ownValue<unknown>(props, 'sharding');
    const shardingProblems = applicationShardingProblems('sharding', sharding);
    // Invalid sharding is reported; the applications stay in this stack meanwhile (nothing is written).
    this.sharding = shardingProblems.length === 0 && sharding !== undefined ? (sharding as ApplicationSharding) : {};
    this.node.addValidation({ validate: () => [...ownProblems, ...shardingProblems, ...this.applicationProblems].map(String) });
  }

  /** The shard stacks created so far, sorted by name. */
  get shards(): readonly SecretStoreStack[] {
    return [...this.shardStacks.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  }

  /** The applications added with {@link addApplication}, in the order added. */
  get applications(): readonly AppRoleApplication[] {
    return [...this.added];
  }

  /**
   * Every AppRoleApplication of this stack and of its shards (also those declared in them directly),
   * at the time of asking: this stack's first, then each shard's, shards by name.
   */
  allApplications(): AppRoleApplication[] {
    return [this, ...this.shards].flatMap((s) => s.node.findAll().filter((c): c is AppRoleApplication => c instanceof AppRoleApplication));
  }

  /**
   * Declares one application in the stack its shard key names (created on first use), with this
   * stack's auth mount: adding an application stays one call.
   * @returns the application's construct
   */
  addApplication(id: string, props: ShardedApplicationProps): AppRoleApplication {
    const stack = ownValue<unknown>(props, 'stack');
    const stackProblems = applicationStackProblems(`applications["${id}"].stack`, stack);
    this.applicationProblems.push(...stackProblems);
    const name = checked(expectString, ownValue(props, 'name'), '');
    const environment = checked(expectString, ownValue(props, 'environment'), '');
    const roleName = checked(optional(expectString), ownValue(props, 'roleName'), undefined) ?? `${name}-${environment}`;
    // An application whose key cannot be computed (a problem is reported) waits in this stack.
    const valid = stackProblems.length === 0 && name !== '' && environment !== '';
    const stackName = valid ? applicationStackName(this.node.id, this.sharding, { roleName, environment, stack: stack as string | undefined }) : this.node.id;
    const rest = Object.fromEntries(Object.entries(props ?? {}).filter(([k]) => k !== 'stack')) as Omit<ShardedApplicationProps, 'stack'>;
    const application = new AppRoleApplication(this.stackNamed(stackName), id, { ...rest, auth: this.auth });
    this.added.push(application);
    return application;
  }

  /** This stack, or the shard stack of that name, created (with its dependency on this one) on first use. */
  private stackNamed(name: string): SecretStoreStack {
    if (name === this.node.id) return this;
    let shard = this.shardStacks.get(name);
    if (!shard) {
      shard = new SecretStoreStack(this.node.scope!, name, this.stackProps);
      shard.addDependency(this);
      this.shardStacks.set(name, shard);
    }
    return shard;
  }

  /** The ApplicationStacks whose shard `stack` is, or undefined. */
  static ofShard(stack: SecretStoreStack): ApplicationStacks | undefined {
    return stack.dependencies.find((d): d is ApplicationStacks => d instanceof ApplicationStacks && d.shardStacks.get(stack.node.id) === stack);
  }
}
