import { platformConfig } from '../../support/platform-config';
import { resources, synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';
import { addBillingApplication } from '../../../examples/add-application';
import { PlatformConfig } from 'secretstore-iac';

/** The application of examples/add-application.ts, as one key of the configuration's `applications` map. */
const withBilling: PlatformConfig = {
  ...platformConfig,
  applications: {
    'billing-dev': { name: 'billing', environment: 'dev', secrets: { database: ['pg_host', 'pg_user', 'pg_password'], smtp: ['smtp_password'] } },
  },
};

describe('§2.4 a new application is one key of the configuration (as it is one construct)', () => {
  it('the key gives the same stack as addApplication on the platform', () => {
    const fromConfig = synthesizePlatform(withBilling);
    const fromConstruct = synthesizePlatform(platformConfig, (platform) => void addBillingApplication(platform.appRoles));
    expect(fromConfig.raw['app-roles']).toContain('billing-dev');
    expect(fromConfig.raw['app-roles']).toBe(fromConstruct.raw['app-roles']);
    const roles = resources(fromConfig.stacks['app-roles'], 'vault_approle_auth_backend_role').map((r: any) => r.role_name);
    expect(roles).toContain('billing-dev');
  });

  it('an entry that is not an object is reported with its key, and nothing is written', () => {
    expect(synthesisProblems({ ...platformConfig, applications: { 'billing-dev': 'billing' as any } })).toEqual([
      '[ci-access] applications["billing-dev"] = "billing": must be an object of the application\'s properties, not text',
    ]);
  });
});
