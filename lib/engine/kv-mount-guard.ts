import * as fs from 'fs';
import * as path from 'path';
import type { DeclaredKvMount } from '../reconcile/declared-kv-mount';
import { checkKvMountVersions, KvMountMismatchError } from '../reconcile/kv-mount-version-check';
import { StoreClient } from '../store/store-client';

/**
 * Compares the declared KV mounts with the live store before a command goes on. On a mismatch it
 * reports the contradictions through `stderr` and returns false; the caller then stops (the CLI
 * with exit 5) before planning, applying or writing anything.
 * @returns true when the command may go on
 * @throws KvMountCheckError when the mount table cannot be read (exit 3, naming path and capability)
 */
export async function guardKvMounts(
  command: string,
  client: StoreClient,
  declared: readonly DeclaredKvMount[],
  stderr: (line: string) => void,
): Promise<boolean> {
  try {
    await checkKvMountVersions(client, declared);
    return true;
  } catch (e) {
    if (!(e instanceof KvMountMismatchError)) throw e;
    stderr(`secretstore-iac ${command}: ${e.message}`);
    return false;
  }
}

/**
 * The token the engine's vault provider will use: `VAULT_TOKEN`, else the token helper's file
 * `~/.vault-token` (the provider reads neither `BAO_TOKEN` nor `SECRETSTORE_TOKEN`).
 */
export function engineToken(env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = (env.VAULT_TOKEN ?? '').trim();
  if (fromEnv !== '') return fromEnv;
  if (!env.HOME) return undefined;
  try {
    const fromFile = fs.readFileSync(path.join(env.HOME, '.vault-token'), 'utf8').trim();
    return fromFile === '' ? undefined : fromFile;
  } catch {
    return undefined;
  }
}
