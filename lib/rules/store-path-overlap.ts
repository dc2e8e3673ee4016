import { KvPath } from '../model/kv-path';

/**
 * The words a path-overlap finding adds when two declared paths meet only on the store: their
 * policy paths differ as text under the declared KV versions, yet the store serves a secret of both
 * at one API path (a mount declared with the wrong version, or one mount path inside another).
 * Empty when the policy paths already overlap as declared.
 */
export function storeOnlyOverlapNote(a: KvPath, b: KvPath): string {
  if (a.policyPathsOverlap(b)) return '';
  const shared = a.sharedApiPath(b);
  return shared === undefined
    ? ''
    : ` (on the store both reach ${shared}: the store applies each mount's own KV version and path, not the declared ones)`;
}
