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

  it(`the store refuses a policy naming "${other}", and who-can live refuses the word with that reason and the store's kind (exit 2)`, async () => {
    const refused = await storeRequest(store, 'PUT', 'sys/policies/acl/other-word', { policy: `path "secret/*" {\n  capabilities = ["${other}"]\n}\n` });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.join('\n')).toContain(`invalid capability "${other}"`);
    const run = await cli(['who-can', other, PATH, 'live']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const product = storeKind() === 'vault' ? 'HashiCorp Vault' : 'OpenBao';
    expect(run.stderr).toContain(`"${other}" is a capability of ${storeKind() === 'vault' ? 'OpenBao' : 'HashiCorp Vault'}, not of ${product}: ${product} refuses every policy naming it (invalid capability "${other}")`);
    expect(run.stderr).toMatch(new RegExp(`\\(live store ${store.addr.replace(/[.]/g, '\\.')} is ${storeKind()} \\d+\\.\\d+\\.\\d+ \\(sys/seal-status\\)\\)`));
  });
});
