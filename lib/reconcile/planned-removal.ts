import { readDeclaredObjects } from './declared-object';

/** What a planned destroy must show to be a removal: the engine's actions and the object's store path. */
export interface DestroyedObject {
  /** The engine's actions (`["delete"]` for a destroy, `["delete","create"]` for a replacement). */
  readonly actions: readonly string[];
  /** Where the object lives on the store, when its type is known. */
  readonly storePath?: string;
}

/**
 * The store paths every stack of a synthesized output declares (`sys/policies/acl/billing-dev`,
 * `auth/oidc/role/developers`, `sys/auth/oidc`).
 */
export function declaredStorePaths(outdir: string): ReadonlySet<string> {
  return new Set(readDeclaredObjects(outdir).map((o) => o.storePath));
}

/**
 * Whether a planned destroy is a removal the configuration asks for: destroyed outright (not
 * replaced), of a known kind, and declared by no stack of the output under any address. A destroy of
 * an object still declared somewhere is a move or a rename without its blocks (`secretstore-iac
 * moves`), never a removal.
 */
export function isPlannedRemoval(destroyed: DestroyedObject, declared: ReadonlySet<string>): boolean {
  return destroyed.actions.length === 1 && destroyed.actions[0] === 'delete' && destroyed.storePath !== undefined && !declared.has(destroyed.storePath);
}
