import { Construct } from 'constructs';
import { StateBackendFactory } from '../constructs/secret-store-stack';
import { AccessInvariants } from '../constructs/access-invariants';
import { PlatformSettings } from '../model/platform-settings';
import { isPlainRecord, ownValue } from '../model/props-check';
import { AppRolesStack } from './app-roles-stack';
import { CiAccessStack } from './ci-access-stack';
import { PeopleStack } from './people-stack';
import { PlatformConfig, platformConfigProblems } from './platform-config';

/** The platform's stacks. */
export interface Platform {
  /** `ci-access`: JWT method, `registry-ci`, registry accounts, CI secrets. */
  readonly ciAccess: CiAccessStack;
  /** `app-roles`: the AppRole method, and the applications (in shard stacks beside it when `applicationSharding` says so). */
  readonly appRoles: AppRolesStack;
  /** `people`: the OIDC login and one role per group of people, when the configuration has `people`. */
  readonly people?: PeopleStack;
}

/**
 * Declares the platform's stacks in `scope` (a SecretStoreApp).
 * @param stateBackend state backend for every stack (default: local state files)
 */
export function definePlatform(scope: Construct, config: PlatformConfig, stateBackend?: StateBackendFactory): Platform {
  // A configuration loaded from JSON or YAML is checked at run time: its own fields here (reported
  // on ci-access), every value it hands on by the construct that takes it.
  const problems = platformConfigProblems(config);
  const given: PlatformConfig = isPlainRecord(config) ? config : ({} as PlatformConfig);
  // One settings object for every stack: each stack still reports its problems under its own path.
  const settings = new PlatformSettings(ownValue(given, 'settings') as PlatformConfig['settings']);
  const ciAccess = new CiAccessStack(scope, 'ci-access', given, settings, stateBackend);
  ciAccess.node.addValidation({ validate: () => problems.map(String) });
  const appRoles = new AppRolesStack(scope, 'app-roles', given, settings, stateBackend);
  const people = isPlainRecord(given.people) ? new PeopleStack(scope, 'people', given.people, settings, stateBackend) : undefined;
  const invariants = ownValue<PlatformConfig['invariants']>(given, 'invariants');
  if (invariants !== undefined) new AccessInvariants(scope, 'invariants', typeof invariants === 'string' ? { file: invariants } : { invariants });
  return { ciAccess, appRoles, ...(people ? { people } : {}) };
}
