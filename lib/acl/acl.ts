import { AclPolicy, ParsedPolicyRule } from './acl-policy';
import { RulePath } from './rule-path';
import { CAPABILITY_BITS, StoreCapability, isDenyMask, maskHas, storeCapabilityAnswer } from './store-capability';
import { compareStrings } from '../private/compare-strings';
import { StoreKind, StoreTarget } from '../model/store-target';
import { sudoOnlyPath } from './sudo-path';

/** A rule of an ACL after merging every policy's rule with the same path string. */
export interface AclRule {
  /** The rule's path (the first spelling met; all spellings of a slot have the same key). */
  readonly path: RulePath;
  /** Merged capability mask: `deny` from any policy wins, otherwise the union. */
  readonly mask: number;
  /** Names of the policies that have a rule at this path, sorted. */
  readonly policies: readonly string[];
  /** Parameter constraints of any of the merged rules, sorted. */
  readonly constraints: readonly string[];
}

/**
 * How the store looks a request up:
 * - `list`: LIST requests (and `sys/capabilities`, which the store answers as a LIST): the exact rule
 *   may be found without the trailing `/`, and non-exact rules are tried first without it;
 * - `scan`: SCAN requests: only the exact lookup without the trailing `/`;
 * - `other`: every other operation.
 */
export type LookupMode = 'list' | 'scan' | 'other';

/** What to do with templated rule paths (`{{identity.entity.id}}`). */
export type TemplatingMode =
  /** Drop them: what the store does for a token without an identity entity. */
  | 'drop'
  /** Keep them as literal paths: a report's view of a login identity, whose entity is unknown offline. */
  | 'literal';

/**
 * How a LIST (or SCAN) request ending in `/` falls back to non-exact rules, which changed with
 * GHSA-xp3c-3jw3-4vcr (a `deny` on `a/b/*` bypassed by a `list` on `a/*` for `LIST a/b/`):
 * - `trimmed-first`: the rules matching the path without its `/` first, then the path itself, and
 *   for LIST only (OpenBao before 2.6.0, Vault 1.x: the bypass);
 * - `path-first`: the path itself first, then without its `/`, for LIST and SCAN (OpenBao 2.6.0+).
 */
export type ListLookup = 'trimmed-first' | 'path-first';

/**
 * The LIST lookup of a store version: `path-first` from OpenBao 2.6.0 and from Vault 2.0.3 (its
 * changelog's fix of the same bypass), `trimmed-first` before and when the version is unknown
 * (the older lookup grants more, so a report built on it never hides an access).
 */
export function listLookupOf(target: StoreTarget): ListLookup {
  const fixedIn = target.kind === 'vault' ? '2.0.3' : '2.6.0';
  return target.atLeast(fixedIn) === true ? 'path-first' : 'trimmed-first';
}

/** How an {@link Acl} is built. */
export interface AclOptions {
  /** @default 'literal' */
  readonly templating?: TemplatingMode;
  /** @default 'trimmed-first' (OpenBao 2.4, Vault 1.21) */
  readonly listLookup?: ListLookup;
  /**
   * The store whose root-protected paths ({@link sudoOnlyPath}) {@link Acl.check} enforces: a
   * request there also needs `sudo` on its governing rule. @default 'openbao'
   */
  readonly store?: StoreKind;
}

/**
 * The path the store checks a request against: leading slashes dropped, and for LIST and SCAN a
 * trailing `/` added, which the store's HTTP layer appends to every LIST and SCAN request (and to a
 * GET with `?list=true` or `?scan=true`) before the ACL sees it.
 */
export function requestPathOf(capability: StoreCapability, path: string): string {
  const request = path.replace(/^\/+/, '');
  return (capability === 'list' || capability === 'scan') && !request.endsWith('/') ? `${request}/` : request;
}

/** The outcome of checking one capability on one path. */
export interface AclDecision {
  /** True when the capability is granted. */
  readonly allowed: boolean;
  /** The governing rule, if any rule matched. */
  readonly rule?: AclRule;
  /** True for a root ACL (every capability, no rule). */
  readonly root: boolean;
  /** The path the store checks ({@link requestPathOf}). */
  readonly path: string;
  /**
   * The root-protected path the request falls under (`sys/auth/*`), when it does: the request
   * then also needs `sudo` on the governing rule, and is refused without it.
   */
  readonly sudoPath?: string;
}

/**
 * The ACL rule of a policy rule that merges with nothing, shared by every ACL built from the same
 * parsed policy (a thousand identities holding `default` share its seventeen rules).
 */
const singleRules = new WeakMap<ParsedPolicyRule, AclRule>();

function singleRule(policy: AclPolicy, rule: ParsedPolicyRule): AclRule {
  let single = singleRules.get(rule);
  if (!single) {
    single = { path: rule.path, mask: rule.mask, policies: [policy.name], constraints: rule.constraints };
    singleRules.set(rule, single);
  }
  return single;
}

/** Rules with the same path string, merged: `deny` wins, otherwise the union. */
function mergedRule(entries: ReadonlyArray<{ policy: AclPolicy; rule: ParsedPolicyRule }>): AclRule {
  let mask = 0;
  const policies = new Set<string>();
  const constraints = new Set<string>();
  for (const { policy, rule } of entries) {
    policies.add(policy.name);
    rule.constraints.forEach((c) => constraints.add(c));
    if (isDenyMask(mask)) continue;
    mask = isDenyMask(rule.mask) ? CAPABILITY_BITS.deny : mask | rule.mask;
  }
  return { path: entries[0].rule.path, mask, policies: [...policies].sort(), constraints: [...constraints].sort() };
}

/** A segment-wildcard rule prepared for matching. */
interface SegmentEntry {
  readonly rule: AclRule;
  /** Rule segments (the trailing `*` of a prefix segment rule removed). */
  readonly parts: readonly string[];
  readonly isPrefix: boolean;
  /** Byte offset of the first `+` in the written key (the store's `firstWCOrGlob`). */
  readonly firstWildcard: number;
  /** The key without its trailing `*` (the store's `wcPath`). */
  readonly wcPath: string;
}

/** A matching candidate, with the store's priority attributes. */
interface Candidate {
  readonly rule: AclRule;
  readonly firstWildcard: number;
  readonly isPrefix: boolean;
  readonly wildcards: number;
  readonly wcPath: string;
}

/**
 * An offline model of the store's ACL for one token: the merged rules of its policies and the
 * store's lookup (OpenBao `vault/acl.go`: `NewACL`, `AllowOperation`,
 * `CheckAllowedFromNonExactPaths`, `Capabilities`).
 *
 * - Rules with the same path string (after stripping one leading `/`, and the `*` of a prefix
 *   rule) merge across policies: `deny` wins, otherwise capabilities are OR-ed.
 * - A request is governed by exactly one rule: the exact rule if any, else the highest-priority
 *   match among the longest prefix rule and every matching segment rule (first wildcard later,
 *   not a prefix, fewer `+`, longer, lexicographically greater).
 */
export class Acl {
  /** The ACL of a root token: everything allowed, no rule. */
  static root(): Acl {
    return new Acl([], true, 'trimmed-first', 'openbao');
  }

  /**
   * Builds the ACL of a token holding `policies`.
   * @throws Error when a policy is named `root`: use {@link Acl.root} (the store refuses `root`
   *   alongside other policies)
   */
  static fromPolicies(policies: readonly AclPolicy[], options: AclOptions = {}): Acl {
    const templating = options.templating ?? 'literal';
    const slots = new Map<string, Array<{ policy: AclPolicy; rule: ParsedPolicyRule }>>();
    for (const policy of policies) {
      if (policy.name === 'root') throw new Error('the root policy cannot be combined into an ACL; use Acl.root()');
      for (const rule of policy.rules) {
        if (templating === 'drop' && rule.path.templated) continue;
        const entries = slots.get(rule.path.slot);
        if (entries) entries.push({ policy, rule });
        else slots.set(rule.path.slot, [{ policy, rule }]);
      }
    }
    const rules = [...slots.values()].map((entries) =>
      entries.length === 1 ? singleRule(entries[0].policy, entries[0].rule) : mergedRule(entries),
    );
    return new Acl(rules, false, options.listLookup ?? 'trimmed-first', options.store ?? 'openbao');
  }

  /** Every merged rule, sorted by path then kind: what a report lists. */
  readonly rules: readonly AclRule[];
  private readonly exact = new Map<string, AclRule>();
  private readonly prefixes: Array<{ readonly prefix: string; readonly rule: AclRule }> = [];
  private readonly segments: SegmentEntry[] = [];

  private constructor(
    merged: readonly AclRule[],
    /** True for a root token's ACL. */
    readonly isRoot: boolean,
    /** The store version's LIST fallback. */
    readonly listLookup: ListLookup,
    /** The store whose root-protected paths need `sudo`. */
    readonly store: StoreKind,
  ) {
    this.rules = [...merged].sort(
      (a, b) => compareStrings(a.path.display, b.path.display) || compareStrings(a.path.kind, b.path.kind),
    );
    for (const rule of merged) {
      const { kind, key } = rule.path;
      if (kind === 'exact') this.exact.set(key, rule);
      else if (kind === 'prefix') this.prefixes.push({ prefix: key, rule });
      else this.segments.push(segmentEntry(rule));
    }
  }

  /**
   * The rule that governs a request, or undefined when none matches (the store then denies).
   * @param path request path (leading slashes are ignored, as the store ignores them)
   */
  governingRule(path: string, mode: LookupMode = 'other'): AclRule | undefined {
    const request = path.replace(/^\/+/, '');
    const exact = this.exact.get(request);
    if (exact) return exact;
    const trimmed = request.endsWith('/') ? request.slice(0, -1) : request;
    if (mode !== 'other') {
      const exactTrimmed = this.exact.get(trimmed);
      if (exactTrimmed) return exactTrimmed;
    }
    if (mode !== 'other' && request.endsWith('/')) {
      if (this.listLookup === 'path-first') return this.nonExact(request) ?? this.nonExact(trimmed);
      if (mode === 'list') {
        const rule = this.nonExact(trimmed);
        if (rule) return rule;
      }
    }
    return this.nonExact(request);
  }

  /**
   * What `sys/capabilities` answers for this path: capability names sorted alphabetically,
   * `["deny"]` for none, `["root"]` for a root token.
   */
  capabilities(path: string): string[] {
    if (this.isRoot) return ['root'];
    return storeCapabilityAnswer(this.governingRule(path, 'list')?.mask ?? 0);
  }

  /**
   * Whether a request needing `capability` on `path` passes the ACL (parameter constraints,
   * wrapping TTLs and control groups aside), as the store decides it: the path as the store sees
   * it ({@link requestPathOf}: a LIST or SCAN path ends in `/`), LIST and SCAN with their own
   * lookups and every other capability with the plain one, and on a root-protected path
   * ({@link sudoOnlyPath}) `sudo` needed on the governing rule as well.
   */
  check(capability: StoreCapability, path: string): AclDecision {
    const request = requestPathOf(capability, path);
    const sudoPath = sudoOnlyPath(this.store, request);
    const where = { path: request, ...(sudoPath !== undefined ? { sudoPath } : {}) };
    if (this.isRoot) return { allowed: capability !== 'deny', root: true, ...where };
    const mode: LookupMode = capability === 'list' ? 'list' : capability === 'scan' ? 'scan' : 'other';
    const rule = this.governingRule(request, mode);
    const allowed = rule !== undefined && maskHas(rule.mask, capability) && (sudoPath === undefined || maskHas(rule.mask, 'sudo'));
    return { allowed, rule, root: false, ...where };
  }

  /** Best of the longest matching prefix rule and the matching segment rules. */
  private nonExact(path: string): AclRule | undefined {
    let best: Candidate | undefined;
    let longest: { prefix: string; rule: AclRule } | undefined;
    for (const entry of this.prefixes) {
      if (path.startsWith(entry.prefix) && (!longest || entry.prefix.length > longest.prefix.length)) longest = entry;
    }
    if (longest) {
      best = {
        rule: longest.rule,
        firstWildcard: byteLength(longest.prefix),
        isPrefix: true,
        wildcards: 0,
        wcPath: longest.prefix,
      };
    }
    if (this.segments.length === 0) return best?.rule;
    const parts = path.split('/');
    for (const entry of this.segments) {
      const wildcards = segmentMatch(entry, parts);
      if (wildcards < 0) continue;
      const candidate: Candidate = {
        rule: entry.rule,
        firstWildcard: entry.firstWildcard,
        isPrefix: entry.isPrefix,
        wildcards,
        wcPath: entry.wcPath,
      };
      if (!best || outranks(candidate, best)) best = candidate;
    }
    return best?.rule;
  }
}

const segmentEntries = new WeakMap<AclRule, SegmentEntry>();

/** A segment rule prepared for matching (cached: shared rules are prepared once). */
function segmentEntry(rule: AclRule): SegmentEntry {
  let entry = segmentEntries.get(rule);
  if (!entry) {
    const key = rule.path.key;
    const isPrefix = key.endsWith('*');
    const wcPath = isPrefix ? key.slice(0, -1) : key;
    entry = { rule, parts: wcPath.split('/'), isPrefix, firstWildcard: byteLength(key.slice(0, key.indexOf('+'))), wcPath };
    segmentEntries.set(rule, entry);
  }
  return entry;
}

/**
 * Matches a segment rule against request segments.
 * @returns the number of `+` segments when it matches, -1 when it does not
 */
function segmentMatch(entry: SegmentEntry, parts: readonly string[]): number {
  const rule = entry.parts;
  if (parts.length < rule.length) return -1;
  if (!entry.isPrefix && parts.length !== rule.length) return -1;
  let wildcards = 0;
  const last = rule.length - 1;
  for (let i = 0; i < rule.length; i++) {
    const part = rule[i];
    if (part === '+') wildcards++;
    else if (part === parts[i]) continue;
    else if (entry.isPrefix && i === last && parts[i].startsWith(part)) continue;
    else return -1;
  }
  return wildcards;
}

/**
 * The store's priority between two non-exact rule paths that both match a request: true when the
 * rule `a` governs over `b` (the longest prefix rule among prefix rules, then the order of
 * {@link Acl}'s summary). What the exact invariant search uses to forget a rule that a rule
 * matching every longer path outranks.
 */
export function outranksRulePath(a: RulePath, b: RulePath): boolean {
  return outranks(candidateOf(a), candidateOf(b));
}

function candidateOf(path: RulePath): Omit<Candidate, 'rule'> {
  if (path.kind === 'prefix') return { firstWildcard: byteLength(path.key), isPrefix: true, wildcards: 0, wcPath: path.key };
  const key = path.key;
  const isPrefix = key.endsWith('*');
  const wcPath = isPrefix ? key.slice(0, -1) : key;
  return { firstWildcard: byteLength(key.slice(0, key.indexOf('+'))), isPrefix, wildcards: wcPath.split('/').filter((p) => p === '+').length, wcPath };
}

/** The store's priority order: true when `a` beats `b`. */
function outranks(a: Omit<Candidate, 'rule'>, b: Omit<Candidate, 'rule'>): boolean {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard > b.firstWildcard;
  if (a.isPrefix !== b.isPrefix) return !a.isPrefix;
  if (a.wildcards !== b.wildcards) return a.wildcards < b.wildcards;
  const la = byteLength(a.wcPath);
  const lb = byteLength(b.wcPath);
  if (la !== lb) return la > lb;
  return Buffer.compare(Buffer.from(a.wcPath), Buffer.from(b.wcPath)) > 0;
}

/** Lengths and offsets in UTF-8 bytes, as the store's Go code measures them. */
function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
