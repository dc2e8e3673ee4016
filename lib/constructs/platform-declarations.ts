import { IConstruct } from 'constructs';
import { AccessInvariants } from './access-invariants';
import { AppRoleApplication } from './approle-application';
import { AppRoleAuth } from './approle-auth';
import { CiJwtAuth } from './ci-jwt-auth';
import { CiJwtRole } from './ci-jwt-role';
import { CiSecret } from './ci-secret';
import { ConfigurationPipelineRole } from './configuration-pipeline-role';
import { PipelineStackGrant } from './pipeline-stack-grant';
import { DeclaredStoreObjects } from './declared-store-objects';
import { finalDocuments, finalStoreObjects } from './final-store-objects';
import type { FinalStackDocument } from './final-stack-document';
import { LiveStoreReaderPolicy } from './live-store-reader-policy';
import { OidcAuth } from './oidc-auth';
import { OidcGroupRole } from './oidc-group-role';
import { RegistryServiceAccount } from './registry-service-account';
import { SecretStoreStack } from './secret-store-stack';
import { SecretDeclaration } from '../model/secret-declaration';
import { oncePerSynthesis } from './synthesis-round';

/** The declarations of a construct tree, grouped by kind. */
export class PlatformDeclarations {
  /** JWT auth methods. */
  readonly jwtAuths: readonly CiJwtAuth[];
  /** AppRole auth methods. */
  readonly appRoleAuths: readonly AppRoleAuth[];
  /** CI JWT roles. */
  readonly jwtRoles: readonly CiJwtRole[];
  /** Registry service accounts. */
  readonly accounts: readonly RegistryServiceAccount[];
  /** Other CI secrets. */
  readonly ciSecrets: readonly CiSecret[];
  /** AppRole applications. */
  readonly applications: readonly AppRoleApplication[];
  /** The stacks, with their platform settings. */
  readonly stacks: readonly SecretStoreStack[];
  /** OIDC auth methods (people's single sign-on). */
  readonly oidcAuths: readonly OidcAuth[];
  /** Roles of groups of people. */
  readonly peopleRoles: readonly OidcGroupRole[];
  /** The live-store reader's policies (the only producers that may take its documented name). */
  readonly readerPolicies: readonly LiveStoreReaderPolicy[];
  /** The configuration pipeline's roles (their names name their grants, `<role name>-<stack>`). */
  readonly pipelineRoles: readonly ConfigurationPipelineRole[];
  /** The configuration pipeline roles' grants, one per role and stack: the only policies in the grants' name space. */
  readonly pipelineGrants: readonly PipelineStackGrant[];
  /** A security team's access invariants (SSI-R16). */
  readonly invariants: readonly AccessInvariants[];
  private readonly root: IConstruct;

  /**
   * The declarations of `root`'s tree, found once per synthesis (validation, the platform rules, the
   * CI login template and the KV mount record all ask for them) and on every call outside one.
   */
  static of(root: IConstruct): PlatformDeclarations {
    return oncePerSynthesis(root, 'platformDeclarations', () => new PlatformDeclarations(root));
  }

  constructor(root: IConstruct) {
    this.root = root;
    // One walk of the tree, each construct put in the list of every kind it is an instance of (its
    // prototype chain looked up, as `instanceof` does): at 20,000 applications, thirteen `filter`
    // passes of `instanceof` over every construct cost more than the walk itself.
    const kinds = new Map<object, IConstruct[]>();
    const kind = <T extends IConstruct>(type: abstract new (...args: never[]) => T): T[] => {
      const list: T[] = [];
      kinds.set(type.prototype as object, list as IConstruct[]);
      return list;
    };
    this.jwtAuths = kind(CiJwtAuth);
    this.appRoleAuths = kind(AppRoleAuth);
    this.jwtRoles = kind(CiJwtRole);
    this.accounts = kind(RegistryServiceAccount);
    this.ciSecrets = kind(CiSecret);
    this.applications = kind(AppRoleApplication);
    this.stacks = kind(SecretStoreStack);
    this.oidcAuths = kind(OidcAuth);
    this.peopleRoles = kind(OidcGroupRole);
    this.readerPolicies = kind(LiveStoreReaderPolicy);
    this.pipelineRoles = kind(ConfigurationPipelineRole);
    this.pipelineGrants = kind(PipelineStackGrant);
    this.invariants = kind(AccessInvariants);
    for (const c of root.node.findAll()) {
      for (let proto = Object.getPrototypeOf(c); proto !== null; proto = Object.getPrototypeOf(proto)) kinds.get(proto)?.push(c);
    }
  }

  /**
   * Every store object the tree synthesizes, whoever declares it (library constructs and provider
   * resources a user adds, in every stack), located through the catalogue, and the store resources
   * the catalogue has no entry for: what the name rules compare. Read from the final documents (after
   * every override: lib/constructs/final-store-objects.ts); computed once per synthesis.
   */
  get storeObjects(): DeclaredStoreObjects {
    return finalStoreObjects(this.root);
  }

  /** The final document of every stack of the tree (SecretStoreStacks and any other), in construct-tree order: what the engine loads. */
  get documents(): FinalStackDocument[] {
    return finalDocuments(this.root);
  }

  /** Every declared secret CI reads, with its declaring construct. */
  get ciSecretDeclarations(): { construct: IConstruct; secret: SecretDeclaration }[] {
    return [
      ...this.accounts.map((a) => ({ construct: a as IConstruct, secret: a.secret })),
      ...this.ciSecrets.map((s) => ({ construct: s as IConstruct, secret: s.secret })),
    ];
  }
}
