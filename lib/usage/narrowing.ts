import { compareStrings } from '../private/compare-strings';
import { ConfigEdit, grantDeclaration, roleDeclaration } from './grant-declaration';

export type { ConfigEdit };
import { IdentityUsage, UsageReport } from './usage-report';

/** The evidence behind one narrowing item: what the log shows of the identity and the grant in the window. */
export interface NarrowingEvidence {
  /** The identity holding the grant (`jwt/registry-ci`). */
  readonly identity: string;
  /** Its successful logins in the window. */
  readonly logins: number;
  /** Its requests in the window (allowed and refused). */
  readonly requests: number;
  /** Its last request or login, when any. */
  readonly lastSeen?: string;
  /** Rules of the grant, each unused in the window. */
  readonly rules: readonly { readonly rule: string; readonly capabilities: readonly string[] }[];
}

/** One declaration the narrowing removes (or would, were it not kept or not configurable). */
export interface NarrowingItem {
  /** The construct path that declares the grant (`ci-access/svc-mirror`, `people/group-ops/reads[1]`), or `role <identity>`. */
  readonly declaration: string;
  /** The `PlatformConfig` field, dotted; undefined when no field declares it (the spec's own declarations). */
  readonly field?: string;
  /** The change in words: `accounts.mirror.readByCi: true -> false`, `people.groups.ops.reads[1] removed`, or why none. */
  readonly change: string;
  /** The edit of the configuration source, when a field declares it. */
  readonly edit?: ConfigEdit;
  /** The `--keep` value that keeps it, when one does. */
  readonly keptBy?: string;
  /** What the log shows, per identity holding it. */
  readonly evidence: readonly NarrowingEvidence[];
}

/** The narrowing of one usage report: what to remove, what is kept, and the window it is based on. */
export interface Narrowing {
  /** The report's window and the first and last entries it counted. */
  readonly window: UsageReport['window'];
  readonly seen: UsageReport['seen'];
  /** Declarations removed (or to remove by hand), sorted by field then declaration. */
  readonly items: readonly NarrowingItem[];
  /**
   * Declared roles with no login and no request in the window: listed; edited (the application or
   * people group removed) only when asked ({@link NarrowingOptions.retireIdle}): removing a role
   * removes more than a grant.
   */
  readonly idleRoles: readonly NarrowingItem[];
}

/** How far the narrowing goes. */
export interface NarrowingOptions {
  /**
   * Retire the roles that never logged in in the window: the edit removes the application
   * (`applications.<id>`) or people group (`people.groups.<name>`) that declares each one (`narrow
   * --retire-idle`). A role no field declares stays listed.
   * @default false (listed, not edited)
   */
  readonly retireIdle?: boolean;
}

/**
 * The items whose edit is made: every grant and, with {@link NarrowingOptions.retireIdle}, every
 * idle role that has an edit and is not kept. What `narrow` edits and what its texts list as removed.
 */
export function editedItems(n: Narrowing): NarrowingItem[] {
  return [...n.items, ...n.idleRoles].filter((i) => i.keptBy === undefined && i.edit !== undefined);
}

function requestsOf(u: IdentityUsage): number {
  return u.used.reduce((n, g) => n + g.count, 0) + u.denied.reduce((n, d) => n + d.count, 0);
}

function changeOf(field: string | undefined, edit: ConfigEdit | undefined, text: string): string {
  if (edit?.kind === 'account-not-read-by-ci') return `${field}: true -> false (accounts.${edit.account}.consumers dropped, if any: SSI-R8)`;
  if (edit?.kind === 'remove-group-read') return `${field} removed`;
  if (edit?.kind === 'retire-application' || edit?.kind === 'retire-group') return `${field} removed (${text})`;
  if (field !== undefined) return `${field}: ${text}`;
  return `no PlatformConfig field: ${text}`;
}

/**
 * Whether `keep` names this item: its field or a field above it (`accounts.mirror`), its declaration
 * (construct path), or an identity holding it (`jwt/registry-ci`).
 */
function keeps(keep: string, item: { field?: string; declaration: string; identities: readonly string[] }): boolean {
  const under = (f: string | undefined) => f !== undefined && (f === keep || f.startsWith(`${keep}.`) || f.startsWith(`${keep}[`));
  return under(item.field) || item.declaration === keep || item.identities.includes(keep);
}

/**
 * The narrowing of a usage report: every declaration behind a grant never used in the window, with
 * the `PlatformConfig` field and value that remove it (or why none does), the evidence, and the
 * `--keep` values that keep one regardless. (The report's used grants name no declaration: a
 * declaration asking for one used rule and one unused one is not told apart; the library's
 * registry accounts and people reads declare one rule each.) Deterministic: sorted by field, then
 * declaration; evidence by identity.
 * @param keep `--keep` values: fields, construct paths or identities
 * @param options whether idle roles are retired by an edit
 * @returns the narrowing, and the `--keep` values that matched nothing
 */
export function narrowingOf(report: UsageReport, keep: readonly string[] = [], options: NarrowingOptions = {}): { readonly narrowing: Narrowing; readonly unmatchedKeeps: readonly string[] } {
  // Each declaration behind an unused rule, with the identities holding it and its unused rules.
  const byDeclaration = new Map<string, Map<string, { usage: IdentityUsage; rules: { rule: string; capabilities: readonly string[] }[] }>>();
  for (const u of report.identities) {
    for (const g of u.unused) {
      for (const d of g.declaredBy) {
        const holders = byDeclaration.get(d) ?? new Map();
        const holder = holders.get(u.identity) ?? { usage: u, rules: [] };
        holder.rules.push({ rule: g.rule, capabilities: g.capabilities });
        holders.set(u.identity, holder);
        byDeclaration.set(d, holders);
      }
    }
  }
  const matched = new Set<string>();
  const items: NarrowingItem[] = [];
  for (const [declaration, holders] of byDeclaration) {
    const { field, text, edit } = grantDeclaration(declaration);
    const identities = [...holders.keys()].sort(compareStrings);
    const keptBy = keep.find((k) => keeps(k, { field, declaration, identities }));
    if (keptBy !== undefined) matched.add(keptBy);
    const evidence = identities.map((id) => {
      const { usage, rules } = holders.get(id)!;
      return {
        identity: id,
        logins: usage.logins,
        requests: requestsOf(usage),
        ...(usage.lastSeen !== undefined ? { lastSeen: usage.lastSeen } : {}),
        rules: [...rules].sort((a, b) => compareStrings(a.rule, b.rule)),
      };
    });
    items.push({
      declaration,
      ...(field !== undefined ? { field } : {}),
      change: changeOf(field, edit, text),
      ...(edit !== undefined ? { edit } : {}),
      ...(keptBy !== undefined ? { keptBy } : {}),
      evidence,
    });
  }
  items.sort((a, b) => compareStrings(a.field ?? '\uffff', b.field ?? '\uffff') || compareStrings(a.declaration, b.declaration));
  const idleRoles: NarrowingItem[] = report.identities
    .filter((u) => u.logins === 0 && requestsOf(u) === 0)
    .sort((a, b) => compareStrings(a.identity, b.identity))
    .map((u) => {
      const declaration = u.declaredAt ?? `role ${u.identity}`;
      const { field, edit } = roleDeclaration(u.declaredAt);
      const keptBy = keep.find((k) => keeps(k, { field, declaration, identities: [u.identity] }));
      if (keptBy !== undefined) matched.add(keptBy);
      const idle = `role ${u.identity} (stack ${u.stack}) never logged in in the window`;
      const retired = options.retireIdle === true && edit !== undefined;
      return {
        declaration,
        ...(field !== undefined ? { field } : {}),
        change: retired
          ? changeOf(field, edit, idle)
          : field !== undefined
            ? `${idle}: retire it by removing ${field} from the PlatformConfig (narrow --retire-idle does), or keep it (--keep ${u.identity})`
            : `${idle}: no PlatformConfig field declares it (the platform's own role): retire it by removing its declaration, or keep it (--keep ${u.identity})`,
        ...(retired ? { edit } : {}),
        ...(keptBy !== undefined ? { keptBy } : {}),
        evidence: [{ identity: u.identity, logins: 0, requests: 0, rules: [] }],
      };
    });
  return {
    narrowing: { window: report.window, seen: report.seen, items, idleRoles },
    unmatchedKeeps: keep.filter((k) => !matched.has(k)),
  };
}
