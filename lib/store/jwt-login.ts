import { StoreClient, StoreError } from './store-client';

/** What a JWT login needs: the mount, the role, the job's token, and what the fixes quote. */
export interface JwtLoginRequest {
  /** The JWT auth method's path (`jwt`, `jwt-ci`), without `auth/`. */
  readonly mount: string;
  /** The role to log in as (`secretstore-iac-plan`). */
  readonly role: string;
  /** The job's ID token. Sent to the store only, never printed. */
  readonly jwt: string;
  /** The audience the job's ID token should carry, for the fix of a wrong `aud` (spec §7: `{ci_url}`). */
  readonly audience: string;
  /** The variable holding the ID token (`SECRETSTORE_ID_TOKEN`), and the job that declares it, for the fixes. */
  readonly tokenVariable: string;
  /** The hidden job that declares the ID token (`.secretstore-iac-login`), for the fixes. */
  readonly baseJob: string;
}

/** The store's answer to a JWT login: the token (held in memory only) and what the messages may show. */
export interface JwtLogin {
  /** The store token. Never printed, never written. */
  readonly token: string;
  /** The token's policies as the store lists them (without `default`), sorted. */
  readonly policies: readonly string[];
  /** Its time to live, in seconds. */
  readonly ttlSeconds: number;
}

/** A JWT login the store refused or answered with no usable token: spec §7's condition, outcome and fix, in one message. */
export class JwtLoginError extends Error {
  constructor(
    message: string,
    /** The HTTP status the store answered, when it did. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'JwtLoginError';
  }
}

/** Three dot-separated base64url parts: the form of a JWT, checked before anything is sent. */
const JWT_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Logs in with a job's ID token (`POST auth/<mount>/login {role, jwt}`, no store token), the flow of
 * the CI login template (spec §4.1 flow 1, §5), with each failure said as spec §7 says it:
 * - HTTP 400 with an audience error: wrong `aud` claim, fix: use the audience;
 * - HTTP 403, or (as both stores answer a bound-claim mismatch) HTTP 400 naming a claim: the job is
 *   not bound to the role, fix: check the role's bound claims;
 * - a role the mount does not have, a token the store does not accept (issuer, keys, expiry): said
 *   as such;
 * - an answer without a client token: "empty token after parsing", with the response's shape (its
 *   keys and the store's errors, never a value, which could be a token).
 * @throws JwtLoginError for each of those; a {@link StoreError} for a store that cannot be reached
 */
export async function jwtLogin(client: StoreClient, request: JwtLoginRequest): Promise<JwtLogin> {
  const as = `JWT login as ${request.role} at auth/${request.mount}`;
  if (request.jwt.trim() === '') {
    throw new JwtLoginError(
      `${request.tokenVariable} is unset or empty: the job declares no ID token.\n` +
        `Fix: extend ${request.baseJob}, or declare id_tokens: ${request.tokenVariable}: aud: ${request.audience} in the job.`,
    );
  }
  if (!JWT_FORM.test(request.jwt.trim())) {
    throw new JwtLoginError(`${request.tokenVariable} does not hold a JWT.\nFix: do not set ${request.tokenVariable} yourself; declare it in id_tokens (extend ${request.baseJob}).`);
  }
  let body: any;
  try {
    body = (await client.request('POST', `auth/${request.mount}/login`, { role: request.role, jwt: request.jwt.trim() }, null)).body;
  } catch (e) {
    if (!(e instanceof StoreError) || (e.status !== 400 && e.status !== 403)) throw e;
    throw refusal(e, as, request);
  }
  const auth = body?.auth;
  const token = auth?.client_token;
  if (typeof token !== 'string' || !/^[A-Za-z0-9._~+/=-]+$/.test(token)) {
    throw new JwtLoginError(
      `empty token after parsing: the login response could not be parsed (${as}). Login response: ${responseShape(body)}.\n` +
        `Fix: check that the store address (SECRETSTORE_ADDR) points at the store itself, not a proxy or a web page.`,
    );
  }
  const policies = (Array.isArray(auth.token_policies) ? auth.token_policies : Array.isArray(auth.policies) ? auth.policies : [])
    .map(String)
    .filter((p: string) => p !== 'default')
    .sort();
  return { token, policies, ttlSeconds: Number(auth.lease_duration ?? 0) };
}

/** The refusal of a login (HTTP 400 or 403) in spec §7's words. */
function refusal(e: StoreError, as: string, request: JwtLoginRequest): JwtLoginError {
  const said = e.storeErrors.join('; ') || `HTTP ${e.status}`;
  const text = said.toLowerCase();
  const bound = "Fix: check the role's bound claims (the project, branch or protection of this job), or run the job where the role is bound.";
  if (e.status === 403) return new JwtLoginError(`HTTP 403 from ${as}: job not bound to the role (store said: ${said}).\n${bound}`, 403);
  if (text.includes('audience')) {
    return new JwtLoginError(
      `HTTP 400 from ${as}: wrong aud claim (store said: ${said}).\nFix: use the audience ${request.audience}: id_tokens: ${request.tokenVariable}: aud: ${request.audience} (extend ${request.baseJob}).`,
      400,
    );
  }
  if (text.includes('bound claim') || text.includes('validating claims') || text.includes('claim "')) {
    return new JwtLoginError(
      `HTTP 400 from ${as}: job not bound to the role, its token's claims do not match the role's bound claims (store said: ${said}).\n` +
        `The spec lists this as HTTP 403; both stores answer a bound-claim mismatch with 400.\n${bound}`,
      400,
    );
  }
  if (text.includes('could not be found')) {
    return new JwtLoginError(`HTTP 400 from ${as}: the store has no role ${request.role} there (store said: ${said}).\nFix: apply the platform's ci-access configuration to this store.`, 400);
  }
  if (/issuer|expired|signature|not yet valid|no known key|verify/.test(text)) {
    return new JwtLoginError(
      `HTTP 400 from ${as}: the store rejected the job token (store said: ${said}).\nFix: check that the store's JWT method trusts this CI instance (issuer, keys) and that the runner's clock is right.`,
      400,
    );
  }
  return new JwtLoginError(`HTTP ${e.status} from ${as} (store said: ${said}).\nCause: wrong aud claim, or the job is not bound to the role.\nFix: use the audience ${request.audience}; check the role's bound claims.`, e.status);
}

/** A login response's shape for the log: its keys (those of `auth` too) and the store's errors, no value. */
function responseShape(body: unknown): string {
  if (body === undefined || body === null) return 'empty';
  if (typeof body !== 'object') return `not JSON (${String(body).length} characters, not shown)`;
  const keys = (o: object) => Object.keys(o).sort().join(', ');
  const record = body as Record<string, unknown>;
  const auth = record.auth;
  const errors = Array.isArray(record.errors) ? `; errors: ${record.errors.map(String).join('; ')}` : '';
  return `JSON with keys {${keys(record)}}${auth !== null && typeof auth === 'object' ? `, auth with keys {${keys(auth)}}` : ''}${errors}`;
}
