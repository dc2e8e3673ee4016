import { goLowerCase, goTrimSpace } from './go-unicode';

/**
 * A policy name as the store files it: surrounding white space trimmed and lower-cased, with Go's
 * rules and Go's Unicode tables (`strings.ToLower(strings.TrimSpace(name))`: OpenBao and Vault
 * `PolicyStore.sanitizeName` for policy objects, `policyutil.SanitizePolicies` for the policies a
 * login gives). Every place the analysis compares or looks up policy names goes through this;
 * every other store name (role names, mount paths) is lower-cased with {@link goLowerCase}.
 */
export function storePolicyName(name: string): string {
  return goLowerCase(goTrimSpace(name));
}
