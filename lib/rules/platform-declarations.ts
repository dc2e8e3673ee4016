import { IConstruct } from 'constructs';
import { AppRoleApplication } from '../constructs/approle-application';
import { AppRoleAuth } from '../constructs/approle-auth';
import { CiJwtAuth } from '../constructs/ci-jwt-auth';
import { CiJwtRole } from '../constructs/ci-jwt-role';
import { CiSecret } from '../constructs/ci-secret';
import { OidcAuth } from '../constructs/oidc-auth';
import { OidcGroupRole } from '../constructs/oidc-group-role';
import { RegistryServiceAccount } from '../constructs/registry-service-account';
import { SecretStoreStack } from '../constructs/secret-store-stack';
import { SecretDeclaration } from '../model/secret-declaration';

/** The declarations of a construct tree, grouped by kind. */
export class PlatformDeclarations {
  /** JWT auth methods. */
  readonly jwtAuths: CiJwtAuth[];
  /** AppRole auth methods. */
  readonly appRoleAuths: AppRoleAuth[];
  /** CI JWT roles. */
  readonly jwtRoles: CiJwtRole[];
  /** Registry service accounts. */
  readonly accounts: RegistryServiceAccount[];
  /** Other CI secrets. */
  readonly ciSecrets: CiSecret[];
  /** AppRole applications. */
  readonly applications: AppRoleApplication[];
  /** The stacks, with their platform settings. */
  readonly stacks: SecretStoreStack[];
  /** OIDC auth methods (people's single sign-on). */
  readonly oidcAuths: OidcAuth[];
  /** Roles of groups of people. */
  readonly peopleRoles: OidcGroupRole[];

  constructor(root: IConstruct) {
    const all = root.node.findAll();
    this.jwtAuths = all.filter((c): c is CiJwtAuth => c instanceof CiJwtAuth);
    this.appRoleAuths = all.filter((c): c is AppRoleAuth => c instanceof AppRoleAuth);
    this.jwtRoles = all.filter((c): c is CiJwtRole => c instanceof CiJwtRole);
    this.accounts = all.filter((c): c is RegistryServiceAccount => c instanceof RegistryServiceAccount);
    this.ciSecrets = all.filter((c): c is CiSecret => c instanceof CiSecret);
    this.applications = all.filter((c): c is AppRoleApplication => c instanceof AppRoleApplication);
    this.stacks = all.filter((c): c is SecretStoreStack => c instanceof SecretStoreStack);
    this.oidcAuths = all.filter((c): c is OidcAuth => c instanceof OidcAuth);
    this.peopleRoles = all.filter((c): c is OidcGroupRole => c instanceof OidcGroupRole);
  }

  /** Every declared secret CI reads, with its declaring construct. */
  get ciSecretDeclarations(): { construct: IConstruct; secret: SecretDeclaration }[] {
    return [
      ...this.accounts.map((a) => ({ construct: a as IConstruct, secret: a.secret })),
      ...this.ciSecrets.map((s) => ({ construct: s as IConstruct, secret: s.secret })),
    ];
  }
}
