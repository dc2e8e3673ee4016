import { goIsDigit, goIsLetter, goIsSpace } from '../model/go-unicode';

/**
 * HCL 1 syntax as the stores read policy texts: `hcl.Parse` of `hashicorp/hcl` v1
 * (v1.0.1-vault-5 in OpenBao 2.4, v1.0.1-vault-7 in Vault 1.21), ported line by line from its
 * `hcl/scanner`, `hcl/parser`, `hcl/strconv`, `json/scanner`, `json/parser` (with `flatten.go`)
 * and `hcl/token` packages. Only the tree is built (no comments, no positions beyond the line);
 * what the decoder then does with it is lib/acl/hcl1-decoder.ts.
 *
 * Why a port and not an HCL 2 parser: HCL 2 reads the same bytes differently. In HCL 1 a quoted
 * string keeps `${...}` (and so `$${x}`) and `%{` literally, and knows the escapes `\a \b \f \n \r
 * \t \v \\ \"`, octal `\NNN`, `\xNN`, `\uNNNN` and `\UNNNNNNNN` (HCL 2 turns `$${` into `${` and
 * refuses `${x}`); an attribute may be given twice (Vault 1.21's parser refuses that, OpenBao's
 * keeps both); several attributes may share a line; JSON objects become block labels.
 */

/** Token types of the HCL 1 scanner (the JSON scanner's are mapped onto them). */
export type Hcl1TokenType = 'IDENT' | 'NUMBER' | 'FLOAT' | 'BOOL' | 'STRING' | 'HEREDOC' | 'EOF' | 'LBRACK' | 'RBRACK' | 'LBRACE' | 'RBRACE' | 'COMMA' | 'ASSIGN' | 'COLON' | 'PERIOD' | 'ADD' | 'SUB' | 'NULL' | 'COMMENT';

/** A token: its type, its text as written, its line, and whether it came from JSON (strings are then unquoted as Go strings). */
export interface Hcl1Token {
  readonly type: Hcl1TokenType;
  readonly text: string;
  readonly line: number;
  readonly json?: boolean;
}

/** A literal value (`"a"`, `5`, `1.5`, `true`, a heredoc). */
export interface Hcl1Literal {
  readonly kind: 'literal';
  readonly token: Hcl1Token;
}
/** A list `[ ... ]`. */
export interface Hcl1List {
  readonly kind: 'list';
  readonly items: Hcl1Node[];
}
/** An object `{ ... }`. */
export interface Hcl1Object {
  readonly kind: 'object';
  readonly list: Hcl1ObjectList;
}
/** The items of an object or of the whole file. */
export interface Hcl1ObjectList {
  readonly kind: 'objectList';
  items: Hcl1Item[];
}
/** One item: its keys (`path "a"`), whether it had `=` / `:`, and its value. */
export interface Hcl1Item {
  readonly kind: 'item';
  readonly keys: readonly Hcl1Token[];
  readonly assign: boolean;
  readonly value: Hcl1Node;
}
/** Any node of the tree. */
export type Hcl1Node = Hcl1Literal | Hcl1List | Hcl1Object | Hcl1ObjectList | Hcl1Item;

/** A text the stores' HCL 1 parser refuses; the message says where and why. */
export class Hcl1SyntaxError extends Error {}

/** A scanner error: it fails the parse wherever it happens (Go records it and fails at the end). */
class Hcl1ScanError extends Hcl1SyntaxError {}

const EOF = -1;

/** Lone UTF-16 surrogates become U+FFFD, as they reach the store (Go decodes them so). */
function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** The rune reader both scanners share: code points, a line count, one step of unread. */
class Runes {
  private readonly runes: number[];
  private pos = 0;
  line = 1;

  constructor(text: string) {
    this.runes = [...wellFormed(text)].map((c) => c.codePointAt(0)!);
  }

  next(): number {
    if (this.pos >= this.runes.length) {
      this.pos++;
      return EOF;
    }
    const ch = this.runes[this.pos++];
    if (ch === 0x0a) this.line++;
    return ch;
  }

  unread(): void {
    this.pos--;
    if (this.pos < this.runes.length && this.runes[this.pos] === 0x0a) this.line--;
  }

  peek(): number {
    return this.pos < this.runes.length ? this.runes[this.pos] : EOF;
  }

  get offset(): number {
    return Math.min(this.pos, this.runes.length);
  }

  slice(start: number, end: number): string {
    // In chunks: a long heredoc or string would exceed the number of arguments a call may take.
    let out = '';
    for (let i = start; i < end; i += 8192) out += String.fromCodePoint(...this.runes.slice(i, Math.min(i + 8192, end)));
    return out;
  }

  /** The code points from `start` to the current position. */
  textFrom(start: number): string {
    return this.slice(start, this.offset);
  }
}

const isDecimal = (ch: number) => ch >= 0x30 && ch <= 0x39;
const isHex = (ch: number) => isDecimal(ch) || (ch >= 0x61 && ch <= 0x66) || (ch >= 0x41 && ch <= 0x46);
const isLetter = (ch: number) => (ch >= 0x61 && ch <= 0x7a) || (ch >= 0x41 && ch <= 0x5a) || ch === 0x5f || (ch >= 0x80 && goIsLetter(ch));
const isDigit = (ch: number) => isDecimal(ch) || (ch >= 0x80 && goIsDigit(ch));
const isWhitespace = (ch: number) => ch === 0x20 || ch === 0x09 || ch === 0x0a || ch === 0x0d;
const digitVal = (ch: number): number => (isDecimal(ch) ? ch - 0x30 : ch >= 0x61 && ch <= 0x66 ? ch - 0x61 + 10 : ch >= 0x41 && ch <= 0x46 ? ch - 0x41 + 10 : 16);
const c = (s: string) => s.codePointAt(0)!;

/** The scanner of `hcl/scanner` (HCL) or `json/scanner` (JSON): the differences are marked. */
class Scanner {
  private readonly r: Runes;

  constructor(
    text: string,
    private readonly json: boolean,
  ) {
    this.r = new Runes(text);
  }

  private fail(message: string): never {
    throw new Hcl1ScanError(`line ${this.r.line}: ${message}`);
  }

  private next(): number {
    const ch = this.r.next();
    if (!this.json && ch === 0) this.fail('unexpected null character (0x00)');
    if (!this.json && ch === 0xe123) this.fail('unicode code point U+E123 reserved for internal use');
    return ch;
  }

  scan(): Hcl1Token {
    let ch = this.next();
    while (isWhitespace(ch)) ch = this.next();
    const start = this.r.offset - (ch === EOF ? 0 : 1);
    const line = this.r.line - (ch === 0x0a ? 1 : 0);
    let type: Hcl1TokenType;
    if (isLetter(ch)) {
      const word = this.scanIdentifier(start);
      if (word === 'true' || word === 'false') type = 'BOOL';
      else if (this.json && word === 'null') type = 'NULL';
      else if (this.json) this.fail('illegal char');
      else type = 'IDENT';
    } else if (isDecimal(ch)) {
      type = this.scanNumber(ch);
    } else {
      switch (ch) {
        case EOF:
          type = 'EOF';
          break;
        case c('"'):
          type = 'STRING';
          this.scanString();
          break;
        case c('.'):
          type = 'PERIOD';
          if (isDecimal(this.r.peek())) {
            type = 'FLOAT';
            this.scanExponent(this.scanMantissa(this.r.peek()));
          }
          break;
        case c('['):
          type = 'LBRACK';
          break;
        case c(']'):
          type = 'RBRACK';
          break;
        case c('{'):
          type = 'LBRACE';
          break;
        case c('}'):
          type = 'RBRACE';
          break;
        case c(','):
          type = 'COMMA';
          break;
        case c('-'):
          if (isDecimal(this.r.peek())) type = this.scanNumber(this.next());
          else if (this.json) this.fail('illegal char');
          else type = 'SUB';
          break;
        default:
          if (this.json && ch === c(':')) type = 'COLON';
          else if (!this.json && ch === c('=')) type = 'ASSIGN';
          else if (!this.json && ch === c('+')) type = 'ADD';
          else if (!this.json && (ch === c('#') || ch === c('/'))) {
            type = 'COMMENT';
            this.scanComment(ch);
          } else if (!this.json && ch === c('<')) {
            type = 'HEREDOC';
            this.scanHeredoc();
          } else this.fail(`illegal char${this.json ? `: ${String.fromCodePoint(ch)}` : ''}`);
      }
    }
    return { type, text: this.r.textFrom(start), line, ...(this.json ? { json: true } : {}) };
  }

  private scanIdentifier(start: number): string {
    let ch = this.next();
    while (isLetter(ch) || isDigit(ch) || ch === c('-') || (!this.json && ch === c('.'))) ch = this.next();
    if (ch !== EOF) this.r.unread();
    return this.r.textFrom(start);
  }

  private scanComment(first: number): void {
    let ch = first;
    if (ch === c('#') || (ch === c('/') && this.r.peek() !== c('*'))) {
      if (ch === c('/') && this.r.peek() !== c('/')) this.fail("expected '/' for comment");
      ch = this.next();
      while (ch !== 0x0a && ch !== EOF) ch = this.next();
      if (ch !== EOF) this.r.unread();
      return;
    }
    this.next();
    ch = this.next();
    for (;;) {
      if (ch === EOF) this.fail('comment not terminated');
      const previous = ch;
      ch = this.next();
      if (previous === c('*') && ch === c('/')) break;
    }
  }

  private scanNumber(first: number): Hcl1TokenType {
    let ch = first;
    if (this.json) {
      const zero = ch === c('0');
      const at = this.r.offset;
      this.scanMantissa(ch);
      ch = this.next();
      if (ch === c('e') || ch === c('E')) {
        this.scanExponent(ch);
        return 'FLOAT';
      }
      if (ch === c('.')) {
        ch = this.scanFraction(ch);
        if (ch === c('e') || ch === c('E')) this.scanExponent(this.next());
        return 'FLOAT';
      }
      if (ch !== EOF) this.r.unread();
      if (zero && at !== this.r.offset) this.fail('numbers cannot start with 0');
      return 'NUMBER';
    }
    if (ch === c('0')) {
      ch = this.next();
      if (ch === c('x') || ch === c('X')) {
        ch = this.next();
        let found = false;
        while (isHex(ch)) {
          ch = this.next();
          found = true;
        }
        if (!found) this.fail('illegal hexadecimal number');
        if (ch !== EOF) this.r.unread();
        return 'NUMBER';
      }
      let illegalOctal = false;
      while (isDecimal(ch)) {
        ch = this.next();
        if (ch === c('8') || ch === c('9')) illegalOctal = true;
      }
      if (ch === c('e') || ch === c('E')) {
        this.scanExponent(ch);
        return 'FLOAT';
      }
      if (ch === c('.')) {
        ch = this.scanFraction(ch);
        if (ch === c('e') || ch === c('E')) this.scanExponent(this.next());
        return 'FLOAT';
      }
      if (illegalOctal) this.fail('illegal octal number');
      if (ch !== EOF) this.r.unread();
      return 'NUMBER';
    }
    this.scanMantissa(ch);
    ch = this.next();
    if (ch === c('e') || ch === c('E')) {
      this.scanExponent(ch);
      return 'FLOAT';
    }
    if (ch === c('.')) {
      ch = this.scanFraction(ch);
      if (ch === c('e') || ch === c('E')) this.scanExponent(this.next());
      return 'FLOAT';
    }
    if (ch !== EOF) this.r.unread();
    return 'NUMBER';
  }

  private scanMantissa(first: number): number {
    let ch = first;
    let scanned = false;
    while (isDecimal(ch)) {
      ch = this.next();
      scanned = true;
    }
    if (scanned && ch !== EOF) this.r.unread();
    return ch;
  }

  private scanFraction(ch: number): number {
    return ch === c('.') ? this.scanMantissa(this.r.peek()) : ch;
  }

  private scanExponent(first: number): number {
    let ch = first;
    if (ch === c('e') || ch === c('E')) {
      ch = this.next();
      if (ch === c('-') || ch === c('+')) ch = this.next();
      ch = this.scanMantissa(ch);
    }
    return ch;
  }

  private scanString(): void {
    let braces = 0;
    for (;;) {
      const ch = this.next();
      // HCL lets a `${ ... }` span lines and hold quotes; JSON does not.
      if ((ch === 0x0a && (this.json || braces === 0)) || ch === EOF) this.fail('literal not terminated');
      if (ch === c('"') && (this.json || braces === 0)) break;
      if (braces === 0 && ch === c('$') && this.r.peek() === c('{')) {
        braces++;
        this.next();
      } else if (braces > 0 && ch === c('{')) {
        braces++;
      }
      if (braces > 0 && ch === c('}')) braces--;
      if (ch === c('\\')) this.scanEscape();
    }
  }

  private scanEscape(): void {
    const ch = this.next();
    if ('abfnrtv\\"'.includes(String.fromCodePoint(Math.max(ch, 0))) && ch > 0) return;
    if (ch >= c('0') && ch <= c('7')) this.scanDigits(ch, 8, 3);
    else if (ch === c('x')) this.scanDigits(this.next(), 16, 2);
    else if (ch === c('u')) this.scanDigits(this.next(), 16, 4);
    else if (ch === c('U')) this.scanDigits(this.next(), 16, 8);
    else this.fail('illegal char escape');
  }

  private scanDigits(first: number, base: number, count: number): void {
    let ch = first;
    let n = count;
    while (n > 0 && digitVal(ch) < base) {
      ch = this.next();
      if (!this.json && ch === EOF) break;
      n--;
    }
    if (n > 0) this.fail('illegal char escape');
    if (this.json || (n !== count && ch !== EOF)) this.r.unread();
  }

  private scanHeredoc(): void {
    if (this.next() !== c('<')) this.fail("heredoc expected second '<', didn't see it");
    const anchorStart = this.r.offset;
    let ch = this.next();
    if (ch === c('-')) ch = this.next();
    while (isLetter(ch) || isDigit(ch)) ch = this.next();
    if (ch === EOF) this.fail('heredoc not terminated');
    if (ch === 0x0d && this.r.peek() === 0x0a) ch = this.next();
    if (ch !== 0x0a) this.fail('invalid characters in heredoc anchor');
    const anchor = this.r.slice(anchorStart, this.r.offset - 1).replace(/\r$/, '');
    if (anchor === '' || anchor === '-') this.fail('zero-length heredoc anchor');
    const ident = anchor.startsWith('-') ? anchor.slice(1) : anchor;
    // Go: regexp `^[[:space:]]*<ident>\r*\z` on the line before each newline.
    const terminator = new RegExp(`^[\\t\\n\\v\\f\\r ]*${ident.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\r*$`, 'u');
    let lineStart = this.r.offset;
    for (;;) {
      const next = this.next();
      if (next === 0x0a) {
        const lineText = this.r.slice(lineStart, this.r.offset - 1);
        if (Buffer.byteLength(lineText) >= Buffer.byteLength(anchor) && terminator.test(lineText)) break;
        lineStart = this.r.offset;
      }
      if (next === EOF) this.fail('heredoc not terminated');
    }
  }
}

/** Go's `strconv.ParseInt(text, 0, 64)`: base prefixes, `_` between digits; undefined when Go refuses it. */
export function goParseInt(text: string): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]*|[1-9][0-9_]*|0)$/.exec(text);
  if (!m) return undefined;
  let digits = m[2];
  let base = 10;
  if (/^0[xX]/.test(digits)) [base, digits] = [16, digits.slice(2)];
  else if (/^0[bB]/.test(digits)) [base, digits] = [2, digits.slice(2)];
  else if (/^0[oO]/.test(digits)) [base, digits] = [8, digits.slice(2)];
  else if (digits.length > 1 && digits.startsWith('0')) [base, digits] = [8, digits.slice(1)];
  if (digits.includes('_')) {
    // Underscores only with a base prefix, between digits (or after the prefix).
    if (base === 10 || /__|_$/.test(digits) || (m[2].length - digits.length === 1 && digits.startsWith('_'))) return undefined;
  }
  const clean = digits.replace(/_/g, '');
  if (clean === '') return undefined;
  const value = BigInt(base === 10 ? clean : `0${'xbo'[[16, 2, 8].indexOf(base)]}${clean}`) * (m[1] === '-' ? -1n : 1n);
  if (value > 2n ** 63n - 1n || value < -(2n ** 63n)) return undefined;
  return Number(value);
}

/** Go's `strconv.ParseFloat(text, 64)` for the FLOAT tokens the scanners produce. */
function goParseFloat(text: string): number | undefined {
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * One escape after a backslash (`hcl/strconv.unquoteChar` and Go's `strconv.UnquoteChar`, which
 * agree for double-quoted strings): the value and the rest of the text, or undefined when refused.
 */
function unquoteEscape(s: Buffer, at: number, json: boolean): { bytes: Buffer; next: number } | undefined {
  const code = s[at + 1];
  if (code === undefined) return undefined;
  const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };
  const ch = String.fromCharCode(code);
  if (ch in simple) return { bytes: Buffer.from([simple[ch]]), next: at + 2 };
  if (ch === 'x' || ch === 'u' || ch === 'U') {
    const n = ch === 'x' ? 2 : ch === 'u' ? 4 : 8;
    const hex = s.subarray(at + 2, at + 2 + n).toString('latin1');
    if (hex.length < n || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
    const v = parseInt(hex, 16);
    if (ch === 'x') return { bytes: Buffer.from([v]), next: at + 2 + n };
    if (v > 0x10ffff) return undefined;
    // Go's strconv refuses a surrogate code point; HCL's own unquoting writes it as U+FFFD.
    if (json && v >= 0xd800 && v <= 0xdfff) return undefined;
    return { bytes: Buffer.from(String.fromCodePoint(v >= 0xd800 && v <= 0xdfff ? 0xfffd : v), 'utf8'), next: at + 2 + n };
  }
  if (code >= 0x30 && code <= 0x37) {
    const oct = s.subarray(at + 1, at + 4).toString('latin1');
    if (!/^[0-7]{3}$/.test(oct)) return undefined;
    const v = parseInt(oct, 8);
    return v > 255 ? undefined : { bytes: Buffer.from([v]), next: at + 4 };
  }
  return undefined;
}

/**
 * The value of a quoted HCL string as `hcl/strconv.Unquote` gives it: escapes read, except
 * inside `${ ... }`, which is kept as written, braces counted (so `$${x}` stays `$${x}`, and
 * `%{` is no introducer at all). For a JSON string, Go's `strconv.Unquote`: escapes read
 * everywhere, `${` kept as any other text.
 * @returns the value, or undefined where the store's parser fails on it
 */
export function unquoteHcl1(quoted: string, json = false): string | undefined {
  const raw = Buffer.from(quoted, 'utf8');
  if (raw.length < 2 || raw[0] !== 0x22 || raw[raw.length - 1] !== 0x22) return undefined;
  const s = raw.subarray(1, raw.length - 1);
  const has = (b: number) => s.includes(b);
  if (json) {
    if (has(0x0a)) return undefined;
  } else if (!has(0x24) && !has(0x7b) && has(0x0a)) return undefined;
  const out: Buffer[] = [];
  let i = 0;
  while (i < s.length) {
    if (!json && s[i] === 0x24 && s[i + 1] === 0x7b) {
      let braces = 1;
      let j = i + 2;
      while (j < s.length && braces > 0) {
        // Go decodes rune by rune here and refuses U+FFFD (its decoding error value).
        if (s[j] === 0xef && s[j + 1] === 0xbf && s[j + 2] === 0xbd) return undefined;
        if (s[j] === 0x7b) braces++;
        else if (s[j] === 0x7d) braces--;
        j++;
      }
      if (braces !== 0) return undefined;
      out.push(s.subarray(i, j));
      i = j;
      continue;
    }
    if (s[i] === 0x0a) return undefined;
    if (s[i] === 0x22) return undefined;
    if (s[i] !== 0x5c) {
      out.push(s.subarray(i, i + 1));
      i++;
      continue;
    }
    const escaped = unquoteEscape(s, i, json);
    if (!escaped) return undefined;
    out.push(escaped.bytes);
    i = escaped.next;
  }
  return Buffer.concat(out).toString('utf8');
}

/** A heredoc's value (`unindentHeredoc` of `hcl/token`), computed on bytes as Go does. */
function heredocValue(text: string): string {
  const b = Buffer.from(text, 'utf8');
  const idx = b.indexOf(0x0a);
  const unindent = b[2] === 0x2d;
  if (!unindent) return b.subarray(idx + 1, b.length - idx + 1).toString('utf8');
  const lines = b.subarray(idx + 1, b.length - idx + 2).toString('utf8').split('\n');
  const prefix = lines[lines.length - 1];
  if (!lines.every((l) => l.startsWith(prefix))) return b.subarray(idx + 1, b.length - idx + 1).toString('utf8').replace(/[ \t]+$/, '');
  return lines.map((l, k) => (k === lines.length - 1 ? '' : l.slice(prefix.length))).join('\n');
}

/**
 * A literal token's value as `Token.Value()` gives it: the unquoted string, the heredoc's text,
 * an integer, a float or a boolean; JSON `null` is `""`.
 * @throws Hcl1SyntaxError where Go's `Value()` panics (a string the unquoting refuses, a number out of range)
 */
export function tokenValue(token: Hcl1Token): string | number | boolean {
  switch (token.type) {
    case 'BOOL':
      return token.text === 'true';
    case 'IDENT':
      return token.text;
    case 'HEREDOC':
      return heredocValue(token.text);
    case 'NUMBER': {
      const v = goParseInt(token.text);
      if (v === undefined) throw new Hcl1SyntaxError(`line ${token.line}: ${token.text} is out of range`);
      return v;
    }
    case 'FLOAT': {
      const v = goParseFloat(token.text);
      if (v === undefined) throw new Hcl1SyntaxError(`line ${token.line}: ${token.text} is out of range`);
      return v;
    }
    case 'STRING':
    case 'NULL': {
      if (token.text === '' || token.type === 'NULL') return '';
      const v = unquoteHcl1(token.text, token.json);
      if (v === undefined) throw new Hcl1SyntaxError(`line ${token.line}: cannot unquote ${token.text}`);
      return v;
    }
    default:
      throw new Hcl1SyntaxError(`line ${token.line}: no value for ${token.type}`);
  }
}

const KEY_VALUES = new WeakMap<Hcl1Token, string>();

/** The string value of an item key (an identifier or a string); the decoder asks for it often. */
export function keyValue(token: Hcl1Token): string {
  let value = KEY_VALUES.get(token);
  if (value === undefined) {
    value = String(tokenValue(token));
    KEY_VALUES.set(token, value);
  }
  return value;
}

const END = Symbol('EOF token found');

/** The parser of `hcl/parser`: HCL text to the tree. */
class HclParser {
  private readonly sc: Scanner;
  private tok: Hcl1Token = { type: 'EOF', text: '', line: 1 };
  private buffered = false;

  constructor(
    text: string,
    private readonly errorOnDuplicateKeys: boolean,
  ) {
    this.sc = new Scanner(text, false);
  }

  private fail(message: string, token: Hcl1Token = this.tok): never {
    throw new Hcl1SyntaxError(`line ${token.line}: ${message}`);
  }

  private scan(): Hcl1Token {
    if (this.buffered) {
      this.buffered = false;
      return this.tok;
    }
    do this.tok = this.sc.scan();
    while (this.tok.type === 'COMMENT');
    return this.tok;
  }

  private unscan(): void {
    this.buffered = true;
  }

  parse(): Hcl1ObjectList {
    const list = this.objectList(false);
    return list;
  }

  private objectList(inObject: boolean): Hcl1ObjectList {
    const node: Hcl1ObjectList = { kind: 'objectList', items: [] };
    const seen = new Set<string>();
    for (;;) {
      if (inObject) {
        const tok = this.scan();
        this.unscan();
        if (tok.type === 'RBRACE') break;
      }
      const item = this.objectItem();
      if (item === END) break;
      if (item.assign && this.errorOnDuplicateKeys) {
        for (const key of item.keys) {
          if (seen.has(key.text)) {
            this.fail(`The argument ${JSON.stringify(key.text)} was already set. Each argument can only be defined once`, key);
          }
          seen.add(key.text);
        }
      }
      node.items.push(item);
      if (this.scan().type !== 'COMMA') this.unscan();
    }
    return node;
  }

  private objectItem(): Hcl1Item | typeof END {
    const keys = this.objectKey();
    if (keys === END) return END;
    if (keys.length === 0) return END;
    switch (this.tok.type) {
      case 'ASSIGN':
        return { kind: 'item', keys, assign: true, value: this.object() };
      case 'LBRACE':
        return { kind: 'item', keys, assign: false, value: this.objectType() };
      default:
        return this.fail(`key '${keys.map((k) => k.text).join(' ')}' expected start of object ('{') or assignment ('=')`);
    }
  }

  /** Keys up to `=` or `{`; END for a bare end of text; keys ended by the end of text come back to fail in objectItem. */
  private objectKey(): Hcl1Token[] | typeof END {
    const keys: Hcl1Token[] = [];
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case 'EOF':
          return keys.length > 0 ? keys : END;
        case 'ASSIGN':
          if (keys.length > 1) this.fail('nested object expected: LBRACE got: ASSIGN');
          if (keys.length === 0) this.fail('no object keys found!');
          return keys;
        case 'LBRACE':
          if (keys.length === 0) this.fail('expected: IDENT | STRING got: LBRACE');
          return keys;
        case 'IDENT':
        case 'STRING':
          keys.push(tok);
          break;
        default:
          this.fail(`expected: IDENT | STRING | ASSIGN | LBRACE got: ${tok.type}`);
      }
    }
  }

  private object(): Hcl1Node {
    const tok = this.scan();
    switch (tok.type) {
      case 'NUMBER':
      case 'FLOAT':
      case 'BOOL':
      case 'STRING':
      case 'HEREDOC':
        return { kind: 'literal', token: tok };
      case 'LBRACE':
        return this.objectType();
      case 'LBRACK':
        return this.listType();
      default:
        return this.fail(`Unknown token: ${tok.type} ${tok.text}`);
    }
  }

  private objectType(): Hcl1Object {
    const list = this.objectList(true);
    const tok = this.scan();
    if (tok.type !== 'RBRACE') this.fail(`object expected closing RBRACE got: ${tok.type}`);
    return { kind: 'object', list };
  }

  private listType(): Hcl1List {
    const list: Hcl1List = { kind: 'list', items: [] };
    let needComma = false;
    for (;;) {
      const tok = this.scan();
      if (needComma && tok.type !== 'COMMA' && tok.type !== 'RBRACK') this.fail(`error parsing list, expected comma or list end, got: ${tok.type}`);
      switch (tok.type) {
        case 'BOOL':
        case 'NUMBER':
        case 'FLOAT':
        case 'STRING':
        case 'HEREDOC':
          list.items.push({ kind: 'literal', token: tok });
          needComma = true;
          break;
        case 'COMMA':
          needComma = false;
          break;
        case 'LBRACE':
          list.items.push(this.objectType());
          needComma = true;
          break;
        case 'LBRACK':
          // As in HCL 1: no comma is needed after a nested list.
          list.items.push(this.listType());
          break;
        case 'RBRACK':
          return list;
        default:
          this.fail(`unexpected token while parsing list: ${tok.type}`);
      }
    }
  }
}

/** The parser of `json/parser`, as lax as it is: a missing `}` or a trailing comma is accepted. */
class JsonParser {
  private readonly sc: Scanner;
  private tok: Hcl1Token = { type: 'EOF', text: '', line: 1, json: true };

  constructor(text: string) {
    this.sc = new Scanner(text, true);
  }

  private scan(): Hcl1Token {
    this.tok = this.sc.scan();
    return this.tok;
  }

  private fail(message: string): never {
    throw new Hcl1SyntaxError(`line ${this.tok.line}: ${message}`);
  }

  parse(): Hcl1ObjectList {
    const tok = this.scan();
    if (tok.type === 'EOF') this.fail('EOF token found');
    if (tok.type !== 'LBRACE') this.fail(`Expected object, got unknown token: ${tok.type}`);
    const root = this.objectType();
    flatten(root.list);
    return root.list;
  }

  /** Items until a token that is not a comma; an error at `}` ends the object (Go: `objectType`). */
  private objectType(): Hcl1Object {
    const list: Hcl1ObjectList = { kind: 'objectList', items: [] };
    try {
      for (;;) {
        const item = this.objectItem();
        if (item === END) break;
        list.items.push(item);
        if (this.scan().type !== 'COMMA') break;
      }
    } catch (e) {
      if (!(e instanceof Hcl1SyntaxError) || e instanceof Hcl1ScanError || this.tok.type !== 'RBRACE') throw e;
    }
    return { kind: 'object', list };
  }

  private objectItem(): Hcl1Item | typeof END {
    const keys: Hcl1Token[] = [];
    for (;;) {
      const tok = this.scan();
      if (tok.type === 'EOF') return END;
      if (tok.type === 'STRING') keys.push(tok);
      else if (tok.type === 'COLON') {
        if (keys.length === 0) this.fail('expected: STRING got: COLON');
        break;
      } else this.fail(`expected: STRING got: ${tok.type}`);
    }
    const value = this.objectValue();
    if (value === END) return END;
    return { kind: 'item', keys, assign: true, value };
  }

  private objectValue(): Hcl1Node | typeof END {
    const tok = this.scan();
    switch (tok.type) {
      case 'NUMBER':
      case 'FLOAT':
      case 'BOOL':
      case 'STRING':
        return { kind: 'literal', token: tok };
      case 'NULL':
        return { kind: 'literal', token: { type: 'STRING', text: '', line: tok.line } };
      case 'LBRACE':
        return this.objectType();
      case 'LBRACK':
        return this.listType();
      case 'EOF':
        return END;
      default:
        return this.fail(`Expected object value, got unknown token: ${tok.type}`);
    }
  }

  private listType(): Hcl1List {
    const list: Hcl1List = { kind: 'list', items: [] };
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case 'NUMBER':
        case 'FLOAT':
        case 'STRING':
          list.items.push({ kind: 'literal', token: tok });
          break;
        case 'COMMA':
        case 'BOOL':
        case 'LBRACK':
          // HCL 1's JSON parser drops booleans and opening brackets inside a list.
          break;
        case 'LBRACE':
          list.items.push(this.objectType());
          break;
        case 'RBRACK':
          return list;
        default:
          this.fail(`unexpected token while parsing list: ${tok.type}`);
      }
    }
  }
}

/**
 * `flattenObjects` of `json/parser/flatten.go`: in every object list, an item whose value is an
 * object of objects (or a list of objects) becomes one item per entry, the entry's keys added to
 * the item's, repeatedly; then the walk goes on into the values.
 */
function flatten(node: Hcl1Node): void {
  if (node.kind === 'objectList') {
    const out: Hcl1Item[] = [];
    const frontier = [...node.items];
    while (frontier.length > 0) {
      const item = frontier.pop()!;
      const v = item.value;
      if (v.kind === 'object' && v.list.items.length > 0 && v.list.items.every((s) => s.value.kind === 'object')) {
        for (const sub of v.list.items) frontier.push({ kind: 'item', keys: [...item.keys, ...sub.keys], assign: item.assign, value: sub.value });
      } else if (v.kind === 'list' && v.items.length > 0 && v.items.every((e) => e.kind === 'object')) {
        for (const element of v.items) frontier.push({ kind: 'item', keys: item.keys, assign: item.assign, value: element });
      } else {
        out.push(item);
      }
    }
    node.items = out.reverse();
    node.items.forEach((item) => flatten(item.value));
  } else if (node.kind === 'object') {
    flatten(node.list);
  } else if (node.kind === 'list') {
    node.items.forEach(flatten);
  } else if (node.kind === 'item') {
    flatten(node.value);
  }
}

/** Go's `lexMode`: JSON when the first character that is not Go white space is `{`. */
export function isHcl1Json(text: string): boolean {
  for (const ch of text) {
    if (goIsSpace(ch.codePointAt(0)!)) continue;
    return ch === '{';
  }
  return false;
}

/**
 * Parses a policy text as `hcl.Parse` does: JSON when it starts with `{` (after white space),
 * HCL otherwise (`\r\n` read as `\n`).
 * @param errorOnDuplicateKeys Vault 1.21's parser refuses an attribute (`key =`) given twice in one
 *   object; OpenBao's (and any JSON) keeps both
 * @throws Hcl1SyntaxError with the line and the parser's reason
 */
export function parseHcl1(text: string, errorOnDuplicateKeys: boolean): Hcl1ObjectList {
  if (isHcl1Json(text)) return new JsonParser(text).parse();
  return new HclParser(text.replace(/\r\n/g, '\n'), errorOnDuplicateKeys).parse();
}
