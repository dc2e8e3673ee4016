import { IConstruct } from 'constructs';
import { DefaultTokenResolver, StringConcat, TerraformBackend, TerraformElement, TerraformResource, TerraformStack, Tokenization } from '../framework/framework';
import { stackElements } from '../framework/stack-elements';
import { isInSynthesisRound, oncePerSynthesis } from './synthesis-round';

/** One `resource.<type>.<name>` block of a {@link FinalStackDocument}. */
export interface FinalResource {
  /** Provider resource type (`vault_policy`). */
  readonly type: string;
  /** Its name in the stack (`registry-ci_policy_FD942459`). */
  readonly name: string;
  /** The block the engine loads: every attribute after every override. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The construct that wrote it; undefined for a block only a stack override wrote. */
  readonly element?: TerraformResource;
  /** The construct path of {@link element}, else the stack's (for a block a stack override wrote). */
  readonly constructPath: string;
}

/** An element of a stack whose rendering threw. */
export interface UnrenderedElement {
  /** Its construct path. */
  readonly constructPath: string;
  /** The first line of the error. */
  readonly message: string;
}

/** How a stack's document is rendered, when not by its own `toTerraform()` (a SecretStoreStack's, which returns the document). */
const renderers = new WeakMap<TerraformStack, () => unknown>();

/**
 * Registers how `stack`'s document is rendered: the stack's `toTerraform()` itself returns
 * {@link FinalStackDocument.of}(stack).json, so that what cdktf writes is the document the rules read.
 */
export function renderFinalDocumentWith(stack: TerraformStack, render: () => unknown): void {
  renderers.set(stack, render);
}

/**
 * The Terraform JSON of one stack exactly as the engine loads it (`cdk.tf.json`): cdktf's
 * `toTerraform()` with every element's and the stack's `addOverride` applied, the backend a factory
 * or subclass wrote, the resources a stack override added. The platform rules read it (nothing a
 * configuration can write reaches the engine unread), and name the construct and the override that
 * produced each value they report.
 *
 * Rendered once per synthesis round, after every stack of the app is prepared (cdktf's cross-stack
 * references); a SecretStoreStack's `toTerraform()` returns this document, so the stack is rendered
 * once for the rules and the writing together.
 */
export class FinalStackDocument {
  /** The document of `stack`, rendered once per synthesis round (on every call outside one). */
  static of(stack: TerraformStack): FinalStackDocument {
    return oncePerSynthesis(stack, 'finalStackDocument', () => {
      // cdktf prepares every stack before it writes any: a reference to another stack becomes an output and a remote state then.
      if (isInSynthesisRound(stack)) prepareStacks(stack.node.root);
      const render = renderers.get(stack) ?? (() => stack.toTerraform());
      try {
        return new FinalStackDocument(stack, render() as Record<string, unknown>, []);
      } catch {
        // An element whose declarations are invalid may not render (their validations say why):
        // the rules still read every element that does, and nothing is written.
        const { json, unrendered } = renderElementByElement(stack);
        return new FinalStackDocument(stack, json, unrendered);
      }
    });
  }

  private resourceList?: readonly FinalResource[];
  private byAddress?: ReadonlyMap<string, FinalResource>;

  private constructor(
    /** The stack. */
    readonly stack: TerraformStack,
    /** The document, as written to `cdk.tf.json` (read it, never change it). */
    readonly json: Readonly<Record<string, unknown>>,
    /**
     * The elements that could not render (their declarations are invalid): the document is then
     * the other elements' only, read by the rules but never written.
     */
    readonly unrendered: readonly UnrenderedElement[],
  ) {}

  /** Every resource block, in the order of the constructs that wrote them (blocks only a stack override wrote last, by address). */
  get resources(): readonly FinalResource[] {
    if (this.resourceList === undefined) {
      const elements = new Map<string, { element: TerraformResource; order: number }>();
      stackElements(this.stack).forEach((e, order) => {
        if (TerraformResource.isTerraformResource(e)) elements.set(`${e.terraformResourceType}.${e.friendlyUniqueId}`, { element: e, order });
      });
      const list: { resource: FinalResource; order: number }[] = [];
      for (const [type, blocks] of Object.entries(objectAt(this.json, 'resource'))) {
        for (const [name, body] of Object.entries(asObject(blocks))) {
          const own = elements.get(`${type}.${name}`);
          list.push({
            resource: { type, name, body: asObject(body), ...(own ? { element: own.element } : {}), constructPath: own?.element.node.path ?? this.stack.node.path },
            order: own?.order ?? Number.MAX_SAFE_INTEGER,
          });
        }
      }
      this.resourceList = list.sort((a, b) => a.order - b.order).map((r) => r.resource);
    }
    return this.resourceList;
  }

  /** The block `resource.<type>.<name>`, if the document has it. */
  resource(type: string, name: string): FinalResource | undefined {
    this.byAddress ??= new Map(this.resources.map((r) => [`${r.type}.${r.name}`, r]));
    return this.byAddress.get(`${type}.${name}`);
  }

  /** The `provider.<type>` block a resource is written through: its `provider` (`vault.alias`), else the one without alias. */
  providerOf(resource: FinalResource, type = 'vault'): Readonly<Record<string, unknown>> | undefined {
    const given = typeof resource.body.provider === 'string' ? resource.body.provider : type;
    const [providerType, alias] = given.split('.');
    const blocks = objectAt(this.json, 'provider')[providerType];
    const list = (Array.isArray(blocks) ? blocks : blocks === undefined ? [] : [blocks]).map(asObject);
    return list.find((b) => (alias === undefined ? b.alias === undefined : b.alias === alias));
  }

  /** The value of output `name` (`cross-stack-output-...`), if the document has it. */
  output(name: string): unknown {
    return asObject(objectAt(this.json, 'output')[name]).value;
  }

  /**
   * The state backends the engine would use: the keys of `terraform.backend` (`local`, `pg`), and
   * `cloud` for a `terraform.cloud` block. Empty: none, and the engine keeps a local state file.
   */
  get backendTypes(): readonly string[] {
    const terraform = objectAt(this.json, 'terraform');
    return [...Object.keys(asObject(terraform.backend)), ...(terraform.cloud !== undefined ? ['cloud'] : [])];
  }

  /**
   * Which override set `attribute` of `resource` (or removed it), as a clause of a finding
   * (`set by addOverride('name', …) on user/innocent`); undefined when the construct wrote it itself.
   */
  overrideOf(resource: FinalResource, attribute: string): string | undefined {
    const clauses: string[] = [];
    if (resource.element !== undefined) {
      const own = rawOverrides(resource.element);
      if (Object.hasOwn(own, attribute)) clauses.push(`${own[attribute] === undefined ? 'removed' : 'set'} by addOverride('${attribute}', …) on ${resource.element.node.path}`);
    }
    const stackPath = stackOverridePath(rawOverrides(this.stack), ['resource', resource.type, resource.name, attribute]);
    if (stackPath !== undefined) clauses.push(`${resource.element === undefined ? 'written' : 'set'} by the stack override ${stackPath} on ${this.stack.node.path}`);
    return clauses.length === 0 ? undefined : clauses.join(', then ');
  }

  /**
   * Who wrote the stack's backend (`terraform.backend`, `terraform.cloud`), as a clause of a finding:
   * the stack overrides that reach it and the backend constructs of the stack
   * (`set by the stack override terraform.backend.local on ci-access`, `written by ci-access/backend (PgBackend)`).
   */
  get backendSource(): string {
    const clauses: string[] = [];
    for (const key of ['backend', 'cloud']) {
      const given = asObject(rawOverrides(this.stack).terraform);
      if (!Object.hasOwn(given, key)) continue;
      const inner = given[key];
      const names = inner !== null && typeof inner === 'object' && !Array.isArray(inner) && Object.keys(inner).length > 0 ? Object.keys(inner).map((k) => `terraform.${key}.${k}`) : [`terraform.${key}`];
      clauses.push(`set by the stack override ${names.join(', ')} on ${this.stack.node.path}`);
    }
    for (const e of stackElements(this.stack)) {
      if (TerraformBackend.isBackend(e)) {
        const own = Object.keys(rawOverrides(e));
        clauses.push(`written by ${e.node.path} (${e.constructor.name}${own.length > 0 ? `, with addOverride(${own.map((k) => `'${k}'`).join(', ')})` : ''})`);
      }
    }
    return clauses.length === 0 ? 'no backend declared (the engine keeps a local state file)' : clauses.join(', ');
  }
}

/** Prepares every stack of the app once per synthesis round, as cdktf does before writing any (a SecretStoreStack prepares itself once per round). */
function prepareStacks(root: IConstruct): void {
  oncePerSynthesis(root, 'preparedStacks', () => {
    for (const c of root.node.findAll()) if (TerraformStack.isStack(c)) c.prepareStack();
    return true;
  });
}

/** The resolver cdktf's own rendering uses (`cdktf/lib/_tokens.ts`), from its public API. */
const RESOLVER = new DefaultTokenResolver(new StringConcat());

/**
 * cdktf's `TerraformStack.toTerraform()` element by element (each element's fragment merged as cdktf
 * merges them, then the stack's overrides), leaving out the elements whose rendering throws.
 */
function renderElementByElement(stack: TerraformStack): { json: Record<string, unknown>; unrendered: UnrenderedElement[] } {
  const json: Record<string, unknown> = {};
  const unrendered: UnrenderedElement[] = [];
  const resolve = (value: unknown) => Tokenization.resolve(value, { scope: stack, preparing: false, resolver: RESOLVER }) as unknown;
  for (const e of stackElements(stack)) {
    try {
      mergeAsCdktf(json, resolve(e.toTerraform()));
    } catch (error) {
      unrendered.push({ constructPath: e.node.path, message: (error instanceof Error ? error.message : String(error)).split('\n')[0] });
    }
  }
  try {
    mergeAsCdktf(json, resolve(rawOverrides(stack)));
  } catch (error) {
    unrendered.push({ constructPath: stack.node.path, message: (error instanceof Error ? error.message : String(error)).split('\n')[0] });
  }
  return { json, unrendered };
}

/** cdktf's `deepMerge` (`cdktf/lib/util.ts`): blocks merged, arrays concatenated, `undefined` removes the key. */
function mergeAsCdktf(target: Record<string, unknown>, source: unknown): void {
  for (const [key, value] of Object.entries(asObject(source))) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      if (target[key] === null || typeof target[key] !== 'object') target[key] = {};
      mergeAsCdktf(target[key] as Record<string, unknown>, value);
    } else if (Array.isArray(value)) {
      target[key] = Array.isArray(target[key]) ? [...(target[key] as unknown[]), ...value] : value;
    } else if (value === undefined) {
      delete target[key];
    } else {
      target[key] = value;
    }
  }
}

/** cdktf's `rawOverrides` of an element or a stack (protected there): what `addOverride` recorded. */
function rawOverrides(c: TerraformElement | TerraformStack): Readonly<Record<string, unknown>> {
  return asObject((c as unknown as { rawOverrides?: unknown }).rawOverrides);
}

/** The dotted path of the stack override that reaches `path` (`resource.vault_policy.x.name`): the override of the path itself or of a value enclosing it. */
function stackOverridePath(overrides: Readonly<Record<string, unknown>>, path: readonly string[]): string | undefined {
  let at: unknown = overrides;
  for (let i = 0; i < path.length; i++) {
    const here = asObject(at);
    if (!Object.hasOwn(here, path[i])) return undefined;
    at = here[path[i]];
    if (i === path.length - 1 || at === null || typeof at !== 'object' || Array.isArray(at)) return path.slice(0, i + 1).join('.');
  }
  return undefined;
}

function objectAt(json: Readonly<Record<string, unknown>>, key: string): Readonly<Record<string, unknown>> {
  return asObject(json[key]);
}

function asObject(value: unknown): Readonly<Record<string, unknown>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
