/**
 * What differs between the two stores the suite runs against, as the tests need it: the selected
 * store (SECRETSTORE_IAC_STORE), its CLI name, and the shapes of its tokens. Each fact here is
 * asserted against the real store somewhere in test/store (docs/stores.md names where).
 */
import { StoreKind, storeKind } from './toolchain-env';

export { StoreKind, storeKind };

/** The selected store's CLI and agent name as messages print it (`bao`, `vault`). */
export function storeCli(kind: StoreKind = storeKind()): 'bao' | 'vault' {
  return kind === 'vault' ? 'vault' : 'bao';
}

/**
 * A store token of either store, as it would appear in a log or output: OpenBao `s.`/`b.`/`r.`
 * (service, batch, recovery), HashiCorp Vault `hvs.`/`hvb.`/`hvr.`. Both stores' shapes are
 * looked for whatever the store, so a check can never miss a token because the store changed.
 */
export const STORE_TOKEN_PATTERN = /\b(?:hv[sbr]|[sbr])\.[A-Za-z0-9_-]{20,}/;

/** The token shape the selected store issues for a service token. */
export function serviceTokenPattern(kind: StoreKind = storeKind()): RegExp {
  return kind === 'vault' ? /^hvs\./ : /^s\./;
}

/**
 * Names a test that cannot run on the selected store, so the summary says so (like
 * SECRETSTORE_IAC_ALLOW_SKIP): `itOn(['openbao'], ...)` runs on OpenBao and is reported as
 * skipped, with the reason in its title, on Vault.
 */
export function onStores(kinds: readonly StoreKind[], reason: string): { runs: boolean; title: (t: string) => string } {
  const runs = kinds.includes(storeKind());
  return { runs, title: (t) => (runs ? t : `${t} [not on ${storeKind()}: ${reason}]`) };
}

/**
 * The note both stores' agents print at start when they serve an API proxy (a `listener`): OpenBao
 * 2.4.0 "OpenBao Agent will be deprecating API proxy functionality in a future release ...", Vault
 * 1.21.1 "Vault Agent will be deprecating ...", both pointing to the proxy subcommand.
 */
export const AGENT_API_PROXY_DEPRECATION = /Agent will be deprecating API proxy functionality in a future release/;
