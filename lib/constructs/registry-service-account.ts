import { Construct } from 'constructs';
import { expectGrantees, Grant, IGrantee } from '../model/grant';
import { CheckedProps, expectBoolean, expectString, expectStringArray, optional, PropsSchema } from '../model/props-check';
import { freeTextProblems, VISIBLE_TEXT_NOTE, visibleLength } from '../model/free-text';
import { identifierNameProblems } from '../model/identifier-name';
import { KvPath } from '../model/kv-path';
import { RegistryLoginKind, RegistryPermission, RegistryPermissionScope } from '../model/registry-permission-scope';
import { SecretDeclaration } from '../model/secret-declaration';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';

/** The keys of every registry service account's secret (spec §2.1: a username and a password). */
export const REGISTRY_ACCOUNT_KEYS: readonly string[] = ['username', 'password'];

/** Properties of {@link RegistryServiceAccount}. */
export interface RegistryServiceAccountProps {
  /** The `{name}` of `svc-{name}`: `orchestrator` declares `svc-orchestrator`. */
  readonly name: string;
  /** Registry permissions; each account has a distinct scope (spec §2.1). */
  readonly permissions: readonly RegistryPermission[];
  /** Who uses the account, in words (spec §2.1, "Used by"). */
  readonly usedBy: string;
  /**
   * CI jobs that read its credentials, as kebab-case ids (`image-build`).
   * @default []
   */
  readonly consumers?: readonly string[];
  /**
   * Identities granted read on the account's secret at declaration (e.g. the `registry-ci` role), so
   * that adding an account is one instantiation.
   * @default [] (call {@link RegistryServiceAccount.grantRead} later, or nobody reads it through the store)
   */
  readonly readers?: readonly IGrantee[];
  /**
   * Also grant the spec's older form `secret/registry/svc-{name}` to readers. Useful while a mount is
   * still KV v1 but declared as v2 (migration): the policy then works before and after the upgrade.
   * On a KV v2 mount an older-form GET gets 404 with "Invalid path for a versioned K/V secrets engine"
   * in `warnings` instead of 403: it never returns data (seen on OpenBao, test/store/older-form).
   * On a v1 mount the data path is the older form already.
   * @default false
   */
  readonly olderFormGrant?: boolean;
}

/** The run-time checks of {@link RegistryServiceAccountProps}. */
export const REGISTRY_SERVICE_ACCOUNT_SCHEMA: PropsSchema = {
  name: expectString,
  permissions: expectStringArray,
  usedBy: expectString,
  consumers: optional(expectStringArray),
  readers: optional(expectGrantees),
  olderFormGrant: optional(expectBoolean),
};

/**
 * A registry service account (spec §2.1): `svc-{name}`, its permission scope, and its credentials
 * at `secret/registry/svc-{name}` with keys `username` and `password`. The infrastructure team
 * creates the account in the registry and puts the values in the store; the library never sees them.
 */
export class RegistryServiceAccount extends Construct {
  /** `svc-{name}`. */
  readonly accountName: string;
  /** The permission scope. */
  readonly scope: RegistryPermissionScope;
  /** Who uses it, in words. */
  readonly usedBy: string;
  /** The credentials secret (keys `username`, `password`). */
  readonly secret: SecretDeclaration;
  /** Container-image login: `push` at `{registry_host}:8443`, `pull` at `:8444`, or none. */
  readonly loginKind: RegistryLoginKind | undefined;
  /** `registry.example:8443` for push accounts, `:8444` for pull-only accounts, undefined otherwise. */
  readonly loginTarget: string | undefined;
  private readonly name: string;

  constructor(scope: Construct, id: string, props: RegistryServiceAccountProps) {
    super(scope, id);
    const settings = SecretStoreStack.of(this).settings;
    const checked = (this.checked = new CheckedProps(REGISTRY_SERVICE_ACCOUNT_SCHEMA, props));
    this.name = checked.value('name', '');
    this.accountName = `svc-${this.name}`;
    this.scope = new RegistryPermissionScope(checked.value('permissions', []));
    this.usedBy = checked.value('usedBy', '');
    this.secret = new SecretDeclaration({
      path: KvPath.secret(settings.kvMount, `registry/${this.accountName}`),
      keys: REGISTRY_ACCOUNT_KEYS,
      consumers: checked.value('consumers', []),
      olderFormGrant: checked.value('olderFormGrant', false),
    });
    this.loginKind = this.scope.loginKind;
    this.loginTarget = this.loginKind && `${settings.registryHost}:${settings.registryPorts[this.loginKind]}`;
    checked.value<readonly IGrantee[]>('readers', []).forEach((r) => this.grantRead(r));
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /**
   * Grants read on the account's credentials to an identity.
   * @returns the grants added (one per ACL path)
   */
  grantRead(grantee: IGrantee): Grant[] {
    return this.secret.grantRead(grantee, this.node.path);
  }

  private readonly checked: CheckedProps;

  private problems(): ValidationProblem[] {
    return this.checked.with(this.valueProblems());
  }

  private valueProblems(): ValidationProblem[] {
    const problems = identifierNameProblems('name', this.name);
    if (this.name?.startsWith('svc-')) {
      problems.push(new ValidationProblem('name', this.name, 'is the {name} of svc-{name}: drop the "svc-" prefix'));
    }
    problems.push(...this.scope.problems('permissions'));
    if (visibleLength(this.usedBy) === 0) problems.push(new ValidationProblem('usedBy', this.usedBy, `must say who uses the account (${VISIBLE_TEXT_NOTE})`));
    else problems.push(...freeTextProblems('usedBy', this.usedBy));
    problems.push(...this.secret.problems());
    return problems;
  }
}
