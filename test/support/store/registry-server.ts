/**
 * A real container registry for the store tests: Debian's `docker-registry` (distribution 2.8) on
 * the spec's two ports (§2.2), as two instances over one storage directory, with TLS (a throwaway CA
 * and server certificate made with openssl) and htpasswd (bcrypt) accounts:
 *
 * - the push port (spec 8443): read-write; its htpasswd holds only the accounts whose scope
 *   includes `container-image:write` (svc-orchestrator): svc-deployer cannot even log in there;
 * - the pull port (spec 8444): `storage.maintenance.readonly.enabled: true`, so no account can write
 *   through it whatever its password; its htpasswd holds every account that may read images
 *   (svc-orchestrator, whose scope is read and write, and svc-deployer, pull only).
 *
 * distribution's htpasswd auth has no per-account scopes (any valid account may push where the
 * storage allows), so the spec's scopes are modelled by which port an account can log in to and
 * which port can write at all. Ports are free ones on 127.0.0.1, chosen at start.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { requiredCommand } from '../required-command';
import { makeTestCertificates, TestCertificates } from '../tls-certificates';
import { freePort } from './store-server';

// Looked up when a test file imports this module: a missing one fails one test naming its package.
const REGISTRY = requiredCommand('docker-registry', 'the registry login tests (a real registry on the push and pull ports)');
const HTPASSWD = requiredCommand('htpasswd', 'the registry login tests (bcrypt htpasswd accounts)');

/** Whether the registry's commands are installed (the caller leaves its tests out when not). */
export const REGISTRY_AVAILABLE = REGISTRY !== undefined && HTPASSWD !== undefined;

/** One registry account: its name, password and the ports it may log in to. */
export interface RegistryAccount {
  readonly username: string;
  readonly password: string;
  /** `push`: in the push instance's htpasswd (and the pull one's); `pull`: only in the pull instance's. */
  readonly access: 'push' | 'pull';
}

/** The two running instances. */
export interface RunningRegistry {
  /** `127.0.0.1`: the certificate's name (IP SAN). */
  readonly host: string;
  /** Where the spec's 8443 (push) and 8444 (pull) are here. */
  readonly ports: { readonly push: number; readonly pull: number };
  /** The test CA and server certificate. */
  readonly certs: TestCertificates;
  /** A directory holding only `ca.crt`: what `skopeo --cert-dir` / `--src-cert-dir` / `--dest-cert-dir` take. */
  readonly certDir: string;
  /** One instance's log (its error and access log, as written so far), or both with a header each. */
  logs(kind?: 'push' | 'pull'): string;
  /** Kills both instances (always, also when start failed half-way) and removes the files. */
  stop(): Promise<void>;
}

/** The instance's `config.yml` (distribution's format, version 0.1). */
function registryConfig(o: { port: number; storage: string; readonly: boolean; htpasswd: string; realm: string; certs: TestCertificates; secret: string }): string {
  return [
    'version: 0.1',
    'log:',
    '  level: info',
    '  formatter: text',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${JSON.stringify(o.storage)}`,
    '  delete:',
    '    enabled: false',
    '  maintenance:',
    '    uploadpurging:',
    '      enabled: false',
    '    readonly:',
    `      enabled: ${o.readonly}`,
    'auth:',
    '  htpasswd:',
    `    realm: ${o.realm}`,
    `    path: ${JSON.stringify(o.htpasswd)}`,
    'http:',
    `  addr: 127.0.0.1:${o.port}`,
    `  secret: ${o.secret}`,
    '  tls:',
    `    certificate: ${JSON.stringify(o.certs.serverCert)}`,
    `    key: ${JSON.stringify(o.certs.serverKey)}`,
    '',
  ].join('\n');
}

/** A bcrypt htpasswd file (`htpasswd -B`; the password goes on standard input, never argv). */
function writeHtpasswd(file: string, accounts: readonly RegistryAccount[]): void {
  fs.writeFileSync(file, '', { mode: 0o600 });
  for (const a of accounts) {
    const line = execFileSync(HTPASSWD ?? 'htpasswd', ['-niB', a.username], { input: a.password, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    fs.appendFileSync(file, line.trim() + '\n');
  }
}

/** Resolves once `GET /v2/` answers (401: auth is on) over TLS with the test CA; generous, for a loaded machine. */
async function waitForRegistry(port: number, ca: Buffer, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`docker-registry on port ${port} exited (${child.exitCode}):\n${log()}`);
    const status = await new Promise<number | string>((resolve) => {
      const req = https.get({ host: '127.0.0.1', port, path: '/v2/', ca, timeout: 5_000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e) => resolve(String(e.message)));
    });
    if (status === 401) return;
    last = String(status);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`docker-registry on port ${port} did not answer GET /v2/ with 401 in 120 s (last: ${last}):\n${log()}`);
}

/**
 * Starts the push and pull instances over one new storage directory.
 * @param accounts the accounts and the port each may log in to
 */
export async function startRegistry(accounts: readonly RegistryAccount[]): Promise<RunningRegistry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-registry-'));
  const certs = makeTestCertificates();
  const certDir = path.join(dir, 'certs');
  fs.mkdirSync(certDir);
  // containers/image takes every *.crt of a cert dir as a CA (and *.cert/*.key as a client pair).
  fs.copyFileSync(certs.caCert, path.join(certDir, 'ca.crt'));
  const storage = path.join(dir, 'storage');
  fs.mkdirSync(storage);
  const children: ChildProcess[] = [];
  const logFiles = { push: path.join(dir, 'push.log'), pull: path.join(dir, 'pull.log') };
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(certs.dir, { recursive: true, force: true });
  };
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
  const logs = (kind?: 'push' | 'pull') =>
    kind ? read(logFiles[kind]) : (['push', 'pull'] as const).map((k) => `--- ${k}.log\n${read(logFiles[k])}`).join('\n');
  try {
    const secret = `http-secret-${process.pid}-${Date.now()}`;
    const ports = { push: await freePort(), pull: await freePort() };
    while (ports.pull === ports.push) ports.pull = await freePort();
    for (const kind of ['push', 'pull'] as const) {
      const htpasswd = path.join(dir, `${kind}.htpasswd`);
      writeHtpasswd(htpasswd, kind === 'push' ? accounts.filter((a) => a.access === 'push') : accounts);
      const config = path.join(dir, `${kind}.yml`);
      fs.writeFileSync(config, registryConfig({ port: ports[kind], storage, readonly: kind === 'pull', htpasswd, realm: `registry-${kind}`, certs, secret }));
      const out = fs.openSync(logFiles[kind], 'a');
      // The registry's own environment variables (REGISTRY_*) would override the file: none are passed.
      const child = spawn(REGISTRY ?? 'docker-registry', ['serve', config], { stdio: ['ignore', out, out], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      fs.closeSync(out);
      children.push(child);
    }
    const ca = fs.readFileSync(certs.caCert);
    await waitForRegistry(ports.push, ca, children[0], logs);
    await waitForRegistry(ports.pull, ca, children[1], logs);
    return { host: '127.0.0.1', ports, certs, certDir, logs, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
