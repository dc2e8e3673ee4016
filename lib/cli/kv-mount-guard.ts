import * as fs from 'fs';
import * as path from 'path';
import type { DeclaredKvMount } from '../reconcile/declared-kv-mount';
import { checkKvMountVersions, KvMountMismatchError } from '../reconcile/kv-mount-version-check';
import { StoreClient } from '../store/store-client';
import { CommandContext } from './command';
import { ExitCode } from './exit-code';

/**
 * Compares the declared KV mounts with the live store before a command goes on. On a mismatch it
 * prints the contradictions and returns {@link ExitCode.kvMountMismatch}; the caller then stops
 * before planning, applying or writing anything.
 * @returns undefined when the command may go on
 * @throws KvMountCheckError when the mount table cannot be read (exit 3, naming path and capability)
 */
export async function guardKvMounts(
  command: string,
  client: StoreClient,
  declared: readonly DeclaredKvMount[],
  context: CommandContext,
): Promise<number | undefined> {
  try {
    await checkKvMountVersions(client, declared);
    return undefined;
  } catch (e) {
    if (!(e instanceof KvMountMismatchError)) throw e;
    context.stderr(`secretstore-iac ${command}: ${e.message}`);
    return ExitCode.kvMountMismatch;
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
