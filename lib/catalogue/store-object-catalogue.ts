import { ACL_POLICY_OBJECT } from './acl-policy-object';
import { APPROLE_ROLE_OBJECT } from './approle-role-object';
import { AUTH_MOUNT_OBJECT } from './auth-mount-object';
import { JWT_AUTH_MOUNT_OBJECT } from './jwt-auth-mount-object';
import { JWT_ROLE_OBJECT } from './jwt-role-object';
import { StoreObjectKind } from './store-object-kind';

/**
 * Every kind of store object the library can synthesize, by provider resource type, sorted. A
 * resource type a stack synthesizes that is not here is refused at synthesis by SSI-R14 (no name
 * check, grant or reader would cover it); a unit test synthesizes every configuration the project ships and
 * fails on a type without an entry.
 */
export const STORE_OBJECT_CATALOGUE: ReadonlyMap<string, StoreObjectKind> = new Map(
  [ACL_POLICY_OBJECT, APPROLE_ROLE_OBJECT, AUTH_MOUNT_OBJECT, JWT_AUTH_MOUNT_OBJECT, JWT_ROLE_OBJECT]
    .sort((a, b) => (a.resourceType < b.resourceType ? -1 : 1))
    .map((k) => [k.resourceType, k]),
);

/** The catalogue entry of a resource type, or undefined when the catalogue has none. */
export function storeObjectKind(resourceType: string): StoreObjectKind | undefined {
  return STORE_OBJECT_CATALOGUE.get(resourceType);
}

/** Resource types of the catalogue, sorted. */
export const CATALOGUED_RESOURCE_TYPES: readonly string[] = [...STORE_OBJECT_CATALOGUE.keys()];

/**
 * The provider resource types that are store objects at all: the vault provider's `vault_*`
 * resources. Other resources a stack may hold (`null_resource`, `terraform_data`) touch no store.
 */
export function isStoreResourceType(resourceType: string): boolean {
  return resourceType.startsWith('vault_');
}
