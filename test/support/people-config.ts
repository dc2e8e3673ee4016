import { PlatformConfig } from '../../lib/platform/platform-config';
import { PeopleConfig } from '../../lib/platform/people-stack';
import { platformConfig } from './platform-config';

/** A people section: an identity provider on https, two groups, one of which reads a team subtree. */
export const PEOPLE: PeopleConfig = {
  discoveryUrl: 'https://sso.acme.example/application/o/secretstore',
  clientId: 'secretstore',
  storeUrl: 'https://vault.acme.example',
  groups: {
    'platform-admins': { groups: ['platform-admins'], reads: [{ path: 'team/runbooks', subtree: true }] },
    developers: { groups: ['developers'] },
  },
};

/** The repository's platform configuration with {@link PEOPLE}, or with `people` as given. */
export function withPeople(people: PeopleConfig = PEOPLE): PlatformConfig {
  return { ...platformConfig, people };
}
