import { IConstruct } from 'constructs';
import { DefaultTokenResolver, StringConcat, TerraformResource, TerraformStack, Token, Tokenization } from 'cdktf';
import { isStoreResourceType, storeObjectKind } from '../catalogue/store-object-catalogue';
import { StoreObjectKind, StoreObjectLocation, StoreObjectName } from '../catalogue/store-object-kind';
import { templateParts } from '../sources/terraform-reference';
import { oncePerSynthesis } from './synthesis-round';

/** One store object a construct tree synthesizes, located through the catalogue. */
export interface DeclaredStoreObject {
  /** The stack's construct id (`ci-access`, `app-roles-a3`). */
  readonly stack: string;
  /** Resource address in the stack (`vault_policy.registry-ci_policy_FD942459`). */
  readonly address: string;
  /** Construct path of the resource (`ci-access/registry-ci/policy`). */
  readonly constructPath: string;
  /** Its catalogue entry. */
  readonly kind: StoreObjectKind;
  /** The identity attributes, references to other resources of the stack resolved. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Where it lives on the store. */
  readonly location: StoreObjectLocation;
  /** Its name space and name as the store compares them. */
  readonly name: StoreObjectName;
}

/** A `vault_*` resource of the tree that the catalogue has no entry for. */
export interface UncataloguedResource {
  /** Construct path of the resource. */
  readonly constructPath: string;
  /** Its provider resource type. */
  readonly resourceType: string;
}

/** What a construct tree synthesizes onto the store. */
export interface DeclaredStoreObjects {
  /** Every catalogued store object, in construct-tree order. */
  readonly objects: readonly DeclaredStoreObject[];
  /** Store resources no catalogue entry covers: refused at synthesis. */
  readonly uncatalogued: readonly UncataloguedResource[];
}

/**
 * The store objects `root`'s tree synthesizes: every Terraform resource of a store type (the
 * library's constructs and any provider resource a user adds), located by its catalogue entry from
 * the attributes it will synthesize. Computed once per synthesis (the rules and the pipeline's
 * grants ask for it), on every call outside one.
 *
 * Only the catalogue's identity attributes are read, from the values the resource was given: a
 * reference to another resource of the stack (a role's `backend`, the mount's path) is followed to
 * that resource's value, so no policy text is rendered and no token resolution of the whole stack
 * is needed.
 */
export function declaredStoreObjects(root: IConstruct): DeclaredStoreObjects {
  return oncePerSynthesis(root.node.root, 'declaredStoreObjects', () => findStoreObjects(root.node.root));
}

function findStoreObjects(root: IConstruct): DeclaredStoreObjects {
  const resources = root.node.findAll().filter((c): c is TerraformResource => TerraformResource.isTerraformResource(c));
  const byAddress = new Map<string, TerraformResource>();
  for (const r of resources) byAddress.set(`${TerraformStack.of(r).node.id}/${r.terraformResourceType}.${r.friendlyUniqueId}`, r);
  const objects: DeclaredStoreObject[] = [];
  const uncatalogued: UncataloguedResource[] = [];
  for (const r of resources) {
    const type = r.terraformResourceType;
    const kind = storeObjectKind(type);
    if (kind === undefined) {
      if (isStoreResourceType(type)) uncatalogued.push({ constructPath: r.node.path, resourceType: type });
      continue;
    }
    const stack = TerraformStack.of(r);
    const fields: Record<string, unknown> = {};
    for (const field of kind.identityFields) {
      const value = attributeValue(r, field, stack, byAddress, 0);
      if (value !== undefined) fields[field] = value;
    }
    objects.push({
      stack: stack.node.id,
      address: `${type}.${r.friendlyUniqueId}`,
      constructPath: r.node.path,
      kind,
      fields,
      location: kind.locate(fields),
      name: kind.name(fields),
    });
  }
  return { objects, uncatalogued };
}

/** Resolves a token to the text the stack will synthesize (`${vault_auth_backend.approle_backend_05935A89.path}`). */
const RESOLVER = new DefaultTokenResolver(new StringConcat());

/** The cdktf getter of an attribute's given value (`role_name` → `roleNameInput`). */
function inputGetter(attribute: string): string {
  return `${attribute.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())}Input`;
}

/**
 * An attribute's value as it will be synthesized, with Terraform's escapes read (`$${` is `${`) and a
 * whole-value reference to another resource of the same stack followed; undefined when unset.
 */
function attributeValue(resource: TerraformResource, attribute: string, stack: TerraformStack, byAddress: ReadonlyMap<string, TerraformResource>, depth: number): unknown {
  const given = (resource as unknown as Record<string, unknown>)[inputGetter(attribute)];
  if (given === undefined || given === null) return undefined;
  if (typeof given !== 'string') return given;
  const text = Token.isUnresolved(given) ? String(Tokenization.resolve(given, { scope: stack, preparing: false, resolver: RESOLVER })) : given;
  const parts = templateParts(text, (why) => new Error(`${resource.node.path}: ${attribute}: ${why}`));
  if (parts.every((p) => p.expression === undefined)) return parts.map((p) => p.literal).join('');
  const reference = parts.length === 1 ? /^([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.([a-z0-9_]+)$/.exec(parts[0].expression ?? '') : null;
  const target = reference ? byAddress.get(`${stack.node.id}/${reference[1]}.${reference[2]}`) : undefined;
  if (!reference || !target || depth > 4) return text;
  // `path` of a mount is its `path` as given, or its `type` (the store's default mount path).
  const followed = attributeValue(target, reference[3], stack, byAddress, depth + 1);
  return followed ?? (reference[3] === 'path' ? attributeValue(target, 'type', stack, byAddress, depth + 1) : text);
}
