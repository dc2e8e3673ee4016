import { createHash } from 'crypto';
import { ref, TerraformOutput, TerraformStack, Token, Tokenization } from '../framework/framework';
import { stackElements } from '../framework/stack-elements';

/** Version of the render key's encoding: a key of another encoding never matches. */
const ENCODING = 1;

/** The marker cdktf puts in a value that stands for a token (`${TfToken[TOKEN.1]}`, `#{TfToken[`, `&{TfToken[`). */
const TOKEN_MARKER = ((sample: string) => sample.slice(2, sample.indexOf('[') + 1))(Token.asString({ resolve: () => '', creationStack: [], toString: () => '' }));
/** The prototype of cdktf's references to an attribute (`ref()`), the one kind of token a key names. */
const REFERENCE = Object.getPrototypeOf(ref('secretstore_iac.render_key.probe'));

/** A value the key cannot name: the stack is rendered. */
class Unnamed extends Error {}

interface ReferenceToken {
  readonly identifier: string;
  readonly originStack?: TerraformStack;
  readonly crossStackIdentifier: Record<string, string>;
}


/**
 * The render key of a stack: SHA-256 over everything cdktf's `TerraformStack.toTerraform()` derives
 * the stack's `cdk.tf.json` from, taken just before it would: the stack's id, its cdktf version and
 * its overrides, and for each element in cdktf's order its path, its unique id, whether it is an
 * output, its metadata and its Terraform fragment (`toMetadata()`, `toTerraform()`: every attribute,
 * meta-argument and override of the element, as the element hands them to token resolution). After
 * these, only cdktf's token resolution and its JSON writer touch the stack, both fixed by the cdktf
 * version; so two stacks of the same key render to the same bytes (the library's version joins the
 * key too: {@link IncrementalSynthesis}).
 *
 * The values are encoded with their types (a string, a number, `null`, `undefined`, an array, an
 * object's keys and values in order), so no two different inputs share an encoding. A token is
 * named only when it is a reference to an attribute (`${vault_policy.x.name}`): by its identifier,
 * the stack it points into and, when that is another stack, the remote-state output cdktf resolves
 * it to here (itself a token, named the same way). Any other token (a lazy value, a function call,
 * an iterator), an object that is not plain data or a value that looks like a token but is none
 * cannot be named: the key is undefined and the stack is rendered, never reused. Tags are letters
 * and lengths digits, so the stream of values decodes one way only.
 * @returns `sha256:` and 64 hex digits, or undefined when the stack holds a value the key cannot name
 */
export function stackRenderKey(stack: TerraformStack, salt: readonly string[]): string | undefined {
  const hash = createHash('sha256');
  const stackName = stack.toString();
  // Each value as its tag, its length and its text; hashed in chunks of about 64 KiB (one hash update
  // per value costs more than the encoding; one concatenated string costs less than an array joined).
  let chunk = '';
  const write = (tag: string, text: string): void => {
    chunk += tag + text.length + ':' + text;
    if (chunk.length > 65536) {
      hash.update(chunk);
      chunk = '';
    }
  };
  // Names and paths are written as they are: one that holds a token marker cannot be named.
  const name = (tag: string, text: string): void => {
    if (text.includes(TOKEN_MARKER)) throw new Unnamed();
    write(tag, text);
  };
  const reference = (token: unknown): void => {
    if (token === null || typeof token !== 'object' || Object.getPrototypeOf(token) !== REFERENCE) throw new Unnamed();
    const r = token as ReferenceToken;
    if (typeof r.identifier !== 'string') throw new Unnamed();
    name('r', r.identifier);
    name('o', r.originStack === undefined || r.originStack === stack ? '' : r.originStack.node.path);
    // Resolved here, a reference into another stack is cdktf's remote-state output: itself a token, named as one (or not at all).
    write('x', '');
    text(r.crossStackIdentifier?.[stackName] ?? '');
  };
  function text(s: string): void {
    if (!s.includes(TOKEN_MARKER)) return write('s', s);
    const fragments = Tokenization.reverseString(s);
    // A marker that is no string token (a list or map token's, or a literal one) cannot be named.
    if (fragments.tokens.length === 0) throw new Unnamed();
    write('t', String(fragments.length));
    // Fragments in order: literal text, or a reference (the concatenation is cdktf's, fixed by its version).
    for (const f of (fragments as unknown as { fragments: readonly { type: string; lit?: unknown; token?: unknown }[] }).fragments) {
      if (f.type === 'literal' && typeof f.lit === 'string' && !f.lit.includes(TOKEN_MARKER)) write('l', f.lit);
      else if (f.type === 'token') reference(f.token);
      else throw new Unnamed();
    }
  }
  const value = (v: unknown): void => {
    if (v === undefined) return write('u', '');
    if (v === null) return write('n', '');
    switch (typeof v) {
      case 'string':
        return text(v);
      case 'boolean':
        return write('b', String(v));
      case 'number':
        if (Token.isUnresolved(v)) return reference(Tokenization.reverseNumber(v));
        return write('d', Object.is(v, -0) ? '-0' : String(v));
      case 'object':
        break;
      default:
        throw new Unnamed();
    }
    if (Array.isArray(v)) {
      write('a', String(v.length));
      // A hole is not undefined to the resolver: refused rather than guessed.
      for (let i = 0; i < v.length; i++) {
        if (!(i in v)) throw new Unnamed();
        value(v[i]);
      }
      return;
    }
    if (Tokenization.isResolvable(v)) return reference(v);
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) throw new Unnamed();
    const keys = Object.keys(v as object);
    write('m', String(keys.length));
    for (const k of keys) {
      name('k', k);
      value((v as Record<string, unknown>)[k]);
    }
  };
  try {
    write('v', String(ENCODING));
    salt.forEach((s) => name('salt', s));
    name('stack', stack.node.path);
    const internals = stack as unknown as { cdktfVersion: unknown; rawOverrides: unknown };
    value(internals.cdktfVersion);
    value(internals.rawOverrides);
    const elements = stackElements(stack);
    write('elements', String(elements.length));
    for (const e of elements) {
      name('path', e.node.path);
      name('id', e.friendlyUniqueId);
      write('output', String(TerraformOutput.isTerraformOutput(e)));
      value(e.toMetadata());
      value(e.toTerraform());
    }
  } catch (e) {
    if (e instanceof Unnamed) return undefined;
    throw e;
  }
  hash.update(chunk);
  return `sha256:${hash.digest('hex')}`;
}
