import { IdentityKind } from './identity-kind';

/**
 * Which identities an invariant speaks of: a kind (or `any`) and, optionally, a name pattern on
 * the identity's name `<auth mount>/<role>` (`jwt/secretstore-iac-pipeline`), where `*` stands for
 * any run of characters, `/` included.
 */
export interface IdentitySelector {
  /** The kind of identity, or `any`. */
  readonly kind: IdentityKind | 'any';
  /** A pattern on the identity's name; every identity of the kind when absent. */
  readonly name?: string;
}

/** True when `selector` selects the identity `name` of kind `kind`. */
export function selects(selector: IdentitySelector, name: string, kind: IdentityKind): boolean {
  if (selector.kind !== 'any' && selector.kind !== kind) return false;
  return selector.name === undefined || namePattern(selector.name).test(name);
}

/** A name pattern as a whole-name regular expression: `*` any run of characters, everything else literal. */
function namePattern(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
}
