import { IConstruct } from 'constructs';
import { DefaultTokenResolver, StringConcat, TerraformProvider, TerraformResource, TerraformStack, Token, Tokenization } from '../framework/framework';
import { isStoreResourceType, storeObjectKind } from '../catalogue/store-object-catalogue';
import { StoreObjectKind, StoreObjectLocation, StoreObjectName } from '../catalogue/store-object-kind';
import { evaluateTemplate } from '../sources/terraform-template';
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
  /**
   * The identity attributes as the engine will write them: references to other resources of the
   * stack resolved, expressions evaluated (`${lower("X")}` is `x`), Terraform's escapes read.
   */
  readonly fields: Readonly<Record<string, unknown>>;
  /** The identity attributes as synthesized, before the engine evaluates them (what findings show as declared). */
  readonly written: Readonly<Record<string, unknown>>;
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
  /**
   * The identity attributes (and namespaces) whose value cannot be known before the engine plans:
   * a variable, a function the library does not compute (SSI-R15 refuses them). Empty for every
   * value written as plain text or as an expression {@link evaluateTemplate} computes.
   */
  readonly unresolved: readonly UnresolvedAttribute[];
  /**
   * The identity attributes (and `namespace`) an override set or removed, each with the clause that
   * says which (`set by addOverride('name', …) on user/innocent`); read from the final documents
   * (lib/constructs/final-store-objects.ts), empty when read from the constructs' own values.
   */
  readonly overrides?: Readonly<Record<string, string>>;
  /**
   * The resources of its own stack's document that its identity attributes were read through, at
   * any depth (`vault_auth_backend.approle_backend_05935A89` for a role whose `backend` is that
   * mount's `path`): the engine writes each before the object. Sorted; read from the final documents
   * (SSI-R18), absent when read from the constructs' own values.
   */
  readonly references?: readonly string[];
}

/** An identity attribute of a store object whose value is known only when the engine plans. */
export interface UnresolvedAttribute {
  /** The provider attribute (`name`, `role_name`, `namespace`), or `provider.namespace`. */
  readonly field: string;
  /** Its text as synthesized (`${var.name}`). */
  readonly value: string;
  /** Why it cannot be known (`the function title(), which the library does not compute`). */
  readonly why: string;
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
 * The store objects `root`'s tree synthesizes as its constructs were given them (before overrides):
 * what the configuration pipeline's grants are derived from while the stacks render (the final
 * documents hold the grants' own texts). The platform rules read the final documents instead
 * (lib/constructs/final-store-objects.ts). Every Terraform resource of a store type (the
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
  // Each stack's default provider, looked up once (a shard's thousands of resources each copied its children to find it).
  const defaultProviders = new Map<TerraformStack, TerraformProvider | undefined>();
  const defaultProvider = (stack: TerraformStack): TerraformProvider | undefined => {
    if (!defaultProviders.has(stack)) {
      defaultProviders.set(stack, stack.node.children.find((c): c is TerraformProvider => TerraformProvider.isTerraformProvider(c) && c.terraformResourceType === 'vault' && c.alias === undefined));
    }
    return defaultProviders.get(stack);
  };
  for (const r of resources) {
    const type = r.terraformResourceType;
    const kind = storeObjectKind(type);
    if (kind === undefined) {
      if (isStoreResourceType(type)) uncatalogued.push({ constructPath: r.node.path, resourceType: type });
      continue;
    }
    const stack = TerraformStack.of(r);
    const fields: Record<string, unknown> = {};
    const written: Record<string, unknown> = {};
    const unresolved: UnresolvedAttribute[] = [];
    const note = (field: string, v: AttributeValue | undefined) => {
      if (v?.unresolved !== undefined) unresolved.push({ field, value: String(v.value), why: v.unresolved });
    };
    for (const field of kind.identityFields) {
      const value = attributeValue(r, field, stack, byAddress, 0);
      note(field, value);
      if (value !== undefined) {
        fields[field] = value.value;
        written[field] = value.written;
      }
    }
    const ownNamespace = attributeValue(r, 'namespace', stack, byAddress, 0);
    note('namespace', ownNamespace);
    const provider = providerNamespace(r, stack, defaultProvider);
    note('provider.namespace', provider);
    objects.push({
      stack: stack.node.id,
      address: `${type}.${r.friendlyUniqueId}`,
      constructPath: r.node.path,
      kind,
      fields,
      written,
      location: kind.locate(fields),
      name: kind.name(fields),
      namespace: [literalNamespace(provider?.value), literalNamespace(ownNamespace?.value)].filter((n) => n !== '').join('/'),
      unresolved,
    });
  }
  return { objects, uncatalogued };
}

/** A namespace attribute as the store reads it (surrounding spaces and slashes dropped), `''` when unset. */
function literalNamespace(value: unknown): string {
  return typeof value === 'string' ? value.trim().replace(/^\/+|\/+$/g, '') : '';
}

/** The namespace of the provider a resource is written through: its own `provider`, else the stack's default vault provider. */
function providerNamespace(resource: TerraformResource, stack: TerraformStack, defaultProvider: (stack: TerraformStack) => TerraformProvider | undefined): AttributeValue | undefined {
  const provider = resource.provider ?? defaultProvider(stack);
  const given = (provider as unknown as { namespaceInput?: unknown } | undefined)?.namespaceInput;
  if (typeof given !== 'string') return undefined;
  const text = Token.isUnresolved(given) ? String(Tokenization.resolve(given, { scope: stack, preparing: false, resolver: RESOLVER })) : given;
  const evaluated = evaluateTemplate(text);
  return evaluated.unresolved === undefined ? { value: evaluated.value, written: text } : { value: text, written: text, unresolved: evaluated.unresolved };
}

/** Resolves a token to the text the stack will synthesize (`${vault_auth_backend.approle_backend_05935A89.path}`). */
const RESOLVER = new DefaultTokenResolver(new StringConcat());

/** The cdktf getter of an attribute's given value (`role_name` → `roleNameInput`). */
function inputGetter(attribute: string): string {
  return `${attribute.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())}Input`;
}

/** An attribute's value as the engine will write it, or the text given and why it cannot be known before the engine plans. */
interface AttributeValue {
  /** The value; for an unresolved one, the text as synthesized. */
  readonly value: unknown;
  /** The value as synthesized, before the engine evaluates it. */
  readonly written: unknown;
  /** Why the value cannot be known before the engine plans (SSI-R15). */
  readonly unresolved?: string;
}

/**
 * An attribute's value as the engine will write it: the synthesized text read as the engine reads a
 * template ({@link evaluateTemplate}: `$${` is `${`, `${lower("X")}` is `x`), a reference to another
 * resource of the same stack followed (to its value, or to what its catalogue entry derives);
 * undefined when unset. A value that cannot be known before the engine plans (a variable, an
 * unknown function) keeps its text and says why.
 */
function attributeValue(resource: TerraformResource, attribute: string, stack: TerraformStack, byAddress: ReadonlyMap<string, TerraformResource>, depth: number): AttributeValue | undefined {
  const given = (resource as unknown as Record<string, unknown>)[inputGetter(attribute)];
  if (given === undefined || given === null) return undefined;
  if (typeof given !== 'string') return { value: given, written: given };
  const text = Token.isUnresolved(given) ? String(Tokenization.resolve(given, { scope: stack, preparing: false, resolver: RESOLVER })) : given;
  const evaluated = evaluateTemplate(text, (traversal) => referencedValue(traversal, stack, byAddress, depth));
  return evaluated.unresolved === undefined ? { value: evaluated.value, written: text } : { value: text, written: text, unresolved: evaluated.unresolved };
}

/** The value of a reference to another resource of the stack (`vault_auth_backend.approle_backend_05935A89.path`), undefined when it is not known before the engine plans. */
function referencedValue(traversal: string, stack: TerraformStack, byAddress: ReadonlyMap<string, TerraformResource>, depth: number): unknown {
  const reference = /^([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.([a-z0-9_]+)$/.exec(traversal);
  if (!reference || depth > 4) return undefined;
  const address = `${reference[1]}.${reference[2]}`;
  // A resource of another stack (cdktf makes the reference a remote-state output): followed when one stack only has that address.
  const elsewhere = [...byAddress.entries()].filter(([k]) => k.endsWith(`/${address}`) && k.slice(0, -address.length - 1).indexOf('/') < 0);
  const target = byAddress.get(`${stack.node.id}/${address}`) ?? (elsewhere.length === 1 ? elsewhere[0][1] : undefined);
  if (!target) return undefined;
  const targetStack = TerraformStack.of(target);
  const followed = attributeValue(target, reference[3], targetStack, byAddress, depth + 1);
  if (followed !== undefined) return followed.unresolved === undefined ? followed.value : undefined;
  // An attribute the provider computes from configured ones (a mount's `path` defaults to its type): the target's catalogue entry knows it.
  const kind = storeObjectKind(target.terraformResourceType);
  if (kind === undefined) return undefined;
  const targetFields: Record<string, unknown> = {};
  for (const field of kind.identityFields) {
    const v = attributeValue(target, field, targetStack, byAddress, depth + 1);
    if (v?.unresolved !== undefined) return undefined;
    targetFields[field] = v?.value;
  }
  return kind.derivedAttribute(targetFields, reference[3]) ?? undefined;
}
