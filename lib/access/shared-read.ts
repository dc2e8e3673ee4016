import { AclRule } from '../acl/acl';
import { witnessPath } from '../acl/rule-coverage';
import { isSecretReadRule } from '../invariants/secret-read-rule';
import { AccessModel, IdentityAccess } from './access-model';
import { compareStrings } from '../private/compare-strings';
import { labelOf } from './namespaced-name';
import { pathSeenFrom } from '../model/store-namespace';

/** One application able to read a path that another application's policy grants it. */
export interface SharedRead {
  /** The identity reading into another's paths (`labelOf`: with its namespace when not the root's). */
  readonly reader: string;
  /** The identity whose rule names the path, of the reader's namespace or one below it. */
  readonly owner: string;
  /** A concrete path both can read, as the reader requests it (behind the owner's namespace prefix when that is below the reader's). */
  readonly path: string;
  /** The owner's rule the path was taken from. */
  readonly ownerRule: string;
}

/**
 * Finds paths readable by two applications (AppRole identities; the spec forbids
 * cross-application access): for every read-granting rule of an application (outside the `default`
 * policy and the store's own endpoints), a concrete path it matches is probed against the ACLs of
 * the other applications.
 *
 * Probing needs an index: only applications with a read rule whose fixed prefix is a prefix of
 * the probe can read it, so a 1,000-application configuration costs a few thousand ACL lookups.
 * The probe is one path per rule, so two patterns that overlap only partly (neither covering
 * the other's probe) go unseen.
 *
 * Paths are a namespace's own: applications of two namespaces reading the same path read two
 * different secrets, so only applications of one namespace are compared, and an application of a
 * namespace above the owner's, whose rule reaches into it behind its prefix (the store checks a root
 * token's request to `ns1`'s `secret/data/x` as `ns1/secret/data/x`): probed with that prefix, the
 * path reported as the reader requests it (`ns1/secret/data/x`).
 *
 * @returns one entry per (reader, owner) pair, the first path found, sorted by reader then owner
 */
export function findSharedReads(model: AccessModel): SharedRead[] {
  const apps = model.identities.filter((i) => i.identity.method === 'approle' && !i.loginRefused);
  const index = new Map<string, Set<IdentityAccess>>();
  const lengths = new Set<number>();
  const secretRead = (rule: AclRule) => isSecretReadRule(rule);
  for (const app of apps) {
    for (const rule of app.acl.rules) {
      if (!secretRead(rule)) continue;
      const prefix = rule.path.literalPrefix;
      let set = index.get(prefix);
      if (!set) index.set(prefix, (set = new Set()));
      set.add(app);
      lengths.add(prefix.length);
    }
  }
  const sortedLengths = [...lengths].sort((a, b) => a - b);
  const namespaces = [...new Set(apps.map((a) => a.identity.namespace ?? ''))];
  /** The namespaces whose applications can reach `namespace`'s paths, each with the prefix its requests carry ({@link pathSeenFrom}): its own (''), and each above it. */
  const readersOf = (namespace: string): ReadonlyArray<{ readonly namespace: string; readonly prefix: string }> =>
    namespaces.flatMap((n) => {
      const prefix = pathSeenFrom(n, namespace, '');
      return prefix === undefined ? [] : [{ namespace: n, prefix }];
    });
  const found = new Map<string, SharedRead>();
  for (const owner of apps) {
    for (const rule of owner.acl.rules) {
      if (!secretRead(rule)) continue;
      const path = witnessPath(rule.path);
      if (!owner.acl.check('read', path).allowed) continue;
      for (const { namespace, prefix } of readersOf(owner.identity.namespace ?? '')) {
        const probe = `${prefix}${path}`;
        for (const length of sortedLengths) {
          if (length > probe.length) break;
          for (const reader of index.get(probe.slice(0, length)) ?? []) {
            if (reader === owner || (reader.identity.namespace ?? '') !== namespace) continue;
            const key = `${labelOf(reader.identity)}\u0000${labelOf(owner.identity)}`;
            if (found.has(key) || !reader.acl.check('read', probe).allowed) continue;
            found.set(key, { reader: labelOf(reader.identity), owner: labelOf(owner.identity), path: probe, ownerRule: rule.path.display });
          }
        }
      }
    }
  }
  return [...found.values()].sort((a, b) => compareStrings(a.reader, b.reader) || compareStrings(a.owner, b.owner));
}
