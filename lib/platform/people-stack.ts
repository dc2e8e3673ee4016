import { Construct } from 'constructs';
import { OIDC_PROVIDER_VERSION, OidcAuth, OidcAuthProps } from '../constructs/oidc-auth';
import { OidcGroupRole, OidcGroupRoleProps } from '../constructs/oidc-group-role';
import { SecretStoreStack, StateBackendFactory } from '../constructs/secret-store-stack';
import { PlatformSettings } from '../model/platform-settings';
import { isPlainRecord, ownEntries } from '../model/props-check';
import { ValidationProblem } from '../model/validation-problem';

/** One group of people in {@link PeopleConfig.groups}; its key there is the role's name. */
export type PeopleGroupConfig = Omit<OidcGroupRoleProps, 'auth' | 'roleName'>;

/**
 * People through single sign-on (spec §5.6): the store's OIDC login and one role per group. The
 * client secret is not here: the engine reads it from `TF_VAR_<path>_client_secret` at plan and
 * apply time (`TF_VAR_oidc_client_secret` for the default mount).
 */
export interface PeopleConfig extends OidcAuthProps {
  /**
   * The groups of people who may log in, by role name (`platform-admins`), each with its group
   * claim values and what it reads. A group without `reads` reads no platform secret path.
   */
  readonly groups: Readonly<Record<string, PeopleGroupConfig>>;
}

/**
 * What people may read (spec §5.6): the OIDC auth method and one role + policy per group. Declared
 * only when the configuration has a `people` section; the stack pins the vault provider to 5.7.0 or
 * later, the first with the write-only client secret.
 */
export class PeopleStack extends SecretStoreStack {
  /** The OIDC auth method. */
  readonly oidcAuth: OidcAuth;
  /** The groups' roles, by role name. */
  readonly roles: Readonly<Record<string, OidcGroupRole>>;

  /**
   * @param settings the platform's settings, built once from `config.settings` by `definePlatform`
   */
  constructor(scope: Construct, id: string, people: PeopleConfig, settings: PlatformSettings, stateBackend?: StateBackendFactory) {
    super(scope, id, { settings, stateBackend, providerVersion: OIDC_PROVIDER_VERSION });
    const { groups, ...auth } = isPlainRecord(people) ? people : ({} as PeopleConfig);
    this.oidcAuth = new OidcAuth(this, 'oidc', auth as OidcAuthProps);
    const problems: ValidationProblem[] = [];
    if (!isPlainRecord(groups)) problems.push(new ValidationProblem('people.groups', groups, 'must be an object of role names to groups ({ "platform-admins": { groups: ["platform-admins"] } })'));
    const roles: Record<string, OidcGroupRole> = {};
    for (const [name, group] of ownEntries(groups)) {
      if (!isPlainRecord(group)) {
        problems.push(new ValidationProblem(`people.groups.${name}`, group, 'must be an object { groups, reads?, tokenTtl?, tokenMaxTtl?, tokenBoundCidrs? }'));
        continue;
      }
      // defineProperty: an own `__proto__` key (JSON.parse makes one) stays a name, never a prototype.
      Object.defineProperty(roles, name, {
        value: new OidcGroupRole(this, `group-${name}`, { ...(group as PeopleGroupConfig), auth: this.oidcAuth, roleName: name }),
        enumerable: true,
      });
    }
    this.roles = roles;
    this.node.addValidation({ validate: () => problems.map(String) });
  }
}
