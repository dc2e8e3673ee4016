/**
 * What the engine makes of a string of a Terraform JSON file, as far as it can be known before a
 * plan: every string value of `*.tf.json` is a template (docs/boundaries.md), so a name written
 * `${"registry-ci"}`, `${lower("REGISTRY-CI")}` or `${join("-", ["registry", "ci"])}` (what cdktf
 * writes for `Fn.lower`, `Fn.join`) is `registry-ci` on the store. The name rules compare what this
 * gives, and refuse a name whose text cannot be known here (SSI-R15).
 */

/** The value of a template, or why it cannot be known before the engine plans. */
export type TemplateValue = { readonly value: unknown; readonly unresolved?: undefined } | { readonly value?: undefined; readonly unresolved: string };

/**
 * Resolves a reference (`vault_auth_backend.approle_backend_1A2B3C4D.path`) to the value it has,
 * or undefined when it cannot be known before the engine plans.
 */
export type ReferenceLookup = (traversal: string) => unknown;

/** Why a template cannot be evaluated here: caught by {@link evaluateTemplate}, never seen outside. */
class Unresolved {
  constructor(readonly why: string) {}
}

/** A value inside an expression: text, or a tuple of values (`["registry", "ci"]`). */
type Value = unknown;

const WHITE = /[ \t\r\n]/;
const IDENTIFIER_START = /[A-Za-z_]/;
const IDENTIFIER = /[A-Za-z0-9_-]/;

/** Text the library can compute as the engine does: ASCII only (the engine's case mapping and trimming of other text follow Go's Unicode tables). */
function ascii(fn: string, text: string): string {
  if (!/^[\x00-\x7f]*$/.test(text)) throw new Unresolved(`${fn}() of text beyond ASCII is computed with the engine's Unicode tables, not known here`);
  return text;
}

function text(fn: string, v: Value): string {
  if (typeof v !== 'string') throw new Unresolved(`${fn}() of a value that is not text`);
  return v;
}

/** Terraform's string functions the library computes exactly, by name (cty's stdlib). */
const FUNCTIONS: Readonly<Record<string, (args: Value[]) => string>> = {
  lower: (a) => ascii('lower', text('lower', arity('lower', a, 1)[0])).toLowerCase(),
  upper: (a) => ascii('upper', text('upper', arity('upper', a, 1)[0])).toUpperCase(),
  trimspace: (a) => ascii('trimspace', text('trimspace', arity('trimspace', a, 1)[0])).replace(/^[\t\n\v\f\r ]+|[\t\n\v\f\r ]+$/g, ''),
  trimprefix: (a) => {
    const [s, p] = arity('trimprefix', a, 2).map((v) => text('trimprefix', v));
    return s.startsWith(p) ? s.slice(p.length) : s;
  },
  trimsuffix: (a) => {
    const [s, p] = arity('trimsuffix', a, 2).map((v) => text('trimsuffix', v));
    return p !== '' && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
  },
  replace: (a) => {
    const [s, sub, by] = arity('replace', a, 3).map((v) => text('replace', v));
    // `/.../` is a regular expression (RE2): not computed here.
    if (sub === '' || (sub.length > 1 && sub.startsWith('/') && sub.endsWith('/'))) throw new Unresolved('replace() with a regular expression or an empty search text is not computed here');
    return s.split(sub).join(by);
  },
  join: (a) => {
    if (a.length < 2) throw new Unresolved('join() takes a separator and at least one list');
    const sep = text('join', a[0]);
    return a
      .slice(1)
      .flatMap((list) => {
        if (!Array.isArray(list)) throw new Unresolved('join() of a value that is not a list');
        return list.map((v) => text('join', v));
      })
      .join(sep);
  },
  format: (a) => {
    if (a.length < 1) throw new Unresolved('format() takes a format');
    const spec = text('format', a[0]);
    const args = a.slice(1);
    let next = 0;
    const out = spec.replace(/%(.?)/g, (_, verb: string) => {
      if (verb === '%') return '%';
      if (verb !== 's') throw new Unresolved(`format() with the verb "%${verb}" is not computed here (only %s and %%)`);
      if (next >= args.length) throw new Unresolved('format() with fewer arguments than verbs');
      return text('format', args[next++]);
    });
    if (next !== args.length) throw new Unresolved('format() with more arguments than verbs');
    return out;
  },
};

function arity(fn: string, args: Value[], n: number): Value[] {
  if (args.length !== n) throw new Unresolved(`${fn}() takes ${n} argument${n === 1 ? '' : 's'}, given ${args.length}`);
  return args;
}

/** A reader of one template and the expressions in it (HCL's native syntax, the part the library evaluates). */
class TemplateReader {
  private i = 0;
  constructor(
    private readonly src: string,
    private readonly reference: ReferenceLookup,
  ) {}

  /** The whole source as a template: a lone interpolation keeps its value's type (HCL's rule). */
  whole(): Value {
    const parts = this.template(false);
    if (this.i !== this.src.length) throw new Unresolved('text after the end of the template');
    if (parts.length === 1 && parts[0].interpolated) return parts[0].value;
    return this.join(parts);
  }

  private join(parts: { value: Value; interpolated: boolean }[]): string {
    return parts
      .map((p) => {
        if (typeof p.value !== 'string') throw new Unresolved('a value that is not text spliced into text');
        return p.value;
      })
      .join('');
  }

  /** Template parts up to the end of the source, or up to the closing `"` of a quoted template. */
  private template(quoted: boolean): { value: Value; interpolated: boolean }[] {
    const parts: { value: Value; interpolated: boolean }[] = [];
    let literal = '';
    const flush = () => {
      if (literal !== '') parts.push({ value: literal, interpolated: false });
      literal = '';
    };
    for (;;) {
      if (this.i >= this.src.length) {
        if (quoted) throw new Unresolved('an unterminated quoted string');
        break;
      }
      const c = this.src[this.i];
      const three = this.src.slice(this.i, this.i + 3);
      if (quoted && c === '"') {
        this.i += 1;
        break;
      }
      if (three === '$${' || three === '%%{') {
        literal += `${c}{`;
        this.i += 3;
      } else if (three.startsWith('${')) {
        this.i += 2;
        if (this.src[this.i] === '~') throw new Unresolved('a "~" strip marker');
        flush();
        const value = this.expression();
        this.space();
        if (this.src[this.i] === '~') throw new Unresolved('a "~" strip marker');
        if (this.src[this.i] !== '}') throw new Unresolved('an interpolation the library does not evaluate (operators, conditionals, splats, ...)');
        this.i += 1;
        parts.push({ value, interpolated: true });
      } else if (three.startsWith('%{')) {
        throw new Unresolved('a template directive "%{"');
      } else if (quoted && c === '\\') {
        literal += this.escape();
      } else if (quoted && c === '\n') {
        throw new Unresolved('a line break in a quoted string');
      } else {
        literal += c;
        this.i += 1;
      }
    }
    flush();
    if (parts.length === 0) parts.push({ value: '', interpolated: false });
    return parts;
  }

  /** A backslash escape of a quoted string (`\n`, `\"`, `\u00e9`). */
  private escape(): string {
    const e = this.src[this.i + 1];
    const simple: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };
    if (e !== undefined && e in simple) {
      this.i += 2;
      return simple[e];
    }
    const digits = e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const hex = this.src.slice(this.i + 2, this.i + 2 + digits);
    if (digits > 0 && new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(hex)) {
      const code = parseInt(hex, 16);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw new Unresolved(`an invalid escape "\\${e}${hex}"`);
      this.i += 2 + digits;
      return String.fromCodePoint(code);
    }
    throw new Unresolved(`an invalid escape "\\${e ?? ''}" in a quoted string`);
  }

  private space(): void {
    while (this.i < this.src.length && WHITE.test(this.src[this.i])) this.i += 1;
  }

  /** One expression: a quoted string, a tuple, a parenthesised expression, a function call or a reference; nothing more. */
  private expression(): Value {
    this.space();
    const c = this.src[this.i];
    let value: Value;
    if (c === '"') {
      this.i += 1;
      value = this.join(this.template(true));
    } else if (c === '[') {
      this.i += 1;
      value = this.list(']');
    } else if (c === '(') {
      this.i += 1;
      value = this.expression();
      this.space();
      if (this.src[this.i] !== ')') throw new Unresolved('an expression the library does not evaluate in parentheses');
      this.i += 1;
    } else if (c !== undefined && IDENTIFIER_START.test(c)) {
      value = this.call();
    } else {
      throw new Unresolved(c === undefined ? 'an empty interpolation' : `an expression starting with ${JSON.stringify(c)} (numbers, operators, heredocs, ...)`);
    }
    this.space();
    const after = this.src[this.i];
    if (after !== undefined && !',)]}~'.includes(after) && !this.src.startsWith('...', this.i)) throw new Unresolved('an expression the library does not evaluate (operators, conditionals, indexes, ...)');
    return value;
  }

  /** Values up to `close`, separated by commas (a trailing comma allowed). */
  private list(close: string): Value[] {
    const values: Value[] = [];
    for (;;) {
      this.space();
      if (this.src[this.i] === close) {
        this.i += 1;
        return values;
      }
      if (this.src.startsWith('...', this.i)) throw new Unresolved('an argument expansion "..."');
      values.push(this.expression());
      this.space();
      if (this.src.startsWith('...', this.i)) throw new Unresolved('an argument expansion "..."');
      if (this.src[this.i] === ',') this.i += 1;
      else if (this.src[this.i] !== close) throw new Unresolved(`a list or argument list without its closing "${close}"`);
    }
  }

  /** A function call of {@link FUNCTIONS}, or a reference (`type.name.attribute`, `var.x`, `local.y`). */
  private call(): Value {
    const start = this.i;
    while (this.i < this.src.length && IDENTIFIER.test(this.src[this.i])) this.i += 1;
    const name = this.src.slice(start, this.i);
    if (this.src.startsWith('::', this.i)) throw new Unresolved('a provider-defined function');
    const save = this.i;
    this.space();
    if (this.src[this.i] === '(') {
      this.i += 1;
      const fn = FUNCTIONS[name];
      const args = this.list(')');
      if (fn === undefined) throw new Unresolved(`the function ${name}(), which the library does not compute`);
      return fn(args);
    }
    this.i = save;
    let traversal = name;
    while (this.src[this.i] === '.' && IDENTIFIER_START.test(this.src[this.i + 1] ?? '')) {
      const from = ++this.i;
      while (this.i < this.src.length && IDENTIFIER.test(this.src[this.i])) this.i += 1;
      traversal += `.${this.src.slice(from, this.i)}`;
    }
    if (['true', 'false', 'null'].includes(traversal)) throw new Unresolved(`the value ${traversal}`);
    const value = this.reference(traversal);
    if (value === undefined) throw new Unresolved(`the reference ${traversal}, whose value is known only when the engine plans`);
    return value;
  }
}

/** No reference is known. */
const NO_REFERENCE: ReferenceLookup = () => undefined;

/**
 * The value the engine gives a Terraform JSON string, when it can be known before the engine plans:
 * `$${` and `%%{` are the literal `${` and `%{`; an interpolation of a quoted string, of a tuple, of
 * `lower`, `upper`, `trimspace`, `trimprefix`, `trimsuffix`, `replace` (plain text), `join`, `format`
 * (`%s`, `%%`) over such values, or of a reference `reference` resolves is computed; anything else (a
 * variable, a directive, an operator, another function, a case mapping beyond ASCII) is unresolved,
 * with the reason. Text is normalised to NFC, as the engine's strings are (cty).
 * @param reference resolves a reference (`type.name.attribute`); by default none is known
 * @returns the value (a lone interpolation keeps its value's type), or why it cannot be known
 */
export function evaluateTemplate(source: string, reference: ReferenceLookup = NO_REFERENCE): TemplateValue {
  try {
    const value = new TemplateReader(source, reference).whole();
    return { value: typeof value === 'string' ? value.normalize('NFC') : value };
  } catch (e) {
    if (e instanceof Unresolved) return { unresolved: e.why };
    throw e;
  }
}
