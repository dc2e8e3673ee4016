import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { resolveStoreTls, StoreTlsError, vaultTlsVariables } from '../../../lib/store/store-tls';

// How the TLS variables of the store's CLI are read; that they work against a TLS server is in
// test/unit/store/store-transport.test.ts and, on a real OpenBao, test/store/tls.store.test.ts.

describe('resolveStoreTls', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tls-env-'));
  const pem = path.join(dir, 'ca.pem');
  fs.writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  const notPem = path.join(dir, 'not.pem');
  fs.writeFileSync(notPem, 'hello');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('nothing set: the system CAs, verification on, no warning', () => {
    expect(resolveStoreTls({})).toEqual({ ca: undefined, cert: undefined, key: undefined, servername: undefined, skipVerify: false, warnings: [] });
  });

  it('reads the VAULT_ and BAO_ forms alike; both set and equal is fine', () => {
    expect(resolveStoreTls({ VAULT_CACERT: pem }).ca).toHaveLength(1);
    expect(resolveStoreTls({ BAO_CACERT: pem, VAULT_CACERT: pem }).ca).toHaveLength(1);
    expect(resolveStoreTls({ BAO_TLS_SERVER_NAME: 'store.internal' }).servername).toBe('store.internal');
  });

  it('lists every problem at once: forms that disagree, unreadable or non-PEM files, half a client pair, a non-boolean', () => {
    let error: unknown;
    try {
      resolveStoreTls({
        VAULT_CACERT: pem,
        BAO_CACERT: notPem,
        VAULT_CLIENT_CERT: pem,
        VAULT_SKIP_VERIFY: 'yes',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreTlsError);
    expect((error as Error).message).toBe(
      `the store's TLS settings cannot be used: VAULT_CACERT="${pem}" and BAO_CACERT="${notPem}" disagree: unset one of them; ` +
        'VAULT_CLIENT_CERT and VAULT_CLIENT_KEY (or their BAO_ forms) go together: set both, or neither; ' +
        'VAULT_SKIP_VERIFY="yes" is not a boolean (true, false, 1, 0)',
    );
    expect(() => resolveStoreTls({ VAULT_CACERT: notPem })).toThrow(`VAULT_CACERT: ${notPem} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    expect(() => resolveStoreTls({ BAO_CAPATH: path.join(dir, 'missing') })).toThrow(`BAO_CAPATH: cannot read the directory ${dir}/missing (ENOENT)`);
    expect(() => resolveStoreTls({ VAULT_CLIENT_CERT: pem, VAULT_CLIENT_KEY: path.join(dir, 'nokey') })).toThrow(`VAULT_CLIENT_KEY: cannot read ${dir}/nokey (ENOENT)`);
  });

  it('VAULT_SKIP_VERIFY=false is no skip and no warning', () => {
    expect(resolveStoreTls({ VAULT_SKIP_VERIFY: 'false' })).toMatchObject({ skipVerify: false, warnings: [] });
  });
});

describe('vaultTlsVariables (for the engine, whose provider reads only VAULT_*)', () => {
  it('copies a BAO_ form to its VAULT_ name when that is unset', () => {
    expect(vaultTlsVariables({ BAO_CACERT: '/ca.pem', BAO_SKIP_VERIFY: 'true', VAULT_SKIP_VERIFY: 'false' })).toEqual({ VAULT_CACERT: '/ca.pem' });
  });
});
