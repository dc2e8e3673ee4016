import { AccessModel, IdentityAccess } from '../access/access-model';
import { StoreConfiguration, declaredPolicyIn } from '../access/store-configuration';
import { AclRule } from '../acl/acl';
import { StoreCapability, capabilityNames, isDenyMask, isStoreCapability } from '../acl/store-capability';
import { DEFAULT_POLICY_NAME } from '../acl/default-policy';
import { compareStrings } from '../private/compare-strings';
import { canonicalStoreNamespace } from '../model/store-namespace';
import { labelOf, namespacedLabel } from '../access/namespaced-name';
import { pathSeenFrom } from '../model/store-namespace';
import { AuditEntry, AuditReadCounts, AuditWindow, inLogOrder, readAuditEntries } from './audit-log-reader';
import { ruleSources } from './rule-sources';
import { grantDeclaration } from './grant-declaration';

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
  /**
   * The store namespace whose identities the report is about (`ns1`); absent for the root
   * namespace. Entries of other namespaces are counted apart (`counts.otherNamespaces`).
   */
  readonly namespace?: string;
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
    /**
     * Responses of tokens of a role (role metadata) whose login (or creation) is not in the log
     * (before its first line, rotated away): credited to none, whatever their display name.
     * Absent in files written before it was counted.
     */
    readonly loginNotInLog?: number;
    /** Responses (requests, logins, failed logins) made in another namespace than the report's. Absent in older files. */
    readonly otherNamespaces?: number;
    /**
     * Entries dated after the time the report was made (a store clock far ahead, an edited log):
     * not counted as use. Absent in files written before it was counted.
     */
    readonly future?: number;
    /** Where the first 20 of them are, as `file:line`. */
    readonly futureAt?: readonly string[];
    /** The time the report was made (ISO), what {@link future} is measured against. */
    readonly readAt?: string;
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
 * Who made a request, told by its token's lineage: a declared identity, or why none is credited.
 * `undeclared`: a token no declared identity issued (root, hand-made, a role not in the
 * configuration); `other-namespace`: a request or login of another namespace than the report's;
 * `login-not-in-log`: a token of a role whose login (or creation) is not in the log.
 */
type Origin = { readonly kind: 'identity'; readonly acc: IdentityAcc } | { readonly kind: 'undeclared' | 'other-namespace' | 'login-not-in-log' };

const UNDECLARED: Origin = { kind: 'undeclared' };
const OTHER_NAMESPACE: Origin = { kind: 'other-namespace' };
const LOGIN_NOT_IN_LOG: Origin = { kind: 'login-not-in-log' };

/**
 * Aggregates audit entries into the usage report, one entry at a time: each request is credited to
 * the declared identity whose login issued its token, as the store wrote it. A login's response
 * names the mount (its path `auth/<mount>/login`), the namespace (`request.namespace.path`) and the
 * role (`auth.metadata.role`, `role_name`) of the token it issued, and that token's accessor, which
 * every later request of the token carries (HMAC-ed with the same key); a token created from another
 * (`auth/token/create`) is its parent's. A token whose login is not in the log is credited to none
 * (`counts.loginNotInLog`): its display name is no proof of its mount. Then the
 * request is matched to the rule of that identity's ACL that governs it, evaluated as the store
 * does (`Acl.check`). What is kept grows with the tokens issued, not with the lines.
 */
export class UsageAggregator {
  private readonly byName = new Map<string, IdentityAcc>();
  private readonly failed = new Map<string, { mount: string; method: string; role?: string; count: number; last: string }>();
  /** Each token seen issued (its accessor or HMAC-ed value, as the log has it), with its origin. */
  private readonly tokens = new Map<string, Origin>();
  private readonly namespace: string;
  private unattributed = 0;
  private loginNotInLog = 0;
  private otherNamespaces = 0;
  private first?: string;
  private last?: string;

  /**
   * @param model the access of the declared identities; @param configuration where their policies are declared
   * @param namespace the store namespace the identities are in (`ns1`, `admin/team`); undefined or
   *   `''` for the root namespace. Entries of another namespace are counted apart.
   */
  constructor(
    private readonly model: AccessModel,
    private readonly configuration: StoreConfiguration,
    namespace?: string,
  ) {
    this.namespace = canonicalStoreNamespace(namespace ?? '');
    for (const access of model.identities) {
      const acc: IdentityAcc = { access, logins: 0, used: new Map(), denied: new Map() };
      // By namespace and name: the login of `approle/app` in ns1 is not the root's `approle/app`'s.
      this.byName.set(labelOf(access.identity), acc);
    }
  }

  /** The origin of the token a successful login on `mount` issued: exact, by the login's path and namespace. */
  private loginOrigin(e: AuditEntry, mount: string): Origin {
    if (e.namespace !== this.namespace) return OTHER_NAMESPACE;
    const role = e.appRole ?? e.jwtRole;
    const acc = role === undefined ? undefined : this.byName.get(namespacedLabel(`${mount}/${role}`, this.namespace));
    return acc ? { kind: 'identity', acc } : UNDECLARED;
  }

  /** The origin of a request's token: its login or creation in the log, else {@link unknownOrigin}. */
  private originOf(e: AuditEntry): Origin {
    if (e.namespace !== this.namespace) return OTHER_NAMESPACE;
    return (e.token === undefined ? undefined : this.tokens.get(e.token)) ?? this.unknownOrigin(e);
  }

  /**
   * A token whose login (or creation) is not in the log: before its first line, rotated away.
   * Nothing the store wrote of its requests names its mount: the display name (`<mount path>-<name>`,
   * `ns1-auth-<mount>-<name>` in a namespace) is a prefix guess that a mount of another name
   * (`jwt-prod` for `jwt`'s `prod-infra/x`), an undeclared or a since-removed mount fits as well,
   * and no request carries the auth mount's accessor. So a token with role metadata is counted as
   * "login not in the log", credited to none; one without (root, hand-made, a child whose parent is
   * unknown) is no declared identity's.
   */
  private unknownOrigin(e: AuditEntry): Origin {
    return e.appRole !== undefined || e.jwtRole !== undefined ? LOGIN_NOT_IN_LOG : UNDECLARED;
  }

  /**
   * Learns the tokens an entry dated before the window issued, counting nothing: a login before
   * `--since` still names the tokens of the requests inside the window.
   */
  learn(e: AuditEntry): void {
    const login = LOGIN_PATH.exec(e.path);
    if (login && e.mountType !== undefined && e.mountType in FAILED_LOGIN_CAUSES) {
      const key = e.issued ?? e.token;
      if (e.issuedToken && key !== undefined) this.tokens.set(key, this.loginOrigin(e, login[1]));
    } else if (e.issued !== undefined && e.issued !== e.token) this.tokens.set(e.issued, this.originOf(e));
  }

  private countApart(origin: Origin): void {
    if (origin.kind === 'other-namespace') this.otherNamespaces++;
    else if (origin.kind === 'login-not-in-log') this.loginNotInLog++;
    else this.unattributed++;
  }

  /**
   * Counts one response entry.
   * @returns the declared identity it is credited to: undefined for a login or a request no declared identity made
   */
  add(e: AuditEntry): IdentityAccess | undefined {
    this.first = this.first === undefined || e.time < this.first ? e.time : this.first;
    this.last = later(this.last, e.time);
    const login = LOGIN_PATH.exec(e.path);
    if (login && e.mountType !== undefined && e.mountType in FAILED_LOGIN_CAUSES) {
      if (e.issuedToken) {
        // The login path and namespace name the mount, the metadata the role: exact, whatever the display name.
        const origin = this.loginOrigin(e, login[1]);
        const key = e.issued ?? e.token;
        if (key !== undefined) this.tokens.set(key, origin);
        if (origin.kind === 'identity') {
          origin.acc.logins++;
          origin.acc.last = later(origin.acc.last, e.time);
        } else this.countApart(origin);
      } else if (e.error !== undefined || e.responseError) {
        if (e.namespace !== this.namespace) {
          this.otherNamespaces++;
          return undefined;
        }
        const role = e.loginRole;
        const key = `${login[1]}\u0000${role ?? ''}`;
        const f = this.failed.get(key) ?? { mount: login[1], method: e.mountType, role, count: 0, last: e.time };
        f.count++;
        f.last = later(f.last, e.time);
        this.failed.set(key, f);
      }
      return undefined;
    }
    const origin = this.originOf(e);
    // A token this request issued (auth/token/create, the pipeline's per-stack child token) is the requester's.
    if (e.issued !== undefined && e.issued !== e.token) this.tokens.set(e.issued, origin);
    if (origin.kind !== 'identity') {
      this.countApart(origin);
      return undefined;
    }
    const acc = origin.acc;
    acc.last = later(acc.last, e.time);
    const denied = e.error !== undefined && /permission denied/.test(e.error);
    if (denied) {
      const key = `${e.operation}\u0000${e.path}`;
      const d = acc.denied.get(key) ?? { path: e.path, operation: e.operation, count: 0, last: e.time };
      d.count++;
      d.last = later(d.last, e.time);
      acc.denied.set(key, d);
      return acc.access;
    }
    if (!isStoreCapability(e.operation, this.model.store.kind)) return acc.access;
    const decision = acc.access.acl.check(e.operation, e.path);
    if (!decision.allowed || !decision.rule) return acc.access;
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
    return acc.access;
  }

  /**
   * The report of everything added.
   * @param readAt the time of the read, when entries dated after it were set apart (`counts.future`)
   */
  report(counts: AuditReadCounts, window: UsageReport['window'], readAt?: number): UsageReport {
    const identities = [...this.byName.values()]
      .sort((a, b) => compareStrings(a.access.identity.name, b.access.identity.name))
      .map((acc) => this.identityUsage(acc));
    const failedLogins = [...this.failed.values()]
      .sort((a, b) => compareStrings(a.mount, b.mount) || compareStrings(a.role ?? '', b.role ?? ''))
      .map((f) => ({ mount: f.mount, method: f.method, ...(f.role !== undefined ? { role: f.role } : {}), count: f.count, lastTime: f.last, cause: FAILED_LOGIN_CAUSES[f.method] }));
    return {
      format: USAGE_FILE_FORMAT,
      version: USAGE_FILE_VERSION,
      ...(this.namespace !== '' ? { namespace: this.namespace } : {}),
      window,
      seen: { first: this.first, last: this.last },
      identities,
      failedLogins,
      counts: {
        lines: counts.lines,
        responses: counts.responses,
        malformed: counts.malformedCount,
        malformedAt: counts.malformed,
        unattributed: this.unattributed,
        loginNotInLog: this.loginNotInLog,
        otherNamespaces: this.otherNamespaces,
        ...(readAt === undefined ? {} : { future: counts.futureCount ?? 0, futureAt: counts.future ?? [], readAt: new Date(readAt).toISOString() }),
      },
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
      .filter((r) => !isDenyMask(r.mask) && !acc.used.has(r.path.display) && r.policies.some((p) => p !== DEFAULT_POLICY_NAME || !this.model.builtinDefaultIn(identity.namespace)))
      .sort((a, b) => compareStrings(a.path.display, b.path.display))
      .map((r) => {
        const policies = r.policies.map((name) => {
          const declaredAt = declaredPolicyIn(this.configuration, identity.namespace, name)?.declaredAt;
          return declaredAt !== undefined ? { name, declaredAt } : { name };
        });
        const declaredBy = [...new Set(r.policies.flatMap((name) => this.sourcesOf(identity.namespace, name).get(r.path.display) ?? []))].sort(compareStrings);
        return { rule: r.path.display, capabilities: capabilityNames(r.mask), policies, declaredBy, fix: unusedFix(identity.name, r, declaredBy, isPipelineRole(identity.declaredAt)) };
      });
    const denied = [...acc.denied.values()]
      .sort((a, b) => compareStrings(a.path, b.path) || compareStrings(a.operation, b.operation))
      .map((d) => {
        const grantedBy = this.grantedBy(d.operation, d.path);
        return { path: d.path, operation: d.operation, count: d.count, lastTime: d.last, cause: DENIED_CAUSE, grantedBy, fix: deniedFix(identity.method, d.operation, d.path, grantedBy, isPipelineRole(identity.declaredAt)) };
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

  /** The declarations behind each rule of a declared policy of a namespace, read once per policy. */
  private sourcesOf(namespace: string | undefined, policy: string): ReadonlyMap<string, readonly string[]> {
    const key = namespacedLabel(policy, namespace);
    let found = this.sources.get(key);
    if (!found) {
      found = ruleSources(declaredPolicyIn(this.configuration, namespace, policy)?.text ?? '');
      this.sources.set(key, found);
    }
    return found;
  }

  /** The rules of the declared identities that allow a request of the report's namespace (as the store checks it for each: {@link pathSeenFrom}). */
  private grantedBy(operation: string, path: string): GrantingRule[] {
    if (!isStoreCapability(operation, this.model.store.kind)) return [];
    const out: GrantingRule[] = [];
    for (const other of this.model.identities) {
      if (other.loginRefused) continue;
      const seen = pathSeenFrom(other.identity.namespace ?? '', this.namespace, path);
      if (seen === undefined) continue;
      const decision = other.acl.check(operation as StoreCapability, seen);
      if (decision.allowed && decision.rule) out.push({ identity: labelOf(other.identity), rule: decision.rule.path.display, policies: decision.rule.policies });
    }
    return out;
  }
}

/** The configuration pipeline's roles (`ConfigurationPipelineRole` of the `ci-access` stack), told by their construct path. */
function isPipelineRole(declaredAt: string | undefined): boolean {
  return declaredAt !== undefined && /^ci-access\/pipeline-(?:apply|plan)\//.test(declaredAt);
}

/** Why a pipeline role's grant has no field: its rules follow the objects of the stacks it runs. */
const PIPELINE_GRANTS = "the configuration pipeline's rules are derived from the objects of the stacks it runs (docs/pipelines.md §9): no PlatformConfig field changes them";

/** The change that removes an unused rule from an identity: the configuration field of each declaration that asked for it. */
function unusedFix(identity: string, rule: AclRule, declaredBy: readonly string[], pipeline: boolean): string {
  const policies = rule.policies.map((p) => `"${p}"`).join(', ');
  const where = pipeline
    ? `${PIPELINE_GRANTS}; a rule unused in the window is one whose object no pipeline run changed or read`
    : declaredBy.length > 0
      ? declaredBy.map((d) => `${d}: ${grantDeclaration(d).text}`).join('; ')
      : `a hand-written rule: remove it from policy ${policies} or detach the policy from the role`;
  return `to take "${rule.path.display}" from ${identity}: ${where}; access-diff then shows the narrowing`;
}

/**
 * The change that would grant a refused request, naming the configuration fields that declare such
 * grants for the identity's kind.
 */
function deniedFix(method: string, operation: string, path: string, grantedBy: readonly GrantingRule[], pipeline: boolean): string {
  const where = pipeline
    ? `${PIPELINE_GRANTS}; a read refused before the apply that creates the object (its grant comes with that apply) needs none`
    : method === 'approle'
      ? "an application's policy reads only its own secret path (secret/data/{org}/{environment}/{name}/*, from its applications entry's name and environment): no field adds another path"
      : method === 'jwt'
        ? 'CI reads the registry accounts of the PlatformConfig (accounts.<name>, readByCi true by default) and the spec\'s CI secrets; another path needs its own declaration'
        : 'add the path to the group\'s people.groups.<name>.reads in the PlatformConfig';
  const existing = grantedBy.length === 0 ? 'no declared rule allows it' : `declared for ${grantedBy.map((g) => `${g.identity} by "${g.rule}" (${g.policies.join(', ')})`).join('; ')}`;
  return `to grant ${operation} on ${path}: ${where} (${existing}); if the refusal is right, nothing to change`;
}

/** Options of {@link usageOfAuditLog}. */
export interface UsageReadOptions {
  /**
   * Sees every entry with the declared identity it is credited to (the invariants' forbidden requests).
   */
  readonly observe?: (identity: IdentityAccess | undefined, entry: AuditEntry) => void;
  /**
   * The namespace of the identities (`VAULT_NAMESPACE` as the CLI resolved it against the stacks').
   * @default the one namespace the configuration's stacks declare, else the root namespace
   */
  readonly namespace?: string;
}

/**
 * The usage report of audit log files: their entries in `window`, streamed one line at a time
 * ({@link readAuditEntries}), oldest file first ({@link inLogOrder}), into a {@link UsageAggregator}
 * over `model`. Entries dated after `window.nowMs` are counted apart, never as use.
 * @throws Error naming a file that cannot be read
 */
export async function usageOfAuditLog(
  files: readonly string[],
  window: AuditWindow,
  model: AccessModel,
  configuration: StoreConfiguration,
  options: UsageReadOptions = {},
): Promise<UsageReport> {
  const declared = configuration.namespaces ?? [];
  const namespace = options.namespace ?? (declared.length === 1 ? declared[0] : undefined);
  const aggregator = new UsageAggregator(model, configuration, namespace);
  const counts: AuditReadCounts = { lines: 0, responses: 0, malformed: [], malformedCount: 0 };
  for await (const entry of readAuditEntries(await inLogOrder(files), window, counts, (e) => aggregator.learn(e))) {
    // Added whether observed or not (`observe?.(add(...))` would skip the add).
    const identity = aggregator.add(entry);
    options.observe?.(identity, entry);
  }
  const iso = (ms?: number) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return aggregator.report(counts, { since: iso(window.sinceMs), until: iso(window.untilMs) }, window.nowMs);
}
