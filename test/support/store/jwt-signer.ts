/**
 * Signs JWTs the way a CI system does, with node's crypto only: for tests that log in to a real
 * store through its JWT auth method (the store trusts the test's own public key, as a static PEM or
 * a JWKS served on 127.0.0.1).
 *
 * Nothing here prints a token or a key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Signing algorithms supported here (RSA PKCS#1 v1.5, and `none` for "unsigned token" tests). */
export type JwtAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'none';

/** Options of {@link signJwt}. */
export interface SignJwtOptions {
  /** Key id written to the header (`kid`), as a JWKS-backed verifier looks it up. */
  readonly kid?: string;
  /**
   * Header algorithm.
   * @default 'RS256'
   */
  readonly alg?: JwtAlgorithm;
  /** Extra header fields (`typ` is `JWT` unless given here). */
  readonly header?: Readonly<Record<string, unknown>>;
}

/** JWT claims: registered claims plus whatever the issuer adds. Values `undefined` are left out. */
export type JwtClaims = Readonly<Record<string, unknown>>;

const HASH: Record<Exclude<JwtAlgorithm, 'none'>, string> = { RS256: 'sha256', RS384: 'sha384', RS512: 'sha512' };

/** base64url without padding (RFC 7515 §2). */
export function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

function withoutUndefined(claims: JwtClaims): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== undefined));
}

/**
 * A compact JWS: `base64url(header).base64url(payload).base64url(signature)`.
 * @param privateKey RSA private key (KeyObject or PEM); ignored for `alg: 'none'`
 * @param claims the payload; `undefined` values are dropped
 */
export function signJwt(privateKey: KeyObject | string, claims: JwtClaims, options: SignJwtOptions = {}): string {
  const alg = options.alg ?? 'RS256';
  const header: Record<string, unknown> = { alg, typ: 'JWT', ...options.header };
  if (options.kid !== undefined) header.kid = options.kid;
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(withoutUndefined(claims)))}`;
  if (alg === 'none') return `${signingInput}.`;
  const hash = HASH[alg];
  if (!hash) throw new Error(`unsupported JWT algorithm "${alg}"`);
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  return `${signingInput}.${base64url(sign(hash, Buffer.from(signingInput), key))}`;
}

/** Decodes a JWT's header and payload without verifying it (for assertions on what was sent). */
export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = token.split('.');
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(h), payload: decode(p) };
}

/** An RSA signing key with its public forms. */
export interface JwtSigningKey {
  /** The private key (never log it). */
  readonly privateKey: KeyObject;
  /** SPKI PEM (`-----BEGIN PUBLIC KEY-----`), for `jwt_validation_pubkeys`. */
  readonly publicKeyPem: string;
  /** Key id: RFC 7638 thumbprint of the public JWK. */
  readonly kid: string;
  /** The public JWK (`kty`, `n`, `e`, `kid`, `alg`, `use`), for a JWKS document. */
  readonly jwk: Readonly<Record<string, string>>;
}

/** A fresh RSA 2048 key for RS256 signing. */
export function generateSigningKey(): JwtSigningKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKey = createPublicKey(privateKey);
  const { n, e } = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
  // RFC 7638: members in lexicographic order, no whitespace.
  const kid = base64url(createHash('sha256').update(JSON.stringify({ e, kty: 'RSA', n })).digest());
  return {
    privateKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    kid,
    jwk: { kty: 'RSA', n, e, kid, alg: 'RS256', use: 'sig' },
  };
}

/** A JWKS document (`{"keys":[...]}`) as served at GitLab's `/oauth/discovery/keys`. */
export function jwksDocument(keys: readonly JwtSigningKey[]): { keys: Record<string, string>[] } {
  return { keys: keys.map((k) => ({ ...k.jwk })) };
}

/** A JWKS endpoint on 127.0.0.1, as GitLab serves `<ci_url>/oauth/discovery/keys`. */
export interface JwksServer {
  /** `http://127.0.0.1:<port>/oauth/discovery/keys`. */
  readonly url: string;
  /** Replaces the served keys (key rotation). */
  setKeys(keys: readonly JwtSigningKey[]): void;
  /** How many times the JWKS was fetched. */
  readonly fetches: number;
  /** Closes the server. Idempotent. */
  stop(): Promise<void>;
}

/** Serves a JWKS document of `keys` on a free loopback port (in this process; no child process). */
export async function startJwksServer(keys: readonly JwtSigningKey[]): Promise<JwksServer> {
  let served = jwksDocument(keys);
  let fetches = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/oauth/discovery/keys') {
      fetches++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(served));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/oauth/discovery/keys`,
    setKeys: (next) => {
      served = jwksDocument(next);
    },
    get fetches() {
      return fetches;
    },
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })),
  };
}

/** Options of {@link gitlabJobClaims} that are not claims. */
export interface GitlabJobClaimsOptions {
  /**
   * The CI instance URL: `iss`, and `aud` unless overridden.
   * @default 'https://gitlab.acme.example'
   */
  readonly ciUrl?: string;
  /**
   * Token lifetime in seconds (GitLab: the job timeout).
   * @default 300
   */
  readonly lifetimeSeconds?: number;
  /**
   * "Now", in seconds since the epoch (to make expired or not-yet-valid tokens).
   * @default the current time
   */
  readonly now?: number;
}

let jobCounter = 0;

/**
 * Realistic GitLab CI ID-token claims (GitLab's `id_tokens`, store-semantics.md §4) for project
 * `acme/platform/orchestrator` on the protected `main` branch. Ids are strings, as GitLab sends them.
 * `overrides` replace claims; an override `undefined` removes the claim.
 */
export function gitlabJobClaims(overrides: JwtClaims = {}, options: GitlabJobClaimsOptions = {}): Record<string, unknown> {
  const ciUrl = options.ciUrl ?? 'https://gitlab.acme.example';
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const lifetime = options.lifetimeSeconds ?? 300;
  const projectPath = 'acme/platform/orchestrator';
  const jobId = String(900000 + (++jobCounter % 100000));
  const claims: Record<string, unknown> = {
    iss: ciUrl,
    aud: ciUrl,
    sub: `project_path:${projectPath}:ref_type:branch:ref:main`,
    jti: `${process.pid}-${jobId}-${now}`,
    iat: now,
    nbf: now - 5,
    exp: now + lifetime,
    namespace_id: '72',
    namespace_path: 'acme',
    project_id: '42',
    project_path: projectPath,
    user_id: '7',
    user_login: 'ci-bot',
    user_email: 'ci-bot@acme.example',
    user_access_level: 'maintainer',
    pipeline_id: '3141',
    pipeline_source: 'push',
    job_id: jobId,
    ref: 'main',
    ref_type: 'branch',
    ref_path: 'refs/heads/main',
    ref_protected: 'true',
    environment: 'dev',
    environment_protected: 'false',
    deployment_tier: 'development',
    runner_id: '12',
    runner_environment: 'self-hosted',
    sha: 'f1e2d3c4b5a697887766554433221100ffeeddcc',
    ci_config_ref_uri: `${ciUrl.replace(/^https?:\/\//, '')}/${projectPath}//.gitlab-ci.yml@refs/heads/main`,
    ci_config_sha: 'f1e2d3c4b5a697887766554433221100ffeeddcc',
    project_visibility: 'internal',
  };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete claims[k];
    else claims[k] = v;
  }
  return claims;
}
