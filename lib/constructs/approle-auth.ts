import { Construct } from 'constructs';
import { terraformString } from '../render/text-encoders';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { mountSegmentProblems } from '../private/mount-segment';
import { CheckedProps, expectBoolean, expectString, optional, PropsSchema } from '../model/props-check';

/** The run-time checks of {@link AppRoleAuthProps}. */
export const APPROLE_AUTH_SCHEMA: PropsSchema = { path: optional(expectString), local: optional(expectBoolean) };

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
}

/** The store's AppRole auth method, used by the applications' sidecar agents (spec §5.2). */
export class AppRoleAuth extends Construct {
  /** Mount path (`approle`). */
  readonly path: string;
  /** The rendered auth backend. */
  readonly backend: AuthBackend;

  constructor(scope: Construct, id: string, props: AppRoleAuthProps = {}) {
    super(scope, id);
    const checked = new CheckedProps(APPROLE_AUTH_SCHEMA, props, true);
    this.path = checked.value('path', 'approle');
    this.backend = new AuthBackend(this, 'backend', {
      type: 'approle',
      path: terraformString(this.path),
      description: 'Application sidecar agents (managed by secretstore-iac)',
      local: checked.value<boolean | undefined>('local', undefined),
    });
    this.node.addValidation({
      validate: () => checked.with(mountSegmentProblems('path', this.path)).map(String),
    });
  }
}
