import { AccessModel, IdentityAccess } from '../access/access-model';
import { identityKindOf, invariantSubjects } from '../access/invariant-subjects';
import { isStoreCapability } from '../acl/store-capability';
import { AccessInvariant, OTHER_APPLICATIONS, forbiddenCapabilities } from '../invariants/access-invariant';
import { PathOwnership } from '../invariants/path-ownership';
import { selects } from '../invariants/identity-selector';
import { InvariantScopes } from '../invariants/invariant-scope';
import { compareStrings } from '../private/compare-strings';
import { mdCell, mdCode, mdTable } from '../render/markdown-text';
import { terminalLine } from '../private/terminal-text';
import { AuditEntry } from './audit-log-reader';

/** Requests of one identity, operation and path that an access invariant forbids. */
export interface ForbiddenRequest {
  /** The invariant's id. */
  readonly invariant: string;
  /** Why it holds. */
  readonly reason: string;
  /** The identity that made them. */
  readonly identity: string;
  /** Its kind. */
  readonly kind: string;
  /** `request.operation`. */
  readonly operation: string;
  /** `request.path`. */
  readonly path: string;
  /** How many the store allowed. */
  readonly allowed: number;
  /** How many it refused (permission denied). */
  readonly denied: number;
  /** The last one's time. */
  readonly lastTime: string;
}

/**
 * Collects, from audit entries attributed to declared identities, the requests an access invariant
 * forbids, allowed by the store or not: a request allowed here means a grant (declared, or made by
 * hand on the store) breaks the invariant. A path is covered as the store matches it against the
 * invariant's path pattern (`InvariantScopes`).
 */
export class ForbiddenRequestCollector {
  private readonly scopes = new InvariantScopes();
  private readonly ownership: PathOwnership | undefined;
  private readonly found = new Map<string, { -readonly [K in keyof ForbiddenRequest]: ForbiddenRequest[K] }>();

  constructor(
    private readonly model: AccessModel,
    private readonly invariants: readonly AccessInvariant[],
  ) {
    this.ownership = invariants.some((i) => i.paths.includes(OTHER_APPLICATIONS)) ? new PathOwnership(invariantSubjects(model)) : undefined;
  }

  /** True when `pattern` covers a request of `name` (for `@other-applications`: the path is another application's, not its own). */
  private covers(pattern: string, name: string, e: AuditEntry, identity: IdentityAccess): boolean {
    if (pattern !== OTHER_APPLICATIONS) return this.scopes.covers(pattern, e.operation as never, e.path, identity.acl);
    const owners = this.ownership!.ownersOf(e.path);
    return owners.length > 0 && !owners.includes(name);
  }

  /** Counts one request of `identity` (undefined: no declared identity made it; not counted). */
  add(identity: IdentityAccess | undefined, e: AuditEntry): void {
    if (identity === undefined || this.invariants.length === 0) return;
    const store = this.model.store.kind;
    if (!isStoreCapability(e.operation, store)) return;
    const name = identity.identity.name;
    const kind = identityKindOf(identity.identity);
    const denied = e.error !== undefined && /permission denied/.test(e.error);
    for (const invariant of this.invariants) {
      const namespace = identity.identity.namespace ?? '';
      if (!selects(invariant.who, name, kind, namespace) || (invariant.except ?? []).some((x) => selects(x, name, kind, namespace))) continue;
      if (!forbiddenCapabilities(invariant, store).includes(e.operation)) continue;
      if (!invariant.paths.some((p) => this.covers(p, name, e, identity))) continue;
      const key = `${invariant.id}\u0000${name}\u0000${e.operation}\u0000${e.path}`;
      const f = this.found.get(key) ?? { invariant: invariant.id, reason: invariant.reason, identity: name, kind, operation: e.operation, path: e.path, allowed: 0, denied: 0, lastTime: e.time };
      if (denied) f.denied++;
      else f.allowed++;
      if (f.lastTime < e.time) f.lastTime = e.time;
      this.found.set(key, f);
    }
  }

  /** The requests found, sorted by invariant, identity, path, operation. */
  list(): ForbiddenRequest[] {
    return [...this.found.values()].sort(
      (a, b) => compareStrings(a.invariant, b.invariant) || compareStrings(a.identity, b.identity) || compareStrings(a.path, b.path) || compareStrings(a.operation, b.operation),
    );
  }
}

/** The Markdown section of the usage report for requests an invariant forbids. */
export function forbiddenRequestsMarkdown(list: readonly ForbiddenRequest[]): string {
  const rows = list.map((f) => [mdCell(mdCode(f.invariant)), mdCell(mdCode(f.identity)), f.kind, f.operation, mdCell(mdCode(f.path)), String(f.allowed), String(f.denied), mdCell(mdCode(f.lastTime))]);
  return ['## Requests an access invariant forbids', '', rows.length === 0 ? 'None.' : mdTable(['invariant', 'identity', 'kind', 'operation', 'path', 'allowed', 'denied', 'last'], rows), ''].join('\n');
}

/** The terminal lines of the usage report for requests an invariant forbids. */
export function forbiddenRequestsText(list: readonly ForbiddenRequest[]): string {
  if (list.length === 0) return 'requests an access invariant forbids: none';
  return [
    'requests an access invariant forbids:',
    ...list.map((f) => `  ${terminalLine(f.identity)} (${f.kind}) ${f.operation} ${terminalLine(f.path)}: ${f.allowed} allowed, ${f.denied} denied, last ${f.lastTime}; breaks "${terminalLine(f.invariant)}" (${terminalLine(f.reason)})`),
  ].join('\n');
}
