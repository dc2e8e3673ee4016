import { Construct } from 'constructs';
import { JwtAuthBackendRole } from '../framework/vault-provider';
import { terraformString, terraformStrings } from '../render/text-encoders';
import { OidcAuth } from './oidc-auth';
import { Duration, DURATION_HINT } from '../model/duration';
import { Grant, IGrantee } from '../model/grant';
import { identifierNameProblems } from '../model/identifier-name';
import { cidrProblems } from '../model/cidr-block';
import { hasRefusedCharacter, VISIBLE_TEXT_NOTE, visibleLength } from '../model/free-text';
import { KvPath } from '../model/kv-path';
import { PolicyDocument } from '../model/policy-document';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { StorePolicy } from './store-policy';
import {
  CheckedProps,
  expectArrayOf,
  expectBoolean,
  expectInstance,
  expectShape,
  expectString,
  expectStringArray,
  optional,
  PropsSchema,
} from '../model/props-check';
import { markStackLocal } from './stack-local-element';

/** What a group of people may read: one secret, or a subtree, of the platform's KV mount. */
export interface PeopleRead {
  /** Logical path on the KV mount (`team/runbooks`); with `subtree`, everything below it. */
  readonly path: string;
  /**
   * Read every secret below `path` (and list them in the UI) instead of the one secret.
   * @default false
   */
  readonly subtree?: boolean;
  /**
   * Why people must read a path that CI or an application reads. Without it, SSI-R12 refuses a
   * grant that overlaps a CI secret or an application's paths: a person reading a machine's
   * credential is a leak nobody would see in the machine's own report.
   * @default none (refused when the path is a machine's)
   */
  readonly machinePathReason?: string;
}

/** The run-time checks of one {@link PeopleRead}. */
const PEOPLE_READ_SCHEMA: PropsSchema = {
  path: expectString,
  subtree: optional(expectBoolean),
  machinePathReason: optional(expectString),
};

/** The run-time checks of {@link OidcGroupRoleProps}. */
export const OIDC_GROUP_ROLE_SCHEMA: PropsSchema = {
  auth: expectInstance(OidcAuth, 'the OidcAuth construct of the role'),
  groups: expectStringArray,
  roleName: optional(expectString),
  reads: optional(expectArrayOf(expectShape(PEOPLE_READ_SCHEMA, 'an object { path, subtree?, machinePathReason? }'), 'a list of { path, subtree?, machinePathReason? }')),
  tokenTtl: optional(expectInstance(Duration, DURATION_HINT)),
  tokenMaxTtl: optional(expectInstance(Duration, DURATION_HINT)),
  tokenBoundCidrs: optional(expectStringArray),
};

/** Properties of {@link OidcGroupRole}. */
export interface OidcGroupRoleProps {
  /** The OIDC auth method the role belongs to. */
  readonly auth: OidcAuth;
  /**
   * The group(s) whose members log in as this role: values of the method's groups claim, compared
   * exactly (a person in any of them may log in). Never empty, never `*`.
   */
  readonly groups: readonly string[];
  /**
   * Role name, also the name of its policy; the identity is `<mount>/<roleName>`.
   * @default the first group
   */
  readonly roleName?: string;
  /**
   * What the group may read.
   * @default [] (no platform secret path at all: the token carries only the store's `default` policy)
   */
  readonly reads?: readonly PeopleRead[];
  /**
   * Lifetime of the token a login gives.
   * @default Duration.hours(1)
   */
  readonly tokenTtl?: Duration;
  /**
   * Longest lifetime, renewals included (a working day).
   * @default Duration.hours(8)
   */
  readonly tokenMaxTtl?: Duration;
  /**
   * Source addresses allowed to use the token (CIDRs).
   * @default [] (no restriction)
   */
  readonly tokenBoundCidrs?: readonly string[];
}

/**
 * One group of people (spec §5.6): members of the group, as the identity provider names them in the
 * groups claim, log in through the store's UI or CLI with single sign-on and get a short-lived token
 * whose policy grants exactly the declared reads, and nothing of the platform by default.
 *
 * Every role field is rendered explicitly, as for the CI role: a role write is a partial update.
 */
export class OidcGroupRole extends Construct implements IGrantee {
  /** Role name (= policy name). */
  readonly roleName: string;
  /** `oidc/<role>`. */
  readonly identityName: string;
  /** Groups bound (values of the groups claim), sorted. */
  readonly groups: readonly string[];
  /** The OIDC method. */
  readonly auth?: OidcAuth;
  /** The role's policy; grants add rules to it. */
  readonly policy: PolicyDocument;
  /** Token TTL. */
  readonly tokenTtl: Duration;
  /** Token max TTL. */
  readonly tokenMaxTtl: Duration;
  /** Token bound CIDRs. */
  readonly tokenBoundCidrs: readonly string[];
  /** The rendered role. */
  readonly role: JwtAuthBackendRole;
  /** The rendered policy. */
  readonly policyResource: StorePolicy;
  private readonly optIns = new Map<string, string>();
  /** Reasons of {@link grantRead} too short to be one. */
  private readonly reasonProblems: ValidationProblem[] = [];
  private readonly reads: readonly PeopleRead[];

  constructor(scope: Construct, id: string, props: OidcGroupRoleProps) {
    super(scope, id);
    const settings = SecretStoreStack.of(this).settings;
    const checked = (this.checked = new CheckedProps(OIDC_GROUP_ROLE_SCHEMA, props));
    const auth = (this.auth = checked.value<OidcAuth | undefined>('auth', undefined));
    this.groups = [...new Set(checked.value<readonly string[]>('groups', []))].sort();
    this.roleName = checked.value('roleName', checked.value<readonly string[]>('groups', [])[0] ?? '');
    this.identityName = `${auth?.path ?? 'oidc'}/${this.roleName}`;
    this.tokenTtl = checked.value('tokenTtl', Duration.hours(1));
    this.tokenMaxTtl = checked.value('tokenMaxTtl', Duration.hours(8));
    this.tokenBoundCidrs = [...checked.value<readonly string[]>('tokenBoundCidrs', [])];
    this.reads = checked.value<readonly PeopleRead[]>('reads', []);

    this.policyResource = new StorePolicy(this, 'policy', {
      name: this.roleName,
      whenEmpty: 'grants nothing: this group of people reads no platform secret path (the store\'s default policy only)',
    });
    this.policy = this.policyResource.document;
    const groupsClaim = auth?.groupsClaim ?? 'groups';
    this.role = markStackLocal(new JwtAuthBackendRole(this, 'role', {
      backend: auth?.pathReference ?? 'oidc',
      roleName: terraformString(this.roleName),
      roleType: 'oidc',
      userClaim: terraformString(auth?.userClaim ?? 'sub'),
      userClaimJsonPointer: false,
      groupsClaim: terraformString(groupsClaim),
      boundAudiences: terraformStrings(auth ? [auth.clientId] : []),
      boundClaims: { [terraformString(groupsClaim)]: terraformString(this.groups.join(',')) },
      boundClaimsType: 'string',
      boundSubject: '',
      claimMappings: {},
      disableBoundClaimsParsing: false,
      allowedRedirectUris: terraformStrings(auth?.redirectUris ?? []),
      oidcScopes: terraformStrings(auth?.scopes ?? []),
      clockSkewLeeway: 0,
      expirationLeeway: 0,
      notBeforeLeeway: 0,
      verboseOidcLogging: false,
      tokenPolicies: [this.policyResource.name],
      tokenNoDefaultPolicy: false,
      tokenTtl: this.tokenTtl.toSeconds(),
      tokenMaxTtl: this.tokenMaxTtl.toSeconds(),
      tokenExplicitMaxTtl: this.tokenMaxTtl.toSeconds(),
      tokenPeriod: 0,
      tokenNumUses: 0,
      tokenType: 'service',
      tokenBoundCidrs: terraformStrings(this.tokenBoundCidrs),
    }), auth);
    this.reads.forEach((r, i) => {
      if (typeof r.path === 'string' && r.path !== '') this.grantRead(KvPath[r.subtree === true ? 'subtree' : 'secret'](settings.kvMount, r.path), r.machinePathReason, `${this.node.path}/reads[${i}]`);
    });
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /**
   * Grants read on a KV path (and, for a subtree on KV v2, list on its metadata, so that the UI can
   * browse it).
   * @param machinePathReason why people must read a path CI or an application reads (SSI-R12)
   * @param source the declaration that grants (a construct path)
   */
  grantRead(path: KvPath, machinePathReason?: string, source: string = this.node.path): Grant[] {
    const grants = [Grant.onPath(this, path.policyPath, ['read'], source)];
    if (path.subtree && path.mount.version === 2) grants.push(Grant.onPath(this, `${path.mount.metadataPath(path.logical)}/*`, ['list'], source));
    if (machinePathReason !== undefined) {
      grants.forEach((g) => this.optIns.set(g.path, machinePathReason));
      // Checked here, so that a grant made in code is held to the rule of one made by `reads`.
      if (typeof machinePathReason !== 'string' || visibleLength(machinePathReason) < MIN_MACHINE_PATH_REASON) {
        const field = source.startsWith(`${this.node.path}/`) ? `${source.slice(this.node.path.length + 1)}.machinePathReason` : 'machinePathReason';
        this.reasonProblems.push(
          new ValidationProblem(field, machinePathReason, `must say why people read a machine's path (at least ${MIN_MACHINE_PATH_REASON} characters; ${VISIBLE_TEXT_NOTE})`),
        );
      }
    }
    return grants;
  }

  /**
   * The reason given for a rule path that reaches a CI or application path (SSI-R12's opt-in), if
   * any: only grants made with `machinePathReason` have one.
   */
  machinePathReason(policyPath: string): string | undefined {
    return this.optIns.get(policyPath);
  }

  private readonly checked: CheckedProps;

  private problems(): ValidationProblem[] {
    const problems = identifierNameProblems('roleName', this.roleName);
    // An empty list, a blank or a "*" value is SSI-R13's (reported with the rule id).
    this.groups
      .filter((g) => g.trim() !== g || hasRefusedCharacter(g) || g.includes(','))
      .forEach((g) => problems.push(new ValidationProblem('groups', g, 'must be a group name without leading or trailing spaces, control characters or "," (the store splits on it)')));
    this.reads.forEach((r, i) => {
      if (typeof r.path === 'string') {
        const settings = SecretStoreStack.of(this).settings;
        problems.push(...KvPath[r.subtree === true ? 'subtree' : 'secret'](settings.kvMount, r.path).problems(`reads[${i}].path`));
      }
    });
    problems.push(...this.reasonProblems);
    const durations = [
      ...this.tokenTtl.problems('tokenTtl'),
      ...this.tokenMaxTtl.problems('tokenMaxTtl', { limit: MAX_PEOPLE_TOKEN_TTL, why: 'a person\'s token left on a laptop stays usable that long; people log in again' }),
    ];
    problems.push(...durations);
    if (durations.length === 0) {
      if (this.tokenTtl.toSeconds() === 0) problems.push(new ValidationProblem('tokenTtl', this.tokenTtl.toString(), 'must be positive'));
      if (this.tokenTtl.toSeconds() > this.tokenMaxTtl.toSeconds()) {
        problems.push(new ValidationProblem('tokenTtl', this.tokenTtl.toString(), `must not exceed tokenMaxTtl (${this.tokenMaxTtl})`));
      }
    }
    this.tokenBoundCidrs.forEach((c) => problems.push(...cidrProblems('tokenBoundCidrs', c)));
    for (const rule of this.policy.rules) {
      if (rule.capabilities.length === 0) problems.push(new ValidationProblem(`policy.rules["${rule.path}"]`, [], 'must name at least one capability'));
    }
    return this.checked.with(problems);
  }
}

/** Fewest visible characters of a `machinePathReason`: a word or two is not a reason. */
export const MIN_MACHINE_PATH_REASON = 10;

/** Longest token lifetime of a person's login accepted. */
export const MAX_PEOPLE_TOKEN_TTL = Duration.hours(24);
