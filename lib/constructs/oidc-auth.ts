import { TerraformVariable } from '../framework/framework';
import { Construct } from 'constructs';
import { JwtAuthBackend } from '../framework/vault-provider';
import { terraformString } from '../render/text-encoders';
import { ValidationProblem } from '../model/validation-problem';
import { hasRefusedCharacter } from '../model/free-text';
import { SecretStoreStack } from './secret-store-stack';
import { mountSegmentProblems } from '../model/mount-segment';
import { httpUrlProblems } from '../model/http-url';
import { CheckedProps, expectBoolean, expectInteger, expectString, expectStringArray, optional, PropsSchema } from '../model/props-check';
import { PlatformSettings } from '../model/platform-settings';
import { markStackLocal } from './stack-local-element';

/** The run-time checks of {@link OidcAuthProps}. */
export const OIDC_AUTH_SCHEMA: PropsSchema = {
  path: optional(expectString),
  discoveryUrl: expectString,
  clientId: expectString,
  storeUrl: expectString,
  groupsClaim: optional(expectString),
  userClaim: optional(expectString),
  scopes: optional(expectStringArray),
  cliRedirect: optional(expectBoolean),
  clientSecretVersion: optional(expectInteger),
  local: optional(expectBoolean),
};

/** The CLI's redirect URI: `bao login -method=oidc` listens there for the provider's answer. */
export const OIDC_CLI_REDIRECT_URI = 'http://localhost:8250/oidc/callback';

/**
 * Lowest `hashicorp/vault` provider that has `oidc_client_secret_wo` (5.7.0): the client secret is a
 * write-only attribute, never in state. A stack with an {@link OidcAuth} pins at least this version.
 */
export const OIDC_PROVIDER_VERSION = '>= 5.7.0, < 6.0.0';

/** Properties of {@link OidcAuth}. */
export interface OidcAuthProps {
  /**
   * Mount path of the OIDC auth method.
   * @default 'oidc'
   */
  readonly path?: string;
  /**
   * The identity provider's issuer, without `/.well-known/openid-configuration`: the store reads
   * the provider's endpoints and keys from its discovery document.
   */
  readonly discoveryUrl: string;
  /** The client id the identity provider gave the store. */
  readonly clientId: string;
  /**
   * The store's public address as people's browsers reach it (`https://vault.example.com`): the UI
   * redirect URI is `<storeUrl>/ui/vault/auth/<path>/oidc/callback`.
   */
  readonly storeUrl: string;
  /**
   * Claim of the ID token that lists the person's groups; every role binds it to its group.
   * @default 'groups'
   */
  readonly groupsClaim?: string;
  /**
   * Claim that names the person (the entity alias).
   * @default 'sub' (stable; e-mail addresses change)
   */
  readonly userClaim?: string;
  /**
   * Scopes requested besides `openid` (which the store always adds); the groups claim must come
   * with one of them.
   * @default ['profile', 'email', 'groups']
   */
  readonly scopes?: readonly string[];
  /**
   * Whether `bao login -method=oidc` (the CLI, redirect `http://localhost:8250/oidc/callback`) may
   * log in besides the UI.
   * @default true
   */
  readonly cliRedirect?: boolean;
  /**
   * Version of the client secret: the engine writes the secret (variable `<path>_client_secret`,
   * `TF_VAR_oidc_client_secret` for the default mount) when the method is created or changed;
   * raise the number to write a new secret after a rotation. Neither the synthesized JSON nor the
   * engine's state holds the secret (`oidc_client_secret_wo`, a write-only attribute).
   * @default 1
   */
  readonly clientSecretVersion?: number;
  /**
   * Whether the mount is local to this store cluster (fixed when mounting, like `CiJwtAuth.local`).
   * @default false
   */
  readonly local?: boolean;
}

/**
 * The store's login for people (spec §5.6, "single sign-on, the same credentials used for the
 * source host, the secrets store and the dashboards"): an OIDC auth method that trusts the identity
 * provider found at the discovery URL, for the store's client id.
 *
 * The client secret is never synthesized and never in the engine's state: the method sets the
 * provider's write-only `oidc_client_secret_wo` from an ephemeral variable that the engine reads at
 * plan and apply time from `TF_VAR_<path>_client_secret`, like the store token from `VAULT_TOKEN`.
 * Provider 5.7.0 or later is needed ({@link OIDC_PROVIDER_VERSION}).
 */
export class OidcAuth extends Construct {
  /** Mount path (`oidc`). */
  readonly path: string;
  /** Discovery URL (the issuer). */
  readonly discoveryUrl: string;
  /** Client id. */
  readonly clientId: string;
  /** The store's public address. */
  readonly storeUrl: string;
  /** Groups claim. */
  readonly groupsClaim: string;
  /** User claim. */
  readonly userClaim: string;
  /** Scopes requested besides `openid`. */
  readonly scopes: readonly string[];
  /** Redirect URIs every role of the method allows (UI, then CLI when allowed). */
  readonly redirectUris: readonly string[];
  /** Version of the client secret. */
  readonly clientSecretVersion: number;
  /** Name of the engine variable holding the client secret (`oidc_client_secret`). */
  readonly clientSecretVariableName: string;
  /** Whether the mount is declared local. */
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

  constructor(scope: Construct, id: string, props: OidcAuthProps) {
    super(scope, id);
    this.settings = SecretStoreStack.of(this).settings;
    const checked = (this.checked = new CheckedProps(OIDC_AUTH_SCHEMA, props));
    this.path = checked.value('path', 'oidc');
    this.discoveryUrl = checked.value('discoveryUrl', '');
    this.clientId = checked.value('clientId', '');
    this.storeUrl = checked.value('storeUrl', '').replace(/\/+$/, '');
    this.groupsClaim = checked.value('groupsClaim', 'groups');
    this.userClaim = checked.value('userClaim', 'sub');
    this.scopes = [...checked.value<readonly string[]>('scopes', ['profile', 'email', 'groups'])];
    this.clientSecretVersion = checked.value('clientSecretVersion', 1);
    this.local = checked.value<boolean | undefined>('local', undefined);
    this.redirectUris = [
      `${this.storeUrl}/ui/vault/auth/${this.path}/oidc/callback`,
      ...(checked.value('cliRedirect', true) ? [OIDC_CLI_REDIRECT_URI] : []),
    ];
    this.clientSecretVariableName = `${this.path.replace(/[^A-Za-z0-9_]/g, '_')}_client_secret`;
    const secret = markStackLocal(new TerraformVariable(this, 'client-secret', {
      type: 'string',
      sensitive: true,
      nullable: false,
      description: terraformString(`OIDC client secret of auth/${this.path} (set TF_VAR_${this.clientSecretVariableName}; never in state)`),
    }));
    secret.overrideLogicalId(this.clientSecretVariableName);
    // Ephemeral: the engine keeps the value out of the plan file and the state (OpenTofu >= 1.11).
    secret.addOverride('ephemeral', true);
    this.backend = markStackLocal(new JwtAuthBackend(this, 'backend', {
      path: terraformString(this.path),
      type: 'oidc',
      description: 'People through single sign-on (managed by secretstore-iac)',
      oidcDiscoveryUrl: terraformString(this.discoveryUrl),
      oidcClientId: terraformString(this.clientId),
      local: this.local,
    }));
    // The write-only attribute the bindings (provider 5.6.0) do not know: sent to the store, never stored.
    this.backend.addOverride('oidc_client_secret_wo', secret.stringValue);
    this.backend.addOverride('oidc_client_secret_wo_version', this.clientSecretVersion);
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  private readonly settings: PlatformSettings;
  private readonly checked: CheckedProps;

  private problems(): ValidationProblem[] {
    const problems = mountSegmentProblems('path', this.path);
    if (!this.discoveryUrl) problems.push(new ValidationProblem('discoveryUrl', this.discoveryUrl, 'must not be empty'));
    else problems.push(...httpUrlProblems('discoveryUrl', this.discoveryUrl, this.settings.httpPolicy));
    if (!this.storeUrl) problems.push(new ValidationProblem('storeUrl', this.storeUrl, 'must not be empty'));
    else problems.push(...httpUrlProblems('storeUrl', this.storeUrl, this.settings.httpPolicy));
    if (!this.clientId || /\s/.test(this.clientId) || hasRefusedCharacter(this.clientId)) {
      problems.push(new ValidationProblem('clientId', this.clientId, 'must be a non-empty client id without spaces or control characters'));
    }
    for (const [field, claim] of [['groupsClaim', this.groupsClaim], ['userClaim', this.userClaim]] as const) {
      if (!CLAIM_NAME.test(claim)) problems.push(new ValidationProblem(field, claim, 'must be a claim name: letters, digits, "_", "-" and ":", not empty'));
    }
    this.scopes
      .filter((s) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s) || s.includes(','))
      .forEach((s) => problems.push(new ValidationProblem('scopes', s, 'must be a scope token: printable characters without spaces, quotes, "\\" or ","')));
    if (this.scopes.includes('openid')) problems.push(new ValidationProblem('scopes', 'openid', 'the store always requests "openid": leave it out'));
    if (!Number.isSafeInteger(this.clientSecretVersion) || this.clientSecretVersion < 1) {
      problems.push(new ValidationProblem('clientSecretVersion', this.clientSecretVersion, 'must be a whole number >= 1: raise it to write a rotated secret'));
    }
    return this.checked.with(problems);
  }
}

/** Claim names identity providers use (`groups`, `cognito:groups`); not URLs. */
const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_:-]*$/;

