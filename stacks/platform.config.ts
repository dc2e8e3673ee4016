import { Duration, PlatformConfig } from 'secretstore-iac';

/**
 * The platform's configuration: the spec's `{org}`, `{ci_url}` and `{registry_host}` filled in.
 * Example values: replace them with your installation's before applying.
 */
export const platformConfig: PlatformConfig = {
  settings: {
    organisation: 'acme',
    ciUrl: 'https://gitlab.acme.example',
    registryHost: 'registry.acme.example',
    registryPorts: { push: 8443, pull: 8444 },
  },
  ciJobTimeout: Duration.minutes(60),
  // The project that holds this configuration (its numeric ID): its pipeline plans and applies it.
  configurationProject: { projectId: '42' },
};
