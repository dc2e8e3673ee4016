import { IConstruct } from 'constructs';
import { DefaultTokenResolver, StringConcat, TerraformProvider, TerraformResource, TerraformStack, Token, Tokenization } from '../framework/framework';
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
  /**
   * The store namespace it is written in (`admin/team`), `''` for the root namespace: its
   * provider's namespace joined with the resource's own (which the vault provider takes as relative
   * to the provider's). Objects of two namespaces never share a name.
   */
  readonly namespace: string;
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
      namespace: [providerNamespace(r, stack), literalNamespace(attributeValue(r, 'namespace', stack, byAddress, 0))].filter((n) => n !== '').join('/'),
    });
  }
  return { objects, uncatalogued };
}

/** A namespace attribute as the store reads it (surrounding spaces and slashes dropped), `''` when unset. */
function literalNamespace(value: unknown): string {
  return typeof value === 'string' ? value.trim().replace(/^\/+|\/+$/g, '') : '';
}

/** The namespace of the provider a resource is written through: its own `provider`, else the stack's default vault provider. */
function providerNamespace(resource: TerraformResource, stack: TerraformStack): string {
  const provider =
    resource.provider ??
    stack.node.children.find((c): c is TerraformProvider => TerraformProvider.isTerraformProvider(c) && c.terraformResourceType === 'vault' && c.alias === undefined);
  const given = (provider as unknown as { namespaceInput?: unknown } | undefined)?.namespaceInput;
  if (typeof given !== 'string' || Token.isUnresolved(given)) return '';
  return literalNamespace(templateParts(given, (why) => new Error(`${stack.node.path}: provider namespace: ${why}`)).map((p) => p.literal).join(''));
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
  const followed = attributeValue(target, reference[3], stack, byAddress, depth + 1);
  if (followed !== undefined) return followed;
  // An attribute the provider computes from configured ones (a mount's `path` defaults to its type): the target's catalogue entry knows it.
  const kind = storeObjectKind(target.terraformResourceType);
  if (kind === undefined) return text;
  const targetFields: Record<string, unknown> = {};
  for (const field of kind.identityFields) targetFields[field] = attributeValue(target, field, stack, byAddress, depth + 1);
  return kind.derivedAttribute(targetFields, reference[3]) ?? text;
}
