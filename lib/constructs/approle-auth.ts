import { Construct } from 'constructs';
import { terraformString } from '../render/text-encoders';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { mountSegmentProblems } from '../private/mount-segment';

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
    this.path = props.path ?? 'approle';
    this.backend = new AuthBackend(this, 'backend', {
      type: 'approle',
      path: terraformString(this.path),
      description: 'Application sidecar agents (managed by secretstore-iac)',
    });
    this.node.addValidation({
      validate: () => mountSegmentProblems('path', this.path).map(String),
    });
  }
}
