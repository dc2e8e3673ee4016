import { ValidationProblem } from './validation-problem';
import { goLowerCase } from './go-unicode';

/** Names the stores reserve at the top of a namespace path (they are API prefixes of every namespace). */
const RESERVED_SEGMENTS = ['root', 'sys', 'audit', 'auth', 'cubbyhole', 'identity'];

/** One namespace name: letters, digits, `_` and `-`, starting with a letter or digit. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * A store namespace (OpenBao namespaces, Vault Enterprise and HCP Vault's `admin`) as the stores
 * canonicalise it: surrounding slashes removed (`/admin/team/` is `admin/team`); `''` for the root
 * namespace.
 */
export function canonicalStoreNamespace(value: string): string {
  return value.trim().replace(/^\/+|\/+$/g, '');
}

/**
 * The problems of a declared namespace: empty, a segment that is not a plain name (`..`, spaces,
 * `*`), or one the stores reserve. The value is checked as given, before canonicalisation, so a
 * namespace that only differs by slashes from the one the tools use is the same namespace.
 */
export function storeNamespaceProblems(field: string, value: string): ValidationProblem[] {
  const canonical = canonicalStoreNamespace(value);
  if (canonical === '') {
    return [new ValidationProblem(field, value, 'must name a namespace (`admin`, `admin/team`); leave it out for the root namespace')];
  }
  const problems: ValidationProblem[] = [];
  for (const segment of canonical.split('/')) {
    if (!SEGMENT.test(segment)) {
      problems.push(new ValidationProblem(field, value, `"${segment}" is not a namespace name: letters, digits, "_" and "-", separated by "/"`));
    } else if (RESERVED_SEGMENTS.includes(goLowerCase(segment))) {
      problems.push(new ValidationProblem(field, value, `"${segment}" is reserved by the store (${RESERVED_SEGMENTS.join(', ')}) and cannot name a namespace`));
    }
  }
  return problems;
}

/**
 * The path a request made in namespace `requested` is checked at by the policies of a token of
 * namespace `token`, as the store checks it (OpenBao prefixes each policy's paths with its
 * namespace and the request's path with the request's namespace): the path itself in the same
 * namespace, the child namespaces' path in front of it for a token of an ancestor namespace;
 * undefined when the token's namespace is neither (the store refuses the token there).
 */
export function pathSeenFrom(token: string, requested: string, path: string): string | undefined {
  if (token === requested) return path;
  if (token === '') return `${requested}/${path}`;
  return requested.startsWith(`${token}/`) ? `${requested.slice(token.length + 1)}/${path}` : undefined;
}
