import { IConstruct } from 'constructs';
import { TerraformStack } from '../framework/framework';
import { isStoreResourceType, storeObjectKind } from '../catalogue/store-object-catalogue';
import { evaluateTemplate } from '../sources/terraform-template';
import { DeclaredStoreObject, DeclaredStoreObjects, declaredStoreObjects, UnresolvedAttribute } from './declared-store-objects';
import { canonicalStoreNamespace } from '../model/store-namespace';
import { FinalResource, FinalStackDocument } from './final-stack-document';
import { oncePerSynthesis } from './synthesis-round';
import { compareStrings } from '../private/compare-strings';

/**
 * The store objects `root`'s stacks write, read from each stack's {@link FinalStackDocument}: every
 * `resource` block of a store type, whoever wrote it (a library construct, a provider resource a user
 * adds, a stack override), located by its catalogue entry from the identity attributes the engine
 * loads, after every override. A reference to another resource (`${vault_auth_backend.x.path}`, a
 * remote state's output for another stack's) is followed in the documents. What the platform rules
 * compare; computed once per synthesis.
 *
 * Each object's {@link DeclaredStoreObject.overrides} names the override that set an identity
 * attribute, so that a finding says where the value came from.
 */
export function finalStoreObjects(root: IConstruct): DeclaredStoreObjects {
  return oncePerSynthesis(root.node.root, 'finalStoreObjects', () => readFinalStoreObjects(root.node.root));
}

/** The final document of every stack of `root`'s app, in construct-tree order. */
export function finalDocuments(root: IConstruct): FinalStackDocument[] {
  return root.node.root.node
    .findAll()
    .filter((c): c is TerraformStack => TerraformStack.isStack(c))
    .map((s) => FinalStackDocument.of(s));
}

/**
 * The value the engine gives attribute `attribute` of a block of `doc` (a template read as the
 * engine reads it, references followed in `documents`); `unresolved` says why it is not known before
 * the engine plans; undefined when unset.
 */
export function finalAttributeValue(
  body: Readonly<Record<string, unknown>>,
  attribute: string,
  doc: FinalStackDocument,
  documents: readonly FinalStackDocument[],
): { readonly value: unknown; readonly unresolved?: string } | undefined {
  return attributeValue(body, attribute, doc, documents, 0);
}

function readFinalStoreObjects(root: IConstruct): DeclaredStoreObjects {
  const documents = finalDocuments(root);
  const objects: DeclaredStoreObject[] = [];
  const uncatalogued: { constructPath: string; resourceType: string }[] = [];
  // A resource that could not render never reaches the engine (the synthesis fails); read as given, so that every problem is still said at once.
  const given = documents.some((d) => d.unrendered.length > 0) ? declaredStoreObjects(root) : undefined;
  for (const doc of documents) {
    const unrendered = new Set(doc.unrendered.map((u) => u.constructPath));
    const asGiven = given?.objects.filter((o) => unrendered.has(o.constructPath)) ?? [];
    for (const r of doc.resources) {
      const kind = storeObjectKind(r.type);
      if (kind === undefined) {
        if (isStoreResourceType(r.type)) uncatalogued.push({ constructPath: r.constructPath, resourceType: r.type });
        continue;
      }
      const fields: Record<string, unknown> = {};
      const written: Record<string, unknown> = {};
      const unresolved: UnresolvedAttribute[] = [];
      const overrides: Record<string, string> = {};
      const note = (field: string, v: AttributeValue | undefined) => {
        if (v?.unresolved !== undefined) unresolved.push({ field, value: String(v.value), why: v.unresolved });
      };
      for (const field of [...kind.identityFields, 'namespace']) {
        const by = doc.overrideOf(r, field);
        if (by !== undefined) overrides[field] = by;
      }
      const references = new Set<string>();
      for (const field of kind.identityFields) {
        const value = attributeValue(r.body, field, doc, documents, 0, references);
        note(field, value);
        if (value !== undefined) {
          fields[field] = value.value;
          written[field] = value.written;
        }
      }
      const ownNamespace = attributeValue(r.body, 'namespace', doc, documents, 0);
      note('namespace', ownNamespace);
      const providerBlock = doc.providerOf(r);
      const provider = providerBlock === undefined ? undefined : attributeValue(providerBlock, 'namespace', doc, documents, 0);
      note('provider.namespace', provider);
      objects.push({
        stack: doc.stack.node.id,
        address: `${r.type}.${r.name}`,
        constructPath: r.constructPath,
        kind,
        fields,
        written,
        location: kind.locate(fields),
        name: kind.name(fields),
        namespace: [provider?.value, ownNamespace?.value].map((v) => (typeof v === 'string' ? canonicalStoreNamespace(v) : '')).filter((n) => n !== '').join('/'),
        unresolved,
        overrides,
        references: [...references].sort(compareStrings),
      });
    }
    objects.push(...asGiven);
  }
  return { objects, uncatalogued };
}

/** An attribute's value as the engine will write it, or the text given and why it cannot be known before the engine plans. */
interface AttributeValue {
  readonly value: unknown;
  readonly written: unknown;
  readonly unresolved?: string;
}

/**
 * An attribute of a block as the engine will write it: its text read as the engine reads a template
 * ({@link evaluateTemplate}), references followed in the documents; undefined when unset.
 */
function attributeValue(
  body: Readonly<Record<string, unknown>>,
  attribute: string,
  doc: FinalStackDocument,
  documents: readonly FinalStackDocument[],
  depth: number,
  references?: Set<string>,
): AttributeValue | undefined {
  const given = body[attribute];
  if (given === undefined || given === null) return undefined;
  if (typeof given !== 'string') return { value: given, written: given };
  const evaluated = evaluateTemplate(given, (traversal) => referencedValue(traversal, doc, documents, depth, references));
  return evaluated.unresolved === undefined ? { value: evaluated.value, written: given } : { value: given, written: given, unresolved: evaluated.unresolved };
}

/**
 * The value of a reference the engine resolves when it plans: another resource of the document
 * (`vault_auth_backend.approle_backend_05935A89.path`: its value, or what its catalogue entry
 * derives), or another stack's output through cdktf's remote state
 * (`data.terraform_remote_state.<x>.outputs.<output>`); undefined when not known before the engine plans.
 */
function referencedValue(traversal: string, doc: FinalStackDocument, documents: readonly FinalStackDocument[], depth: number, references?: Set<string>): unknown {
  if (depth > 4) return undefined;
  const remote = /^data\.terraform_remote_state\.[A-Za-z0-9_-]+\.outputs\.([A-Za-z0-9_-]+)$/.exec(traversal);
  if (remote) {
    const holders = documents.filter((d) => d !== doc && typeof d.output(remote[1]) === 'string');
    if (holders.length !== 1) return undefined;
    const value = attributeValue({ value: holders[0].output(remote[1]) }, 'value', holders[0], documents, depth + 1);
    return value?.unresolved === undefined ? value?.value : undefined;
  }
  const reference = /^([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.([a-z0-9_]+)$/.exec(traversal);
  if (!reference) return undefined;
  const target: FinalResource | undefined = doc.resource(reference[1], reference[2]);
  if (!target) return undefined;
  // A reference the engine orders the object after, whatever its value turns out to be.
  references?.add(`${target.type}.${target.name}`);
  const followed = attributeValue(target.body, reference[3], doc, documents, depth + 1, references);
  if (followed !== undefined) return followed.unresolved === undefined ? followed.value : undefined;
  // An attribute the provider computes from configured ones (a mount's `path` defaults to its type): the target's catalogue entry knows it.
  const kind = storeObjectKind(target.type);
  if (kind === undefined) return undefined;
  const targetFields: Record<string, unknown> = {};
  for (const field of kind.identityFields) {
    const v = attributeValue(target.body, field, doc, documents, depth + 1, references);
    if (v?.unresolved !== undefined) return undefined;
    targetFields[field] = v?.value;
  }
  return kind.derivedAttribute(targetFields, reference[3]) ?? undefined;
}
