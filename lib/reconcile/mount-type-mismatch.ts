import { storeCliCommand } from './store-cli-command';

/**
 * What the library declares for each auth method type, and the construct property that moves the
 * declaration to another path: named in the fix, so that it says what the store has and what to
 * declare, in the direction the store has it.
 */
const DECLARED_METHODS: Readonly<Record<string, { what: string; pathField: string; usedBy: string }>> = {
  jwt: { what: "CI's JWT method (type jwt)", pathField: 'CiJwtAuth `path`', usedBy: 'CI job' },
  oidc: { what: "the people's OIDC method (type oidc, single sign-on)", pathField: '`people.path` (OidcAuth `path`)', usedBy: 'person' },
  approle: { what: 'the AppRole method (type approle)', pathField: 'AppRoleAuth `path`', usedBy: 'application' },
};

/** Who logs in with a store method of a type (`jwt`: CI jobs, `oidc`: people), for the hand fix's condition. */
function loggedInBy(storeType: string): string {
  const by = DECLARED_METHODS[storeType]?.usedBy;
  return by === undefined ? `nothing logs in with the store's ${storeType} method` : `no ${by} logs in with the store's ${storeType} method`;
}

/**
 * The fix for an auth method of another type at a declared mount path (an import cannot change a
 * mount's type, and applying would disable the store's method with every role under it): declare
 * the method at another path, or disable the store's by hand if nobody logs in with it. Said in the
 * direction the store has it, by adopt's conflict, drift's finding and the replacement guard.
 * @param mountPath the mount path without its slash (`oidc`)
 * @param storeType the type the store has (`jwt`)
 * @param declaredType the type the stack declares (`oidc`)
 * @param cli the store's CLI for the hand command (`bao`, `vault`); not known: both are named
 * @param namespace the namespace the stacks apply to, named in the hand command
 */
export function mountTypeFix(mountPath: string, storeType: string, declaredType: string, cli?: string, namespace?: string): string {
  const declared = DECLARED_METHODS[declaredType];
  const method = declared === undefined ? `the ${declaredType} method` : declared.what.replace(/ \(.*\)$/, '');
  const pathField = declared?.pathField ?? "the mount construct's `path`";
  const disable = (c: string) => `\`${storeCliCommand({ cli: c, namespace }, 'auth disable', mountPath)}\``;
  const command = cli === undefined ? `${disable('bao')}, or ${disable('vault')} on Vault` : disable(cli);
  return `declare ${method} at another path (${pathField}), or, if ${loggedInBy(storeType)}, disable it by hand (${command}) and run adopt again`;
}

/** {@link mountTypeFix} with what the store has and what is declared first: `oidc/ is a jwt method on the store where ... Fix: ...`. */
export function mountTypeMismatch(mountPath: string, storeType: string, declaredType: string, cli?: string, namespace?: string): string {
  const what = DECLARED_METHODS[declaredType]?.what ?? `a ${declaredType} method`;
  return (
    `${mountPath}/ is a ${storeType} method on the store where ${what} is declared; an import cannot change a mount's type, and applying would disable it with every role under it. ` +
    `Fix: ${mountTypeFix(mountPath, storeType, declaredType, cli, namespace)}`
  );
}
