import { Construct } from 'constructs';
import { terraformString } from '../render/text-encoders';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { mountSegmentProblems } from '../private/mount-segment';
import { ValidationProblem } from '../model/validation-problem';

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
    this.path = props.path ?? 'approle';
    this.backend = new AuthBackend(this, 'backend', {
      type: 'approle',
      path: terraformString(this.path),
      description: 'Application sidecar agents (managed by secretstore-iac)',
      local: props.local,
    });
    this.node.addValidation({
      validate: () => [...mountSegmentProblems('path', this.path), ...localProblems(props.local)].map(String),
    });
  }
}

/** `local` is a boolean or not given (a value from JSON such as "no" would otherwise read as true). */
function localProblems(local: unknown): ValidationProblem[] {
  return local === undefined || typeof local === 'boolean' ? [] : [new ValidationProblem('local', local, 'must be true or false')];
}
