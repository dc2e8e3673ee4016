import { Construct } from 'constructs';
import { terraformString, terraformStrings } from '../render/text-encoders';
import { JwtAuthBackend } from '@cdktf/provider-vault/lib/jwt-auth-backend';
import { JwtKeySource } from '../model/jwt-key-source';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { mountSegmentProblems } from '../private/mount-segment';
import { httpUrlProblems } from '../private/http-url';

/** Properties of {@link CiJwtAuth}. */
export interface CiJwtAuthProps {
  /**
   * Mount path of the JWT auth method.
   * @default 'jwt'
   */
  readonly path?: string;
  /**
   * Issuer job tokens must carry in `iss`.
   * @default the platform's CI URL
   */
  readonly issuer?: string;
  /**
   * Keys that verify job tokens.
   * @default OIDC discovery at the platform's CI URL
   */
  readonly keySource?: JwtKeySource;
}

/**
 * The store's JWT auth method for the CI system (spec §5.1): it trusts job tokens issued by the CI
 * URL and verified with the CI system's keys.
 */
export class CiJwtAuth extends Construct {
  /** Mount path (`jwt`). */
  readonly path: string;
  /** Bound issuer. */
  readonly issuer: string;
  /** Key source. */
  readonly keySource: JwtKeySource;
  /** The rendered auth backend. */
  readonly backend: JwtAuthBackend;

  constructor(scope: Construct, id: string, props: CiJwtAuthProps = {}) {
    super(scope, id);
    const settings = SecretStoreStack.of(this).settings;
    this.path = props.path ?? 'jwt';
    this.issuer = props.issuer ?? settings.ciUrl;
    this.keySource = props.keySource ?? JwtKeySource.oidcDiscovery(settings.ciUrl);
    const source = this.keySource;
    this.backend = new JwtAuthBackend(this, 'backend', {
      path: terraformString(this.path),
      type: 'jwt',
      description: 'CI job tokens (managed by secretstore-iac)',
      boundIssuer: terraformString(this.issuer),
      oidcDiscoveryUrl: source.kind === 'oidc_discovery_url' ? terraformString(source.url) : undefined,
      jwksUrl: source.kind === 'jwks_url' ? terraformString(source.url) : undefined,
      jwtValidationPubkeys: source.kind === 'jwt_validation_pubkeys' ? terraformStrings(source.publicKeysPem) : undefined,
    });
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  private problems(): ValidationProblem[] {
    const problems = this.keySource.problems('keySource');
    problems.push(...mountSegmentProblems('path', this.path));
    if (!this.issuer) problems.push(new ValidationProblem('issuer', this.issuer, 'must not be empty'));
    else problems.push(...httpUrlProblems('issuer', this.issuer));
    return problems;
  }
}
