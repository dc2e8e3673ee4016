import { IdentityKind } from './identity-kind';

/**
 * Which identities an invariant speaks of: a kind (or `any`) and, optionally, a name pattern on
 * the identity's name `<auth mount>/<role>` (`jwt/secretstore-iac-pipeline`), where `*` stands for
 * any run of characters, `/` included, and the store namespace the identity is in.
 */
export interface IdentitySelector {
  /** The kind of identity, or `any`. */
  readonly kind: IdentityKind | 'any';
  /** A pattern on the identity's name; every identity of the kind when absent. */
  readonly name?: string;
  /**
   * The store namespace the identity is in, canonical (`ns1`, `team/ns2`; `''` the root namespace):
   * `approle/app` of the root and of `ns1` are two identities of one name.
   * @default every namespace
   */
  readonly namespace?: string;
}

/** The longest name pattern a selector may have (characters): matching stays cheap whatever is written. */
export const MAX_NAME_PATTERN_LENGTH = 256;

/** True when `selector` selects the identity `name` of kind `kind` in the store namespace `namespace` (`''` the root). */
export function selects(selector: IdentitySelector, name: string, kind: IdentityKind, namespace = ''): boolean {
  if (selector.kind !== 'any' && selector.kind !== kind) return false;
  if (selector.namespace !== undefined && selector.namespace !== namespace) return false;
  return selector.name === undefined || nameMatches(selector.name, name);
}

/**
 * True when the whole of `name` matches `pattern` (`*` any run of characters, everything else
 * literal), without backtracking: the text between stars must appear in order, and taking each at
 * its leftmost place is always right, so each is looked for once (at most pattern × name steps,
 * however many stars).
 */
export function nameMatches(pattern: string, name: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === name;
  const head = parts[0];
  const tail = parts[parts.length - 1];
  if (head.length + tail.length > name.length || !name.startsWith(head) || !name.endsWith(tail)) return false;
  let at = head.length;
  const end = name.length - tail.length;
  for (const part of parts.slice(1, -1)) {
    if (part === '') continue;
    const found = name.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}
