import { Construct } from 'constructs';
import { terraformString, terraformStrings } from '../render/text-encoders';
import { AuthBackend } from '../framework/vault-provider';
import { mountSegmentProblems } from '../model/mount-segment';
import { CheckedProps, expectBoolean, expectString, optional, PropsSchema } from '../model/props-check';
import { AuthMountTune, authMountTuneProblems, expectAuthMountTune, mountTokenTypeProblems, renderAuthMountTune, TokenIssuingRole } from '../model/auth-mount-tune';
import { freeTextProblems } from '../model/free-text';
import { markStackLocal } from './stack-local-element';

/** The description the library gives the AppRole mount unless one is declared. */
export const APPROLE_AUTH_DESCRIPTION = 'Application sidecar agents (managed by secretstore-iac)';

/** The run-time checks of {@link AppRoleAuthProps}. */
export const APPROLE_AUTH_SCHEMA: PropsSchema = {
  path: optional(expectString),
  local: optional(expectBoolean),
  description: optional(expectString),
  tune: expectAuthMountTune,
};

/** Properties of {@link AppRoleAuth}. */
export interface AppRoleAuthProps {
  /**
   * Mount path of the AppRole auth method.
   * @default 'approle'
   */
  readonly path?: string;
  /**
   * Whether the mount is local to this store cluster (`bao auth enable -local`: not replicated to
   * performance secondaries). The store fixes it when mounting, so a difference replaces the mount
   * and deletes every role under it: declare what the store has when adopting a hand-made mount.
   * @default false
   */
  readonly local?: boolean;
  /**
   * The mount's description (`bao auth enable -description`). The provider changes it in place
   * (no replacement); declare the store's when adopting a hand-made mount to keep it.
   * @default 'Application sidecar agents (managed by secretstore-iac)'
   */
  readonly description?: string;
  /**
   * The mount's tune settings (lease TTLs, listing visibility, token type, audit keys); changed in
   * place. Left out: not declared, the provider leaves the store's values as they are.
   * @default none declared
   */
  readonly tune?: AuthMountTune;
}

/** The store's AppRole auth method, used by the applications' sidecar agents (spec §5.2). */
export class AppRoleAuth extends Construct {
  /** Mount path (`approle`). */
  readonly path: string;
  /** The rendered auth backend. */
  readonly backend: AuthBackend;
  private mountPathReference?: string;

  /**
   * A reference to the mount's path (`${...path}`), for this method's roles: one token shared by
   * all of them, since every token costs a stack trace when cdktf creates it.
   */
  get pathReference(): string {
    return (this.mountPathReference ??= this.backend.path);
  }

  /** The roles of this mount ({@link registerRole}). */
  private readonly roles: TokenIssuingRole[] = [];

  constructor(scope: Construct, id: string, props: AppRoleAuthProps = {}) {
    super(scope, id);
    const checked = new CheckedProps(APPROLE_AUTH_SCHEMA, props, true);
    this.path = checked.value('path', 'approle');
    const description = checked.value('description', APPROLE_AUTH_DESCRIPTION);
    const tune = checked.value<AuthMountTune | undefined>('tune', undefined);
    this.backend = markStackLocal(new AuthBackend(this, 'backend', {
      type: 'approle',
      path: terraformString(this.path),
      description: terraformString(description),
      local: checked.value<boolean | undefined>('local', undefined),
      tune: renderAuthMountTune(tune, terraformStrings),
    }));
    this.node.addValidation({
      validate: () =>
        checked
          .with([
            ...mountSegmentProblems('path', this.path),
            ...freeTextProblems('description', description),
            ...authMountTuneProblems('tune', tune),
            ...mountTokenTypeProblems('tune', tune, this.roles),
          ])
          .map(String),
    });
  }

  /**
   * Records a role of this mount (each {@link AppRoleApplication} does), so that a `tune.tokenType`
   * that overrides the role's declared token type is refused at synthesis.
   */
  registerRole(role: TokenIssuingRole): void {
    this.roles.push(role);
  }
}
