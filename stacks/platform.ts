import { Construct } from 'constructs';
import { PlatformSettings, StateBackendFactory } from '../lib';
import { AppRolesStack } from './app-roles-stack';
import { CiAccessStack } from './ci-access-stack';
import { PlatformConfig } from './platform-config';

/** The platform's stacks. */
export interface Platform {
  /** `ci-access`: JWT method, `registry-ci`, registry accounts, CI secrets. */
  readonly ciAccess: CiAccessStack;
  /** `app-roles`: AppRole method and one role per application. */
  readonly appRoles: AppRolesStack;
}

/**
 * Declares the platform's stacks in `scope` (a SecretStoreApp).
 * @param stateBackend state backend for every stack (default: local state files)
 */
export function definePlatform(scope: Construct, config: PlatformConfig, stateBackend?: StateBackendFactory): Platform {
  // One settings object for every stack: each stack still reports its problems under its own path.
  const settings = new PlatformSettings(config.settings);
  return {
    ciAccess: new CiAccessStack(scope, 'ci-access', config, settings, stateBackend),
    appRoles: new AppRolesStack(scope, 'app-roles', config, settings, stateBackend),
  };
}
