import { PlatformRule } from './platform-rule';
import { storeNameCollisions } from './store-name-collisions';

/**
 * SSI-R2: policies live in one name space of the store, whatever stack or auth method declares
 * them, and the store trims and lower-cases their names. Two declarations of one policy write both
 * texts to it, each apply replacing the other (a reader policy named like a CI role gave that role
 * the reader's rights). Derived from the catalogue: every policy any construct or provider
 * resource synthesizes counts.
 */
export const SSI_R2: PlatformRule = {
  id: 'SSI-R2',
  description:
    'Policy names are unique in the store, as the store compares them (trimmed, lower-cased), across every construct, provider resource and stack.',
  check: (d) =>
    storeNameCollisions(
      d.storeObjects.objects,
      ['policy'],
      'SSI-R2',
      () => 'both texts would be written to one store policy, each apply replacing the other, and every role holding it would get the last text written',
    ),
};
