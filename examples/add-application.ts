import { AppRoleApplication, AppRolesStack, Duration } from 'secretstore-iac';

/**
 * Example: a new application. One instantiation gives the AppRole role `billing-dev`, its policy
 * reading `secret/data/{org}/dev/billing/*` only, the Role ID output and the checks (no overlap with
 * other applications, TTLs consistent), in the stack its shard key names (docs/sharding.md). Call it
 * with the platform's `appRoles` stack in `stacks/main.ts`: `addBillingApplication(platform.appRoles)`.
 */
export function addBillingApplication(appRoles: AppRolesStack): AppRoleApplication {
  return appRoles.addApplication('billing-dev', {
    name: 'billing',
    environment: 'dev',
    secrets: { database: ['pg_host', 'pg_user', 'pg_password'], smtp: ['smtp_password'] },
    tokenTtl: Duration.hours(12),
    tokenMaxTtl: Duration.hours(24),
  });
}
