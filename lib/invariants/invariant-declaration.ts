import { RulePath } from '../acl/rule-path';
import { ValidationProblem } from '../model/validation-problem';
import { AccessInvariant, INVARIANT_CAPABILITY_WORDS, OTHER_APPLICATIONS } from './access-invariant';
import { IDENTITY_KINDS } from './identity-kind';
import { IdentitySelector, MAX_NAME_PATTERN_LENGTH } from './identity-selector';
import { canonicalStoreNamespace, storeNamespaceProblems } from '../model/store-namespace';

/** Invariants read from a declaration, with every problem found in it. */
export interface InvariantDeclaration {
  /** The invariants without a problem, in the order declared. */
  readonly invariants: readonly AccessInvariant[];
  /** Every problem, naming the field (`invariants[2].paths[0]`). */
  readonly problems: readonly ValidationProblem[];
}

const INVARIANT_KEYS = new Set(['id', 'reason', 'who', 'except', 'paths', 'capabilities']);
const SELECTOR_KEYS = new Set(['kind', 'name', 'namespace']);
const ID = /^[a-z0-9][a-z0-9._-]*$/;

/** The longest invariant path pattern (characters). */
export const MAX_INVARIANT_PATH_LENGTH = 1024;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads invariants from plain data (a parsed JSON or YAML file, or a construct's props): a list of
 * invariants, or an object whose `invariants` key holds one. Every problem is reported, none thrown.
 * @param field the name of the list in problems (`invariants`)
 */
export function readInvariantDeclaration(value: unknown, field = 'invariants'): InvariantDeclaration {
  const list = isRecord(value) && 'invariants' in value ? value.invariants : value;
  if (!Array.isArray(list)) return { invariants: [], problems: [new ValidationProblem(field, list, 'must be a list of invariants (each with id, reason, who, paths, capabilities)')] };
  const problems: ValidationProblem[] = [];
  const invariants: AccessInvariant[] = [];
  const ids = new Map<string, number>();
  list.forEach((item, i) => {
    const at = `${field}[${i}]`;
    const before = problems.length;
    const invariant = readInvariant(item, at, problems);
    if (invariant === undefined || problems.length > before) return;
    const first = ids.get(invariant.id);
    if (first !== undefined) {
      problems.push(new ValidationProblem(`${at}.id`, invariant.id, `is already the id of ${field}[${first}]: invariant ids are unique`));
      return;
    }
    ids.set(invariant.id, i);
    invariants.push(invariant);
  });
  return { invariants, problems };
}

function readInvariant(item: unknown, at: string, problems: ValidationProblem[]): AccessInvariant | undefined {
  if (!isRecord(item)) {
    problems.push(new ValidationProblem(at, item, 'must be an object with id, reason, who, paths, capabilities'));
    return undefined;
  }
  for (const key of Object.keys(item)) {
    if (!INVARIANT_KEYS.has(key)) problems.push(new ValidationProblem(`${at}.${key}`, item[key], `is not a field of an invariant (${[...INVARIANT_KEYS].join(', ')})`));
  }
  const id = item.id;
  if (typeof id !== 'string' || !ID.test(id)) problems.push(new ValidationProblem(`${at}.id`, id, 'must be lower-case letters, digits, ".", "_" and "-", starting with a letter or digit'));
  const reason = item.reason;
  if (typeof reason !== 'string' || reason.trim() === '') problems.push(new ValidationProblem(`${at}.reason`, reason, 'must say why the invariant holds (non-empty text)'));
  const who = readSelector(item.who, `${at}.who`, problems);
  let except: IdentitySelector[] | undefined;
  if (item.except !== undefined) {
    if (!Array.isArray(item.except)) problems.push(new ValidationProblem(`${at}.except`, item.except, 'must be a list of identity selectors ({ kind, name })'));
    else except = item.except.map((s, j) => readSelector(s, `${at}.except[${j}]`, problems)).filter((s): s is IdentitySelector => s !== undefined);
  }
  const paths = stringList(item.paths, `${at}.paths`, 'ACL path patterns', problems);
  paths.forEach((p, j) => {
    if (p.startsWith('@')) {
      if (p !== OTHER_APPLICATIONS) problems.push(new ValidationProblem(`${at}.paths[${j}]`, p, `is not a path word: the only one is "${OTHER_APPLICATIONS}" (every other application's own paths)`));
      return;
    }
    if (p.length > MAX_INVARIANT_PATH_LENGTH) {
      problems.push(new ValidationProblem(`${at}.paths[${j}]`, `${p.slice(0, 40)}...`, `is ${p.length} characters long: an invariant path has at most ${MAX_INVARIANT_PATH_LENGTH}`));
      return;
    }
    try {
      RulePath.parse(p);
    } catch (error) {
      problems.push(new ValidationProblem(`${at}.paths[${j}]`, p, `is not an ACL path the store accepts: ${(error as Error).message}`));
    }
  });
  const capabilities = stringList(item.capabilities, `${at}.capabilities`, 'capability words', problems);
  capabilities.forEach((c, j) => {
    if (!INVARIANT_CAPABILITY_WORDS.includes(c)) problems.push(new ValidationProblem(`${at}.capabilities[${j}]`, c, `is not a capability an invariant forbids: use ${INVARIANT_CAPABILITY_WORDS.join(', ')}`));
  });
  if (typeof id !== 'string' || typeof reason !== 'string' || who === undefined) return undefined;
  return { id, reason: reason.trim(), who, ...(except !== undefined ? { except } : {}), paths, capabilities };
}

function readSelector(value: unknown, at: string, problems: ValidationProblem[]): IdentitySelector | undefined {
  const kinds = ['any', ...IDENTITY_KINDS];
  // A bare kind is the short form: `who: ci`.
  const selector = typeof value === 'string' ? { kind: value } : value;
  if (!isRecord(selector)) {
    problems.push(new ValidationProblem(at, value, `must be a kind (${kinds.join(', ')}) or an object { kind, name, namespace }`));
    return undefined;
  }
  for (const key of Object.keys(selector)) {
    if (!SELECTOR_KEYS.has(key)) problems.push(new ValidationProblem(`${at}.${key}`, selector[key], 'is not a field of an identity selector (kind, name, namespace)'));
  }
  const kind = selector.kind ?? 'any';
  if (typeof kind !== 'string' || !kinds.includes(kind)) {
    problems.push(new ValidationProblem(`${at}.kind`, kind, `must be one of ${kinds.join(', ')}`));
    return undefined;
  }
  const name = selector.name;
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    problems.push(new ValidationProblem(`${at}.name`, name, 'must be a name pattern (`*` for any characters), e.g. "jwt/secretstore-iac-pipeline"'));
    return undefined;
  }
  if (name !== undefined && name.length > MAX_NAME_PATTERN_LENGTH) {
    problems.push(new ValidationProblem(`${at}.name`, `${name.slice(0, 40)}...`, `is ${name.length} characters long: a name pattern has at most ${MAX_NAME_PATTERN_LENGTH}`));
    return undefined;
  }
  const namespace = selector.namespace;
  if (namespace !== undefined && typeof namespace !== 'string') {
    problems.push(new ValidationProblem(`${at}.namespace`, namespace, 'must be a store namespace ("ns1", "team/ns2"; "" the root namespace)'));
    return undefined;
  }
  if (namespace !== undefined && namespace !== '') {
    const found = storeNamespaceProblems(`${at}.namespace`, namespace);
    if (found.length > 0) {
      problems.push(...found);
      return undefined;
    }
  }
  return { kind: kind as IdentitySelector['kind'], ...(name !== undefined ? { name } : {}), ...(namespace !== undefined ? { namespace: canonicalStoreNamespace(namespace) } : {}) };
}

function stringList(value: unknown, at: string, what: string, problems: ValidationProblem[]): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string' || v === '')) {
    problems.push(new ValidationProblem(at, value, `must be a non-empty list of ${what}`));
    return [];
  }
  return value as string[];
}
