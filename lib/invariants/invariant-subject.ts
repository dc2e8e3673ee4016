import { Acl, AclRule } from '../acl/acl';
import { IdentityKind } from './identity-kind';

/** An identity an invariant is checked on: its name, its kind and the ACL of its tokens. */
export interface InvariantSubject {
  /** `<auth mount>/<role>` (what selectors match, in every namespace). */
  readonly name: string;
  /**
   * Its store namespace; absent for the root namespace. Its ACL's paths, the invariants' paths and
   * the applications' own paths it is checked against are that namespace's.
   */
  readonly namespace?: string;
  /** What it is. */
  readonly kind: IdentityKind;
  /** The ACL of its tokens, as the store builds it. */
  readonly acl: Acl;
  /** Where a rule of the ACL is declared (construct paths), when known: what a fix changes. */
  readonly declaredBy?: (rule: AclRule) => readonly string[];
  /**
   * For an application, the ACL path patterns of the secrets it owns (its secret read rules,
   * `isSecretReadRule`): what `@other-applications` covers for every other identity.
   */
  readonly ownPaths?: readonly string[];
}
