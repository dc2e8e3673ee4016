/**
 * `who-can CAPABILITY PATH live` with the capability words of the store it talks to (docs/stores.md):
 * the live store names its kind in `sys/seal-status`; a word only that store knows (OpenBao's `scan`,
 * Vault's `subscribe`) is answered as the store itself answers `sys/capabilities` for a token of the
 * role, and the other store's word, which the store refuses in any policy, is refused with that reason.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/store-facts';

/** Each store's own word, and the one it refuses (the other store's). */
const WORDS = { openbao: { own: 'scan', other: 'subscribe' }, vault: { own: 'subscribe', other: 'scan' } } as const;

describe(`who-can live with ${storeKind()}'s capability words`, () => {
  const { own, other } = WORDS[storeKind()];
  const PATH = 'secret/metadata/team/';
  let store: RunningStore;
  let cwd: string;
  const cli = (args: string[]) => runStoreCli(args, { cwd, addr: store.addr, token: store.rootToken });

  beforeAll(async () => {
    store = await startStore();
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-who-can-'));
    expect((await storeRequest(store, 'POST', 'sys/auth/approle', { type: 'approle' })).status).toBe(204);
    const policy = `path "secret/metadata/team/*" {\n  capabilities = ["${own}", "list"]\n}\n`;
    expect((await storeRequest(store, 'PUT', 'sys/policies/acl/team-watcher', { policy })).status).toBe(204);
    expect((await storeRequest(store, 'POST', 'auth/approle/role/team-watcher', { token_policies: ['team-watcher'] })).status).toBe(204);
  });

  /** A token of an AppRole role, from a real login (its policies as the store gives them). */
  async function loginToken(role: string): Promise<string> {
    const roleId = (await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id;
    const secretId = (await storeRequest(store, 'POST', `auth/approle/role/${role}/secret-id`, {})).body.data.secret_id;
    const login = await storeRequest(store, 'POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, null);
    expect(login.status).toBe(200);
    return login.body.auth.client_token;
  }

  afterAll(async () => {
    await store?.stop();
    if (cwd) fs.rmSync(cwd, { recursive: true, force: true });
  });

  it(`the store grants its own word "${own}" to a token of the role, and who-can live names the role for it`, async () => {
    const token = (await storeRequest(store, 'POST', 'auth/token/create', { policies: ['team-watcher'], ttl: '5m' })).body.auth.client_token;
    const granted = (await storeRequest(store, 'POST', 'sys/capabilities', { token, paths: [PATH] })).body.capabilities;
    expect(granted).toContain(own);
    const run = await cli(['who-can', own, PATH, 'live']);
    expect(run).toEqual({
      code: 0,
      stdout: `${own} on ${PATH}:\n  approle/team-watcher  via "secret/metadata/team/*" (policies: team-watcher)`,
      stderr: '',
    });
  });

  describe('who-can live answers as the store decides (issue 26)', () => {
    beforeAll(async () => {
      const put = async (name: string, policy: string) => expect((await storeRequest(store, 'PUT', `sys/policies/acl/${name}`, { policy })).status).toBe(204);
      const role = async (name: string, policies: string[]) => expect((await storeRequest(store, 'POST', `auth/approle/role/${name}`, { token_policies: policies })).status).toBe(204);
      await put('team-reader', 'path "secret/data/team/*" {\n  capabilities = ["read"]\n  min_wrapping_ttl = "1m"\n  max_wrapping_ttl = "1h"\n}\n');
      await put('mount-admin', 'path "sys/auth/*" {\n  capabilities = ["create", "read", "update", "delete"]\n}\n');
      // Accepted by the store (HCL 1); an HCL 2 parser cannot read it (blocks with and without labels).
      await put('mixed-blocks', 'path "secret/data/team/*" {\n  capabilities = ["read"]\n}\npath {\n  capabilities = ["list"]\n}\n');
      // The role names its policy as typed, padded and in capitals: the store files "team-reader".
      await role('team-reader', [' Team-Reader\t']);
      await role('mount-admin', ['mount-admin']);
      await role('mixed-holder', ['mixed-blocks']);
      expect((await storeRequest(store, 'POST', 'secret/data/team/app', { data: { k: 'v' } })).status).toBe(200);
    });

    it('LIST without a trailing "/": answered for secret/metadata/team/, as a real LIST by the role\'s token is', async () => {
      const run = await cli(['who-can', 'list', 'secret/metadata/team', 'live']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('  note: the store adds a trailing "/" to every LIST request: answered for secret/metadata/team/');
      expect(run.stdout).toContain('  approle/team-watcher  via "secret/metadata/team/*" (policies: team-watcher)');
      const listed = await storeRequest(store, 'LIST', 'secret/metadata/team', undefined, await loginToken('team-watcher'));
      expect(listed.status).toBe(200);
      expect(listed.body.data.keys).toEqual(['app']);
    });

    it('a path in the KV version 1 form on the version 2 mount secret/: answered for secret/data/..., with a note; the store serves the secret there and refuses the other form', async () => {
      const run = await cli(['who-can', 'read', 'secret/team/app', 'live']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        '  note: secret/ is KV version 2 (sys/mounts of the live store): it serves no secret at secret/team/app (the store answers 404 ' +
          '"Invalid path for a versioned K/V secrets engine" to a token allowed there), so this answers for secret/data/team/app',
      );
      // The role lists " Team-Reader\t": found under the name the store files, and its rule is constrained.
      expect(run.stdout).toContain('  approle/team-reader  via "secret/data/team/*" (policies: team-reader; constrained: max_wrapping_ttl, min_wrapping_ttl)');
      const token = await loginToken('team-reader');
      // Constrained indeed: the rule's min_wrapping_ttl makes the store refuse an unwrapped read, and serve a wrapped one.
      expect((await storeRequest(store, 'GET', 'secret/data/team/app', undefined, token)).status).toBe(403);
      const wrapped = await fetch(`${store.addr}/v1/secret/data/team/app`, { headers: { 'X-Vault-Token': token, 'X-Vault-Wrap-TTL': '5m' } });
      expect(wrapped.status).toBe(200);
      expect(((await wrapped.json()) as { wrap_info?: { token?: string } }).wrap_info?.token).toBeTruthy();
      // The typed form is not where the mount serves the secret: no rule covers it, the store refuses it.
      const older = await fetch(`${store.addr}/v1/secret/team/app`, { headers: { 'X-Vault-Token': token, 'X-Vault-Wrap-TTL': '5m' } });
      expect(older.status).toBe(403);
    });

    it('a root-protected path: update without sudo on sys/auth/* is refused by the store, and who-can says so instead of naming the role', async () => {
      const run = await cli(['who-can', 'read', 'sys/auth/token', 'live']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('  note: sys/auth/token is root-protected (sys/auth/*): a request there needs "sudo" on the governing rule besides "read"');
      expect(run.stdout).toContain('refused: the path needs "sudo" besides "read", which the rule lacks:\n  approle/mount-admin  via "sys/auth/*" (policies: mount-admin)');
      // Nobody can: the first line after the question and its notes.
      expect(run.stdout.split('\n').filter((l) => !l.startsWith('  note:'))[1]).toBe('  nobody');
      expect((await storeRequest(store, 'GET', 'sys/auth/token', undefined, await loginToken('mount-admin'))).status).toBe(403);
    });

    it('a policy an HCL 2 parser cannot read is read as the store reads it (HCL 1): its holder is answered like the others (exit 0)', async () => {
      const run = await cli(['who-can', 'read', 'secret/data/team/app', 'live']);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toContain('  approle/team-reader  via "secret/data/team/*"');
      expect(run.stdout).toContain('  approle/mixed-holder  via "secret/data/team/*" (policies: mixed-blocks)');
      expect(run.stdout).not.toContain('not fully evaluated');
      // The store lets the holder read, as the analysis says.
      expect((await storeRequest(store, 'GET', 'secret/data/team/app', undefined, await loginToken('mixed-holder'))).status).toBe(200);
      const access = await cli(['access', 'live', '--identity', 'approle/mixed-holder']);
      expect(access.code).toBe(0);
      expect(access.stdout).not.toContain('**Problem:**');
    });
  });

  it(`the store refuses a policy naming "${other}", and who-can live refuses the word with that reason and the store's kind (exit 2)`, async () => {
    const refused = await storeRequest(store, 'PUT', 'sys/policies/acl/other-word', { policy: `path "secret/*" {\n  capabilities = ["${other}"]\n}\n` });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.join('\n')).toContain(`invalid capability "${other}"`);
    const run = await cli(['who-can', other, PATH, 'live']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const product = storeKind() === 'vault' ? 'HashiCorp Vault' : 'OpenBao';
    expect(run.stderr).toContain(`"${other}" is a capability of ${storeKind() === 'vault' ? 'OpenBao' : 'HashiCorp Vault'}, not of ${product}: ${product} refuses every policy naming it (invalid capability "${other}")`);
    expect(run.stderr).toMatch(new RegExp(`\\(live store ${store.addr.replace(/[.]/g, '\\.')} \\(root namespace\\) is ${storeKind()} \\d+\\.\\d+\\.\\d+ \\(sys/seal-status\\)\\)`));
  });
});
