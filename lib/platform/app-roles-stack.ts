import { Construct } from 'constructs';
import { AgentConfigurations } from '../constructs/agent-configuration';
import { ApplicationStacks, ShardedApplicationProps } from '../constructs/application-stacks';
import { AppRoleAuth } from '../constructs/approle-auth';
import { StateBackendFactory } from '../constructs/secret-store-stack';
import { PlatformSettings } from '../model/platform-settings';
import { SPEC_APPLICATIONS } from '../model/spec-platform-declarations';
import { isPlainRecord, ownEntries } from '../model/props-check';
import { authMountProps, PlatformConfig } from './platform-config';

/**
 * What applications may read (spec §2.4, §5.2): the AppRole auth method and one role + policy per
 * application, each scoped to `secret/data/{org}/{env}/{app}/*`. This stack holds the mount; with
 * `applicationSharding` in the configuration the applications go to shard stacks beside it
 * (`app-roles-dev`, `app-roles-03`: docs/sharding.md). Adding an application is one
 * `addApplication` line below.
 */
export class AppRolesStack extends ApplicationStacks {
  /** The AppRole auth method. */
  readonly appRoleAuth: AppRoleAuth;

  /**
   * @param settings the platform's settings, built once from `config.settings` by `definePlatform`
   */
  constructor(scope: Construct, id: string, config: PlatformConfig, settings: PlatformSettings, stateBackend?: StateBackendFactory) {
    super(scope, id, { settings, stateBackend, auth: authMountProps(config.authMounts?.approle), sharding: config.applicationSharding });
    this.appRoleAuth = this.auth;
    // The spec's applications (one place: lib/model/spec-platform-declarations.ts).
    for (const { id, ...props } of SPEC_APPLICATIONS) this.addApplication(id, props);
    // An entry that is not an object is reported by the configuration's own check (on ci-access).
    for (const [id, props] of ownEntries(config.applications)) if (isPlainRecord(props)) this.addApplication(id, props as unknown as ShardedApplicationProps);
    // Agent configuration of every application of this stack and its shards that declares secrets
    // (also those added later).
    new AgentConfigurations(this, 'agents', config.agents);
  }
}
