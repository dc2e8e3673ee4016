import { CATALOGUED_RESOURCE_TYPES, storeObjectKind } from '../catalogue/store-object-catalogue';
import type { StoreObjectKindName } from '../catalogue/store-object-kind';
import { ReferenceResolver } from '../sources/terraform-reference';
import { compareStrings } from '../private/compare-strings';
import { readSynthOutput, sameDocument, SynthStack } from '../sources/synth-output';
import { isMetaArgument } from '../sources/terraform-meta-arguments';

/** Kinds of store object a stack declares (the catalogue's kinds). */
export type DeclaredObjectKind = StoreObjectKindName;

/** One store object declared by a stack resource, with how the engine imports it. */
export interface DeclaredObject {
  /** Declaring stack. */
  readonly stack: string;
  /** Resource address in the stack (`vault_policy.registry-ci_policy_FD942459`). */
  readonly address: string;
  /** Provider resource type. */
  readonly type: string;
  /** What it is. */
  readonly kind: DeclaredObjectKind;
  /** Where it lives on the store (`sys/auth/jwt`, `auth/jwt/role/registry-ci`, `sys/policies/acl/registry-ci`). */
  readonly storePath: string;
  /** The id `terraform import` / an `import` block takes for this resource type. */
  readonly importId: string;
  /** Mount path (mounts and roles). */
  readonly mount?: string;
  /** Role or policy name, or the mount path for mounts. */
  readonly name: string;
  /** Configured attributes, references resolved. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Construct path, when recorded. */
  readonly declaredAt?: string;
}

/**
 * Where an object of a resource type lives on the store and how it is imported, from its
 * attributes (a stack's resolved fields, or a plan's `before` values); undefined for a type the
 * reconciliation does not know.
 */
export function locateStoreObject(type: string, fields: Readonly<Record<string, unknown>>): { kind: DeclaredObjectKind; storePath: string; importId: string } | undefined {
  const entry = storeObjectKind(type);
  if (entry === undefined) return undefined;
  const { storePath, importId } = entry.locate(fields);
  return { kind: entry.kind, storePath, importId };
}

/** Resource types whose objects the reconciliation knows, sorted: the catalogue's. */
export const RECONCILED_TYPES: readonly string[] = CATALOGUED_RESOURCE_TYPES;

/**
 * The store objects a synthesized output declares (mounts, JWT mounts, roles, policies), sorted
 * by stack and resource address; only `stack` when given.
 * @throws Error naming the stack when `stack` is not in the output, or a reference cannot be resolved
 */
export function readDeclaredObjects(dir: string, stack?: string): DeclaredObject[] {
  return declaredObjectsOf(readSynthOutput(dir), dir, stack);
}

/**
 * {@link readDeclaredObjects} of an output already read (`readSynthOutput(dir)`): a command that
 * needs the output for more than its objects parses each stack's JSON once. With `earlier` (the
 * objects of another output, read before it: `readSynthOutput(dir, earlier.stacks)`), a stack that is
 * the same document as the earlier one ({@link sameDocument}) declares the same objects: they are
 * taken from `earlier`, not resolved again (an object is a function of its stack's name and bytes).
 * @throws Error naming the stack when `stack` is not in the output, or a reference cannot be resolved
 */
export function declaredObjectsOf(
  stacks: readonly SynthStack[],
  dir: string,
  stack?: string,
  earlier?: { readonly stacks: readonly SynthStack[]; readonly objects: readonly DeclaredObject[] },
): DeclaredObject[] {
  if (stack !== undefined && !stacks.some((s) => s.name === stack)) {
    throw new Error(`no stack "${stack}" in ${dir}: it has ${stacks.map((s) => s.name).join(', ') || 'no stacks'}`);
  }
  const earlierStacks = new Map((earlier?.stacks ?? []).map((s) => [s.name, s]));
  const earlierObjects = new Map<string, DeclaredObject[]>();
  for (const o of earlier?.objects ?? []) (earlierObjects.get(o.stack) ?? earlierObjects.set(o.stack, []).get(o.stack)!).push(o);
  const out: DeclaredObject[] = [];
  for (const s of stacks) {
    if (stack !== undefined && s.name !== stack) continue;
    const before = earlierStacks.get(s.name);
    if (before !== undefined && sameDocument(before, s)) {
      out.push(...(earlierObjects.get(s.name) ?? []));
      continue;
    }
    const resolver = new ReferenceResolver(s);
    for (const type of RECONCILED_TYPES) {
      for (const [id, block] of Object.entries(s.resources[type] ?? {})) {
        const address = `${type}.${id}`;
        const fields = Object.fromEntries(
          Object.entries(block)
            // Write-only attributes (`oidc_client_secret_wo`) name an ephemeral variable: the
            // store never returns them, so there is nothing to compare or import. Meta-arguments
            // (`depends_on` the stack's grant) are the engine's, not the object's.
            .filter(([k]) => k !== '//' && !k.endsWith('_wo') && !isMetaArgument(k))
            .map(([k, v]) => [k, resolver.resolve(v, `${address}.${k}`)]),
        );
        const meta = block['//'] as { metadata?: { path?: unknown } } | undefined;
        const entry = storeObjectKind(type)!;
        out.push({
          stack: s.name,
          address,
          type,
          kind: entry.kind,
          ...entry.locate(fields),
          fields,
          declaredAt: typeof meta?.metadata?.path === 'string' ? meta.metadata.path : undefined,
        });
      }
    }
  }
  return out.sort((a, b) => compareStrings(a.stack, b.stack) || compareStrings(a.address, b.address));
}
