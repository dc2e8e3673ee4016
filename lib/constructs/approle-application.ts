import { TerraformOutput } from '../framework/framework';
import { Construct } from 'constructs';
import { terraformString, terraformStrings } from '../render/text-encoders';
import { ApproleAuthBackendRole } from '../framework/vault-provider';
import { AppRoleAuth } from './approle-auth';
import { Duration, DURATION_HINT } from '../model/duration';
import { Grant, IGrantee } from '../model/grant';
import { identifierNameProblems } from '../model/identifier-name';
import { cidrProblems } from '../model/cidr-block';
import { KvPath } from '../model/kv-path';
import { PolicyDocument, storeCapabilityProblems } from '../model/policy-document';
import { SecretDeclaration } from '../model/secret-declaration';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { StorePolicy } from './store-policy';
import {
  CheckedProps,
  expectInstance,
  expectNumber,
  expectRecord,
  expectString,
  expectStringArray,
  optional,
  PropsSchema,
} from '../model/props-check';
import { markStackLocal } from './stack-local-element';

/** The run-time checks of {@link AppRoleApplicationProps}. */
export const APPROLE_APPLICATION_SCHEMA: PropsSchema = {
  auth: expectInstance(AppRoleAuth, 'the AppRoleAuth construct of the application'),
  name: expectString,
  environment: expectString,
  roleName: optional(expectString),
  secrets: optional(expectRecord(expectStringArray, 'an object of secret paths to lists of keys')),
  tokenTtl: optional(expectInstance(Duration, DURATION_HINT)),
  tokenMaxTtl: optional(expectInstance(Duration, DURATION_HINT)),
  secretIdTtl: optional(expectInstance(Duration, DURATION_HINT)),
  renewalInterval: optional(expectInstance(Duration, DURATION_HINT)),
  secretIdNumUses: optional(expectNumber),
  secretIdBoundCidrs: optional(expectStringArray),
  tokenBoundCidrs: optional(expectStringArray),
};

/** Properties of {@link AppRoleApplication}. */
export interface AppRoleApplicationProps {
  /** The AppRole auth method. */
  readonly auth: AppRoleAuth;
  /** Application name, the `{app}` of its paths (`orchestrator`). */
  readonly name: string;
  /** Environment, the `{env}` of its paths (`dev`, `shared`). */
  readonly environment: string;
  /**
   * Role name, also the name of its policy.
   * @default '{name}-{environment}' (`orchestrator-dev`)
   */
  readonly roleName?: string;
  /**
   * Secrets the agent renders, by path below the application's prefix, with their keys:
   * `{ database: ['pg_host', 'pg_user', 'pg_password'] }` reads `secret/data/{org}/{env}/{app}/database`.
   * The policy covers the whole prefix either way.
   * @default {}
   */
  readonly secrets?: Readonly<Record<string, readonly string[]>>;
  /**
   * Lifetime of issued tokens.
   * @default Duration.hours(12)
   */
  readonly tokenTtl?: Duration;
  /**
   * Maximum lifetime of issued tokens, renewals included.
   * @default Duration.hours(24)
   */
  readonly tokenMaxTtl?: Duration;
  /**
   * Lifetime of Secret IDs; 0 means no expiry (rotated by automation, spec §5.3).
   * @default Duration.seconds(0)
   */
  readonly secretIdTtl?: Duration;
  /**
   * How often the agent renews its token; must be shorter than the token TTL.
   * @default Duration.minutes(45)
   */
  readonly renewalInterval?: Duration;
  /**
   * Uses per Secret ID; 0 means unlimited.
   * @default 0
   */
  readonly secretIdNumUses?: number;
  /**
   * CIDRs allowed to log in with a Secret ID.
   * @default []
   */
  readonly secretIdBoundCidrs?: readonly string[];
  /**
   * CIDRs allowed to use issued tokens.
   * @default []
   */
  readonly tokenBoundCidrs?: readonly string[];
}

/**
 * One application's AppRole role and policy (spec §2.4): the sidecar agent logs in with the
 * application's Role ID and a Secret ID and may read `secret/data/{org}/{env}/{app}/*` and nothing
 * else. The Role ID is a stack output (non-sensitive). No Secret ID is created here: Secret IDs belong
 * to deployment automation and never enter Terraform state.
 */
export class AppRoleApplication extends Construct implements IGrantee {
  /** Application name. */
  readonly name: string;
  /** Environment. */
  readonly environment: string;
  /** Role name (= policy name). */
  readonly roleName: string;
  /** `approle/orchestrator-dev`. */
  readonly identityName: string;
  /** Mount path of the AppRole auth method (`approle`). */
  readonly authPath: string;
  /** The application's policy. */
  readonly policy: PolicyDocument;
  /** Everything the application may read: `{org}/{env}/{app}/*`. */
  readonly readablePath: KvPath;
  /** Declared secrets below the prefix, for agent templates. */
  readonly secrets: readonly SecretDeclaration[];
  /** Token TTL. */
  readonly tokenTtl: Duration;
  /** Token max TTL. */
  readonly tokenMaxTtl: Duration;
  /** Secret ID TTL. */
  readonly secretIdTtl: Duration;
  /** Agent renewal interval. */
  readonly renewalInterval: Duration;
  /** The rendered role. */
  readonly role: ApproleAuthBackendRole;
  /** The rendered policy. */
  readonly policyResource: StorePolicy;
  /** Output carrying the Role ID. */
  readonly roleIdOutput: TerraformOutput;
  /** Uses per Secret ID (0: unlimited). */
  readonly secretIdNumUses: number;
  /** CIDRs allowed to log in with a Secret ID. */
  readonly secretIdBoundCidrs: readonly string[];
  /** CIDRs allowed to use issued tokens. */
  readonly tokenBoundCidrs: readonly string[];
  private readonly secretPaths: readonly string[];
  private readonly roleNameGiven: boolean;

  constructor(scope: Construct, id: string, props: AppRoleApplicationProps) {
    super(scope, id);
    const settings = SecretStoreStack.of(this).settings;
    const checked = (this.checked = new CheckedProps(APPROLE_APPLICATION_SCHEMA, props));
    const auth = checked.value<AppRoleAuth | undefined>('auth', undefined);
    this.name = checked.value('name', '');
    this.environment = checked.value('environment', '');
    const roleName = checked.value<string | undefined>('roleName', undefined);
    this.roleName = roleName ?? `${this.name}-${this.environment}`;
    this.roleNameGiven = checked.raw('roleName') !== undefined;
    this.authPath = auth?.path ?? 'approle';
    this.identityName = `${this.authPath}/${this.roleName}`;
    this.tokenTtl = checked.value('tokenTtl', Duration.hours(12));
    this.tokenMaxTtl = checked.value('tokenMaxTtl', Duration.hours(24));
    this.secretIdTtl = checked.value('secretIdTtl', Duration.seconds(0));
    this.renewalInterval = checked.value('renewalInterval', Duration.minutes(45));
    this.secretIdNumUses = checked.value('secretIdNumUses', 0);
    this.secretIdBoundCidrs = [...checked.value<readonly string[]>('secretIdBoundCidrs', [])];
    this.tokenBoundCidrs = [...checked.value<readonly string[]>('tokenBoundCidrs', [])];
    const prefix = `${settings.organisation}/${this.environment}/${this.name}`;
    this.readablePath = KvPath.subtree(settings.kvMount, prefix);
    const secrets = checked.value<Readonly<Record<string, readonly string[]>>>('secrets', {});
    // Own keys only (Object.keys): `constructor` is a path like any other, nothing is inherited.
    this.secretPaths = Object.keys(secrets).sort();
    this.secrets = this.secretPaths.map(
      (sub) =>
        new SecretDeclaration({
          path: KvPath.secret(settings.kvMount, `${prefix}/${sub}`),
          keys: secrets[sub],
          consumers: [this.name],
        }),
    );

    this.policyResource = new StorePolicy(this, 'policy', { name: this.roleName });
    this.policy = this.policyResource.document;
    Grant.onPath(this, this.readablePath.policyPath, ['read'], declaredUnderMountStack(this, auth));
    this.role = markStackLocal(new ApproleAuthBackendRole(this, 'role', {
      // In the mount's stack a reference (the engine creates the mount first); in another stack (a
      // shard) the path as a literal: a reference would make cdktf read the mount stack's state.
      backend: auth === undefined ? 'approle' : SecretStoreStack.of(auth) === SecretStoreStack.of(this) ? auth.pathReference : terraformString(auth.path),
      roleName: terraformString(this.roleName),
      bindSecretId: true,
      secretIdTtl: this.secretIdTtl.toSeconds(),
      secretIdNumUses: this.secretIdNumUses,
      secretIdBoundCidrs: terraformStrings(this.secretIdBoundCidrs),
      tokenPolicies: [this.policyResource.name],
      tokenNoDefaultPolicy: false,
      tokenTtl: this.tokenTtl.toSeconds(),
      tokenMaxTtl: this.tokenMaxTtl.toSeconds(),
      tokenExplicitMaxTtl: 0,
      tokenPeriod: 0,
      tokenNumUses: 0,
      tokenType: 'service',
      tokenBoundCidrs: terraformStrings(this.tokenBoundCidrs),
    }));
    auth?.registerRole({ constructPath: this.node.path, roleName: this.roleName, tokenType: 'service', renewedEvery: this.renewalInterval });
    this.roleIdOutput = markStackLocal(new TerraformOutput(this, 'role-id', {
      value: this.role.roleId,
      description: terraformString(`Role ID of AppRole ${this.roleName} (non-sensitive; the Secret ID is issued by deployment automation)`),
    }));
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  private readonly checked: CheckedProps;

  private problems(): ValidationProblem[] {
    return this.checked.with(this.valueProblems());
  }

  private valueProblems(): ValidationProblem[] {
    const problems = [
      ...identifierNameProblems('name', this.name),
      ...identifierNameProblems('environment', this.environment),
    ];
    // A defaulted role name repeats name and environment: report it only when they are valid.
    if (this.roleNameGiven || problems.length === 0) problems.push(...identifierNameProblems('roleName', this.roleName));
    const durationProblems = [
      ...this.tokenTtl.problems('tokenTtl'),
      ...this.tokenMaxTtl.problems('tokenMaxTtl', { limit: MAX_TOKEN_MAX_TTL, why: MAX_TOKEN_MAX_TTL_REASON }),
      ...this.secretIdTtl.problems('secretIdTtl'),
      ...this.renewalInterval.problems('renewalInterval'),
    ];
    problems.push(...durationProblems);
    if (!Number.isInteger(this.secretIdNumUses) || this.secretIdNumUses < 0) {
      problems.push(new ValidationProblem('secretIdNumUses', this.secretIdNumUses, 'must be a whole number >= 0 (0: unlimited)'));
    }
    this.secretIdBoundCidrs.forEach((c) => problems.push(...cidrProblems('secretIdBoundCidrs', c)));
    this.tokenBoundCidrs.forEach((c) => problems.push(...cidrProblems('tokenBoundCidrs', c)));
    // The comparisons below mean nothing for a value that is not a duration.
    if (durationProblems.length === 0) {
      if (this.tokenTtl.toSeconds() === 0) {
        problems.push(new ValidationProblem('tokenTtl', this.tokenTtl.toString(), 'must be positive'));
      }
      if (this.tokenTtl.toSeconds() > this.tokenMaxTtl.toSeconds()) {
        problems.push(
          new ValidationProblem('tokenTtl', this.tokenTtl.toString(), `must not exceed tokenMaxTtl (${this.tokenMaxTtl})`),
        );
      }
      if (this.renewalInterval.toSeconds() === 0 || this.renewalInterval.toSeconds() >= this.tokenTtl.toSeconds()) {
        problems.push(
          new ValidationProblem(
            'renewalInterval',
            this.renewalInterval.toString(),
            `must be positive and shorter than tokenTtl (${this.tokenTtl}), or the token expires before the agent renews it`,
          ),
        );
      }
    }
    this.secrets.forEach((s, i) =>
      problems.push(
        ...s.problems().map((p) => new ValidationProblem(`secrets["${this.secretPaths[i]}"].${p.field}`, p.value, p.rule)),
      ),
    );
    problems.push(...this.readablePath.problems('readablePath'));
    const store = SecretStoreStack.of(this).settings.store;
    for (const rule of this.policy.rules) problems.push(...storeCapabilityProblems(`policy.rules["${rule.path}"]`, rule.capabilities, store));
    return problems;
  }
}

/**
 * How the policy comment names an application: its construct path with the stack of its auth mount
 * in front (`app-roles/orchestrator-dev`, whichever shard stack holds it), so that moving it between
 * stacks changes no policy text; in the mount's own stack that is its construct path.
 */
function declaredUnderMountStack(app: AppRoleApplication, auth: AppRoleAuth | undefined): string {
  const own = SecretStoreStack.of(app);
  if (auth === undefined || SecretStoreStack.of(auth) === own) return app.node.path;
  return `${SecretStoreStack.of(auth).node.path}/${app.node.path.slice(own.node.path.length + 1)}`;
}

/** Longest token max TTL accepted: the store's default `max_lease_ttl` (32 days). */
export const MAX_TOKEN_MAX_TTL = Duration.hours(768);

const MAX_TOKEN_MAX_TTL_REASON = 'the store caps tokens at its max_lease_ttl (768h by default) without saying so';
