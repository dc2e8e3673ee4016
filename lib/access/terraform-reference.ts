import { ResourceBlock, SynthStack } from './synth-output';

/** `${type.id.attribute}`, the only expression form the access analysis resolves. */
const REFERENCE = /\$\{([^}]*)\}/g;
const SIMPLE = /^([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.([a-z0-9_]+)$/;

/**
 * Attributes the provider computes from configured ones, for the resources whose identity the
 * analysis needs: a policy's id is its name, an auth mount's id its path, and a mount's path
 * defaults to its type (`jwt` for the JWT resource).
 */
const DERIVED: Readonly<Record<string, (block: ResourceBlock, attribute: string) => unknown>> = {
  vault_policy: (b, a) => (a === 'id' ? b.name : undefined),
  vault_jwt_auth_backend: (b, a) => (a === 'id' || a === 'path' ? (b.path ?? 'jwt') : undefined),
  vault_auth_backend: (b, a) => (a === 'id' || a === 'path' ? (b.path ?? b.type) : undefined),
};

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

  private resolveString(text: string, where: string, depth: number): unknown {
    const whole = /^\$\{([^}]*)\}$/.exec(text);
    if (whole) return this.resolve(this.lookup(whole[1], where), where, depth + 1);
    return text.replace(REFERENCE, (_m, expression: string) => {
      const value = this.resolve(this.lookup(expression, where), where, depth + 1);
      if (typeof value !== 'string' && typeof value !== 'number') {
        throw new Error(`${this.stack.name}: ${where}: "\${${expression}}" is not a string and cannot be spliced into text`);
      }
      return String(value);
    });
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
    const derived = DERIVED[type]?.(block, attribute);
    if (derived !== undefined) return derived;
    throw unresolvable(`${type}.${id} has no configured "${attribute}" (a value computed at apply time)`);
  }
}
