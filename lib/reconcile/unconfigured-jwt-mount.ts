import { DeclaredObject } from './declared-object';
import { LiveStore } from './live-store-reader';
import { storeCliCommand } from './store-cli-command';

/**
 * What to do about a declared JWT or OIDC method that the store has mounted but never configured
 * (`GET auth/<mount>/config` answers 404), or undefined when it is configured (or not a JWT
 * method, or not mounted). The first apply leaves it so when writing the configuration fails after
 * mounting, most often because the store cannot reach the declared OIDC discovery URL. The provider
 * reads a JWT method through its configuration: without one it can neither import it nor keep it
 * in state (its refresh forgets it, and the next apply fails on "path is already in use"). `adopt`
 * and `drift` both say this, with the fix, from the first run after the failed apply on; the fix
 * names the live store's CLI.
 */
export function unconfiguredJwtMount(o: DeclaredObject, live: LiveStore): string | undefined {
  if (o.kind !== 'jwt-auth-mount' || live.jwtConfigs.find((c) => c.mount === o.name)?.configured !== false) return undefined;
  if (!live.mounts.some((m) => m.path === o.name)) return undefined;
  const roles = live.roles.filter((r) => r.mount === o.name).length;
  const target = { cli: live.store?.cli ?? 'bao', namespace: live.namespace };
  const discovery = typeof o.fields.oidc_discovery_url === 'string' && o.fields.oidc_discovery_url !== '' ? o.fields.oidc_discovery_url : undefined;
  return (
    `${o.name}/ is mounted but was never configured (GET auth/${o.name}/config: 404; an apply that failed after mounting it leaves it so), ` +
    'and the provider cannot import or keep a JWT method without its configuration. ' +
    (discovery
      ? `The store fetches the declared oidc_discovery_url itself (${discovery}/.well-known/openid-configuration) when the configuration is written: ` +
        'if the apply failed on it ("error checking oidc discovery URL"), make that URL reachable from the store, or declare the right one, first. '
      : '') +
    (roles === 0
      ? `It holds no role: disable it (${storeCliCommand(target, 'auth disable', o.name)}) and apply; nothing is lost`
      : `It holds ${roles} role(s): write its configuration by hand (${storeCliCommand(target, 'write', `auth/${o.name}/config`, '...')}), then run adopt again`)
  );
}
