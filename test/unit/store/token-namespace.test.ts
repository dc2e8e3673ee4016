import { StoreNamespaceError } from '../../../lib/store/store-namespace-setting';
import { StoreTransport } from '../../../lib/store/store-transport';
import { checkEngineTokenNamespace, tokenActsIn, tokenNamespaceOf } from '../../../lib/store/token-namespace';

// Issue 28: a token of the root namespace used with settings.namespace. What the store answers was
// seen on OpenBao 2.4 (test/store/namespace.store.test.ts): lookup-self answers for a token of any
// namespace, with namespace_path for a namespace's token and none for a root namespace token; a
// root token acts in a child namespace, the provider's child token made there gets only `default`.

/** A transport whose lookup-self answers `status` with `data`, recording the requests. */
function lookupSelf(status: number, data: unknown): { transport: StoreTransport; asked: Array<Record<string, string>> } {
  const asked: Array<Record<string, string>> = [];
  const transport = {
    request: async (req: { url: string; headers?: Record<string, string> }) => {
      asked.push({ url: req.url, ...(req.headers ?? {}) });
      return { status, text: JSON.stringify({ data }), url: req.url };
    },
  } as unknown as StoreTransport;
  return { transport, asked };
}

describe('the token\'s namespace and the stacks\' namespace', () => {
  it('reads namespace_path as the store gives it: "team-a/" for a namespace\'s token, none (or null) for the root namespace', () => {
    expect(tokenNamespaceOf({ data: { namespace_path: 'team-a/' } })).toBe('team-a');
    expect(tokenNamespaceOf({ data: { namespace_path: null } })).toBe('');
    expect(tokenNamespaceOf({ data: {} })).toBe('');
  });

  it('a token acts in its own namespace and those below it, not in a sibling or a parent', () => {
    expect(tokenActsIn('', 'team-a')).toBe(true);
    expect(tokenActsIn('team-a', 'team-a')).toBe(true);
    expect(tokenActsIn('team-a', 'team-a/sub')).toBe(true);
    expect(tokenActsIn('team-a', 'team-ab')).toBe(false);
    expect(tokenActsIn('team-b', 'team-a')).toBe(false);
    expect(tokenActsIn('team-a', '')).toBe(false);
  });

  it('a root namespace token: the provider is told to use it itself (no child token in the namespace), and tf says why', async () => {
    const { transport, asked } = lookupSelf(200, { policies: ['root'] });
    const checked = await checkEngineTokenNamespace('http://127.0.0.1:8200', 'root-token', 'team-a', {}, transport);
    expect(checked.env).toEqual({ TERRAFORM_VAULT_SKIP_CHILD_TOKEN: 'true' });
    expect(checked.notice).toBe(
      'the token is of the root namespace and the stacks apply in namespace team-a: the vault provider would make its child token in team-a, ' +
        'where it gets only the `default` policy (every write refused), so it uses the token itself (TERRAFORM_VAULT_SKIP_CHILD_TOKEN=true)',
    );
    expect(asked).toEqual([{ url: 'http://127.0.0.1:8200/v1/auth/token/lookup-self', 'X-Vault-Token': 'root-token', 'X-Vault-Namespace': 'team-a' }]);
  });

  it('the operator\'s own TERRAFORM_VAULT_SKIP_CHILD_TOKEN is kept; a token of the namespace or above it changes nothing', async () => {
    expect(await checkEngineTokenNamespace('http://s', 't', 'team-a', { TERRAFORM_VAULT_SKIP_CHILD_TOKEN: 'false' }, lookupSelf(200, {}).transport)).toEqual({ env: {} });
    expect(await checkEngineTokenNamespace('http://s', 't', 'team-a', {}, lookupSelf(200, { namespace_path: 'team-a/' }).transport)).toEqual({ env: {} });
    expect(await checkEngineTokenNamespace('http://s', 't', 'team-a/sub', {}, lookupSelf(200, { namespace_path: 'team-a/' }).transport)).toEqual({ env: {} });
    // A token the store does not accept is named by the checks and the engine that follow.
    expect(await checkEngineTokenNamespace('http://s', 't', 'team-a', {}, lookupSelf(403, {}).transport)).toEqual({ env: {} });
  });

  it('a token of another namespace is refused before the engine runs, naming both namespaces and the fix', async () => {
    const refused = await checkEngineTokenNamespace('http://s', 't', 'team-a', {}, lookupSelf(200, { namespace_path: 'team-b/' }).transport).catch((e) => e);
    expect(refused).toBeInstanceOf(StoreNamespaceError);
    expect(refused.message).toBe(
      'The stacks apply in namespace team-a, but the token belongs to namespace team-b, and the requests go to namespace team-a: a token acts only in its own namespace and the namespaces below it, ' +
        "so the store refuses every request there (HTTP 403). Fix: use a token of team-a (or of a namespace above it), or name the token's namespace (settings.namespace, VAULT_NAMESPACE)",
    );
  });
});
