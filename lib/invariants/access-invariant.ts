import { StoreCapability, capabilitiesOf } from '../acl/store-capability';
import { StoreKind } from '../model/store-target';
import { IdentitySelector } from './identity-selector';

/**
 * The capability words an invariant may forbid: each store capability but `deny` (forbidding a
 * deny means nothing), and `write`, which stands for `create`, `update` and `patch`.
 */
export const INVARIANT_CAPABILITY_WORDS: readonly string[] = ['read', 'write', 'create', 'update', 'patch', 'delete', 'list', 'scan', 'sudo', 'subscribe', 'recover'];

/**
 * The path word of "no application reads another application's paths": for each identity the
 * invariant selects, the own secret paths of every other application (`InvariantSubject.ownPaths`).
 */
export const OTHER_APPLICATIONS = '@other-applications';

/** The capabilities `write` stands for. */
const WRITE: readonly StoreCapability[] = ['create', 'update', 'patch'];

/**
 * A statement of access that must never be granted, declared by a security team: the identities
 * it selects ({@link who}, minus {@link except}) hold none of {@link capabilities} on any request
 * path matched by one of {@link paths}. "Only the pipeline's apply role writes `sys/policies/acl/*`"
 * is `who: any`, `except: [the apply role]`, `capabilities: [write]`.
 */
export interface AccessInvariant {
  /** A stable id, named by every violation (`no-ci-reads-prod`). */
  readonly id: string;
  /** Why it holds, in one sentence: shown with every violation. */
  readonly reason: string;
  /** The identities it speaks of. */
  readonly who: IdentitySelector;
  /** Identities it does not speak of (the "only X" of an invariant). */
  readonly except?: readonly IdentitySelector[];
  /**
   * ACL path patterns, with the store's glob semantics (a trailing `*` is a string prefix, `+` one
   * segment): `secret/data/+/prod/*`; or `@other-applications` ({@link OTHER_APPLICATIONS}).
   */
  readonly paths: readonly string[];
  /** Capability words ({@link INVARIANT_CAPABILITY_WORDS}). */
  readonly capabilities: readonly string[];
}

/**
 * The store capabilities an invariant forbids on the store `kind`: `write` expanded, and words the
 * store does not know left out (none of its tokens can hold them).
 */
export function forbiddenCapabilities(invariant: AccessInvariant, kind: StoreKind): StoreCapability[] {
  const words = new Set(invariant.capabilities.flatMap((w) => (w === 'write' ? WRITE : [w as StoreCapability])));
  return [...words].filter((c) => c !== 'deny' && capabilitiesOf(kind).has(c));
}
