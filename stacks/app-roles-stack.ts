import { Construct } from 'constructs';
import {
  AgentConfigurations,
  AppRoleApplication,
  AppRoleAuth,
  PlatformSettings,
  SecretStoreStack,
  StateBackendFactory,
} from '../lib';
import { authMountProps, PlatformConfig } from './platform-config';

/**
 * What applications may read (spec §2.4, §5.2): the AppRole auth method and one role + policy per
 * application, each scoped to `secret/data/{org}/{env}/{app}/*`.
 */
export class AppRolesStack extends SecretStoreStack {
  /** The AppRole auth method. */
  readonly appRoleAuth: AppRoleAuth;
  /** The applications. */
  readonly applications: AppRoleApplication[];

  /**
   * @param settings the platform's settings, built once from `config.settings` by `definePlatform`
   */
  constructor(scope: Construct, id: string, config: PlatformConfig, settings: PlatformSettings, stateBackend?: StateBackendFactory) {
    super(scope, id, { settings, stateBackend });
    const auth = (this.appRoleAuth = new AppRoleAuth(this, 'approle', authMountProps(config.authMounts?.approle)));
    this.applications = [
      new AppRoleApplication(this, 'orchestrator-dev', {
        auth,
        name: 'orchestrator',
        environment: 'dev',
        secrets: { database: ['pg_host', 'pg_user', 'pg_password'] },
      }),
      new AppRoleApplication(this, 'identity-shared', {
        auth,
        name: 'identity',
        environment: 'shared',
        roleName: 'authentik-role',
      }),
      new AppRoleApplication(this, 'sourcehost-shared', {
        auth,
        name: 'sourcehost',
        environment: 'shared',
        roleName: 'gitlab-role',
      }),
      new AppRoleApplication(this, 'registry-shared', {
        auth,
        name: 'registry',
        environment: 'shared',
        roleName: 'registry',
      }),
    ];
    // Agent configuration of every application of this stack that declares secrets (also those added later).
    new AgentConfigurations(this, 'agents', config.agents);
  }
}
