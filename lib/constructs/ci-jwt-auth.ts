import { Construct } from 'constructs';
import { terraformString, terraformStrings } from '../render/text-encoders';
import { JwtAuthBackend } from '../framework/vault-provider';
import { JwtKeySource } from '../model/jwt-key-source';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { mountSegmentProblems } from '../model/mount-segment';
import { httpUrlProblems } from '../model/http-url';
import { CheckedProps, expectBoolean, expectInstance, expectString, optional, PropsSchema } from '../model/props-check';
import { PlatformSettings } from '../model/platform-settings';
import { AuthMountTune, authMountTuneProblems, expectAuthMountTune, mountTokenTypeProblems, renderAuthMountTune, TokenIssuingRole } from '../model/auth-mount-tune';
import { freeTextProblems } from '../model/free-text';
import { markStackLocal } from './stack-local-element';

/** The description the library gives the CI JWT mount unless one is declared. */
export const CI_JWT_AUTH_DESCRIPTION = 'CI job tokens (managed by secretstore-iac)';

/** The run-time checks of {@link CiJwtAuthProps}. */
export const CI_JWT_AUTH_SCHEMA: PropsSchema = {
  path: optional(expectString),
  issuer: optional(expectString),
  local: optional(expectBoolean),
  description: optional(expectString),
  tune: expectAuthMountTune,
  keySource: optional(expectInstance(JwtKeySource, "a JwtKeySource (JwtKeySource.oidcDiscovery(url), .jwksUrl(url), .publicKeys([pem]))")),
};

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
  /**
   * Whether the mount is local to this store cluster (`bao auth enable -local`: not replicated to
   * performance secondaries). The store fixes it when mounting, so a difference replaces the mount
   * and deletes every role under it: declare what the store has when adopting a hand-made mount.
   * @default false
   */
  readonly local?: boolean;
  /**
   * The mount's description (`bao auth enable -description`). The vault provider (5.9.0) sets a JWT
   * mount's description only when it creates the mount: it neither reads nor updates it, so declare
   * the store's when adopting a hand-made mount, or change it with `bao auth tune -description`.
   * @default 'CI job tokens (managed by secretstore-iac)'
   */
  readonly description?: string;
  /**
   * The mount's tune settings (lease TTLs, listing visibility, token type, audit keys); changed in
   * place. Left out: not declared, the provider leaves the store's values as they are.
   * @default none declared
   */
  readonly tune?: AuthMountTune;
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
  /** Whether the mount is declared local (undefined: not declared, the store's default `false`). */
  readonly local?: boolean;
  /** The rendered auth backend. */
  readonly backend: JwtAuthBackend;
  private mountPathReference?: string;

  /**
   * A reference to the mount's path (`${...path}`), for this method's roles: one token shared by
   * all of them, since every token costs a stack trace when cdktf creates it.
   */
  get pathReference(): string {
    return (this.mountPathReference ??= this.backend.path);
  }

  constructor(scope: Construct, id: string, props: CiJwtAuthProps = {}) {
    super(scope, id);
    const settings = (this.settings = SecretStoreStack.of(this).settings);
    const checked = (this.checked = new CheckedProps(CI_JWT_AUTH_SCHEMA, props, true));
    this.path = checked.value('path', 'jwt');
    this.issuer = checked.value('issuer', settings.ciUrl);
    this.keySource = checked.value('keySource', JwtKeySource.oidcDiscovery(settings.ciUrl));
    const source = this.keySource;
    this.description = checked.value('description', CI_JWT_AUTH_DESCRIPTION);
    this.backend = markStackLocal(new JwtAuthBackend(this, 'backend', {
      path: terraformString(this.path),
      type: 'jwt',
      description: terraformString(this.description),
      boundIssuer: terraformString(this.issuer),
      oidcDiscoveryUrl: source.kind === 'oidc_discovery_url' ? terraformString(source.url) : undefined,
      jwksUrl: source.kind === 'jwks_url' ? terraformString(source.url) : undefined,
      jwtValidationPubkeys: source.kind === 'jwt_validation_pubkeys' ? terraformStrings(source.publicKeysPem) : undefined,
      local: checked.value<boolean | undefined>('local', undefined),
      tune: renderAuthMountTune(checked.value<AuthMountTune | undefined>('tune', undefined), terraformStrings),
    }));
    this.local = checked.value<boolean | undefined>('local', undefined);
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /**
   * Records a role of this mount (each {@link CiJwtRole} does), so that a `tune.tokenType` that
   * overrides the role's declared token type is refused at synthesis.
   */
  registerRole(role: TokenIssuingRole): void {
    this.roles.push(role);
  }

  private readonly settings: PlatformSettings;
  private readonly checked: CheckedProps;
  private readonly description: string;
  private readonly roles: TokenIssuingRole[] = [];

  private problems(): ValidationProblem[] {
    const problems = this.keySource.problems('keySource', this.settings.httpPolicy);
    problems.push(...mountSegmentProblems('path', this.path));
    problems.push(...freeTextProblems('description', this.description));
    const tune = this.checked.value<AuthMountTune | undefined>('tune', undefined);
    problems.push(...authMountTuneProblems('tune', tune), ...mountTokenTypeProblems('tune', tune, this.roles));
    if (!this.issuer) problems.push(new ValidationProblem('issuer', this.issuer, 'must not be empty'));
    else problems.push(...httpUrlProblems('issuer', this.issuer, this.settings.httpPolicy));
    return this.checked.with(problems);
  }
}
