import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** A private CA and a server certificate it signed, as files. */
export interface TestCertificates {
  /** Directory holding every file. */
  readonly dir: string;
  /** The CA certificate (PEM): what VAULT_CACERT points at. */
  readonly caCert: string;
  /** A directory holding only the CA certificate: what VAULT_CAPATH points at. */
  readonly caDir: string;
  /** The server certificate (PEM), for 127.0.0.1 and `store.test.internal`. */
  readonly serverCert: string;
  /** The server key (PEM). */
  readonly serverKey: string;
  /** Another CA, which did not sign the server certificate. */
  readonly otherCaCert: string;
}

/** The name besides 127.0.0.1 the server certificate carries (for VAULT_TLS_SERVER_NAME). */
export const TEST_SERVER_NAME = 'store.test.internal';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Makes a private CA and a server certificate for `127.0.0.1` and {@link TEST_SERVER_NAME} with
 * `openssl`, in a new temporary directory (the caller removes `dir`).
 */
export function makeTestCertificates(): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tls-'));
  const ext = path.join(dir, 'server.ext');
  fs.writeFileSync(
    ext,
    ['basicConstraints=CA:FALSE', 'keyUsage=digitalSignature,keyEncipherment', 'extendedKeyUsage=serverAuth', `subjectAltName=IP:127.0.0.1,DNS:${TEST_SERVER_NAME}`].join('\n') + '\n',
  );
  for (const ca of ['ca', 'other-ca']) {
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=secretstore-iac test ${ca}`], dir);
  }
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1'], dir);
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', ext], dir);
  const caDir = path.join(dir, 'ca-dir');
  fs.mkdirSync(caDir);
  fs.copyFileSync(path.join(dir, 'ca.pem'), path.join(caDir, 'ca.pem'));
  return {
    dir,
    caCert: path.join(dir, 'ca.pem'),
    caDir,
    serverCert: path.join(dir, 'server.pem'),
    serverKey: path.join(dir, 'server.key'),
    otherCaCert: path.join(dir, 'other-ca.pem'),
  };
}
