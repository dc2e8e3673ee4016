import { AccessDiff } from '../access/access-diff';
import { AccessModel, IdentityAccess } from '../access/access-model';
import { labelOf } from '../access/namespaced-name';
import { RiskFlag, sortRiskFlags } from '../access/risk-flag';
import { AclRule } from '../acl/acl';
import { StoreCapability, capabilityNames, isDenyMask, isStoreCapability } from '../acl/store-capability';
import { compareStrings } from '../private/compare-strings';
import { CLOCK_SKEW_MS } from './audit-log-reader';
import { UsageReport, UsedRequest } from './usage-report';

/** How a change takes a grant away. */
export type GrantRemoval = 'identity removed' | 'rule removed' | 'narrowed' | 'overridden';

/** A grant of base that the change removes or narrows, with its use in the window. */
export interface RemovedGrantUse {
  /** The identity (`jwt/registry-ci`). */
  readonly identity: string;
  /** The base rule's path pattern. */
  readonly rule: string;
  /** How the change takes it: the identity or the rule gone, capabilities lost, or (`overridden`) a rule of head that refuses what it allowed. */
  readonly removal: GrantRemoval;
  /** The capabilities taken (those of the rule for a removed identity or rule); empty for `overridden`. */
  readonly lost: readonly string[];
  /** Requests in the window the rule allowed with a capability taken (or that head refuses). */
  readonly count: number;
  /** The last of them; absent: not used in the window. */
  readonly lastUse?: string;
  /** Of them, those head refuses, by path and operation: the requests this change denies. */
  readonly denied: readonly UsedRequest[];
}

/** Where a review's usage comes from. */
export interface UsageSource {
  /** `audit-log`: read from the store's audit log by the review; `usage-file`: a usage report written before. */
  readonly kind: 'audit-log' | 'usage-file';
  /** The files, as given. */
  readonly files: readonly string[];
}

/** The use of the access a change removes, as `access-diff --usage-log` / `--usage` shows it. */
export interface RemovedAccessUsage {
  /** Where the usage was read: audit log files, or a usage file (as given on the command line). */
  readonly source: UsageSource;
  /** The window of the usage (ISO times; absent: the log's start or end). */
  readonly window: UsageReport['window'];
  /** The first and last request the usage counted. */
  readonly seen: UsageReport['seen'];
  /** The time "N days ago" counts from (the review's). */
  readonly now: string;
  /** The grants removed or narrowed, by identity and rule. */
  readonly grants: readonly RemovedGrantUse[];
  /**
   * Requests of the usage dated after its log ends (`seen.last`, when the report was made) or after
   * the review's now: no request made yet, so not counted as use (an edited usage file, a store clock
   * far ahead). Sorted by identity, path and operation. Entries of an audit log read by the review
   * itself are set apart before (the usage's `counts.future`).
   */
  readonly future: readonly FutureRequest[];
  /** Entries of the audit log read dated after the time of the read, set apart by the reader (`file:line` of the first 20). */
  readonly futureEntries: { readonly count: number; readonly at: readonly string[] };
}

/** A request of a usage report dated after the end of its log or after the review's now. */
export interface FutureRequest extends UsedRequest {
  /** The identity it is credited to. */
  readonly identity: string;
}

const DAY_MS = 86_400_000;

/**
 * The latest time a request of `usage` can carry: its log's last entry, the time the report was
 * made, and the review's now (with the clock skew the audit reader allows), whichever is earliest.
 */
export function usageEndMs(usage: UsageReport, nowMs: number): number {
  const ends = [nowMs + CLOCK_SKEW_MS];
  const last = usage.seen.last === undefined ? NaN : Date.parse(usage.seen.last);
  if (!Number.isNaN(last)) ends.push(last);
  const readAt = usage.counts?.readAt === undefined ? NaN : Date.parse(usage.counts.readAt);
  if (!Number.isNaN(readAt)) ends.push(readAt + CLOCK_SKEW_MS);
  return Math.min(...ends);
}

/** `today`, `1 day ago`, `12 days ago`: how long before `nowMs` a time is. */
export function daysAgo(time: string, nowMs: number): string {
  const days = Math.max(0, Math.floor((nowMs - Date.parse(time)) / DAY_MS));
  return days === 0 ? 'less than a day ago' : days === 1 ? '1 day ago' : `${days} days ago`;
}

interface GrantAcc { identity: string; rule: AclRule; removal: GrantRemoval; lost: readonly string[]; count: number; last?: string; denied: UsedRequest[] }

function later(a: string | undefined, b: string): string {
  return a === undefined || a < b ? b : a;
}

/** The rules of an identity a configuration declares (not those of the built-in `default` policy alone). */
function ownRules(model: AccessModel, access: IdentityAccess): AclRule[] {
  return access.acl.rules.filter((r) => !isDenyMask(r.mask) && !model.isBuiltinDefaultOnly(r, access.identity.namespace));
}

/**
 * The removed and narrowed grants of a change with their use: for each identity the change removes
 * or changes, every request of `usage` (by path and operation) that base allows is evaluated with
 * base's and head's ACLs as the store evaluates them. A grant is listed when the change takes it
 * (identity or rule gone, a capability lost) with its last use through that capability, used or
 * not; and whenever head refuses a request base allowed (a new rule can override an old one). Each
 * grant with requests head refuses is a risk flag, "this change denies requests made N days ago".
 * Identities are matched by name: the usage may have been read against another configuration.
 */
export function removedAccessUse(
  diff: AccessDiff,
  base: AccessModel,
  head: AccessModel,
  usage: UsageReport,
  source: UsageSource,
  nowMs: number,
): { readonly usage: RemovedAccessUsage; readonly flags: RiskFlag[] } {
  // A request dated after the log ends, or later than now, was not made yet: set apart, not counted as use.
  const endMs = usageEndMs(usage, nowMs);
  const future: FutureRequest[] = [];
  const usedBy = new Map(
    usage.identities.map((u) => [
      u.identity,
      u.used
        .flatMap((g) => g.requests)
        .filter((r) => {
          const at = Date.parse(r.lastUse);
          if (at <= endMs) return true;
          future.push({ identity: u.identity, ...r });
          return false;
        }),
    ]),
  );
  const grants = new Map<string, GrantAcc>();
  const grant = (identity: string, rule: AclRule, removal: GrantRemoval, lost: readonly string[]): GrantAcc => {
    const key = `${identity}\u0000${rule.path.slot}`;
    const found = grants.get(key) ?? { identity, rule, removal, lost, count: 0, denied: [] };
    grants.set(key, found);
    return found;
  };
  // Identities by namespace and name (labelOf); the usage is of its namespace's identities only.
  const changedRules = new Map(diff.changed.map((c) => [labelOf(c), new Map(c.rules.map((r) => [r.path, r]))]));
  const usageNamespace = usage.namespace ?? '';
  for (const identity of [...diff.removed, ...diff.changed]) {
    const name = labelOf(identity);
    const before = base.get(name);
    if (!before || before.loginRefused) continue;
    const after = head.get(name);
    const gone = after === undefined;
    // The grants the change takes, used or not: the rules of a removed identity, the lost capabilities of a changed one.
    const taken = new Map<string, { removal: GrantRemoval; lost: readonly string[] }>();
    for (const rule of ownRules(base, before)) {
      if (gone) {
        taken.set(rule.path.slot, { removal: 'identity removed', lost: capabilityNames(rule.mask) });
        continue;
      }
      const change = changedRules.get(name)?.get(rule.path.display);
      // A rule of base with `deny` is not among its own rules: what it loses is never `deny`.
      const lost = change?.lost ?? [];
      if (lost.length > 0) taken.set(rule.path.slot, { removal: change!.removed ? 'rule removed' : 'narrowed', lost });
    }
    for (const rule of ownRules(base, before)) {
      const t = taken.get(rule.path.slot);
      if (t) grant(name, rule, t.removal, t.lost);
    }
    for (const request of (identity.namespace ?? '') === usageNamespace ? (usedBy.get(identity.name) ?? []) : []) {
      if (!isStoreCapability(request.operation, base.store.kind)) continue;
      const operation = request.operation as StoreCapability;
      const decision = before.acl.check(operation, request.path);
      // Refused by base too: not this change's doing (the usage was read against another configuration).
      if (!decision.allowed || !decision.rule) continue;
      // A head identity whose login is refused has an empty ACL: refused like the rest.
      const refused = gone || !after.acl.check(operation, request.path).allowed;
      const t = taken.get(decision.rule.path.slot);
      const through = t !== undefined && t.lost.includes(operation);
      if (!through && !refused) continue;
      // A removed identity's request through a rule of the built-in `default` policy (not listed unused: every token has it).
      const how = t ?? (gone ? { removal: 'identity removed' as const, lost: capabilityNames(decision.rule.mask) } : { removal: 'overridden' as const, lost: [] });
      const g = grant(name, decision.rule, how.removal, how.lost);
      g.count += request.count;
      g.last = later(g.last, request.lastUse);
      if (refused) g.denied.push(request);
    }
  }
  const list: RemovedGrantUse[] = [...grants.values()]
    .sort((a, b) => compareStrings(a.identity, b.identity) || compareStrings(a.rule.path.display, b.rule.path.display))
    .map((g) => ({
      identity: g.identity,
      rule: g.rule.path.display,
      removal: g.removal,
      lost: g.lost,
      count: g.count,
      ...(g.last !== undefined ? { lastUse: g.last } : {}),
      denied: [...g.denied].sort((a, b) => compareStrings(b.lastUse, a.lastUse) || compareStrings(a.path, b.path) || compareStrings(a.operation, b.operation)),
    }));
  return {
    usage: {
      source,
      window: usage.window,
      seen: usage.seen,
      now: new Date(nowMs).toISOString(),
      grants: list,
      future: future.sort((a, b) => compareStrings(a.identity, b.identity) || compareStrings(a.path, b.path) || compareStrings(a.operation, b.operation)),
      futureEntries: { count: usage.counts?.future ?? 0, at: usage.counts?.futureAt ?? [] },
    },
    flags: list.filter((g) => g.denied.length > 0).map((g) => usedAccessFlag(g, nowMs)),
  };
}

/** The most requests a flag names; the grant's row in the note lists them all. */
const SHOWN = 5;

function usedAccessFlag(g: RemovedGrantUse, nowMs: number): RiskFlag {
  const last = g.denied[0].lastUse;
  const shown = g.denied.slice(0, SHOWN).map((r) => `\`${r.operation}\` on \`${r.path}\` last at \`${r.lastUse}\` (${r.count} ${r.count === 1 ? 'request' : 'requests'})`);
  const more = g.denied.length > SHOWN ? ` and ${g.denied.length - SHOWN} more` : '';
  return {
    kind: 'used-access-removed',
    identity: g.identity,
    identities: [g.identity],
    message: `this change denies requests made ${daysAgo(last, nowMs)}: \`${g.identity}\` made ${shown.join(', ')}${more}, allowed before by \`${g.rule}\``,
  };
}

/** An access diff with the use of what it removes (`access-diff --usage-log` / `--usage`; its JSON). */
export interface AccessDiffWithUsage extends AccessDiff {
  /** The use of the grants the change removes or narrows. */
  readonly usage: RemovedAccessUsage;
}

/**
 * The access diff with the use of what it removes: the usage section and its risk flags added to
 * the diff's, in the review's order.
 */
export function withRemovedAccessUse(diff: AccessDiff, base: AccessModel, head: AccessModel, usage: UsageReport, source: UsageSource, nowMs: number): AccessDiffWithUsage {
  const found = removedAccessUse(diff, base, head, usage, source, nowMs);
  return { ...diff, flags: sortRiskFlags([...diff.flags, ...found.flags]), usage: found.usage };
}
