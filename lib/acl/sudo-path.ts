import { StoreKind } from '../model/store-target';
import { RulePath } from './rule-path';

/**
 * The root-protected paths of the two backends every store mounts at a fixed path, as their
 * `PathsSpecial.Root` lists name them (a trailing `*` is a prefix): the system backend (`sys/`,
 * `vault/logical_system.go`) and the token store (`auth/token/`, `vault/token_store.go`), OpenBao
 * 2.4.0 and HashiCorp Vault 1.21.1, the versions the store tests build. `seal` and `step-down` are
 * added for OpenBao: both stores demand `sudo` there in code (`RootPrivsRequired` in
 * `vault/core.go` and `vault/ha.go`), Vault also lists them.
 *
 * A request to such a path passes only when its governing rule also carries `sudo`. Root paths of
 * secrets engines and auth methods on mounts of an operator's choosing (PKI's `root`, ...) are not
 * known to the analysis: docs/access.md says so.
 */
const ROOT_PATHS: Readonly<Record<StoreKind, Readonly<Record<string, readonly string[]>>>> = {
  openbao: {
    'sys/': [
      'auth/*',
      'remount',
      'audit',
      'audit/*',
      'raw',
      'raw/*',
      'rotate',
      'rotate/keyring',
      'rotate/root',
      'config/cors',
      'config/auditing/*',
      'config/ui/headers/*',
      'plugins/catalog/*',
      'revoke-prefix/*',
      'revoke-force/*',
      'leases/revoke-prefix/*',
      'leases/revoke-force/*',
      'leases/lookup/*',
      'leases',
      'internal/inspect/*',
      'seal',
      'step-down',
    ],
    'auth/token/': ['revoke-orphan/*', 'accessors*'],
  },
  vault: {
    'sys/': [
      'auth/*',
      'remount',
      'audit',
      'audit/*',
      'raw',
      'raw/*',
      'replication/primary/secondary-token',
      'replication/performance/primary/secondary-token',
      'replication/dr/primary/secondary-token',
      'replication/reindex',
      'replication/dr/reindex',
      'replication/performance/reindex',
      'rotate',
      'config/cors',
      'config/auditing/*',
      'config/ui/headers/*',
      'plugins/catalog/*',
      'plugins/runtimes/catalog/*',
      'revoke-prefix/*',
      'revoke-force/*',
      'leases/revoke-prefix/*',
      'leases/revoke-force/*',
      'leases/lookup/*',
      'storage/raft/snapshot-auto/config/*',
      'leases',
      'reporting/scan',
      'internal/inspect/*',
      'internal/counters/activity/export',
      'seal',
      'step-down',
    ],
    'auth/token/': ['revoke-orphan', 'accessors/'],
  },
};

/**
 * The rule paths whose matches alone decide {@link sudoOnlyPath} for the store `kind`: each mount
 * and each listed entry as a prefix, and each exact entry as an exact path. Two request paths that
 * match the same of them get the same answer (what an exact search over every path relies on).
 */
export function rootPathPatterns(kind: StoreKind): readonly RulePath[] {
  let patterns = rootPatterns.get(kind);
  if (patterns === undefined) {
    patterns = rootPathPatternsOf(kind);
    rootPatterns.set(kind, patterns);
  }
  return patterns;
}

const rootPatterns = new Map<StoreKind, readonly RulePath[]>();

function rootPathPatternsOf(kind: StoreKind): RulePath[] {
  return Object.entries(ROOT_PATHS[kind]).flatMap(([mount, entries]) => [
    RulePath.parse(`${mount}*`),
    ...entries.flatMap((entry) => (entry.endsWith('*') ? [RulePath.parse(`${mount}${entry}`)] : [RulePath.parse(`${mount}${entry}*`), RulePath.parse(`${mount}${entry}`)])),
  ]);
}

/**
 * The root path of the store `kind` that `requestPath` falls under, written as the store lists it
 * with its mount (`sys/auth/*`), or undefined when the path needs no `sudo`. Matches as the
 * store's router does (`Router.RootPath`): the longest listed entry that starts the path within
 * its mount decides, a prefix entry matching any continuation and an exact entry only itself.
 * @param requestPath the path as the store sees it (LIST and SCAN paths already end in `/`)
 */
export function sudoOnlyPath(kind: StoreKind, requestPath: string): string | undefined {
  const path = requestPath.replace(/^\/+/, '');
  const mount = Object.keys(ROOT_PATHS[kind])
    .filter((m) => path.startsWith(m))
    .sort((a, b) => b.length - a.length)[0];
  if (mount === undefined) return undefined;
  const remain = path.slice(mount.length);
  let best: { entry: string; key: string; prefix: boolean } | undefined;
  for (const entry of ROOT_PATHS[kind][mount]) {
    const prefix = entry.endsWith('*');
    const key = prefix ? entry.slice(0, -1) : entry;
    if (remain.startsWith(key) && (!best || key.length > best.key.length)) best = { entry, key, prefix };
  }
  if (!best) return undefined;
  return best.prefix || best.key === remain ? `${mount}${best.entry}` : undefined;
}
