import { ValidationProblem } from './validation-problem';
import { HttpUrlPolicy, httpUrlProblems } from './http-url';
import { expectStringArray } from './props-check';

/**
 * Where the store's JWT auth method gets the keys that verify CI job tokens. Exactly one source is
 * configured on the method.
 */
export class JwtKeySource {
  /** OIDC discovery at the CI system's URL; the discovery document's issuer must equal it exactly. */
  static oidcDiscovery(url: string): JwtKeySource {
    return new JwtKeySource('oidc_discovery_url', url, []);
  }

  /** A JWKS URL (GitLab: `<ci_url>/oauth/discovery/keys`); the store fetches it when the config is written. */
  static jwksUrl(url: string): JwtKeySource {
    return new JwtKeySource('jwks_url', url, []);
  }

  /**
   * Static PEM public keys (tests, or an air-gapped store). Public keys are not secrets.
   * Surrounding white space is trimmed: the store keeps a key without its trailing newline, and an
   * untrimmed key (as read from a .pem file) would plan an update on every run.
   */
  static publicKeys(pems: readonly string[]): JwtKeySource {
    // A value of the wrong type (a JSON config) is kept as it is, for problems() to report.
    const keys = Array.isArray(pems) ? pems.map((p: unknown) => (typeof p === 'string' ? p.trim() : p)) : pems;
    return new JwtKeySource('jwt_validation_pubkeys', undefined, keys as readonly string[]);
  }

  private constructor(
    /** Which auth-method field carries the source. */
    readonly kind: 'oidc_discovery_url' | 'jwks_url' | 'jwt_validation_pubkeys',
    /** The URL, for the URL kinds. */
    readonly url: string | undefined,
    /** The PEM keys, for `jwt_validation_pubkeys`. */
    readonly publicKeysPem: readonly string[],
  ) {}

  /** Problems: a URL that is not http(s), or no key / a non-PEM key. */
  problems(field = 'keySource', policy: HttpUrlPolicy = {}): ValidationProblem[] {
    if (this.kind === 'jwt_validation_pubkeys') {
      const keys: unknown = this.publicKeysPem;
      if (!Array.isArray(keys)) return expectStringArray(field, keys);
      if (keys.length === 0) return [new ValidationProblem(field, [], 'must hold at least one PEM public key')];
      const typeProblems = expectStringArray(field, keys);
      if (typeProblems.length > 0) return typeProblems;
      return (keys as string[])
        .filter((k) => !/-----BEGIN (RSA )?PUBLIC KEY-----/.test(k) && !/-----BEGIN CERTIFICATE-----/.test(k))
        .map((k) => new ValidationProblem(field, `${k.slice(0, 30)}...`, 'must be a PEM public key or certificate'));
    }
    return httpUrlProblems(`${field}.${this.kind}`, this.url, policy);
  }
}
