import { LiveStore, liveStoreConfiguration, readLiveStore } from '../reconcile/live-store-reader';
import { readStoreConfiguration, StoreConfiguration } from '../access/store-configuration';
import { StoreClient } from '../store/store-client';
import { CommandContext } from './command';
import { openSourceArgument } from './source-argument';

/** The SOURCE argument that names the live store instead of a synthesized output or a git ref. */
export const LIVE_SOURCE = 'live';

/** A configuration to analyse, from a synthesized output, a git ref or the live store. */
export interface LoadedConfiguration {
  /** The configuration. */
  readonly configuration: StoreConfiguration;
  /** How to call it in a report. */
  readonly label: string;
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
  return StoreClient.fromEnvironment(context.env, true, (line) => context.stderr(line), declaredNamespaces);
}

/**
 * Loads a SOURCE argument: `live` reads the live store, anything else is opened as a synthesized
 * output directory or git ref (and released once read).
 */
export async function loadConfiguration(argument: string, context: CommandContext): Promise<LoadedConfiguration> {
  if (argument === LIVE_SOURCE) {
    const store = await readLiveStoreFromEnvironment(context);
    return { configuration: liveStoreConfiguration(store, `store ${store.address}`), label: `live store ${store.address}` };
  }
  const source = await openSourceArgument(argument, context);
  try {
    return { configuration: readStoreConfiguration(source.dir), label: source.label };
  } finally {
    source.dispose();
  }
}
