import { Construct } from 'constructs';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { mountSegmentProblems } from '../private/mount-segment';
import { CheckedProps, expectString, optional, PropsSchema } from '../model/props-check';

/** The run-time checks of {@link AppRoleAuthProps}. */
export const APPROLE_AUTH_SCHEMA: PropsSchema = { path: optional(expectString) };

/** Properties of {@link AppRoleAuth}. */
export interface AppRoleAuthProps {
  /**
   * Mount path of the AppRole auth method.
   * @default 'approle'
   */
  readonly path?: string;
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
      path: this.path,
      description: 'Application sidecar agents (managed by secretstore-iac)',
    });
    this.node.addValidation({
      validate: () => checked.with(mountSegmentProblems('path', this.path)).map(String),
    });
  }
}
