/**
 * Random ACLs and invariant paths for the exact invariant check's property tests (unit and store):
 * rule paths over a small alphabet (so that prefixes, `+` and `*` collide often), and rules placed
 * on a witness the checker reported (a `deny` on it, on a `+` or `*` generalisation of it, or a
 * narrower rule granting something else), which a check built on sample paths misses.
 */
import { Acl, ListLookup } from '../../../lib/acl/acl';
import { RulePath } from '../../../lib/acl/rule-path';
import { StoreCapability, capabilityMask } from '../../../lib/acl/store-capability';
import { SeededRandom } from '../seeded-random';

/** Segments rule paths are built of. */
const SEGMENTS = ['a', 'a', 'b', 'b', 'ab', '+', '+'];

/** A rule path of up to three segments, now and then ending in `*` (never `+*`, which stores refuse). */
export function randomRulePath(r: SeededRandom, root = ''): string {
  if (r.next() < 0.04) return `${root}*`;
  const parts = Array.from({ length: 1 + r.int(3) }, () => r.pick(SEGMENTS));
  let path = parts.join('/');
  if (r.next() < 0.45) path += parts[parts.length - 1] === '+' ? '/*' : r.next() < 0.3 ? '/*' : '*';
  return `${root}${path}`;
}

/** A rule: a path and its capabilities (`deny` alone, or some of `capabilities`). */
export interface RandomRule {
  readonly path: string;
  readonly capabilities: readonly string[];
}

/** A policy of 2 to 6 random rules, a fifth of them `deny`. */
export function randomRules(r: SeededRandom, capabilities: readonly string[], root = ''): RandomRule[] {
  const rules = new Map<string, RandomRule>();
  const n = 2 + r.int(5);
  while (rules.size < n) {
    const path = randomRulePath(r, root);
    rules.set(path, { path, capabilities: r.next() < 0.2 ? ['deny'] : someOf(r, capabilities) });
  }
  return [...rules.values()];
}

/**
 * A rule placed on a reported witness (a request path under `root`, without the trailing `/` of a
 * LIST): a `deny` on the path itself, on the path with one segment made `+`, on a prefix of it with
 * `*`, or a narrower rule there granting only one of `capabilities`.
 */
export function ruleOnWitness(r: SeededRandom, witness: string, capabilities: readonly string[], root = ''): RandomRule {
  const rest = witness.slice(root.length).replace(/\/$/, '');
  const parts = rest.split('/');
  let path: string;
  const shape = r.int(3);
  if (shape === 0) path = rest;
  else if (shape === 1) {
    const i = r.int(parts.length);
    path = parts.map((p, j) => (j === i ? '+' : p)).join('/');
  } else {
    const cut = 1 + r.int(rest.length);
    path = `${rest.slice(0, cut)}*`;
    if (path.includes('+*') || path.startsWith('+') && !path.startsWith('+/')) path = `${rest}*`;
  }
  if (path === '' || path.includes('//')) path = rest;
  return { path: `${root}${path}`, capabilities: r.next() < 0.6 ? ['deny'] : [r.pick(capabilities)] };
}

/** The ACL of one policy `p` holding `rules`, as the store builds a token's ACL from it. */
export function aclOf(rules: readonly RandomRule[], store: 'openbao' | 'vault' = 'openbao', listLookup: ListLookup = 'trimmed-first'): Acl {
  const policy = { name: 'p', syntax: 'library' as const, rules: rules.map((r) => ({ path: RulePath.parse(r.path), mask: capabilityMask(r.capabilities as StoreCapability[]), constraints: [] })) };
  return Acl.fromPolicies([policy], { store, listLookup });
}

function someOf(r: SeededRandom, items: readonly string[]): string[] {
  const some = items.filter(() => r.next() < 0.5);
  return some.length > 0 ? some : [r.pick(items)];
}

/**
 * True when `path` is clean: not empty, no leading `/`, no empty segment but a last one, no `.` or
 * `..` segment (what the store's HTTP server takes as written; others need `%2F` / `%2E`). Written
 * apart from the checker's automaton (`REQUEST_PATH_SHAPE`) on purpose.
 */
export function isCleanPath(path: string): boolean {
  if (path === '' || path.startsWith('/')) return false;
  const parts = path.split('/');
  return parts.every((p, i) => (i === parts.length - 1 ? p !== '.' && p !== '..' : p !== '' && p !== '.' && p !== '..'));
}

/**
 * The characters to build request paths of for a brute-force search over rules on `paths`: each
 * character the paths name but `+` and `*`, `/`, and one they do not name, standing for every other.
 */
export function requestAlphabet(paths: Iterable<string>): string[] {
  const named = new Set([...paths].flatMap((p) => [...p]).filter((c) => c !== '+' && c !== '*'));
  return [...new Set([...named, '/', [...'wxyzq'].find((c) => !named.has(c))!])];
}

/** Every request path of 1 to `maxLength` characters over `alphabet` after `prefix` (none starting with `/`, which the store strips), shortest first. */
export function* requestPaths(alphabet: readonly string[], maxLength: number, prefix = ''): Generator<string> {
  let level = [''];
  for (let n = 1; n <= maxLength; n++) {
    const next: string[] = [];
    for (const s of level) {
      for (const c of alphabet) {
        const t = s + c;
        if ((prefix + t).startsWith('/')) continue;
        next.push(t);
        yield prefix + t;
      }
    }
    level = next;
  }
}

/**
 * The URL path that makes the store's ACL see `path` as it is: each segment escaped, and `.`, `..`
 * and empty segments written with `%2E` and `%2F`, which the HTTP server does not clean away.
 */
export function urlPathOf(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment === '.' || segment === '..' ? segment.replace(/\./g, '%2E') : encodeURIComponent(segment)))
    .join('/')
    // An empty segment: the `/` before it written %2F, so that no `//` is left to clean.
    .replace(/\/(?=\/)/g, '%2F');
}
