import { TOKEN_NAMESPACE_RULE } from '../store/token-namespace';
import type { DeclaredKvMount } from './declared-kv-mount';
import { KvVersion } from '../model/kv-mount';
import { compareStrings } from '../private/compare-strings';
import { storeCliCommand } from './store-cli-command';
import { StoreClient, StoreError } from '../store/store-client';
import { readStoreTarget } from './live-store-reader';

/** A secrets engine mount as `GET sys/mounts` lists it. */
export interface LiveSecretsMount {
  /** Mount path without slashes (`secret`). */
  readonly path: string;
  /** Engine type (`kv`, `generic`, `cubbyhole`, `transit`, ...). */
  readonly type: string;
  /** KV version for a KV engine (`kv` with `options.version`, or the old `generic`, which is v1); undefined otherwise. */
  readonly kvVersion?: KvVersion;
}

/** The one path the check reads, and the capability it needs there. */
export const KV_MOUNT_CHECK_PATH = 'sys/mounts';

/**
 * The declared KV mounts contradict the live store (another version or type, a path inside
 * another mount, a mount inside the declared path, or absent): planning, applying or adopting
 * would write policies for paths the store does not serve as declared.
 */
export class KvMountMismatchError extends Error {
  constructor(
    /** One line per contradiction. */
    readonly problems: readonly string[],
    address: string,
  ) {
    super(
      `the declared KV mounts do not match the secrets store at ${address}; nothing was planned, applied or written:\n  ` +
        problems.join('\n  '),
    );
    this.name = 'KvMountMismatchError';
  }
}

/** The KV mounts could not be read from the store (permission, transport): the message names the path and capability. */
export class KvMountCheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KvMountCheckError';
  }
}

/**
 * The KV version of an engine: `kv` with `options.version` "2" is version 2; `kv` without a
 * version or with "1", and the old type name `generic`, are version 1; `kv-v2` (the name used when
 * enabling) is version 2. Undefined for other engines and for a version the library does not know.
 */
export function kvVersionOf(type: string, options: unknown): KvVersion | undefined {
  if (type === 'generic') return 1;
  if (type === 'kv-v2') return 2;
  if (type !== 'kv') return undefined;
  const version = options && typeof options === 'object' ? (options as { version?: unknown }).version : undefined;
  if (version === undefined || version === null || version === '' || version === '1' || version === 1) return 1;
  if (version === '2' || version === 2) return 2;
  return undefined;
}

/** Parses `GET sys/mounts`: the secrets engine mounts, sorted by path. */
export function parseSecretsMounts(body: unknown): LiveSecretsMount[] {
  const raw = body && typeof body === 'object' ? ((body as { data?: unknown }).data ?? body) : undefined;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new KvMountCheckError(`GET /v1/${KV_MOUNT_CHECK_PATH}: the store's answer has no "data" object of mounts`);
  }
  return Object.entries(raw as Record<string, unknown>)
    .filter(([, m]) => m && typeof m === 'object' && typeof (m as { type?: unknown }).type === 'string')
    .map(([p, m]) => {
      const { type, options } = m as { type: string; options?: unknown };
      return { path: p.replace(/^\/+|\/+$/g, ''), type, kvVersion: kvVersionOf(type, options) };
    })
    .sort((a, b) => compareStrings(a.path, b.path));
}

const describe = (m: LiveSecretsMount) => (m.kvVersion !== undefined ? `KV v${m.kvVersion}` : `a "${m.type}" engine`);
const stacksOf = (d: DeclaredKvMount) => `stack${d.stacks.length === 1 ? '' : 's'} ${d.stacks.join(', ')}`;
/** `stack a declares` / `stacks a, b declare`. */
const stacksDeclare = (d: DeclaredKvMount) => `${stacksOf(d)} declare${d.stacks.length === 1 ? 's' : ''}`;
/**
 * The command that enables a declared mount, in the namespace the stacks apply to: run as written
 * without `-namespace`, the CLI would enable it in the root namespace (or wherever VAULT_NAMESPACE
 * points), where the stacks never look.
 */
const enable = (d: DeclaredKvMount, cli: string, namespace: string | undefined) =>
  storeCliCommand({ cli, namespace }, 'secrets enable', `-path=${d.path}`, `-version=${d.version}`, 'kv');

/**
 * Compares each declared KV mount with the store's mount table. Returns one line per
 * contradiction, naming the mount, what the store has, what the stacks declare, the consequence and
 * the fix; [] when every declared mount is on the store, at its path, with its version.
 * @param cli the store's CLI the fixes name (`bao`, `vault`)
 */
export function kvMountProblems(declared: readonly DeclaredKvMount[], live: readonly LiveSecretsMount[], cli = 'bao', namespace?: string): string[] {
  const problems: string[] = [];
  const byPath = new Map<string, DeclaredKvMount[]>();
  for (const d of declared) byPath.set(d.path, [...(byPath.get(d.path) ?? []), d]);
  for (const [path, ds] of [...byPath].sort(([a], [b]) => compareStrings(a, b))) {
    if (ds.length > 1) {
      problems.push(
        `${path}/ is declared ${ds.map((d) => `KV v${d.version} by ${stacksOf(d)}`).join(' and ')}: one mount has one version; declare the same settings.kvMount in every stack`,
      );
    }
    const d = ds[0];
    // The store routes a request to the mount with the longest path that prefixes it.
    const serving = live
      .filter((m) => `${path}/`.startsWith(`${m.path}/`))
      .sort((a, b) => b.path.length - a.path.length)[0];
    const inside = live.filter((m) => m.path.startsWith(`${path}/`));
    for (const m of inside) {
      problems.push(
        `${m.path}/ is mounted (${describe(m)}) inside the declared KV mount ${path}/: requests for ${m.path}/... go to that mount, not to ${path}/; the declared paths must not be nested with another mount`,
      );
    }
    if (serving === undefined) {
      if (inside.length === 0) {
        problems.push(
          `${path}/ is not mounted${namespace ? ` in the namespace ${namespace}` : ''} on the store, but ${stacksOf(d)} rel${d.stacks.length === 1 ? 'ies' : 'y'} on it as KV v${d.version} (the stacks never create KV mounts; applications and CI jobs read their secrets there): enable it first (${enable(d, cli, namespace)})`,
        );
      }
      continue;
    }
    if (serving.path !== path) {
      problems.push(
        `${path}/ is not a mount on the store: its paths are served by ${serving.path}/ (${describe(serving)}), where the paths of ${stacksOf(d)} would be other secrets' paths (${path}/<p> is ${serving.path}/'s ${path.slice(serving.path.length + 1)}/<p>); declare settings.kvMount at ${serving.path}, or mount ${path}/ on a path of its own`,
      );
      continue;
    }
    for (const one of ds) {
      if (serving.kvVersion === undefined) {
        problems.push(
          `${path}/ is ${describe(serving)} on the store, not a KV engine, but ${stacksDeclare(one)} it KV v${one.version}: no secret the stacks grant can be read there`,
        );
      } else if (serving.kvVersion !== one.version) {
        const consequence =
          one.version === 2
            ? `the policies name ${path}/data/<p>, which a KV v1 mount serves as the secret "data/<p>", so no application or CI job reads its secrets, and the platform rules were checked for paths the store does not use`
            : `the policies name ${path}/<p>, which a KV v2 mount does not serve, and ${path}/data/<p> is the v2 data path of <p>: the platform rules were checked for paths the store does not use`;
        problems.push(
          `${path}/ is KV v${serving.kvVersion} on the store, but ${stacksDeclare(one)} it KV v${one.version}: ${consequence}. Fix: settings.kvMount = new KvMount('${path}', ${serving.kvVersion}) and synthesize again, or change the mount on the store`,
        );
      }
    }
  }
  return problems;
}

/**
 * Reads the store's secrets engine mounts (`GET sys/mounts`, capability `read` on `sys/mounts`)
 * and compares each declared KV mount with them. Does nothing when nothing is declared.
 * @throws KvMountMismatchError listing every contradiction
 * @throws KvMountCheckError when the mount table cannot be read, naming the path and the capability
 */
export async function checkKvMountVersions(client: StoreClient, declared: readonly DeclaredKvMount[]): Promise<void> {
  if (declared.length === 0) return;
  let body: unknown;
  try {
    body = (await client.request('GET', KV_MOUNT_CHECK_PATH)).body;
  } catch (e) {
    // A token of another namespace: its message names the cause; no capability is missing.
    if (e instanceof StoreError && e.kind === 'permission-denied' && e.message.includes(TOKEN_NAMESPACE_RULE)) {
      throw new KvMountCheckError(`cannot compare the declared KV mounts with the store at ${client.address}: ${e.message}`);
    }
    if (e instanceof StoreError && e.kind === 'permission-denied') {
      throw new KvMountCheckError(
        `cannot compare the declared KV mounts (${declared.map((d) => `${d.path}/ KV v${d.version}`).join(', ')}) with the store at ${client.address}: ` +
          `GET /v1/${KV_MOUNT_CHECK_PATH} was refused (${e.message}). The check needs path "${KV_MOUNT_CHECK_PATH}" { capabilities = ["read"] } ` +
          'in the token\'s policy (the reader policy of docs/adoption.md and the configuration pipeline\'s roles have it); nothing was checked, planned or written',
      );
    }
    if (e instanceof StoreError) throw new KvMountCheckError(`cannot compare the declared KV mounts with the store at ${client.address}: ${e.message}`);
    throw e;
  }
  const live = parseSecretsMounts(body);
  if (kvMountProblems(declared, live).length === 0) return;
  // Only a mismatch needs the fixes' CLI: one more (unauthenticated) request, to sys/seal-status.
  const cli = (await readStoreTarget(client))?.cli ?? 'bao (or vault)';
  throw new KvMountMismatchError(kvMountProblems(declared, live, cli, client.namespace), client.address);
}
