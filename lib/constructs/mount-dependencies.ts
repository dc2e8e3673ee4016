import { IConstruct } from 'constructs';
import { TerraformResource } from '../framework/framework';
import { AUTH_MOUNT_NAME_SPACE } from '../catalogue/auth-mount-object';
import { DeclaredStoreObject, declaredStoreObjects } from './declared-store-objects';

/**
 * Makes every store object that lives under an auth mount its own stack enables (an AppRole or JWT
 * role at `auth/<mount>/role/...`) wait for that mount (`depends_on`, kept with the object's own),
 * unless it already refers to the mount's resource (the library's roles take their `backend` from
 * it). A raw role written with the mount's path as text (`backend: 'approle'`) has no such reference:
 * the engine creates both at once, and on a first apply the role's write meets a store without the
 * mount (`Code: 404 ... no handler for route "auth/approle/role/..."`, seen on OpenBao 2.4.0 with
 * OpenTofu); the next apply passes. Destroying runs in the reverse order, the mount last. Objects
 * under a mount of another stack are ordered by the pipeline's stages instead. Run once the
 * declarations are complete (SecretStoreApp does, before the rules). It reads the values the
 * constructs were given; SSI-R18 checks the order again in the final documents (an override after
 * this can undo it).
 */
export function declareMountDependencies(root: IConstruct): void {
  const objects = declaredStoreObjects(root).objects;
  // Mount paths compare as given (the store's router is case-sensitive), per stack and namespace.
  const key = (o: DeclaredStoreObject, mount: string) => JSON.stringify([o.stack, o.namespace, mount]);
  const mounts = new Map<string, DeclaredStoreObject>();
  for (const o of objects) if (o.name.space === AUTH_MOUNT_NAME_SPACE && o.location.mount !== undefined) mounts.set(key(o, o.location.mount), o);
  for (const o of objects) {
    if (o.name.space === AUTH_MOUNT_NAME_SPACE || o.location.mount === undefined) continue;
    const mount = mounts.get(key(o, o.location.mount));
    if (mount === undefined) continue;
    const reference = `\${${mount.address}.`;
    if (Object.values(o.written).some((v) => typeof v === 'string' && v.includes(reference))) continue;
    const resource = constructAt(root.node.root, o.constructPath);
    if (!TerraformResource.isTerraformResource(resource)) continue;
    const given = resource.dependsOn ?? [];
    if (given.includes(mount.address)) continue;
    resource.dependsOn = [...given, mount.address];
  }
}

/** The construct at `path` (ids never hold `/`), from the tree's root. */
function constructAt(root: IConstruct, path: string): IConstruct | undefined {
  let at: IConstruct | undefined = root;
  for (const id of path.split('/')) at = at?.node.tryFindChild(id);
  return at;
}
