import { PlatformRule } from './platform-rule';
import { storeNameCollisions } from './store-name-collisions';

/**
 * SSI-R7: the store mounts one auth method per path, whatever its type. Derived from the
 * catalogue: JWT, OIDC and AppRole methods of the library and auth mounts a user adds count alike.
 */
export const SSI_R7: PlatformRule = {
  id: 'SSI-R7',
  description: 'Auth methods have distinct mount paths (compared without surrounding slashes), whatever their type, across every construct, provider resource and stack.',
  check: (d) =>
    storeNameCollisions(
      d.storeObjects.objects,
      ['auth-mount', 'jwt-auth-mount'],
      'SSI-R7',
      () => 'the store mounts one auth method per path: the second mount fails at apply, or the stacks fight over one method and its roles',
    ),
};
