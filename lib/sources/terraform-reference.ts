import { SynthStack } from './synth-output';
import { storeObjectKind } from '../catalogue/store-object-catalogue';
import { evaluateTemplate } from './terraform-template';

const SIMPLE = /^([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.([a-z0-9_]+)$/;

/** One piece of a Terraform JSON string: literal text, or the expression of an interpolation `${...}`. */
export interface TemplatePart {
  /** The text, escapes `$${` and `%%{` already read as `${` and `%{`. */
  readonly literal: string;
  /** The expression between `${` and `}`, for an interpolation. */
  readonly expression?: string;
}

/**
 * Splits a Terraform JSON string the way the engine reads it: `$${` and `%%{` are the literal
 * `${` and `%{`, `${...}` is an interpolation, and `%{...}` a directive (which the library never
 * writes, and which is refused). The library writes every literal escaped (`terraformString`), so
 * its own output reads back as exactly the declared text.
 * @throws the error `fail` makes, for a directive or an unterminated interpolation
 */
export function templateParts(text: string, fail: (why: string) => Error): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literal = '';
  for (let i = 0; i < text.length; ) {
    const two = text.slice(i, i + 3);
    if (two === '$${' || two === '%%{') {
      literal += `${text[i]}{`;
      i += 3;
    } else if (two.startsWith('${')) {
      const end = text.indexOf('}', i + 2);
      if (end < 0) throw fail(`unterminated "\${" in ${JSON.stringify(text)}`);
      if (literal !== '') parts.push({ literal });
      literal = '';
      parts.push({ literal: '', expression: text.slice(i + 2, end) });
      i = end + 1;
    } else if (two.startsWith('%{')) {
      throw fail(`a template directive "%{" in ${JSON.stringify(text)}: the library never writes one; the text is not a literal`);
    } else {
      literal += text[i];
      i += 1;
    }
  }
  if (literal !== '' || parts.length === 0) parts.push({ literal });
  return parts;
}

/**
 * Resolves Terraform references in attribute values of one stack
 * (`"${vault_policy.registry-ci_policy_ABC123.name}"`) against the stack's own resources.
 */
export class ReferenceResolver {
  constructor(private readonly stack: SynthStack) {}

  /**
   * The value with every reference replaced: a string that is a single reference becomes the
   * referenced value itself; references inside longer strings are spliced in as text.
   * @param where what is being resolved, for the error message (`vault_jwt_auth_backend_role.x.backend`)
   * @throws Error naming `where` and the expression when a reference cannot be resolved offline
   */
  resolve(value: unknown, where: string, depth = 0): unknown {
    if (depth > 10) throw new Error(`${this.stack.name}: ${where}: references nest too deeply`);
    if (typeof value === 'string') return this.resolveString(value, where, depth);
    if (Array.isArray(value)) return value.map((v) => this.resolve(v, where, depth));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolve(v, where, depth)]));
    }
    return value;
  }

  /**
   * A string as the engine evaluates it ({@link evaluateTemplate}): references of the stack looked
   * up, expressions the library computes computed (`${lower("X")}`).
   */
  private resolveString(text: string, where: string, depth: number): unknown {
    const evaluated = evaluateTemplate(text, (traversal) => this.resolve(this.lookup(traversal, where), where, depth + 1));
    if (evaluated.unresolved !== undefined) throw new Error(`${this.stack.name}: ${where}: cannot resolve ${JSON.stringify(text)}: ${evaluated.unresolved}`);
    return evaluated.value;
  }

  private lookup(expression: string, where: string): unknown {
    const unresolvable = (why: string) =>
      new Error(`${this.stack.name}: ${where}: cannot resolve "\${${expression}}": ${why}`);
    const match = SIMPLE.exec(expression.trim());
    if (!match) throw unresolvable('only type.id.attribute references are resolved offline');
    const [, type, id, attribute] = match;
    const block = this.stack.resources[type]?.[id];
    if (!block) throw unresolvable(`no resource ${type}.${id} in stack ${this.stack.name}`);
    if (attribute in block && attribute !== '//') return block[attribute];
    // Attributes the provider computes from configured ones (a policy's id, a mount's default path): the catalogue knows them.
    const derived = storeObjectKind(type)?.derivedAttribute(block, attribute);
    if (derived !== undefined) return derived;
    throw unresolvable(`${type}.${id} has no configured "${attribute}" (a value computed at apply time)`);
  }
}
