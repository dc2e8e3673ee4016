import { RulePath } from '../acl/rule-path';

/** One step of a rule path read as a pattern over request path characters. */
type Token = { readonly kind: 'char'; readonly char: string } | { readonly kind: 'segment' } | { readonly kind: 'rest' };

/** The state of a pattern that can no longer match, whatever follows. */
export const DEAD = -1;

/**
 * A rule path as a deterministic automaton over the characters (code points) of a request path,
 * matching exactly the request paths the store's ACL matches it against (`Acl`): an exact rule its
 * key, a prefix rule its key and then anything, a segment rule its segments with `+` one segment of
 * any non-`/` characters (an empty one too, as the store's `strings.Split` sees it) and, when it
 * ends in `*`, its last segment a prefix and then anything. A state is the index of the next
 * token, or {@link DEAD}.
 */
export class PathPatternAutomaton {
  /** The automaton of a rule path. */
  static of(path: RulePath): PathPatternAutomaton {
    const tokens: Token[] = [];
    const chars = (text: string) => [...text].forEach((char) => tokens.push({ kind: 'char', char }));
    if (path.kind === 'exact') chars(path.key);
    else if (path.kind === 'prefix') {
      chars(path.key);
      tokens.push({ kind: 'rest' });
    } else {
      const open = path.key.endsWith('*');
      (open ? path.key.slice(0, -1) : path.key).split('/').forEach((part, i) => {
        if (i > 0) tokens.push({ kind: 'char', char: '/' });
        if (part === '+') tokens.push({ kind: 'segment' });
        else chars(part);
      });
      if (open) tokens.push({ kind: 'rest' });
    }
    return new PathPatternAutomaton(path, tokens);
  }

  private constructor(
    /** The rule path. */
    readonly path: RulePath,
    private readonly tokens: readonly Token[],
  ) {}

  /** The state before any character. */
  get start(): number {
    return 0;
  }

  /** The state after `char` (one code point) from `state`. */
  step(state: number, char: string): number {
    if (state === DEAD || state >= this.tokens.length) return DEAD;
    const token = this.tokens[state];
    if (token.kind === 'rest') return state;
    if (token.kind === 'char') return token.char === char ? state + 1 : DEAD;
    // A `+` segment: any character but `/` stays in it; `/` ends it (the next token is that `/`).
    if (char !== '/') return state;
    return state + 1 < this.tokens.length ? state + 2 : DEAD;
  }

  /** True when the characters read so far are a request path the rule matches. */
  accepts(state: number): boolean {
    if (state === DEAD) return false;
    if (state === this.tokens.length) return true;
    const token = this.tokens[state];
    return token.kind === 'rest' || (token.kind === 'segment' && state === this.tokens.length - 1);
  }

  /** True when the pattern matches what was read and every continuation of it (a trailing `*` reached). */
  matchesEveryExtension(state: number): boolean {
    return state !== DEAD && state < this.tokens.length && this.tokens[state].kind === 'rest';
  }

  /**
   * The one character this state tells apart from every other, if any: the next literal
   * character. Every character that is not it (nor `/`) leads to the same state.
   */
  literalAt(state: number): string | undefined {
    if (state === DEAD || state >= this.tokens.length) return undefined;
    const token = this.tokens[state];
    return token.kind === 'char' ? token.char : undefined;
  }

  /** Every literal character of the pattern (what a path can be built from). */
  literals(): string[] {
    return this.tokens.flatMap((t) => (t.kind === 'char' ? [t.char] : []));
  }
}

/**
 * What a request path looks like, as an automaton, for choosing a witness people can read and send:
 * a clean path has no empty segment but a last one (a trailing `/`) and no `.` or `..` segment.
 * Every non-empty path counts for the decision: the store's HTTP server redirects a path written
 * with `//`, `.` or `..` segments to the cleaned one (Go's `http.ServeMux`), but the same path with
 * `%2F` or `%2E` reaches the ACL as it is (proven on both stores by
 * `test/store/invariants-exact.store.test.ts`), so a grant there is a grant. A path starting with
 * `/` is not one: the store strips the leading `/`, so it is the request of the path without it.
 * A witness is a clean path whenever one exists.
 */
export const REQUEST_PATH_SHAPE = {
  /** Nothing read yet. */
  start: 0,
  /**
   * States: 0 start, 1 after `/`, 2 segment `.`, 3 segment `..`, 4 inside another segment; 5 and 6
   * not clean, the last character other than `/` or `/`.
   */
  step(state: number, char: string): number {
    // The store strips a leading `/`: such a request is the one without it, a path of its own.
    if (state === 0 && char === '/') return DEAD;
    if (state >= 5) return char === '/' ? 6 : 5;
    if (char === '/') return state === 4 ? 1 : 6;
    if (char === '.') return state === 0 || state === 1 ? 2 : state === 2 ? 3 : 4;
    return 4;
  },
  /** A request path: not empty. */
  accepts(state: number): boolean {
    return state !== 0;
  },
  /** True when the path read so far is clean (see above). */
  clean(state: number): boolean {
    return state === 1 || state === 4;
  },
  /** True when the path read so far ends with `/`. */
  endsWithSlash(state: number): boolean {
    return state === 1 || state === 6;
  },
};
