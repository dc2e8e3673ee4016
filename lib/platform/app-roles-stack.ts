import { Construct } from 'constructs';
import { AgentConfigurations } from '../constructs/agent-configuration';
import { ApplicationStacks, ShardedApplicationProps } from '../constructs/application-stacks';
import { AppRoleAuth } from '../constructs/approle-auth';
import { StateBackendFactory } from '../constructs/secret-store-stack';
import { PlatformSettings } from '../model/platform-settings';
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
    this.addApplication('orchestrator-dev', {
      name: 'orchestrator',
      environment: 'dev',
      secrets: { database: ['pg_host', 'pg_user', 'pg_password'] },
    });
    this.addApplication('identity-shared', { name: 'identity', environment: 'shared', roleName: 'authentik-role' });
    this.addApplication('sourcehost-shared', { name: 'sourcehost', environment: 'shared', roleName: 'gitlab-role' });
    this.addApplication('registry-shared', { name: 'registry', environment: 'shared', roleName: 'registry' });
    // An entry that is not an object is reported by the configuration's own check (on ci-access).
    for (const [id, props] of ownEntries(config.applications)) if (isPlainRecord(props)) this.addApplication(id, props as unknown as ShardedApplicationProps);
    // Agent configuration of every application of this stack and its shards that declares secrets
    // (also those added later).
    new AgentConfigurations(this, 'agents', config.agents);
  }
}
