import { PlatformRule } from './platform-rule';
import { storeNameCollisions } from './store-name-collisions';

/**
 * SSI-R1: two roles of one auth method with the same name, as the store compares role names, are
 * one role on the store: each apply would overwrite the other's settings and policies. Derived
 * from the catalogue, so every producer counts: CI roles, applications, the pipeline's roles,
 * people's group roles and provider resources a user adds, in every stack.
 */
export const SSI_R1: PlatformRule = {
  id: 'SSI-R1',
  description:
    'Role names are unique within an auth method, as the store compares them (lower-cased, on both stores, for AppRole and JWT/OIDC roles), across every construct, provider resource and stack.',
  check: (d) =>
    storeNameCollisions(
      d.storeObjects.objects,
      ['approle-role', 'jwt-role'],
      'SSI-R1',
      (space) => `both would be one ${space} on the store, each apply overwriting the other's settings and policies`,
    ),
};
