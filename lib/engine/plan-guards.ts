import * as path from 'path';
import { readStackKvMounts } from '../reconcile/declared-kv-mount';
import { StoreClient } from '../store/store-client';
import { resolveStoreNamespace } from '../store/store-namespace-setting';
import { StoreTransport } from '../store/store-transport';
import { engineToken, guardKvMounts } from './kv-mount-guard';
import { DestructionRefused, PlanReview } from './replacement-guard';
import { checkPlannedCreates, describeUnreadable, TakeoverRefused, UnreadableCreatesRefused } from './takeover-guard';

/** Engine subcommands that write policies from the declared paths: the KV mount check runs before them. */
const KV_CHECKED_SUBCOMMANDS = new Set(['plan', 'apply', 'import']);

/** What the guards see of the command that runs the engine. */
export interface GuardContext {
  /** Environment (the token the provider uses, the TLS variables). */
  readonly env: NodeJS.ProcessEnv;
  /** Writes one line to standard error. */
  stderr(line: string): void;
}

/**
 * `--refuse-replace` on a reviewed plan: refused (exit 4) when it destroys or replaces an object, or
 * when it creates an object (mount, role, policy) the store already has, looked up with the engine's
 * token. One the token may not look up (403) is refused before an apply (`beforeApply`: never written
 * blind, the message names the missing policy rule); for a saved plan not applied yet it is a note,
 * since the apply checks again with the token that writes.
 * @throws DestructionRefused, TakeoverRefused, UnreadableCreatesRefused
 */
export async function refuseReview(review: PlanReview, stack: string, address: string, what: string, context: GuardContext, beforeApply = true): Promise<void> {
  if (review.destructions.length > 0) throw new DestructionRefused(review.destructions, what, stack);
  if (review.creates.length === 0) return;
  const token = engineToken(context.env);
  if (token === undefined) {
    throw new Error(`no store token: the plan of ${stack} creates ${review.creates.length} object(s), and --refuse-replace looks each up on the store with the token the vault provider uses: set VAULT_TOKEN`);
  }
  const transport = StoreTransport.fromEnvironment(context.env, (l) => context.stderr(l));
  const checked = await checkPlannedCreates(review.creates, new StoreClient({ address, token, transport, namespace: resolveStoreNamespace(context.env) }));
  if (checked.takeovers.length > 0) throw new TakeoverRefused(checked.takeovers, what, stack);
  if (checked.unreadable.length === 0) return;
  if (beforeApply) throw new UnreadableCreatesRefused(checked.unreadable, what);
  context.stderr(`secretstore-iac tf: note: ${describeUnreadable(checked.unreadable)}
  (the plan is saved: its apply with --refuse-replace checks these again, with the token that applies it)`);
}

/**
 * The KV mount check of `tf` (before plan, apply and import; other subcommands write no policy):
 * the stack's recorded KV mounts compared with the store's, with the token the provider will use.
 * @returns false when a declared KV mount does not match the store (reported): the engine must not run
 */
export async function checkKvMountsBeforeEngine(
  stack: string,
  stackDir: string,
  address: string,
  engineArgs: readonly string[],
  context: GuardContext,
): Promise<boolean> {
  const sub = engineArgs.find((a) => !a.startsWith('-'));
  if (sub === undefined || !KV_CHECKED_SUBCOMMANDS.has(sub)) return true;
  const declared = readStackKvMounts(stack, path.join(stackDir, 'cdk.tf.json'));
  if (declared.length === 0) return true;
  const token = engineToken(context.env);
  if (token === undefined) {
    throw new Error(
      `no store token: the vault provider reads VAULT_TOKEN (or ~/.vault-token), and the KV mount check of ${stack} reads sys/mounts with the same token: set VAULT_TOKEN`,
    );
  }
  // The same transport as every store call (TLS variables, deadline, no cross-origin redirect).
  const transport = StoreTransport.fromEnvironment(context.env, (l) => context.stderr(l));
  return guardKvMounts('tf', new StoreClient({ address, token, transport, namespace: resolveStoreNamespace(context.env) }), declared, (l) => context.stderr(l));
}

