import { RuleKind } from '../acl/rule-path';
import { StoreCapability } from '../acl/store-capability';
import { AuthMethod, BindingValue } from './identity';

/** What changed on one path pattern of one identity. */
export interface RuleChange {
  /** The pattern (`secret/data/app/*`). */
  readonly path: string;
  /** How the pattern matches. */
  readonly kind: RuleKind;
  /** Capabilities before (empty when the pattern was absent). */
  readonly before: readonly StoreCapability[];
  /** Capabilities after (empty when the pattern is gone). */
  readonly after: readonly StoreCapability[];
  /** In `after`, not in `before`. */
  readonly gained: readonly StoreCapability[];
  /** In `before`, not in `after`. */
  readonly lost: readonly StoreCapability[];
  /** True when the pattern is new (an empty new rule still shadows broader ones). */
  readonly added: boolean;
  /** True when the pattern is gone. */
  readonly removed: boolean;
}

/** A binding whose value changed (`undefined` for unset). */
export interface BindingChange {
  /** The provider's field name. */
  readonly field: string;
  /** Value in base. */
  readonly before?: BindingValue;
  /** Value in head. */
  readonly after?: BindingValue;
}

/** An identity present on both sides whose access or bindings changed. */
export interface IdentityChange {
  /** Identity name. */
  readonly name: string;
  /** Its store namespace; absent for the root namespace. */
  readonly namespace?: string;
  /** Auth method. */
  readonly method: AuthMethod;
  /** Rule changes sorted by path; rules of the built-in `default` policy are left out. */
  readonly rules: readonly RuleChange[];
  /** Binding changes sorted by field, `token_policies` and `token_no_default_policy` included. */
  readonly bindings: readonly BindingChange[];
}
