import { canonicalStoreNamespace, storeNamespaceProblems } from '../model/store-namespace';

/** Environment variables that name the store namespace: the spec's style, Vault's and OpenBao's. */
export const STORE_NAMESPACE_VARIABLES = ['SECRETSTORE_NAMESPACE', 'VAULT_NAMESPACE', 'BAO_NAMESPACE'] as const;

/** The namespace settings disagree or are malformed: the CLI stops before any request (exit 3). */
export class StoreNamespaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreNamespaceError';
  }
}

/**
 * The namespace the tools work in: from `SECRETSTORE_NAMESPACE`, `VAULT_NAMESPACE` or `BAO_NAMESPACE`
 * (which must agree), else the namespace the synthesized stacks declare (`settings.namespace`, in
 * their provider block), else the root namespace (undefined). When the environment and the stacks
 * both name one, they must be the same: the engine's provider uses the stacks' and the tools would
 * otherwise read another namespace than the one applied ("In sync" about the wrong place).
 * @param declared the namespaces the stacks in question declare (`''` for a stack without one)
 * @throws StoreNamespaceError naming the variables, the stacks' value and the fix
 */
export function resolveStoreNamespace(env: NodeJS.ProcessEnv, declared: readonly string[] = []): string | undefined {
  const set = STORE_NAMESPACE_VARIABLES.filter((name) => (env[name] ?? '').trim() !== '').map((name) => ({ name, value: canonicalStoreNamespace(env[name]!) }));
  const fromEnv = [...new Set(set.map((s) => s.value))];
  if (fromEnv.length > 1) {
    throw new StoreNamespaceError(`The store namespace variables disagree: ${set.map((s) => `${s.name}=${s.value}`).join(', ')}. Unset all but one.`);
  }
  for (const s of set) {
    const problems = s.value === '' ? [] : storeNamespaceProblems(s.name, s.value);
    if (problems.length > 0) throw new StoreNamespaceError(`${s.name}="${s.value}" ${problems[0].rule}`);
  }
  const stacks = [...new Set(declared.map(canonicalStoreNamespace))];
  if (stacks.length > 1) {
    throw new StoreNamespaceError(`the synthesized stacks declare different namespaces (${stacks.map((n) => (n === '' ? '(root)' : n)).join(', ')}): give one stack at a time`);
  }
  const env1 = set.length > 0 ? fromEnv[0] : undefined;
  const stack1 = stacks.length > 0 ? stacks[0] : undefined;
  if (env1 !== undefined && stack1 !== undefined && env1 !== stack1) {
    throw new StoreNamespaceError(
      `${set[0].name}=${env1 === '' ? '(root)' : env1} but the synthesized stacks declare settings.namespace ${stack1 === '' ? '(root: none)' : `"${stack1}"`}: ` +
        'the engine applies to the stacks\' namespace, so the tools would read another one. Fix: unset the variable, or change settings.namespace and synthesize again',
    );
  }
  const chosen = env1 ?? stack1;
  return chosen === undefined || chosen === '' ? undefined : chosen;
}
