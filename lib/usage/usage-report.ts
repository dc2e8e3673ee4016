import { AccessModel, IdentityAccess } from '../access/access-model';
import { StoreConfiguration } from '../access/store-configuration';
import { AclRule } from '../acl/acl';
import { StoreCapability, capabilityNames, isDenyMask, isStoreCapability } from '../acl/store-capability';
import { DEFAULT_POLICY_NAME } from '../acl/default-policy';
import { compareStrings } from '../private/compare-strings';
import { AuditEntry, AuditReadCounts, AuditWindow, readAuditEntries } from './audit-log-reader';
import { ruleSources } from './rule-sources';

/** The spec's §7 row for a request the store refused for want of a rule. */
export const DENIED_CAUSE = 'HTTP 403 reading a secret: path not in the role\'s policy → update the policy';

/** The spec's §7 rows for failed logins, by auth method. */
export const FAILED_LOGIN_CAUSES: Readonly<Record<string, string>> = {
  jwt: 'HTTP 400 from the JWT login: wrong aud or bound claims (project path, ref, environment) → check the job\'s id_tokens aud and the role\'s bound claims',
  oidc: 'HTTP 400 from the OIDC login: wrong aud or bound claims (groups) → check the person\'s group and the role\'s bound claims',
  approle: 'HTTP 400/403 from the AppRole login: invalid Role ID or Secret ID → reprovision (secretstore-iac rotate-secret-id APP or provision)',
};

/** The requests on one path and operation that one rule allowed. */
export interface UsedRequest {
  /** `request.path`. */
  readonly path: string;
  /** `request.operation`, a capability (`read`, `update`, `list`, ...). */
  readonly operation: string;
  /** Requests allowed. */
  readonly count: number;
  /** Time of the last one. */
  readonly lastUse: string;
}

/** A rule an identity used in the window. */
export interface UsedGrant {
  /** The rule's path pattern. */
  readonly rule: string;
  /** The policies that hold it. */
  readonly policies: readonly string[];
  /** The capabilities used through it, sorted. */
  readonly operations: readonly string[];
  /** Requests it allowed. */
  readonly count: number;
  /** Time of the last request it allowed. */
  readonly lastUse: string;
  /**
   * The requests it allowed, by path and operation, sorted: what `access-diff --usage` evaluates
   * against the changed policies. As many as the distinct paths used, not as the lines read.
   */
  readonly requests: readonly UsedRequest[];
}

/** A rule an identity holds and did not use in the window: a least-privilege candidate. */
export interface UnusedGrant {
  /** The rule's path pattern. */
  readonly rule: string;
  /** The capabilities it grants. */
  readonly capabilities: readonly string[];
  /** The policies that hold it, each with the construct path that declares it when known. */
  readonly policies: readonly { readonly name: string; readonly declaredAt?: string }[];
  /**
   * The declarations that asked for the rule (construct paths, from the comments the library
   * writes above each rule); empty for a hand-written policy.
   */
  readonly declaredBy: readonly string[];
  /** The change that removes it. */
  readonly fix: string;
}

/** A declared rule that allows a request the store refused. */
export interface GrantingRule {
  /** The identity holding it. */
  readonly identity: string;
  /** Its path pattern. */
  readonly rule: string;
  /** Its policies. */
  readonly policies: readonly string[];
}

/** Requests of one identity the store refused (`permission denied`), by path and operation. */
export interface DeniedRequest {
  /** `request.path`. */
  readonly path: string;
  /** `request.operation`. */
  readonly operation: string;
  /** How many. */
  readonly count: number;
  /** Time of the last one. */
  readonly lastTime: string;
  /** The spec's §7 row. */
  readonly cause: string;
  /**
   * The declared rules that allow it, by identity; empty: no declared rule does. The refused
   * identity itself listed here means the store does not hold its declared policy (`drift`).
   */
  readonly grantedBy: readonly GrantingRule[];
  /** The configuration change that would grant it. */
  readonly fix: string;
}

/** Failed logins on one auth mount (and role, when the log shows it). */
export interface FailedLogin {
  /** The auth mount, without slashes (`jwt`, `approle`). */
  readonly mount: string;
  /** The auth method (`request.mount_type`). */
  readonly method: string;
  /**
   * The role, when the log shows it in clear; the store HMACs the JWT login's `role` and the
   * AppRole Role ID by default, so most failed logins are known by their mount only.
   */
  readonly role?: string;
  /** How many. */
  readonly count: number;
  /** Time of the last one. */
  readonly lastTime: string;
  /** The spec's §7 row. */
  readonly cause: string;
}

/** One declared identity's use of its access in the window. */
export interface IdentityUsage {
  /** `<mount>/<role>`. */
  readonly identity: string;
  /** Stack that declares the role. */
  readonly stack: string;
  /** Construct path of the role, when known. */
  readonly declaredAt?: string;
  /** Successful logins. */
  readonly logins: number;
  /** Time of the last request or login. */
  readonly lastSeen?: string;
  /** Rules used, by rule path. */
  readonly used: readonly UsedGrant[];
  /** Rules never used (the store's built-in `default` policy left out: no configuration declares it). */
  readonly unused: readonly UnusedGrant[];
  /** Refused requests, by path and operation. */
  readonly denied: readonly DeniedRequest[];
}

/** The `format` of the usage report's JSON, the usage file `access-diff --usage` reads. */
export const USAGE_FILE_FORMAT = 'secretstore-iac-usage';

/**
 * The `version` of the usage report's JSON: raised when a field is removed or changes meaning (a
 * field added keeps it), so that a reader refuses a file it would misread.
 */
export const USAGE_FILE_VERSION = 1;

/** The usage report: per identity, then failed logins and what was not attributed. */
export interface UsageReport {
  /** {@link USAGE_FILE_FORMAT}: what the JSON file is. */
  readonly format: typeof USAGE_FILE_FORMAT;
  /** {@link USAGE_FILE_VERSION}: its shape. */
  readonly version: typeof USAGE_FILE_VERSION;
  /** The window asked for, as ISO times. */
  readonly window: { readonly since?: string; readonly until?: string };
  /** First and last entry counted. */
  readonly seen: { readonly first?: string; readonly last?: string };
  /** Every declared identity, by name. */
  readonly identities: readonly IdentityUsage[];
  /** Failed logins, by mount and role. */
  readonly failedLogins: readonly FailedLogin[];
  /** Counts of the read. */
  readonly counts: {
    readonly lines: number;
    readonly responses: number;
    readonly malformed: number;
    readonly malformedAt: readonly string[];
    /** Responses of tokens no declared identity issued (root, hand-made tokens, other roles). */
    readonly unattributed: number;
  };
}

interface RequestAcc { path: string; operation: string; count: number; last: string }
interface UsedAcc { rule: AclRule; ops: Set<string>; count: number; last: string; requests: Map<string, RequestAcc> }
interface DeniedAcc { path: string; operation: string; count: number; last: string }
interface IdentityAcc { access: IdentityAccess; logins: number; last?: string; used: Map<string, UsedAcc>; denied: Map<string, DeniedAcc> }

/** A login: `auth/<mount>/login` (JWT, AppRole), or the callback that ends a person's OIDC login. */
const LOGIN_PATH = /^auth\/(.+)\/(?:login(?:\/[^/]*)?|oidc\/callback)$/;

function later(a: string | undefined, b: string): string {
  return a === undefined || a < b ? b : a;
}

/**
 * Aggregates audit entries into the usage report, one entry at a time (nothing but the counts is
 * kept): each request is attributed to the declared identity that made it (the JWT role from
 * `auth.metadata.role`, the AppRole role from `auth.metadata.role_name`, the mount from the
 * token's display name) and to the rule of that identity's ACL that governs it, evaluated as
 * the store does (`Acl.check`).
 */
export class UsageAggregator {
  private readonly byRole = new Map<string, IdentityAcc[]>();
  private readonly byName = new Map<string, IdentityAcc>();
  private readonly failed = new Map<string, { mount: string; method: string; role?: string; count: number; last: string }>();
  private unattributed = 0;
  private first?: string;
  private last?: string;

  /** @param model the access of the declared identities; @param configuration where their policies are declared */
  constructor(
    private readonly model: AccessModel,
    private readonly configuration: StoreConfiguration,
  ) {
    for (const access of model.identities) {
      const acc: IdentityAcc = { access, logins: 0, used: new Map(), denied: new Map() };
      const family = access.identity.method === 'approle' ? 'approle' : 'jwt';
      const key = `${family}\u0000${access.identity.role}`;
      this.byRole.set(key, [...(this.byRole.get(key) ?? []), acc]);
      this.byName.set(access.identity.name, acc);
    }
  }

  /** The identity a token belongs to, told by its role metadata and the mount in its display name. */
  private identityOf(e: AuditEntry): IdentityAcc | undefined {
    const family = e.appRole !== undefined ? 'approle' : e.jwtRole !== undefined ? 'jwt' : undefined;
    if (family === undefined) return undefined;
    const candidates = this.byRole.get(`${family}\u0000${e.appRole ?? e.jwtRole}`) ?? [];
    // The store names a token `<mount path with "/" as "-">-<name>` (or the mount path alone): a
    // token of an undeclared mount with a declared role's name is not that role's. Of mounts `jwt`
    // and `jwt-prod`, `jwt-prod-x` is the longer one's.
    const display = e.displayName;
    if (display === undefined) return candidates.length === 1 ? candidates[0] : undefined;
    const prefixOf = (c: IdentityAcc) => c.access.identity.mount.replace(/\//g, '-');
    const matching = candidates.filter((c) => display === prefixOf(c) || display.startsWith(`${prefixOf(c)}-`));
    const longest = Math.max(0, ...matching.map((c) => prefixOf(c).length));
    const best = matching.filter((c) => prefixOf(c).length === longest);
    return best.length === 1 ? best[0] : undefined;
  }

  /**
   * The declared identity that made a request (not a login), as {@link add} attributes it; undefined
   * for a login or a token no declared identity issued.
   */
  attribute(e: AuditEntry): IdentityAccess | undefined {
    return LOGIN_PATH.test(e.path) ? undefined : this.identityOf(e)?.access;
  }

  /** Counts one response entry. */
  add(e: AuditEntry): void {
    this.first = this.first === undefined || e.time < this.first ? e.time : this.first;
    this.last = later(this.last, e.time);
    const login = LOGIN_PATH.exec(e.path);
    if (login && e.mountType !== undefined && e.mountType in FAILED_LOGIN_CAUSES) {
      if (e.issuedToken) {
        // The login path names the mount: exact, whatever the token's display name.
        const acc = this.byName.get(`${login[1]}/${e.appRole ?? e.jwtRole}`) ?? this.identityOf(e);
        if (acc) {
          acc.logins++;
          acc.last = later(acc.last, e.time);
        } else this.unattributed++;
      } else if (e.error !== undefined || e.responseError) {
        const role = e.loginRole;
        const key = `${login[1]}\u0000${role ?? ''}`;
        const f = this.failed.get(key) ?? { mount: login[1], method: e.mountType, role, count: 0, last: e.time };
        f.count++;
        f.last = later(f.last, e.time);
        this.failed.set(key, f);
      }
      return;
    }
    const acc = this.identityOf(e);
    if (!acc) {
      this.unattributed++;
      return;
    }
    acc.last = later(acc.last, e.time);
    const denied = e.error !== undefined && /permission denied/.test(e.error);
    if (denied) {
      const key = `${e.operation}\u0000${e.path}`;
      const d = acc.denied.get(key) ?? { path: e.path, operation: e.operation, count: 0, last: e.time };
      d.count++;
      d.last = later(d.last, e.time);
      acc.denied.set(key, d);
      return;
    }
    if (!isStoreCapability(e.operation, this.model.store.kind)) return;
    const decision = acc.access.acl.check(e.operation, e.path);
    if (!decision.allowed || !decision.rule) return;
    const key = decision.rule.path.display;
    const u = acc.used.get(key) ?? { rule: decision.rule, ops: new Set<string>(), count: 0, last: e.time, requests: new Map() };
    u.ops.add(e.operation);
    u.count++;
    u.last = later(u.last, e.time);
    acc.used.set(key, u);
    const requestKey = `${e.operation}\u0000${e.path}`;
    const r = u.requests.get(requestKey) ?? { path: e.path, operation: e.operation, count: 0, last: e.time };
    r.count++;
    r.last = later(r.last, e.time);
    u.requests.set(requestKey, r);
  }

  /** The report of everything added. */
  report(counts: AuditReadCounts, window: UsageReport['window']): UsageReport {
    const identities = [...this.byName.values()]
      .sort((a, b) => compareStrings(a.access.identity.name, b.access.identity.name))
      .map((acc) => this.identityUsage(acc));
    const failedLogins = [...this.failed.values()]
      .sort((a, b) => compareStrings(a.mount, b.mount) || compareStrings(a.role ?? '', b.role ?? ''))
      .map((f) => ({ mount: f.mount, method: f.method, ...(f.role !== undefined ? { role: f.role } : {}), count: f.count, lastTime: f.last, cause: FAILED_LOGIN_CAUSES[f.method] }));
    return {
      format: USAGE_FILE_FORMAT,
      version: USAGE_FILE_VERSION,
      window,
      seen: { first: this.first, last: this.last },
      identities,
      failedLogins,
      counts: { lines: counts.lines, responses: counts.responses, malformed: counts.malformedCount, malformedAt: counts.malformed, unattributed: this.unattributed },
    };
  }

  private identityUsage(acc: IdentityAcc): IdentityUsage {
    const { identity, acl } = acc.access;
    const used = [...acc.used.values()]
      .sort((a, b) => compareStrings(a.rule.path.display, b.rule.path.display))
      .map((u) => ({
        rule: u.rule.path.display,
        policies: u.rule.policies,
        operations: [...u.ops].sort(),
        count: u.count,
        lastUse: u.last,
        requests: [...u.requests.values()]
          .sort((a, b) => compareStrings(a.path, b.path) || compareStrings(a.operation, b.operation))
          .map((r) => ({ path: r.path, operation: r.operation, count: r.count, lastUse: r.last })),
      }));
    const unused: UnusedGrant[] = acl.rules
      .filter((r) => !isDenyMask(r.mask) && !acc.used.has(r.path.display) && r.policies.some((p) => p !== DEFAULT_POLICY_NAME || !this.model.builtinDefault))
      .sort((a, b) => compareStrings(a.path.display, b.path.display))
      .map((r) => {
        const policies = r.policies.map((name) => {
          const declaredAt = this.configuration.policies.get(name)?.declaredAt;
          return declaredAt !== undefined ? { name, declaredAt } : { name };
        });
        const declaredBy = [...new Set(r.policies.flatMap((name) => this.sourcesOf(name).get(r.path.display) ?? []))].sort(compareStrings);
        return { rule: r.path.display, capabilities: capabilityNames(r.mask), policies, declaredBy, fix: unusedFix(identity.name, identity.method, r, declaredBy) };
      });
    const denied = [...acc.denied.values()]
      .sort((a, b) => compareStrings(a.path, b.path) || compareStrings(a.operation, b.operation))
      .map((d) => {
        const grantedBy = this.grantedBy(d.operation, d.path);
        return { path: d.path, operation: d.operation, count: d.count, lastTime: d.last, cause: DENIED_CAUSE, grantedBy, fix: deniedFix(identity.method, d.operation, d.path, grantedBy) };
      });
    return {
      identity: identity.name,
      stack: identity.stack,
      ...(identity.declaredAt !== undefined ? { declaredAt: identity.declaredAt } : {}),
      logins: acc.logins,
      ...(acc.last !== undefined ? { lastSeen: acc.last } : {}),
      used,
      unused,
      denied,
    };
  }

  private readonly sources = new Map<string, ReadonlyMap<string, readonly string[]>>();

  /** The declarations behind each rule of a declared policy, read once per policy. */
  private sourcesOf(policy: string): ReadonlyMap<string, readonly string[]> {
    let found = this.sources.get(policy);
    if (!found) {
      found = ruleSources(this.configuration.policies.get(policy)?.text ?? '');
      this.sources.set(policy, found);
    }
    return found;
  }

  /** The rules of the declared identities that allow a request. */
  private grantedBy(operation: string, path: string): GrantingRule[] {
    if (!isStoreCapability(operation, this.model.store.kind)) return [];
    const out: GrantingRule[] = [];
    for (const other of this.model.identities) {
      if (other.loginRefused) continue;
      const decision = other.acl.check(operation as StoreCapability, path);
      if (decision.allowed && decision.rule) out.push({ identity: other.identity.name, rule: decision.rule.path.display, policies: decision.rule.policies });
    }
    return out;
  }
}

/** The change that removes an unused rule from an identity. */
function unusedFix(identity: string, method: string, rule: AclRule, declaredBy: readonly string[]): string {
  const policies = rule.policies.map((p) => `"${p}"`).join(', ');
  const field = method === 'jwt' ? "the CI secret's readByCi" : method === 'approle' ? "the application's paths" : "the group's grants";
  const where =
    declaredBy.length > 0
      ? `narrow ${field} at ${declaredBy.join(', ')} (policy ${policies})`
      : `remove the rule from policy ${policies} or detach the policy from the role`;
  return `to take "${rule.path.display}" from ${identity}: ${where}; access-diff then shows the narrowing`;
}

/** The change that would grant a refused request. */
function deniedFix(method: string, operation: string, path: string, grantedBy: readonly GrantingRule[]): string {
  const where =
    method === 'approle'
      ? "add the path to the application's paths"
      : method === 'jwt'
        ? "add the pipeline to the CI secret's readByCi (or the path to the pipeline's grants)"
        : "add the path to the group's grants";
  const existing = grantedBy.length === 0 ? 'no declared rule allows it' : `declared for ${grantedBy.map((g) => `${g.identity} by "${g.rule}" (${g.policies.join(', ')})`).join('; ')}`;
  return `to grant ${operation} on ${path}: ${where} (${existing}); if the refusal is right, nothing to change`;
}

/**
 * The usage report of audit log files: their entries in `window`, streamed one line at a time
 * ({@link readAuditEntries}) into a {@link UsageAggregator} over `model`. `observe`, when given, sees
 * every entry with the declared identity it is attributed to (the invariants' forbidden requests).
 * @throws Error naming a file that cannot be read
 */
export async function usageOfAuditLog(
  files: readonly string[],
  window: AuditWindow,
  model: AccessModel,
  configuration: StoreConfiguration,
  observe?: (identity: IdentityAccess | undefined, entry: AuditEntry) => void,
): Promise<UsageReport> {
  const aggregator = new UsageAggregator(model, configuration);
  const counts: AuditReadCounts = { lines: 0, responses: 0, malformed: [], malformedCount: 0 };
  for await (const entry of readAuditEntries(files, window, counts)) {
    aggregator.add(entry);
    observe?.(aggregator.attribute(entry), entry);
  }
  const iso = (ms?: number) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return aggregator.report(counts, { since: iso(window.sinceMs), until: iso(window.untilMs) });
}
