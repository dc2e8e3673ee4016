import { AgentConfigurationsProps } from '../constructs/agent-configuration';
import { ShardedApplicationProps } from '../constructs/application-stacks';
import { ConfigurationPipelineProps } from '../constructs/configuration-pipeline';
import { E2eTestTemplateProps } from '../constructs/e2e-test-template';
import { RegistryServiceAccountProps } from '../constructs/registry-service-account';
import { ApplicationSharding } from '../model/application-sharding';
import { AuthMountTune } from '../model/auth-mount-tune';
import { Duration } from '../model/duration';
import { JwtKeySource } from '../model/jwt-key-source';
import { PlatformSettingsProps } from '../model/platform-settings';
import type { PeopleConfig } from './people-stack';
import { expectBoolean, expectRecord, expectShape, expectString, optional, ownEntries, ownValue, PropCheck, PropsSchema } from '../model/props-check';
import { ValidationProblem } from '../model/validation-problem';
import type { AccessInvariant } from '../invariants/access-invariant';

/**
 * A registry service account declared in {@link PlatformConfig.accounts}; its key there is the
 * account's `{name}` (`mirror` declares `svc-mirror`).
 */
export interface RegistryAccountConfig extends Omit<RegistryServiceAccountProps, 'name' | 'readers'> {
  /**
   * Grant `registry-ci` read on the account's secret, so that CI jobs can log in with it. Pull-only
   * accounts of cluster pods and deployment scripts are not readable by CI (spec §2.3): set `false`.
   * @default true
   */
  readonly readByCi?: boolean;
}

/**
 * One auth mount's declared attributes in {@link PlatformConfig.authMounts}; each is checked by the
 * mount's construct (AppRoleAuth, CiJwtAuth), whose defaults apply to what is left out.
 */
export interface AuthMountConfig {
  /** The mount is local to this cluster (fixed when mounting: a difference replaces the mount). */
  readonly local?: boolean;
  /** The mount's description (changed in place). */
  readonly description?: string;
  /** Tune settings: lease TTLs, listing visibility, token type, audit keys (changed in place). */
  readonly tune?: AuthMountTune;
}

/** Everything that differs between installations of the platform. */
export interface PlatformConfig {
  /** The spec's placeholders: organisation, CI URL, registry host (and optional ports / KV mount). */
  readonly settings: PlatformSettingsProps;
  /**
   * Keys that verify CI job tokens.
   * @default OIDC discovery at `settings.ciUrl`
   */
  readonly ciKeySource?: JwtKeySource;
  /**
   * Attributes of the auth mounts that the store fixes when mounting: a difference makes the engine
   * replace the mount, deleting every role under it (Role IDs and Secret IDs included). Declare what
   * a hand-made store has before adopting it (`secretstore-iac adopt` refuses otherwise and says so).
   * @default neither mount is local
   */
  readonly authMounts?: {
    /** The CI JWT method's mount (`jwt/`): CiJwtAuth's `local`, `description` and `tune`. */
    readonly jwt?: AuthMountConfig;
    /** The AppRole method's mount (`approle/`): AppRoleAuth's `local`, `description` and `tune`. */
    readonly approle?: AuthMountConfig;
  };
  /**
   * How the applications are split across stacks (docs/sharding.md): `{ by: 'environment' }` gives
   * `app-roles-dev`, `app-roles-shared`; `{ by: 'hash', shards: 8 }` gives `app-roles-00`..`07` by a
   * stable hash of the role name; `{ by: 'environment-hash', shards: 4 }` gives `app-roles-dev-00`..
   * The AppRole mount stays in `app-roles`. Changing it moves applications between stacks: run
   * `secretstore-iac moves` before planning, or the plans destroy and recreate the roles.
   * @default { by: 'none' }: every application in `app-roles`
   */
  readonly applicationSharding?: ApplicationSharding;
  /**
   * Declare the live-store reader's own least-privilege policy (docs/adoption.md) in the `ci-access`
   * stack (`true`: named `secretstore-iac-reader`), so that `drift` does not list it as unmanaged.
   * @default false (not declared; the synthesized output has no such policy)
   */
  readonly readerPolicy?: boolean | { readonly name?: string };
  /**
   * CI job timeout: the lifetime of the store token a job gets.
   * @default Duration.minutes(60)
   */
  readonly ciJobTimeout?: Duration;
  /**
   * Claims a job token must carry to log in as `registry-ci`.
   * @default the organisation's namespace and its subgroups (`namespace_path`)
   */
  readonly ciBoundClaims?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Registry service accounts of this installation, by `{name}`, besides the spec's `orchestrator`,
   * `executor` and `deployer` that the `ci-access` stack declares. One key gives the account, its
   * secret path `secret/registry/svc-{name}`, the read grant to `registry-ci` and the checks.
   * @default none
   */
  readonly accounts?: Readonly<Record<string, RegistryAccountConfig>>;
  /**
   * Applications of this installation, by construct id, besides the spec's four (§2.4) that the
   * `app-roles` stack declares. One key gives the AppRole role (`{name}-{environment}` unless
   * `roleName`), its policy reading only `secret/data/{org}/{environment}/{name}/*`, the Role ID
   * output, the agent files and the checks: the same as `platform.appRoles.addApplication(id, props)`.
   * @default none
   */
  readonly applications?: Readonly<Record<string, ShardedApplicationProps>>;
  /**
   * Where the agent files go and the paths inside the agent's container (env file, Role ID and
   * Secret ID files, refresh interval), and which process serves the loopback API proxy
   * (`apiProxy`: the agent's, or the store's proxy with `proxy.hcl` and `proxy-entrypoint.sh`).
   * @default `cdktf.out/agents/<role>/`, rendering to `/secretstore/secrets/.env`, the agent's API proxy
   */
  readonly agents?: Omit<AgentConfigurationsProps, 'applications'>;
  /**
   * The CI project that holds this configuration: its pipeline logs in to the store through the JWT
   * role `secretstore-iac-pipeline` (bound to the project's ID and protected branches) and plans and
   * applies the stacks; synthesis writes that pipeline to `cdktf.out/ci/secretstore-iac.gitlab-ci.yml`.
   * @default no pipeline role and no pipeline
   */
  readonly configurationProject?: Omit<ConfigurationPipelineProps, 'applyRole' | 'planRole'> & {
    /** Numeric ID of the configuration project (the job token's `project_id` claim). */
    readonly projectId: string;
  };
  /**
   * The end-to-end test job, global setup and Playwright configuration (spec §2.6, §2.7, §5.7, §8):
   * the CI target URL, and the login and saved-state field names the spec does not show.
   * @default target `$DEV_ENVIRONMENT_URL`, fields `username`/`password`, state key `auth`
   */
  readonly e2eTests?: E2eTestTemplateProps;
  /**
   * People through single sign-on (spec §5.6): the store's OIDC login (identity provider's
   * discovery URL, client id, the store's public address) and one role per group of people, in a
   * `people` stack. A group reads no platform secret path unless it lists `reads`; SSI-R12 refuses a
   * read of a CI or application path without a `machinePathReason`. The client secret is read at
   * plan and apply time from `TF_VAR_oidc_client_secret`, never written to the output or the state.
   * @default no people stack: nobody logs in to the store through single sign-on
   */
  readonly people?: PeopleConfig;
  /**
   * A security team's access invariants (docs/invariants.md), checked at every synthesis by SSI-R16:
   * the path of their file (JSON or YAML, relative to the directory the synthesis runs in), or the
   * invariants themselves. The same file serves `access-diff --invariants`, `invariants check` and
   * `usage --invariants`.
   * @default none
   */
  readonly invariants?: string | readonly AccessInvariant[];
}

/** Any value: a field whose type the construct it is given to checks and reports. */
const checkedByItsConstruct: PropCheck = () => [];

/** One `authMounts` entry: the fields {@link authMountProps} hands on, each checked by the mount's construct. */
const expectAuthMountConfig: PropCheck = optional(
  expectShape({ local: checkedByItsConstruct, description: checkedByItsConstruct, tune: checkedByItsConstruct }, 'an object { local?, description?, tune? }'),
);

/**
 * A registry account of the configuration: `readByCi` is checked here (a truthy `'no'` would grant CI
 * read); the other fields, unknown ones included, by the account's construct.
 */
const expectAccountConfig: PropCheck = (field, value) =>
  expectRecord(undefined, 'an object of the account\'s properties')(field, value).concat(
    ownEntries(value)
      .filter(([key]) => key === 'readByCi')
      .flatMap(([key, v]) => expectBoolean(`${field}.${key}`, v)),
  );

/**
 * The run-time checks of {@link PlatformConfig} itself: its fields, and the types the stacks read
 * before any construct sees them. Everything a field is handed to (settings, key source, claims,
 * agents, pipeline, e2e) is checked by that construct, under its own path.
 */
export const PLATFORM_CONFIG_SCHEMA: PropsSchema = {
  settings: checkedByItsConstruct,
  ciKeySource: checkedByItsConstruct,
  ciJobTimeout: checkedByItsConstruct,
  // Which mounts and which fields are known is checked here (a misspelt field would be dropped by
  // authMountProps); each field's value by the mount's construct (AppRoleAuth, CiJwtAuth).
  authMounts: optional(
    expectShape(
      { jwt: expectAuthMountConfig, approle: expectAuthMountConfig },
      'an object { jwt?: { local?, description?, tune? }, approle?: { ... } }',
    ),
  ),
  // Checked field by field by ApplicationStacks (reported on `app-roles`, field `sharding`).
  applicationSharding: checkedByItsConstruct,
  readerPolicy: optional((field, value) =>
    typeof value === 'boolean' ? [] : expectShape({ name: optional(expectString) }, 'true, false or an object { name?: string }')(field, value)),
  ciBoundClaims: checkedByItsConstruct,
  accounts: optional(expectRecord(expectAccountConfig, 'an object of account names to account properties')),
  // Each application's fields are checked by ApplicationStacks.addApplication and its construct.
  applications: optional(expectRecord(expectRecord(undefined, "an object of the application's properties"), 'an object of application ids to application properties')),
  agents: checkedByItsConstruct,
  configurationProject: optional(expectRecord(undefined, 'an object of the configuration project\'s properties')),
  e2eTests: checkedByItsConstruct,
  // The method's fields are checked by OidcAuth, each group's by its OidcGroupRole, under their own paths.
  people: optional(expectRecord(undefined, 'an object { discoveryUrl, clientId, storeUrl, groups, ... }')),
  // A file path or a list, each invariant checked by AccessInvariants (reported on `invariants`).
  invariants: checkedByItsConstruct,
};

/** The problems of a platform configuration's own fields (see {@link PLATFORM_CONFIG_SCHEMA}). */
export function platformConfigProblems(config: unknown): ValidationProblem[] {
  return expectShape(PLATFORM_CONFIG_SCHEMA, 'an object of the platform\'s configuration (PlatformConfig)')('', config).map(
    (p) => new ValidationProblem(p.field === '' ? 'config' : p.field, p.value, p.rule),
  );
}

/**
 * The construct props of one `authMounts` entry: its own `local`, `description` and `tune` (left out
 * stays left out, so the construct's defaults apply and the synthesized output is unchanged).
 */
export function authMountProps(mount: AuthMountConfig | undefined): AuthMountConfig {
  return {
    local: ownValue<boolean>(mount, 'local'),
    description: ownValue<string>(mount, 'description'),
    tune: ownValue<AuthMountTune>(mount, 'tune'),
  };
}

/** The reader policy's props when `readerPolicy` declares it, else undefined. */
export function readerPolicyProps(readerPolicy: PlatformConfig['readerPolicy']): { name?: string } | undefined {
  if (readerPolicy === true) return {};
  if (readerPolicy && typeof readerPolicy === 'object') return { name: ownValue<string>(readerPolicy, 'name') };
  return undefined;
}
