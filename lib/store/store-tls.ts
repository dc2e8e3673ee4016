import * as fs from 'fs';
import * as path from 'path';

/**
 * The TLS settings of the store's own CLI, read from the same variables (`VAULT_*`, or the `BAO_*`
 * forms of OpenBao), so that a store behind a private CA is reached by every command as by
 * `vault`/`bao` themselves and by the engine's provider.
 */
export const STORE_TLS_SETTINGS = ['CACERT', 'CAPATH', 'CLIENT_CERT', 'CLIENT_KEY', 'TLS_SERVER_NAME', 'SKIP_VERIFY'] as const;

/** One of {@link STORE_TLS_SETTINGS}. */
export type StoreTlsSetting = (typeof STORE_TLS_SETTINGS)[number];

/** The TLS settings read, as Node's TLS options take them. */
export interface StoreTls {
  /** CA certificates (PEM) trusted instead of the system's: from `VAULT_CACERT`, else `VAULT_CAPATH`. */
  readonly ca?: readonly string[];
  /** Client certificate (PEM), `VAULT_CLIENT_CERT`. */
  readonly cert?: string;
  /** Client key (PEM), `VAULT_CLIENT_KEY`. */
  readonly key?: string;
  /** Name checked against the certificate and sent as SNI, `VAULT_TLS_SERVER_NAME`. */
  readonly servername?: string;
  /** `VAULT_SKIP_VERIFY`: the certificate is not verified. */
  readonly skipVerify: boolean;
  /** Lines to print on standard error on every run (`VAULT_SKIP_VERIFY`). */
  readonly warnings: readonly string[];
}

/** A TLS variable that cannot be used: unreadable file, no certificate, the two forms disagree. */
export class StoreTlsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreTlsError';
  }
}

/**
 * The value of a setting from `VAULT_<NAME>` or `BAO_<NAME>`, with the variable it came from.
 * @returns undefined when neither is set (empty counts as unset)
 */
function setting(env: NodeJS.ProcessEnv, name: StoreTlsSetting, problems: string[]): { variable: string; value: string } | undefined {
  const forms = [`VAULT_${name}`, `BAO_${name}`]
    .map((variable) => ({ variable, value: (env[variable] ?? '').trim() }))
    .filter((f) => f.value !== '');
  if (forms.length === 2 && forms[0].value !== forms[1].value) {
    problems.push(`${forms[0].variable}="${forms[0].value}" and ${forms[1].variable}="${forms[1].value}" disagree: unset one of them`);
  }
  return forms[0];
}

/** Go's `strconv.ParseBool`, which the store's CLI uses for `VAULT_SKIP_VERIFY`. */
function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The PEM certificates of a file; a problem when it cannot be read or holds none. */
function readCertificates(file: string, variable: string, problems: string[]): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    problems.push(`${variable}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    return [];
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) problems.push(`${variable}: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return certificates;
}

/** Every file under a directory, sorted (the store's CLI loads each as PEM). */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.isFile() ? [path.join(dir, e.name)] : []));
}

function readFile(file: string, variable: string, problems: string[]): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    problems.push(`${variable}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    return undefined;
  }
}

/**
 * Reads the TLS settings as the store's CLI does: `VAULT_CACERT` (a PEM file; when set,
 * `VAULT_CAPATH` is not read), `VAULT_CAPATH` (a directory of PEM files), `VAULT_CLIENT_CERT` and
 * `VAULT_CLIENT_KEY` (both or neither), `VAULT_TLS_SERVER_NAME`, `VAULT_SKIP_VERIFY` (accepted, with
 * a warning on every run), each also as `BAO_<NAME>`. A CA given replaces the system's trusted CAs,
 * as for the store's CLI.
 * @throws StoreTlsError listing every problem at once
 */
export function resolveStoreTls(env: NodeJS.ProcessEnv = process.env): StoreTls {
  const problems: string[] = [];
  const cacert = setting(env, 'CACERT', problems);
  const capath = setting(env, 'CAPATH', problems);
  const clientCert = setting(env, 'CLIENT_CERT', problems);
  const clientKey = setting(env, 'CLIENT_KEY', problems);
  const serverName = setting(env, 'TLS_SERVER_NAME', problems);
  const skip = setting(env, 'SKIP_VERIFY', problems);

  let ca: string[] | undefined;
  if (cacert) ca = readCertificates(cacert.value, cacert.variable, problems);
  else if (capath) {
    let files: string[] = [];
    try {
      files = filesUnder(capath.value);
    } catch (e) {
      problems.push(`${capath.variable}: cannot read the directory ${capath.value} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    ca = files.flatMap((f) => readCertificates(f, capath.variable, problems));
    if (files.length === 0 && problems.length === 0) problems.push(`${capath.variable}: ${capath.value} holds no certificate file`);
  }
  if ((clientCert === undefined) !== (clientKey === undefined)) {
    problems.push('VAULT_CLIENT_CERT and VAULT_CLIENT_KEY (or their BAO_ forms) go together: set both, or neither');
  }
  const cert = clientCert && clientKey ? readFile(clientCert.value, clientCert.variable, problems) : undefined;
  const key = clientCert && clientKey ? readFile(clientKey.value, clientKey.variable, problems) : undefined;
  let skipVerify = false;
  if (skip) {
    const parsed = parseGoBool(skip.value);
    if (parsed === undefined) problems.push(`${skip.variable}="${skip.value}" is not a boolean (true, false, 1, 0)`);
    else skipVerify = parsed;
  }
  if (problems.length > 0) throw new StoreTlsError(`the store's TLS settings cannot be used: ${problems.join('; ')}`);
  return {
    ca,
    cert,
    key,
    servername: serverName?.value,
    skipVerify,
    warnings: skipVerify
      ? [
          `warning: ${skip!.variable} is set: the store's TLS certificate is not verified, so anyone on the network path can pose as ` +
            'the store and receive the token. Give the CA with VAULT_CACERT instead',
        ]
      : [],
  };
}

/**
 * The TLS variables for the engine's vault provider, which reads only the `VAULT_*` forms: each
 * `BAO_*` setting copied to its `VAULT_*` name when that is unset.
 */
export function vaultTlsVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of STORE_TLS_SETTINGS) {
    const bao = (env[`BAO_${name}`] ?? '').trim();
    if (bao !== '' && (env[`VAULT_${name}`] ?? '').trim() === '') out[`VAULT_${name}`] = bao;
  }
  return out;
}
