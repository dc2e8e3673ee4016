import { Acl, ListLookup, listLookupOf } from '../../../lib/acl/acl';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { StoreTarget } from '../../../lib/model/store-target';
import { checkKvMountVersions } from '../../../lib/reconcile/kv-mount-version-check';
import { READER_POLICY, readerPolicy, readerPolicyLookups, readLiveStore } from '../../../lib/reconcile/live-store-reader';
import { StoreClient, StoreResponse } from '../../../lib/store/store-client';

// The reader policy is written per store kind and version so that `drift` and `adopt` keep every
// read and list they need under both LIST lookups: the older one (OpenBao < 2.6.0, Vault < 2.0.3:
// a LIST's path is looked up without its trailing "/" first) and the newer one (with the "/" first),
// as the project's own evaluator models them (lib/acl/acl.ts). Proven for today's stores (older
// lookup) on the real stores in test/store/adoption.store.test.ts; no newer build is available here.

/** A store with an AppRole, a JWT and an OIDC mount, each with roles, that records every request. */
function recordingStore(): { client: StoreClient; requests: string[] } {
  const requests: string[] = [];
  const mounts = { 'approle/': { type: 'approle', accessor: 'a1' }, 'jwt/': { type: 'jwt', accessor: 'a2' }, 'oidc/': { type: 'oidc', accessor: 'a3' }, 'token/': { type: 'token', accessor: 'a4' } };
  const answers: Record<string, unknown> = {
    'sys/auth': { data: mounts },
    'auth/approle/role?list=true': { data: { keys: ['billing-dev', 'orchestrator-dev'] } },
    'auth/jwt/role?list=true': { data: { keys: ['registry-ci'] } },
    'auth/oidc/role?list=true': { data: { keys: ['developers'] } },
    'sys/policies/acl?list=true': { data: { keys: ['default', 'registry-ci'] } },
    'sys/mounts': { data: { 'secret/': { type: 'kv', options: { version: '2' } } } },
    'sys/seal-status': { version: '2.4.0' },
  };
  const client = {
    address: 'http://127.0.0.1:8200',
    async request(method: string, apiPath: string): Promise<StoreResponse> {
      requests.push(`${method} ${apiPath}`);
      const answer = answers[apiPath];
      if (answer !== undefined) return { status: 200, body: answer };
      if (apiPath.startsWith('sys/policies/acl/')) return { status: 200, body: { data: { policy: 'path "x" { capabilities = ["read"] }' } } };
      if (apiPath.endsWith('/config')) return { status: 200, body: { data: {} } };
      if (/^auth\/[^/]+\/role\/[^/]+$/.test(apiPath)) return { status: 200, body: { data: { role_type: apiPath.startsWith('auth/oidc') ? 'oidc' : 'jwt', token_policies: [] } } };
      throw new Error(`unexpected request ${method} ${apiPath}`);
    },
  } as unknown as StoreClient;
  return { client, requests };
}

/**
 * Every call `drift` and `adopt` make with the reader's token, as [capability, path the store checks]:
 * what readLiveStore and the KV mount check send (a `?list=true` GET is a LIST of the path with "/",
 * which the store adds), and what the vault provider reads when adopt's plan check plans.
 */
async function readerCalls(): Promise<[string, string][]> {
  const { client, requests } = recordingStore();
  await checkKvMountVersions(client, [{ path: 'secret', version: 2, stacks: ['ci-access'] }]);
  await readLiveStore(client);
  const calls = requests
    // sys/seal-status answers without a token.
    .filter((r) => r !== 'GET sys/seal-status')
    .map((r): [string, string] => {
      const [, apiPath] = r.split(' ');
      return apiPath.endsWith('?list=true') ? ['list', `${apiPath.slice(0, -'?list=true'.length)}/`] : ['read', apiPath];
    });
  // The provider reads a mount's settings through sys/mounts/auth/<mount>: sys/auth/<mount> and its
  // tune are sudo-only on both stores (the project's evaluator knows it; checked on both stores).
  const provider: [string, string][] = ['approle', 'jwt', 'oidc'].flatMap((m): [string, string][] => [
    ['read', `sys/mounts/auth/${m}`],
    ['read', `sys/mounts/auth/${m}/tune`],
  ]);
  return [...calls, ...provider, ['read', 'auth/token/lookup-self'], ['read', 'auth/approle/role/billing-dev/role-id']];
}

async function refusedCalls(text: string, lookup: ListLookup): Promise<string[]> {
  const acl = Acl.fromPolicies([await new PolicyParser().parse('secretstore-iac-reader', text)], { listLookup: lookup });
  return (await readerCalls()).filter(([capability, p]) => !acl.check(capability as 'read' | 'list', p).allowed).map(([c, p]) => `${c} ${p}`);
}

const TARGETS: [string, StoreTarget | undefined][] = [
  ['no store given', undefined],
  ['OpenBao, version unknown', new StoreTarget('openbao')],
  ['OpenBao 2.4.0', new StoreTarget('openbao', '2.4.0')],
  ['OpenBao 2.6.0', new StoreTarget('openbao', '2.6.0')],
  ['Vault 1.21.1', new StoreTarget('vault', '1.21.1')],
  ['Vault 2.0.3', new StoreTarget('vault', '2.0.3')],
];

describe('the reader policy keeps every read and list of drift and adopt, per store kind and version', () => {
  it('the calls checked are the reader\'s own: role listings of every role mount, policies, mounts', async () => {
    const calls = (await readerCalls()).map((c) => c.join(' '));
    expect(calls).toEqual(expect.arrayContaining(['list auth/approle/role/', 'list auth/jwt/role/', 'list auth/oidc/role/', 'list sys/policies/acl/', 'read sys/mounts', 'read auth/jwt/role/registry-ci']));
  });

  it.each(TARGETS)('%s: allowed under the lookup(s) of that store', async (_what, target) => {
    const lookups = readerPolicyLookups(target);
    expect(lookups).toEqual(target?.version ? [listLookupOf(target)] : ['trimmed-first', 'path-first']);
    for (const lookup of lookups) expect([lookup, await refusedCalls(readerPolicy(target), lookup)]).toEqual([lookup, []]);
  });

  it('without a version (and for drift --print-reader-policy without a SOURCE), one text works under both lookups', async () => {
    expect(READER_POLICY).toBe(readerPolicy(undefined));
    expect(await refusedCalls(READER_POLICY, 'trimmed-first')).toEqual([]);
    expect(await refusedCalls(READER_POLICY, 'path-first')).toEqual([]);
  });

  it('the older text would lose the role listings under the newer lookup: auth/+/role/+ (read) governs auth/<mount>/role/', async () => {
    expect(await refusedCalls(readerPolicy(new StoreTarget('openbao', '2.4.0')), 'path-first')).toEqual([
      'list auth/approle/role/',
      'list auth/jwt/role/',
      'list auth/oidc/role/',
    ]);
  });

  it('each store gets only the rule it uses; a text of one version differs from the other\'s only there', () => {
    const older = readerPolicy(new StoreTarget('vault', '1.21.1'));
    const newer = readerPolicy(new StoreTarget('vault', '2.0.3'));
    expect(older).toContain('path "auth/+/role" {\n  capabilities = ["list"]\n}');
    expect(older).not.toContain('path "auth/+/role/" {');
    expect(newer).toContain('path "auth/+/role/" {\n  capabilities = ["list"]\n}');
    expect(newer).not.toContain('path "auth/+/role" {');
    expect(newer.replace('auth/+/role/"', 'auth/+/role"')).toBe(older);
  });
});
