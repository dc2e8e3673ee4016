import { canonicalStoreNamespace } from '../model/store-namespace';
import { StoreNamespaceError } from './store-namespace-setting';
import { StoreTransport } from './store-transport';

/** The variable the vault provider reads to use the token itself instead of a child token. */
export const SKIP_CHILD_TOKEN_VARIABLE = 'TERRAFORM_VAULT_SKIP_CHILD_TOKEN';

/**
 * The namespace a token belongs to, from `auth/token/lookup-self` (`namespace_path`, `team-a/`;
 * absent or empty for a token of the root namespace): canonical (`team-a`), `''` for the root.
 */
export function tokenNamespaceOf(lookupSelfBody: unknown): string {
  const value = (lookupSelfBody as { data?: { namespace_path?: unknown } } | undefined)?.data?.namespace_path;
  return typeof value === 'string' ? canonicalStoreNamespace(value) : '';
}

/** Whether a token of namespace `token` may act in namespace `target`: its own, or one below it. */
export function tokenActsIn(token: string, target: string): boolean {
  return token === '' || token === target || target.startsWith(`${token}/`);
}

/** The words every message about a token of another namespace carries (so that callers add no other cause to it). */
export const TOKEN_NAMESPACE_RULE = 'a token acts only in its own namespace and the namespaces below it';

const shownNamespace = (ns: string): string => (ns === '' ? 'the root namespace' : `namespace ${ns}`);

/**
 * Why a token cannot act in the namespace requests go to, with the fix; undefined when it can.
 * OpenBao answers `lookup-self` for a token of any namespace, and then refuses every other request
 * (403) that is not in the token's namespace or below it: said instead of "may not read".
 */
export function tokenNamespaceProblem(token: string, target: string): string | undefined {
  if (tokenActsIn(token, target)) return undefined;
  return (
    `the token belongs to ${shownNamespace(token)}, and the requests go to ${shownNamespace(target)}: ${TOKEN_NAMESPACE_RULE}, ` +
    `so the store refuses every request there (HTTP 403). Fix: use a token of ${target} (or of a namespace above it), or name the token's namespace (settings.namespace, VAULT_NAMESPACE)`
  );
}

/** What `tf` does about the token's namespace before the engine runs. */
export interface EngineTokenNamespace {
  /** Variables to add to the engine's environment (the provider told to use the token itself). */
  readonly env: Readonly<Record<string, string>>;
  /** One line for standard error, when something was changed. */
  readonly notice?: string;
}

/**
 * The engine's token against the namespace the stacks apply to. A token of the root namespace acts
 * in every namespace, but the vault provider makes a child token first, in the stacks' namespace,
 * where it inherits only `default` (the `root` policy, and the root namespace's policies, exist in
 * no other namespace; seen on OpenBao 2.4): every write would answer 403. So the provider is told
 * to use the token itself (`TERRAFORM_VAULT_SKIP_CHILD_TOKEN=true`), unless the operator set that
 * variable. A token of another namespace (not above the stacks') cannot act there at all: refused,
 * naming both namespaces. A token the store does not accept, or an unreachable store, is left to the
 * checks and the engine that follow (they name it).
 * @throws StoreNamespaceError (exit 3) for a token of a namespace that is not the stacks' nor above it
 */
export async function checkEngineTokenNamespace(
  address: string,
  token: string,
  namespace: string,
  env: NodeJS.ProcessEnv,
  transport: StoreTransport,
): Promise<EngineTokenNamespace> {
  let tokenNamespace: string;
  try {
    const res = await transport.request({ method: 'GET', url: `${address}/v1/auth/token/lookup-self`, headers: { 'X-Vault-Token': token, 'X-Vault-Namespace': namespace } });
    if (res.status !== 200) return { env: {} };
    tokenNamespace = tokenNamespaceOf(JSON.parse(res.text));
  } catch {
    return { env: {} };
  }
  const problem = tokenNamespaceProblem(tokenNamespace, namespace);
  if (problem !== undefined) throw new StoreNamespaceError(`The stacks apply in namespace ${namespace}, but ${problem}`);
  if (tokenNamespace !== '' || (env[SKIP_CHILD_TOKEN_VARIABLE] ?? '').trim() !== '') return { env: {} };
  return {
    env: { [SKIP_CHILD_TOKEN_VARIABLE]: 'true' },
    notice:
      `the token is of the root namespace and the stacks apply in namespace ${namespace}: the vault provider would make its child token in ${namespace}, ` +
      `where it gets only the \`default\` policy (every write refused), so it uses the token itself (${SKIP_CHILD_TOKEN_VARIABLE}=true)`,
  };
}
