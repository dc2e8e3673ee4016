import { RegistryServiceAccount } from '../lib';
import { CiAccessStack } from '../stacks/ci-access-stack';

/**
 * Example: a new registry account for publishing Helm charts. One instantiation: the account's
 * secret path `secret/registry/svc-helm`, the read grant to `registry-ci` and the checks (distinct
 * scope, unique name) follow from it. Call it from the CiAccessStack constructor.
 */
export function addHelmAccount(ciAccess: CiAccessStack): RegistryServiceAccount {
  return new RegistryServiceAccount(ciAccess, 'svc-helm', {
    name: 'helm',
    permissions: ['raw:read', 'raw:write'],
    usedBy: 'Helm chart publishing jobs',
    consumers: ['chart-publish'],
    readers: [ciAccess.registryCi],
  });
}
