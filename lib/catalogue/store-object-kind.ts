import { Capability } from '../model/capability';

/** What a store object is, in the words the reconciliation and the reports use. */
export type StoreObjectKindName = 'auth-mount' | 'jwt-auth-mount' | 'jwt-role' | 'approle-role' | 'policy';

/** Which of the configuration pipeline's roles asks: the merge-request role plans (reads), the default branch's applies. */
export type PipelineAccess = 'plan' | 'apply';

/** Where an object lives on the store and how the engine imports it. */
export interface StoreObjectLocation {
  /** Auth mount path, for mounts and roles (`approle`). */
  readonly mount?: string;
  /** Role or policy name as declared, or the mount path for mounts. */
  readonly name: string;
  /** The object's store API path (`sys/auth/jwt`, `auth/jwt/role/registry-ci`, `sys/policies/acl/registry-ci`). */
  readonly storePath: string;
  /** The id an `import` block (or `terraform import`) takes for this resource type. */
  readonly importId: string;
}

/**
 * The name space an object's name lives in, and its name as the store compares it: two objects with
 * the same space and key are one object on the store (the later write replaces the earlier).
 */
export interface StoreObjectName {
  /** The space (`policy`, `role of auth/approle`, `auth mount`): names are unique within it. */
  readonly space: string;
  /** The name normalised as the store normalises it (policy names trimmed and lower-cased, ...). */
  readonly key: string;
}

/** One ACL rule: a store API path (or pattern) and its capabilities. */
export interface StoreAccessRule {
  /** Store API path or ACL pattern (`auth/approle/role/billing-dev`, `auth/+/role`). */
  readonly path: string;
  /** Capabilities on it. */
  readonly capabilities: readonly Capability[];
}

/**
 * One kind of store object the library can synthesize, keyed by its provider resource type: the one
 * place that knows where such an object lives, which names it shares, what replaces it, how it is
 * imported, what the pipeline needs to plan and apply it, and what a reader needs to see it. Every
 * cross-cutting list (name uniqueness, the pipeline's grants, the takeover guard, the readers) is
 * derived from these entries and the resources a synthesis declares, never kept beside them.
 *
 * The functions take an object's attributes as the synthesized Terraform JSON has them, references
 * resolved (`backend: "approle"`, not `${vault_auth_backend...path}`): the construct tree at
 * synthesis and the synthesized output on disk both give them.
 */
export interface StoreObjectKind {
  /** The vault provider's resource type (`vault_policy`). */
  readonly resourceType: string;
  /** What it is. */
  readonly kind: StoreObjectKindName;
  /** One line for reports and errors (`an ACL policy`). */
  readonly description: string;
  /** The attributes that identify the object on the store: what must be known to locate it. */
  readonly identityFields: readonly string[];
  /** Attributes whose change makes the provider replace the object (destroy, then create). */
  readonly replacedWhenChanged: readonly string[];
  /**
   * True when the store writes such an object in place, so that creating one the store already has
   * takes it over silently (roles, policies). A mount is refused when its path is in use: creating
   * one over an existing mount fails at apply instead, after the objects before it were written.
   */
  readonly writtenInPlace: boolean;
  /** Where the object lives and how it is imported. */
  locate(fields: Readonly<Record<string, unknown>>): StoreObjectLocation;
  /** Its name space and its name as the store compares it. */
  name(fields: Readonly<Record<string, unknown>>): StoreObjectName;
  /**
   * The attributes that carry the name as declared, the first one given wins (a mount's `path`, or
   * its `type` when no path is given): what a name finding shows as the declared value.
   */
  readonly nameFields: readonly string[];
  /** How the store compares names of this kind, in words for findings (`policy names are trimmed and lower-cased`). */
  readonly nameComparison: string;
  /**
   * An attribute the provider computes from configured ones (a policy's `id` is its name, a mount's
   * `path` defaults to its type), for resolving a reference to it offline; undefined when it is not
   * known before apply.
   */
  derivedAttribute(fields: Readonly<Record<string, unknown>>, attribute: string): unknown;
  /**
   * The ACL rules the configuration pipeline's role needs to plan (`plan`: read what the provider
   * reads, and what the takeover guard looks up) or apply (`apply`: also create, update, delete) this object.
   */
  pipelineRules(fields: Readonly<Record<string, unknown>>, access: PipelineAccess): StoreAccessRule[];
  /**
   * The rules the live-store reader (`drift`, `adopt`, `who-can live`) needs to see every object of
   * this kind, whatever its name: patterns, read and list only.
   */
  readonly readerRules: readonly StoreAccessRule[];
}

/** An attribute as a path segment: surrounding slashes removed (the store ignores them). */
export function mountPathOf(value: unknown, fallback: string): string {
  return String(value ?? fallback).replace(/^\/+|\/+$/g, '');
}

/** The name as declared: the first of `kind.nameFields` that `fields` has, with that field's name. */
export function declaredName(kind: StoreObjectKind, fields: Readonly<Record<string, unknown>>): { readonly field: string; readonly value: unknown } {
  const field = kind.nameFields.find((f) => fields[f] !== undefined) ?? kind.nameFields[0];
  return { field, value: fields[field] };
}

/** No attribute is known before apply beyond the configured ones. */
export const NO_DERIVED_ATTRIBUTE = (): undefined => undefined;

/** Read for `plan`, create/read/update/delete for `apply`. */
export function crudFor(access: PipelineAccess): Capability[] {
  return access === 'plan' ? ['read'] : ['create', 'read', 'update', 'delete'];
}

/**
 * LIST on the listing that names an object (names only, no secret), in both forms the stores look a
 * LIST up by (without the `/` before OpenBao 2.6.0 / Vault 2.0.3, with it from those): the takeover
 * guard of `tf --refuse-replace` finds an object the pipeline is about to create there, when its own
 * path is not readable yet (the grant to read it is applied by the same run).
 */
export function listingRules(listing: string): StoreAccessRule[] {
  return [
    { path: listing, capabilities: ['list'] },
    { path: `${listing}/`, capabilities: ['list'] },
  ];
}
