import { Construct } from 'constructs';
import { terraformString, terraformStrings } from '../render/text-encoders';
import { JwtAuthBackendRole } from '../framework/vault-provider';
import { CiJwtAuth } from './ci-jwt-auth';
import { Duration, DURATION_HINT } from '../model/duration';
import { IGrantee } from '../model/grant';
import { identifierNameProblems } from '../model/identifier-name';
import { cidrProblems } from '../model/cidr-block';
import { hasRefusedCharacter } from '../model/free-text';
import { PolicyDocument } from '../model/policy-document';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { StorePolicy } from './store-policy';
import { oncePerSynthesis } from './synthesis-round';
import {
  CheckedProps,
  expectEnum,
  expectInstance,
  expectRecord,
  expectString,
  expectStringArray,
  expectStringOrStringArray,
  optional,
  PropsSchema,
} from '../model/props-check';
import { markStackLocal } from './stack-local-element';

/** The run-time checks of {@link CiJwtRoleProps}. */
export const CI_JWT_ROLE_SCHEMA: PropsSchema = {
  auth: expectInstance(CiJwtAuth, 'the CiJwtAuth construct of the role'),
  roleName: optional(expectString),
  audiences: optional(expectStringArray),
  boundClaims: optional(expectRecord(expectStringOrStringArray, 'an object of claim names to text or lists of text')),
  boundClaimsType: optional(expectEnum(['string', 'glob'])),
  userClaim: optional(expectString),
  jobTimeout: optional(expectInstance(Duration, DURATION_HINT)),
  tokenType: optional(expectEnum(['service', 'batch'])),
  tokenBoundCidrs: optional(expectStringArray),
};

/** Properties of {@link CiJwtRole}. */
export interface CiJwtRoleProps {
  /** The JWT auth method the role belongs to. */
  readonly auth: CiJwtAuth;
  /**
   * Role name, also the name of its policy. The spec's role is not configurable per project.
   * @default 'registry-ci'
   */
  readonly roleName?: string;
  /**
   * Accepted `aud` values; a job token must carry one of them (spec §2.4a).
   * @default [the platform's CI URL]
   */
  readonly audiences?: readonly string[];
  /**
   * Claims a job token must carry; a list means any of. Never empty: without a bound claim any job of
   * the CI instance could log in.
   * @default { namespace_path: ['<org>', '<org>/*'] } (the organisation's CI namespace and its subgroups)
   */
  readonly boundClaims?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * How bound claim values compare: `string` (exact) or `glob`.
   * @default 'glob'
   */
  readonly boundClaimsType?: 'string' | 'glob';
  /**
   * Claim that names the entity alias.
   * @default 'project_path'
   */
  readonly userClaim?: string;
  /**
   * The CI job timeout. The store token's TTL, max TTL and explicit max TTL are all set to it, so the
   * token cannot outlive the job (spec §8) and cannot be renewed beyond it.
   * @default Duration.minutes(60)
   */
  readonly jobTimeout?: Duration;
  /**
   * Store token type.
   * @default 'service'
   */
  readonly tokenType?: 'service' | 'batch';
  /**
   * Source addresses allowed to use the token (CIDRs).
   * @default [] (no restriction)
   */
  readonly tokenBoundCidrs?: readonly string[];
}

/**
 * The shared CI role (`registry-ci`, spec §5.1): JWT login bound to the CI issuer, audience and the
 * organisation's namespace, with one policy that grants read on exactly the paths granted to it.
 *
 * Every role field is rendered explicitly, including the empty ones: a role write is a partial update
 * on the store, so a field the configuration stops setting would otherwise keep its old value.
 */
export class CiJwtRole extends Construct implements IGrantee {
  /** Role name. */
  readonly roleName: string;
  /** `jwt/registry-ci`. */
  readonly identityName: string;
  /** The role's policy; grants add rules to it. */
  readonly policy: PolicyDocument;
  /** Accepted audiences. */
  readonly audiences: readonly string[];
  /** Bound claims, lists as given. */
  readonly boundClaims: Readonly<Record<string, readonly string[]>>;
  /** Bound claims comparison. */
  readonly boundClaimsType: 'string' | 'glob';
  /** User claim. */
  readonly userClaim: string;
  /** Job timeout = token lifetime. */
  readonly jobTimeout: Duration;
  /** Token bound CIDRs. */
  readonly tokenBoundCidrs: readonly string[];
  /** The rendered role. */
  readonly role: JwtAuthBackendRole;
  /** The rendered policy. */
  readonly policyResource: StorePolicy;

  constructor(scope: Construct, id: string, props: CiJwtRoleProps) {
    super(scope, id);
    const settings = SecretStoreStack.of(this).settings;
    const checked = (this.checked = new CheckedProps(CI_JWT_ROLE_SCHEMA, props));
    const auth = checked.value<CiJwtAuth | undefined>('auth', undefined);
    this.roleName = checked.value('roleName', 'registry-ci');
    this.identityName = `${auth?.path ?? 'jwt'}/${this.roleName}`;
    this.audiences = [...checked.value<readonly string[]>('audiences', [settings.ciUrl])];
    const claims = checked.value<Readonly<Record<string, string | readonly string[]>>>('boundClaims', {
      namespace_path: [settings.organisation, `${settings.organisation}/*`],
    });
    // Own keys only (Object.keys), so that no claim comes from Object.prototype.
    this.boundClaims = Object.fromEntries(
      Object.keys(claims)
        .sort()
        .map((k) => [k, typeof claims[k] === 'string' ? [claims[k] as string] : [...(claims[k] as string[])]]),
    );
    this.boundClaimsType = checked.value('boundClaimsType', 'glob');
    this.userClaim = checked.value('userClaim', 'project_path');
    this.jobTimeout = checked.value('jobTimeout', Duration.minutes(60));
    this.tokenBoundCidrs = [...checked.value<readonly string[]>('tokenBoundCidrs', [])];
    const ttl = this.jobTimeout.toSeconds();

    this.policyResource = new StorePolicy(this, 'policy', { name: this.roleName, complete: () => this.completePolicyOnce() });
    this.policy = this.policyResource.document;
    this.role = markStackLocal(new JwtAuthBackendRole(this, 'role', {
      backend: auth?.pathReference ?? 'jwt',
      roleName: terraformString(this.roleName),
      roleType: 'jwt',
      userClaim: terraformString(this.userClaim),
      userClaimJsonPointer: false,
      boundAudiences: terraformStrings(this.audiences),
      boundClaims: Object.fromEntries(Object.entries(this.boundClaims).map(([k, v]) => [terraformString(k), terraformString(v.join(','))])),
      boundClaimsType: terraformString(this.boundClaimsType),
      boundSubject: '',
      claimMappings: {},
      groupsClaim: '',
      disableBoundClaimsParsing: false,
      clockSkewLeeway: 0,
      expirationLeeway: 0,
      notBeforeLeeway: 0,
      verboseOidcLogging: false,
      tokenPolicies: [this.policyResource.name],
      tokenNoDefaultPolicy: false,
      tokenTtl: ttl,
      tokenMaxTtl: ttl,
      tokenExplicitMaxTtl: ttl,
      tokenPeriod: 0,
      tokenNumUses: 0,
      tokenType: terraformString(checked.value('tokenType', 'service')),
      tokenBoundCidrs: terraformStrings(this.tokenBoundCidrs),
    }), auth);
    auth?.registerRole({ constructPath: this.node.path, roleName: this.roleName, tokenType: checked.value<'service' | 'batch'>('tokenType', 'service') });
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /**
   * Adds rules that depend on the rest of the app, once it is complete (called before validation and
   * before the policy is rendered; must be idempotent). Nothing for this role.
   */
  protected completePolicy(): void {}

  /** {@link completePolicy}, once per synthesis: validation and both of cdktf's passes ask for it. */
  private completePolicyOnce(): void {
    oncePerSynthesis(this, 'completePolicy', () => this.completePolicy());
  }

  private readonly checked: CheckedProps;

  private problems(): ValidationProblem[] {
    this.completePolicyOnce();
    return this.checked.with(this.valueProblems());
  }

  private valueProblems(): ValidationProblem[] {
    const problems = identifierNameProblems('roleName', this.roleName);
    if (this.audiences.length === 0) {
      problems.push(new ValidationProblem('audiences', [], 'must not be empty: job tokens carry aud, and a role without audiences rejects them'));
    }
    this.audiences
      .filter((a) => !a || /\s/.test(a) || hasRefusedCharacter(a) || a.includes(','))
      .forEach((a) => problems.push(new ValidationProblem('audiences', a, 'must be a non-empty audience without spaces, commas or control characters')));
    const claimNames = Object.keys(this.boundClaims);
    if (claimNames.length === 0) {
      problems.push(
        new ValidationProblem('boundClaims', {}, 'must not be empty: without a bound claim any job of the CI instance can log in'),
      );
    }
    for (const name of claimNames) {
      const values = this.boundClaims[name];
      if (name === '__proto__') {
        // Reachable only through JSON.parse; an assignment to it replaces an object's prototype.
        problems.push(new ValidationProblem('boundClaims["__proto__"]', name, 'is not a claim name: JavaScript treats "__proto__" as the object\'s prototype, so the claim would be dropped'));
        continue;
      }
      if (!CLAIM_NAME.test(name)) {
        problems.push(new ValidationProblem(`boundClaims[${JSON.stringify(name)}]`, name, 'claim name must be letters, digits and "_", not starting with a digit'));
        continue;
      }
      if (values.length === 0 || values.some((v) => !v)) {
        problems.push(new ValidationProblem(`boundClaims.${name}`, values, 'must hold at least one non-empty value'));
      }
      if (values.some((v) => v.includes(','))) {
        problems.push(new ValidationProblem(`boundClaims.${name}`, values, 'values must not contain "," (the store splits on it)'));
      }
      if (values.some((v) => hasRefusedCharacter(v) || /\s/.test(v))) {
        problems.push(new ValidationProblem(`boundClaims.${name}`, values, 'values must not contain white space or control characters'));
      }
    }
    if (!['string', 'glob'].includes(this.boundClaimsType)) {
      problems.push(new ValidationProblem('boundClaimsType', this.boundClaimsType, 'must be "string" or "glob"'));
    }
    if (!this.userClaim || !CLAIM_NAME.test(this.userClaim)) {
      problems.push(new ValidationProblem('userClaim', this.userClaim, 'must be a claim name: letters, digits and "_", not starting with a digit'));
    }
    const timeout = this.jobTimeout.problems('jobTimeout', { limit: MAX_JOB_TIMEOUT, why: MAX_JOB_TIMEOUT_REASON });
    if (timeout.length > 0) problems.push(...timeout);
    else if (this.jobTimeout.toSeconds() === 0) {
      problems.push(new ValidationProblem('jobTimeout', this.jobTimeout.toString(), 'must be a positive whole number of seconds'));
    }
    this.tokenBoundCidrs.forEach((c) => problems.push(...cidrProblems('tokenBoundCidrs', c)));
    problems.push(...this.policy.problems('policy', SecretStoreStack.of(this).settings.store));
    return problems;
  }
}

/** Claim names: what GitLab and other CI systems put in job tokens (`namespace_path`, `project_id`). */
const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Longest CI job timeout (= store token lifetime) accepted. */
export const MAX_JOB_TIMEOUT = Duration.hours(24);

const MAX_JOB_TIMEOUT_REASON =
  'the job\'s store token lives as long as the timeout, and a token leaked from a job stays usable that long';
