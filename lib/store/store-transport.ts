import * as http from 'http';
import * as https from 'https';
import { storeText } from '../private/terminal-text';
import { hostList, hostListed, INSECURE_HTTP_HOSTS_VARIABLE, storeAddressProblem } from './store-address';
import { resolveStoreTls, StoreTls } from './store-tls';

/** Seconds every store request may take, connect to last byte, unless `SECRETSTORE_IAC_STORE_TIMEOUT` says otherwise. */
export const DEFAULT_STORE_TIMEOUT_SECONDS = 5;

/** Bytes of one store answer read at most, unless `SECRETSTORE_IAC_MAX_RESPONSE_BYTES` says otherwise (32 MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Redirects to the same origin followed for one request, at most. */
export const MAX_SAME_ORIGIN_REDIRECTS = 3;

/** The variables the transport reads, with what each sets. */
export const STORE_TRANSPORT_VARIABLES = {
  timeout: 'SECRETSTORE_IAC_STORE_TIMEOUT',
  maxResponseBytes: 'SECRETSTORE_IAC_MAX_RESPONSE_BYTES',
  redirectHosts: 'SECRETSTORE_IAC_REDIRECT_HOSTS',
  insecureHttpHosts: INSECURE_HTTP_HOSTS_VARIABLE,
} as const;

/** Why a store request failed before the store's answer could be read. */
export type StoreTransportErrorKind = 'unreachable' | 'timeout' | 'tls' | 'redirect' | 'too-large' | 'address' | 'settings';

/**
 * A store request that failed in transport. For `unreachable` and `timeout`, {@link reason} is the
 * short cause (`ECONNREFUSED`, `no answer within 5s ...`) the callers put into their own message;
 * the other kinds carry the whole message, which says what to do.
 */
export class StoreTransportError extends Error {
  constructor(
    readonly kind: StoreTransportErrorKind,
    message: string,
    /** The short cause. */
    readonly reason: string = message,
  ) {
    super(message);
    this.name = 'StoreTransportError';
  }
}

/** Options of {@link StoreTransport}; each defaults as documented in docs/operators.md. */
export interface StoreTransportOptions {
  /** Deadline of one request (connect, redirects and the whole answer), in milliseconds. @default 5000 */
  readonly timeoutMs?: number;
  /** Bytes of an answer read at most. @default 32 MiB */
  readonly maxResponseBytes?: number;
  /** Hosts (`host[:port]`, lower case) other than the store's own origin a redirect may lead to. @default none */
  readonly redirectHosts?: readonly string[];
  /** Hosts besides this machine that plain `http://` may reach. @default none */
  readonly insecureHttpHosts?: readonly string[];
  /** TLS settings. @default the system's trusted CAs, verification on */
  readonly tls?: StoreTls;
}

/** One request. */
export interface StoreTransportRequest {
  readonly method: string;
  /** Absolute URL. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** A complete answer. */
export interface StoreTransportResponse {
  readonly status: number;
  /** The body, decoded as UTF-8. */
  readonly text: string;
  /** The URL that answered (after same-origin redirects). */
  readonly url: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** TLS failures of Node's stack, by error code: the certificate could not be trusted or does not match. */
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL)/;

function numberSetting(env: NodeJS.ProcessEnv, variable: string, integer: boolean, fallback: number): number {
  const text = (env[variable] ?? '').trim();
  if (text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new StoreTransportError(
      'settings',
      `${variable}="${storeText(text, 40)}" is not ${integer ? 'a whole number of bytes' : 'a number of seconds'} greater than 0 (default ${fallback})`,
    );
  }
  return value;
}

/**
 * The one way the library talks to the store over HTTP (the store client of every live command and
 * the health check of `tf`), built on `node:http`/`node:https` so that nothing happens that the
 * operator did not choose:
 *
 * - **Redirects** are never followed blindly: one to the same origin (scheme, host, port) is
 *   followed, at most {@link MAX_SAME_ORIGIN_REDIRECTS} times; one to another origin is an error
 *   naming the `Location`, unless its host is listed in `SECRETSTORE_IAC_REDIRECT_HOSTS`. So no
 *   token, Role ID or Secret ID reaches a host the operator did not name. (HA clusters forward a
 *   standby's requests to the active node themselves by default and answer without a redirect.)
 * - **Answers** are read up to a limit (`SECRETSTORE_IAC_MAX_RESPONSE_BYTES`, default 32 MiB); reading
 *   stops there with an error naming the limit.
 * - **One deadline** (`SECRETSTORE_IAC_STORE_TIMEOUT`, default 5 s) covers connecting, redirects and
 *   the whole answer.
 * - **TLS** as the store's CLI: `VAULT_CACERT`, `VAULT_CAPATH`, client certificate, server name,
 *   `VAULT_SKIP_VERIFY` (lib/store/store-tls.ts).
 * - **Plain http** only to this machine or hosts listed in `SECRETSTORE_IAC_INSECURE_HTTP_HOSTS`;
 *   never to a URL with credentials in it.
 */
export class StoreTransport {
  /**
   * The transport the environment configures (the variables of {@link STORE_TRANSPORT_VARIABLES} and
   * the TLS variables). Warnings (`VAULT_SKIP_VERIFY`) go to `warn` at once, every run.
   * @throws StoreTransportError (`settings`) or StoreTlsError naming the variable
   */
  static fromEnvironment(env: NodeJS.ProcessEnv = process.env, warn?: (line: string) => void): StoreTransport {
    const tls = resolveStoreTls(env);
    for (const line of tls.warnings) warn?.(line);
    return new StoreTransport({
      timeoutMs: numberSetting(env, STORE_TRANSPORT_VARIABLES.timeout, false, DEFAULT_STORE_TIMEOUT_SECONDS) * 1000,
      maxResponseBytes: numberSetting(env, STORE_TRANSPORT_VARIABLES.maxResponseBytes, true, DEFAULT_MAX_RESPONSE_BYTES),
      redirectHosts: hostList(env, STORE_TRANSPORT_VARIABLES.redirectHosts),
      insecureHttpHosts: hostList(env, STORE_TRANSPORT_VARIABLES.insecureHttpHosts),
      tls,
    });
  }

  /** Deadline of one request, in milliseconds. */
  readonly timeoutMs: number;
  /** Bytes of an answer read at most. */
  readonly maxResponseBytes: number;
  private readonly redirectHosts: readonly string[];
  private readonly insecureHttpHosts: readonly string[];
  private readonly tls?: StoreTls;

  constructor(options: StoreTransportOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_SECONDS * 1000;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.redirectHosts = options.redirectHosts ?? [];
    this.insecureHttpHosts = options.insecureHttpHosts ?? [];
    this.tls = options.tls;
  }

  /** The deadline in words, for messages. */
  get deadline(): string {
    return `${this.timeoutMs / 1000}s`;
  }

  /**
   * Sends one request and reads the whole answer.
   * @throws StoreTransportError for a refused address, a connection failure, the deadline, a TLS
   *   failure, a redirect to an origin not named, or an answer over the limit
   */
  async request(request: StoreTransportRequest): Promise<StoreTransportResponse> {
    const deadline = Date.now() + this.timeoutMs;
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new StoreTransportError('address', `"${storeText(request.url, 200)}" is not a URL`);
    }
    this.checkAddress(url, 'the store address');
    const origin = url.origin;
    for (let hop = 0; ; hop++) {
      const answer = await this.once(request, url, deadline);
      const location = answer.location;
      if (!REDIRECT_STATUSES.has(answer.status) || location === undefined) return { status: answer.status, text: answer.text, url: url.href };
      const where = `${request.method} ${url.pathname}`;
      let target: URL;
      try {
        target = new URL(location, url);
      } catch {
        throw new StoreTransportError('redirect', `the store answered ${where} with a redirect (HTTP ${answer.status}) to "${storeText(location, 200)}", which is not a URL`);
      }
      if (target.origin !== origin && !hostListed(target, this.redirectHosts)) {
        throw new StoreTransportError(
          'redirect',
          `the store answered ${where} with a redirect (HTTP ${answer.status}) to another origin, ` +
            `"${storeText(target.href, 200)}"; not followed, so no token or credential was sent there. If that host is a node ` +
            `of the same cluster (request forwarding disabled), list it in ${STORE_TRANSPORT_VARIABLES.redirectHosts} ` +
            '(comma-separated host[:port]); clusters that forward standby requests (the default) need no such entry',
        );
      }
      if (hop >= MAX_SAME_ORIGIN_REDIRECTS) {
        throw new StoreTransportError('redirect', `the store answered ${where} with more than ${MAX_SAME_ORIGIN_REDIRECTS} redirects in a row; stopped following them`);
      }
      this.checkAddress(target, 'the redirect target');
      url = target;
    }
  }

  private checkAddress(url: URL, source: string): void {
    const problem = storeAddressProblem(url.href, this.insecureHttpHosts, source);
    if (problem) throw new StoreTransportError('address', problem);
  }

  /** One HTTP exchange, no redirect followed. */
  private once(request: StoreTransportRequest, url: URL, deadline: number): Promise<{ status: number; text: string; location?: string }> {
    return new Promise((resolve, reject) => {
      const where = `${request.method} ${url.pathname}`;
      const fail = (error: StoreTransportError) => {
        clearTimeout(timer);
        req.destroy();
        reject(error);
      };
      const headers: Record<string, string> = { ...(request.headers ?? {}) };
      if (request.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(request.body));
      const options: https.RequestOptions = {
        method: request.method,
        headers,
        // A connection of its own per request: no pooled socket keeps a finished command alive.
        agent: false,
      };
      if (url.protocol === 'https:' && this.tls) {
        if (this.tls.ca) options.ca = [...this.tls.ca];
        if (this.tls.cert) options.cert = this.tls.cert;
        if (this.tls.key) options.key = this.tls.key;
        if (this.tls.servername) options.servername = this.tls.servername;
        options.rejectUnauthorized = !this.tls.skipVerify;
      }
      const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
        const status = res.statusCode ?? 0;
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > this.maxResponseBytes) {
          fail(this.tooLarge(where, `announces ${declared} bytes, more than`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.maxResponseBytes) {
            res.destroy();
            fail(this.tooLarge(where, 'is larger than'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const location = res.headers.location;
          resolve({ status, text: Buffer.concat(chunks).toString('utf8'), location: typeof location === 'string' ? location : undefined });
        });
        res.on('error', (e) => fail(this.transportError(e)));
      });
      const timer = setTimeout(
        () =>
          fail(
            new StoreTransportError(
              'timeout',
              `no answer to ${where} within ${this.deadline}`,
              `no answer within ${this.deadline}; ${STORE_TRANSPORT_VARIABLES.timeout} sets this deadline`,
            ),
          ),
        Math.max(0, deadline - Date.now()),
      );
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(this.transportError(e));
      });
      req.end(request.body);
    });
  }

  private tooLarge(where: string, how: string): StoreTransportError {
    return new StoreTransportError(
      'too-large',
      `the store's answer to ${where} ${how} the limit of ${this.maxResponseBytes} bytes ` +
        `(${STORE_TRANSPORT_VARIABLES.maxResponseBytes}, default ${DEFAULT_MAX_RESPONSE_BYTES} = 32 MiB); stopped reading it. ` +
        `If the store really answers that much, raise ${STORE_TRANSPORT_VARIABLES.maxResponseBytes}`,
    );
  }

  private transportError(e: unknown): StoreTransportError {
    if (e instanceof StoreTransportError) return e;
    const code = (e as NodeJS.ErrnoException).code ?? '';
    const text = storeText((e as Error).message ?? String(e), 200);
    if (TLS_CODES.test(code) || /certificate|SSL routines|TLS/i.test(text)) {
      return new StoreTransportError(
        'tls',
        `TLS with the store failed (${code || 'TLS'}: ${text}): the store's certificate is not trusted or does not name the host. ` +
          'Give the CA that signed it with VAULT_CACERT (a PEM file) or VAULT_CAPATH (a directory), or the name it carries with ' +
          'VAULT_TLS_SERVER_NAME (BAO_ forms accepted)',
        `${code || 'TLS'}: ${text}`,
      );
    }
    return new StoreTransportError('unreachable', text, code || text);
  }
}
