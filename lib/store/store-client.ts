import { StoreTarget } from '../model/store-target';
import { storeText } from '../private/terminal-text';
import { resolveStoreAddress } from './store-address';
import { resolveStoreNamespace } from './store-namespace-setting';
import { tokenNamespaceOf, tokenNamespaceProblem } from './token-namespace';
import { StoreTransport, StoreTransportError } from './store-transport';

/** Environment variables that may carry a privileged store token, in the order they are consulted. */
export const STORE_TOKEN_VARIABLES = ['SECRETSTORE_TOKEN', 'VAULT_TOKEN', 'BAO_TOKEN'] as const;

/** What went wrong talking to the store. */
export type StoreErrorKind =
  | 'unreachable'
  | 'no-token'
  | 'permission-denied'
  | 'not-found'
  | 'bad-request'
  | 'unavailable'
  | 'sealed'
  | 'not-initialized'
  | 'server-error'
  | 'tls'
  | 'redirect'
  | 'too-large'
  | 'address';

/**
 * A failed store call, with a message that says what to do. Never carries a request body, a token or
 * a Secret ID: the message holds the method, the API path, the HTTP status and the store's own error
 * text, cut to 500 characters and terminal-escaped (lib/private/terminal-text.ts).
 */
export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    /** HTTP status, when the store answered. */
    readonly status?: number,
    /** The store's `errors` list, each cut and terminal-escaped. */
    readonly storeErrors: readonly string[] = [],
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/** A store answer: status and parsed JSON body (`undefined` for an empty body). */
export interface StoreResponse {
  readonly status: number;
  readonly body: any;
}

/** Options of {@link StoreClient}. */
export interface StoreClientOptions {
  /** Base address, `https://secrets.example:8200`. */
  readonly address: string;
  /** Token for authenticated calls. */
  readonly token?: string;
  /**
   * Store namespace every request is sent to (`X-Vault-Namespace`), canonical (`admin/team`).
   * @default the root namespace
   */
  readonly namespace?: string;
  /**
   * Per-request deadline, when no {@link transport} is given.
   * @default 5000
   */
  readonly timeoutMs?: number;
  /**
   * How requests are sent (redirects, size limit, deadline, TLS).
   * @default a {@link StoreTransport} with its defaults and {@link timeoutMs}
   */
  readonly transport?: StoreTransport;
}

/** The capability an HTTP method needs (reference §1). */
function capabilityOf(method: string): string {
  switch (method) {
    case 'GET':
      return 'read';
    case 'LIST':
      return 'list';
    case 'DELETE':
      return 'delete';
    default:
      return 'update';
  }
}

/** One store error text without go-multierror's wrapping (`1 error occurred:\n\t* permission denied\n\n`). */
function unwrapStoreError(text: string): string[] {
  if (!/^\d+ errors? occurred:/.test(text)) return [text.trim()];
  return text
    .split('\n')
    .filter((line) => line.startsWith('\t* '))
    .map((line) => line.slice(3).trim());
}

/** What the operator commands' token must allow (provision, rotate-secret-id): the default of {@link resolveStoreToken}. */
export const APPROLE_OPERATOR_TOKEN_NEEDS =
  'manage the AppRole (read auth/<mount>/role/<role>/role-id, update auth/<mount>/role/<role>/secret-id*)';

/** What a token that reads the live store must allow (who-can, drift, access, access-diff on `live`). */
export const LIVE_READER_TOKEN_NEEDS =
  'read and list the store\'s auth methods, roles and policies (the reader policy of docs/adoption.md, or readerPolicy: true in the configuration)';

/**
 * The privileged token from the environment (`SECRETSTORE_TOKEN`, `VAULT_TOKEN` or `BAO_TOKEN`).
 * Tokens are never taken from command-line arguments, which other users can read.
 * @param needs what the token must be allowed to do, for the message (the command's own need)
 * @throws StoreError (`no-token`) naming the variables and what the token needs
 */
export function resolveStoreToken(env: NodeJS.ProcessEnv = process.env, needs: string = APPROLE_OPERATOR_TOKEN_NEEDS): string {
  for (const name of STORE_TOKEN_VARIABLES) {
    const value = (env[name] ?? '').trim();
    if (value !== '') return value;
  }
  throw new StoreError(
    'no-token',
    `no store token: set VAULT_TOKEN (or BAO_TOKEN / SECRETSTORE_TOKEN) to a token allowed to ${needs}; tokens are never taken from arguments`,
  );
}

/**
 * A minimal JSON client of the store's HTTP API (`/v1/...`, `X-Vault-Token`), for the operator
 * commands. Turns transport failures and error statuses into {@link StoreError}s that name the fix.
 */
export class StoreClient {
  /**
   * Address from `SECRETSTORE_ADDR` / `VAULT_ADDR` / `BAO_ADDR`; token, if `withToken`, from the
   * environment; transport settings and TLS from the environment ({@link StoreTransport.fromEnvironment}),
   * its warnings to `warn`; the namespace from the environment or `declaredNamespaces` (the
   * synthesized stacks', {@link resolveStoreNamespace}).
   */
  static fromEnvironment(
    env: NodeJS.ProcessEnv = process.env,
    withToken = true,
    warn?: (line: string) => void,
    declaredNamespaces: readonly string[] = [],
    tokenNeeds: string = APPROLE_OPERATOR_TOKEN_NEEDS,
  ): StoreClient {
    const address = resolveStoreAddress(env);
    const token = withToken ? resolveStoreToken(env, tokenNeeds) : undefined;
    return new StoreClient({ address, token, namespace: resolveStoreNamespace(env, declaredNamespaces), transport: StoreTransport.fromEnvironment(env, warn) });
  }

  /** Base address without trailing slash. */
  readonly address: string;
  /** The namespace requests go to; undefined for the root namespace. */
  readonly namespace?: string;
  private readonly token?: string;
  /** How requests are sent. */
  readonly transport: StoreTransport;

  constructor(options: StoreClientOptions) {
    this.address = options.address.replace(/\/+$/, '');
    this.token = options.token;
    this.namespace = options.namespace === undefined || options.namespace === '' ? undefined : options.namespace;
    this.transport = options.transport ?? new StoreTransport({ timeoutMs: options.timeoutMs });
  }

  /** A transport failure as a {@link StoreError} naming the address and the fix. */
  private transportFailure(e: unknown): StoreError {
    if (!(e instanceof StoreTransportError)) return new StoreError('unreachable', `cannot reach the secrets store at ${this.address} (${storeText(String((e as Error)?.message ?? e), 200)})`);
    if (e.kind === 'unreachable' || e.kind === 'timeout') {
      return new StoreError(
        'unreachable',
        `cannot reach the secrets store at ${this.address} (${e.reason}): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`,
      );
    }
    return new StoreError(e.kind === 'settings' ? 'address' : e.kind, `secrets store at ${this.address}: ${e.message}`);
  }

  /**
   * Why the store answers 503, from `sys/health` (no token): not initialized (501), sealed (503), or
   * undefined when it cannot tell.
   */
  private async unavailableReason(): Promise<{ reason?: 'not-initialized' | 'sealed'; cli: string }> {
    try {
      const res = await this.transport.request({ method: 'GET', url: `${this.address}/v1/sys/health?standbyok=true&perfstandbyok=true` });
      const body = JSON.parse(res.text);
      // The fix names the CLI of the store that answered (`bao` or `vault`, from its version).
      const cli = StoreTarget.cliNamed(body);
      if (res.status === 501 || body?.initialized === false) return { reason: 'not-initialized', cli };
      if (res.status === 503 || body?.sealed === true) return { reason: 'sealed', cli };
    } catch {
      // Answered the request with 503, then nothing usable: the generic message stays.
    }
    return { cli: 'bao (or vault)' };
  }

  /**
   * One call. `token: null` sends no token (logins); a string sends that token instead of the client's.
   * @throws StoreError for a transport failure or an HTTP status of 400 or more
   */
  async request(method: string, apiPath: string, body?: unknown, token?: string | null): Promise<StoreResponse> {
    const m = method.toUpperCase();
    const p = apiPath.replace(/^\/+/, '').replace(/^v1\//, '');
    const send = token === undefined ? this.token : token ?? undefined;
    const headers: Record<string, string> = {};
    if (send) headers['X-Vault-Token'] = send;
    if (this.namespace !== undefined) headers['X-Vault-Namespace'] = this.namespace;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await this.transport.request({
        method: m,
        url: `${this.address}/v1/${p}`,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw this.transportFailure(e);
    }
    const text = res.text;
    let parsed: any = undefined;
    let isJson = false;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
        isJson = true;
      } catch {
        parsed = text;
      }
    }
    if (res.status < 400) return { status: res.status, body: parsed };
    // The store's text is quoted cut and escaped: a hostile store cannot flood or drive the terminal.
    const storeErrors: string[] =
      isJson && Array.isArray(parsed?.errors) ? parsed.errors.slice(0, 20).flatMap((e: unknown) => unwrapStoreError(String(e)).map((t) => storeText(t))) : [];
    const said =
      storeErrors.length > 0
        ? storeText(storeErrors.join('; '))
        : !isJson && text.trim() !== ''
          ? `HTTP ${res.status}, not the store's JSON: "${storeText(text.trim(), 200)}"`
          : `HTTP ${res.status}`;
    // The path may hold names the store listed (role names): escaped like the store's own text.
    const where = `${m} /v1/${storeText(p, 200)}`;
    if (res.status === 403 && send) {
      const capability = capabilityOf(m);
      const { valid: tokenValid, namespace: tokenNamespace } = await this.lookUpToken(send);
      // A token of another namespace is accepted by lookup-self and refused everywhere else: said so.
      const otherNamespace = tokenValid && tokenNamespace !== undefined ? tokenNamespaceProblem(tokenNamespace, this.namespace ?? '') : undefined;
      throw new StoreError(
        'permission-denied',
        otherNamespace !== undefined
          ? `permission denied: ${where} (HTTP 403, ${said}): ${otherNamespace}`
          : tokenValid
          ? `permission denied: ${where} (HTTP 403, ${said}): the token may not ${capability} ${p}. ` +
              `Fix: use a token whose policy grants capabilities = ["${capability}"] on "${p}"`
          : `permission denied: ${where} (HTTP 403): the store does not accept the token itself (expired, revoked or mistyped; ` +
              'auth/token/lookup-self is refused too). Fix: set VAULT_TOKEN to a valid token',
        res.status,
        storeErrors,
      );
    }
    if (res.status === 503) {
      // Say which: an uninitialised store answers 503 like a sealed one, but needs `operator init`.
      const { reason, cli } = await this.unavailableReason();
      if (reason === 'not-initialized') {
        throw new StoreError(
          'not-initialized',
          `the secrets store at ${this.address} is not initialized (${where}: HTTP 503; GET /v1/sys/health: not initialized): initialize and unseal it first (${cli} operator init)`,
          res.status,
          storeErrors,
        );
      }
      if (reason === 'sealed') {
        throw new StoreError(
          'sealed',
          `the secrets store at ${this.address} is sealed (${where}: HTTP 503 (${said})): unseal it (${cli} operator unseal) and run the command again`,
          res.status,
          storeErrors,
        );
      }
    }
    const kind: StoreErrorKind =
      res.status === 404 ? 'not-found' : res.status === 503 ? 'unavailable' : res.status < 500 ? 'bad-request' : 'server-error';
    const hint = res.status === 503 ? ': the store is sealed, in standby without a leader, or starting' : '';
    throw new StoreError(kind, `${where}: HTTP ${res.status} (${said})${hint}`, res.status, storeErrors);
  }

  /**
   * Whether the store accepts the token at all (`auth/token/lookup-self`, allowed by the default
   * policy), and the namespace it belongs to (`''` the root; undefined when not known).
   */
  private async lookUpToken(token: string): Promise<{ valid: boolean; namespace?: string }> {
    try {
      const res = await this.transport.request({ method: 'GET', url: `${this.address}/v1/auth/token/lookup-self`, headers: { 'X-Vault-Token': token, ...(this.namespace === undefined ? {} : { 'X-Vault-Namespace': this.namespace }) } });
      if (res.status !== 200) return { valid: false };
      try {
        return { valid: true, namespace: tokenNamespaceOf(JSON.parse(res.text)) };
      } catch {
        return { valid: true };
      }
    } catch {
      return { valid: true };
    }
  }
}
