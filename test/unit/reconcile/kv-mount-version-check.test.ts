import * as http from 'http';
import { AddressInfo } from 'net';
import type { DeclaredKvMount } from '../../../lib/reconcile/declared-kv-mount';
import {
  checkKvMountVersions,
  KvMountCheckError,
  KvMountMismatchError,
  kvMountProblems,
  kvVersionOf,
  LiveSecretsMount,
  parseSecretsMounts,
} from '../../../lib/reconcile/kv-mount-version-check';
import { StoreClient, StoreError } from '../../../lib/store/store-client';
import { tokenNamespaceProblem } from '../../../lib/store/token-namespace';

// Issue 19 §3 / issue 15: the declared KV version compared with the store's mount table. The real
// store's answers are proven in test/store/kv-version.store.test.ts.

const declared = (path: string, version: 1 | 2, stacks = ['app-roles', 'ci-access']): DeclaredKvMount => ({ path, version, stacks });
const mount = (path: string, type: string, kvVersion?: 1 | 2): LiveSecretsMount => ({ path, type, kvVersion });
const DEV_STORE = [mount('cubbyhole', 'cubbyhole'), mount('identity', 'identity'), mount('secret', 'kv', 2), mount('sys', 'system')];

describe('the KV version of a mount-table entry', () => {
  it.each([
    ['kv', { version: '2' }, 2],
    ['kv', { version: '1' }, 1],
    ['kv', {}, 1],
    ['kv', null, 1],
    ['kv', undefined, 1],
    ['generic', null, 1],
    ['kv-v2', null, 2],
    ['kv', { version: '3' }, undefined],
    ['transit', {}, undefined],
  ])('type %j with options %j is %j', (type, options, expected) => {
    expect(kvVersionOf(type, options)).toBe(expected);
  });

  it('parses GET sys/mounts (the mounts under data), sorted, slashes trimmed', () => {
    const body = {
      request_id: 'x',
      data: {
        'secret/': { type: 'kv', options: { version: '2' }, accessor: 'kv_1' },
        'kv1/': { type: 'kv', options: null },
        'sys/': { type: 'system' },
      },
    };
    expect(parseSecretsMounts(body)).toEqual([mount('kv1', 'kv', 1), mount('secret', 'kv', 2), mount('sys', 'system')]);
  });
});

describe('declared KV mounts compared with the store', () => {
  it('matching: secret/ declared v2, KV v2 on the store: no problem', () => {
    expect(kvMountProblems([declared('secret', 2)], DEV_STORE)).toEqual([]);
  });

  it('declared v2, KV v1 on the store (issue 15): named, with the consequence and the fix', () => {
    expect(kvMountProblems([declared('secret', 2)], [mount('secret', 'kv', 1)])).toEqual([
      "secret/ is KV v1 on the store, but stacks app-roles, ci-access declare it KV v2: the policies name secret/data/<p>, which a KV v1 mount serves as the secret \"data/<p>\", so no application or CI job reads its secrets, and the platform rules were checked for paths the store does not use. Fix: settings.kvMount = new KvMount('secret', 1) and synthesize again, or change the mount on the store",
    ]);
  });

  it('declared v1, KV v2 on the store (issue 19): named, with the consequence and the fix', () => {
    expect(kvMountProblems([declared('secret', 1, ['ci-access'])], DEV_STORE)).toEqual([
      "secret/ is KV v2 on the store, but stack ci-access declares it KV v1: the policies name secret/<p>, which a KV v2 mount does not serve, and secret/data/<p> is the v2 data path of <p>: the platform rules were checked for paths the store does not use. Fix: settings.kvMount = new KvMount('secret', 2) and synthesize again, or change the mount on the store",
    ]);
  });

  it('the old type name generic is KV v1', () => {
    expect(kvMountProblems([declared('secret', 2)], [mount('secret', 'generic', 1)])[0]).toMatch(/^secret\/ is KV v1 on the store/);
  });

  it('another engine at the declared path', () => {
    expect(kvMountProblems([declared('secret', 2)], [mount('secret', 'transit')])).toEqual([
      'secret/ is a "transit" engine on the store, not a KV engine, but stacks app-roles, ci-access declare it KV v2: no secret the stacks grant can be read there',
    ]);
  });

  it('absent: the stacks never create KV mounts, so it is refused with the command that creates it', () => {
    expect(kvMountProblems([declared('kv', 1)], DEV_STORE)).toEqual([
      'kv/ is not mounted on the store, but stacks app-roles, ci-access rely on it as KV v1 (the stacks never create KV mounts; applications and CI jobs read their secrets there): enable it first (bao secrets enable -path=kv -version=1 kv)',
    ]);
  });

  it('absent in a namespace: the problem and the command name it (run without -namespace, the CLI enables the mount in the root namespace)', () => {
    expect(kvMountProblems([declared('kv', 1)], DEV_STORE, 'bao', 'team-a/sub')).toEqual([
      "kv/ is not mounted in the namespace team-a/sub on the store, but stacks app-roles, ci-access rely on it as KV v1 (the stacks never create KV mounts; applications and CI jobs read their secrets there): enable it first (bao secrets enable -namespace='team-a/sub' -path=kv -version=1 kv)",
    ]);
  });

  it("the fix names the store's CLI it is given (the live check reads it from sys/seal-status)", () => {
    expect(kvMountProblems([declared('kv', 1)], DEV_STORE, 'vault')[0]).toMatch(/enable it first \(vault secrets enable -path=kv -version=1 kv\)$/);
  });

  it('a declared mount path inside a store mount: its paths are the outer mount\'s paths', () => {
    expect(kvMountProblems([declared('secret/data', 1)], DEV_STORE)).toEqual([
      "secret/data/ is not a mount on the store: its paths are served by secret/ (KV v2), where the paths of stacks app-roles, ci-access would be other secrets' paths (secret/data/<p> is secret/'s data/<p>); declare settings.kvMount at secret, or mount secret/data/ on a path of its own",
    ]);
  });

  it('a store mount inside the declared mount path', () => {
    expect(kvMountProblems([declared('team', 2)], [...DEV_STORE, mount('team', 'kv', 2), mount('team/x', 'kv', 1)])).toEqual([
      'team/x/ is mounted (KV v1) inside the declared KV mount team/: requests for team/x/... go to that mount, not to team/; the declared paths must not be nested with another mount',
    ]);
  });

  it('a mount whose path only starts like the declared one (secret-x) is another mount', () => {
    expect(kvMountProblems([declared('secret', 2)], [...DEV_STORE, mount('secret-x', 'kv', 1)])).toEqual([]);
  });

  it('one mount path declared with two versions by two stacks: refused whatever the store has', () => {
    expect(kvMountProblems([declared('secret', 1, ['legacy']), declared('secret', 2, ['ci-access'])], DEV_STORE)).toEqual([
      'secret/ is declared KV v1 by stack legacy and KV v2 by stack ci-access: one mount has one version; declare the same settings.kvMount in every stack',
      "secret/ is KV v2 on the store, but stack legacy declares it KV v1: the policies name secret/<p>, which a KV v2 mount does not serve, and secret/data/<p> is the v2 data path of <p>: the platform rules were checked for paths the store does not use. Fix: settings.kvMount = new KvMount('secret', 2) and synthesize again, or change the mount on the store",
    ]);
  });
});

describe('checkKvMountVersions against an HTTP store', () => {
  async function fakeStore(status: number, body: unknown): Promise<{ address: string; paths: string[]; close: () => Promise<void> }> {
    const paths: string[] = [];
    const server = http.createServer((req, res) => {
      paths.push(`${req.method} ${req.url}`);
      res.writeHead(req.url === '/v1/auth/token/lookup-self' ? 200 : status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(req.url === '/v1/auth/token/lookup-self' ? { data: {} } : body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { address, paths, close: () => new Promise((r) => server.close(() => r())) };
  }

  it('asks nothing when no KV mount is declared', async () => {
    const store = await fakeStore(500, {});
    try {
      await checkKvMountVersions(new StoreClient({ address: store.address, token: 't' }), []);
      expect(store.paths).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('reads GET sys/mounts once (then sys/seal-status, for the CLI its fixes name) and throws every contradiction at once', async () => {
    const store = await fakeStore(200, { data: { 'secret/': { type: 'kv', options: { version: '1' } } } });
    try {
      const check = checkKvMountVersions(new StoreClient({ address: store.address, token: 't' }), [declared('secret', 2), declared('kv', 2)]);
      await expect(check).rejects.toBeInstanceOf(KvMountMismatchError);
      await expect(check).rejects.toThrow(
        new RegExp(`^the declared KV mounts do not match the secrets store at ${store.address}; nothing was planned, applied or written:\\n  kv/ is not mounted .*\\n  secret/ is KV v1 on the store`),
      );
      // sys/seal-status only because there is a mismatch: its fixes name the store's CLI.
      expect(store.paths).toEqual(['GET /v1/sys/mounts', 'GET /v1/sys/seal-status']);
    } finally {
      await store.close();
    }
  });

  it('a token that may not read sys/mounts: the path and the capability are named, nothing is skipped', async () => {
    const store = await fakeStore(403, { errors: ['1 error occurred:\n\t* permission denied\n\n'] });
    try {
      const check = checkKvMountVersions(new StoreClient({ address: store.address, token: 't' }), [declared('secret', 2)]);
      await expect(check).rejects.toBeInstanceOf(KvMountCheckError);
      await expect(check).rejects.toThrow(
        `cannot compare the declared KV mounts (secret/ KV v2) with the store at ${store.address}: GET /v1/sys/mounts was refused (permission denied: GET /v1/sys/mounts (HTTP 403, permission denied): the token may not read sys/mounts.`,
      );
      await expect(check).rejects.toThrow('The check needs path "sys/mounts" { capabilities = ["read"] } in the token\'s policy');
    } finally {
      await store.close();
    }
  });

  it('a token of another namespace: the namespaces are the cause, no capability is named as missing (issue 28)', async () => {
    const denied = `permission denied: GET /v1/sys/mounts (HTTP 403, permission denied): ${tokenNamespaceProblem('team-b', 'team-a')}`;
    const client = { address: 'http://store', request: async () => Promise.reject(new StoreError('permission-denied', denied, 403, ['permission denied'])) } as unknown as StoreClient;
    const refused = await checkKvMountVersions(client, [declared('secret', 2)]).catch((e) => e);
    expect(refused).toBeInstanceOf(KvMountCheckError);
    expect(refused.message).toBe(`cannot compare the declared KV mounts with the store at http://store: ${denied}`);
    expect(refused.message).not.toContain('The check needs path');
  });
});
