import { CiAccessStack, RegistryServiceAccount } from 'secretstore-iac';

/**
 * Example: a new registry account for publishing Helm charts. One instantiation: the account's
 * secret path `secret/registry/svc-helm`, the read grant to `registry-ci` and the checks (distinct
 * scope, unique name) follow from it. Call it with `platform.ciAccess` in `stacks/main.ts`.
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
