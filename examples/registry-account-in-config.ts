import { PlatformConfig } from 'secretstore-iac';
import { platformConfig } from '../stacks/platform.config';

/**
 * Example: a new registry account as one key of the `accounts` map of `stacks/platform.config.ts`.
 * The key is the account's `{name}`: `mirror` declares `svc-mirror` at `secret/registry/svc-mirror`,
 * its read grant to `registry-ci` (unless `readByCi: false`) and the checks.
 */
export const configWithMirrorAccount: PlatformConfig = {
  ...platformConfig,
  accounts: {
    mirror: {
      permissions: ['rpm:read', 'raw:read'],
      usedBy: 'mirror synchronisation jobs',
      consumers: ['mirror-sync'],
    },
  },
};
