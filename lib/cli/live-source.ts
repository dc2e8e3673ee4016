import { LiveStore, liveStoreConfiguration, readLiveStore } from '../reconcile/live-store-reader';
import { readStoreConfiguration, StoreConfiguration } from '../access/store-configuration';
import { LIVE_READER_TOKEN_NEEDS, StoreClient } from '../store/store-client';
import { KnownKvMount } from '../access/kv-path-form';
import { readDeclaredKvMounts } from '../reconcile/declared-kv-mount';
import { KV_MOUNT_CHECK_PATH, parseSecretsMounts } from '../reconcile/kv-mount-version-check';
import { CommandContext } from './command';
import { RefSynthesizer } from '../sources/ref-synthesizer';
import { openSourceArgument } from './source-argument';

/** The SOURCE argument that names the live store instead of a synthesized output or a git ref. */
export const LIVE_SOURCE = 'live';

/** A configuration to analyse, from a synthesized output, a git ref or the live store. */
export interface LoadedConfiguration {
  /** The configuration. */
  readonly configuration: StoreConfiguration;
  /** How to call it in a report. */
  readonly label: string;
  /**
   * The KV mounts whose version is known, when asked for: declared by the stacks
   * (`settings.kvMount`), or the live store's own (`GET sys/mounts`; none when the token may not
   * read it). A path declared with two versions is left out: no version is known for it.
   */
  readonly kvMounts?: readonly KnownKvMount[];
}

/** Options of {@link loadConfiguration}. */
export interface LoadOptions {
  /** Also read the KV mounts and their versions. @default false */
  readonly kvMounts?: boolean;
  /** Synthesizes a git ref: the run's, shared by the sides of a comparison. @default one of this source alone */
  readonly synthesizer?: RefSynthesizer;
}

/** The declared KV mounts of a synthesized output whose version is not contradicted by another stack. */
function declaredKvMounts(dir: string): KnownKvMount[] {
  const declared = readDeclaredKvMounts(dir);
  return declared
    .filter((d) => declared.filter((o) => o.path === d.path).length === 1)
    .map((d) => ({ path: d.path, version: d.version, source: `settings.kvMount of stack${d.stacks.length === 1 ? '' : 's'} ${d.stacks.join(', ')}` }));
}

/** The live store's KV mounts (`GET sys/mounts`), or none when they cannot be read. */
async function liveKvMounts(client: StoreClient): Promise<KnownKvMount[]> {
  try {
    const mounts = parseSecretsMounts((await client.request('GET', KV_MOUNT_CHECK_PATH)).body);
    return mounts.flatMap((m) => (m.kvVersion !== undefined ? [{ path: m.path, version: m.kvVersion, source: `${KV_MOUNT_CHECK_PATH} of the live store` }] : []));
  } catch {
    return [];
  }
}

/**
 * Reads the live store at SECRETSTORE_ADDR / VAULT_ADDR with the token of SECRETSTORE_TOKEN /
 * VAULT_TOKEN / BAO_TOKEN (read and list only, docs/adoption.md), in the namespace of
 * VAULT_NAMESPACE / BAO_NAMESPACE or, when compared with synthesized stacks, theirs (`declaredNamespaces`).
 * @throws LiveStoreReadError, StoreError, StoreAddressError or StoreNamespaceError (exit 3)
 */
export function readLiveStoreFromEnvironment(context: CommandContext, declaredNamespaces: readonly string[] = []): Promise<LiveStore> {
  return readLiveStore(liveStoreClient(context, declaredNamespaces));
}

/** The client of the live store, for the reads of {@link readLiveStoreFromEnvironment} and the checks before them. */
export function liveStoreClient(context: CommandContext, declaredNamespaces: readonly string[] = []): StoreClient {
  return StoreClient.fromEnvironment(context.env, true, (line) => context.stderr(line), declaredNamespaces, LIVE_READER_TOKEN_NEEDS);
}

/**
 * Loads a SOURCE argument: `live` reads the live store, anything else is opened as a synthesized
 * output directory or git ref (and released once read).
 */
export async function loadConfiguration(argument: string, context: CommandContext, options: LoadOptions = {}): Promise<LoadedConfiguration> {
  if (argument === LIVE_SOURCE) {
    const client = StoreClient.fromEnvironment(context.env, true, (line) => context.stderr(line), [], LIVE_READER_TOKEN_NEEDS);
    const store = await readLiveStore(client);
    return {
      configuration: liveStoreConfiguration(store, `store ${store.address}`),
      // The namespace read is part of what was read: "nobody" in the root namespace says nothing of a namespace's.
      label: `live store ${store.address} (${store.namespace === undefined ? 'root namespace' : `namespace ${store.namespace}`})`,
      ...(options.kvMounts ? { kvMounts: await liveKvMounts(client) } : {}),
    };
  }
  const source = await openSourceArgument(argument, context, options.synthesizer);
  try {
    return {
      configuration: readStoreConfiguration(source.dir),
      label: source.label,
      ...(options.kvMounts ? { kvMounts: declaredKvMounts(source.dir) } : {}),
    };
  } finally {
    source.dispose();
  }
}
