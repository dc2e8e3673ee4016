import { TerraformOutput } from 'cdktf';
import { Construct } from 'constructs';
import { terraformString, terraformStrings } from '../render/text-encoders';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { AppRoleAuth } from './approle-auth';
import { Duration } from '../model/duration';
import { Grant, IGrantee } from '../model/grant';
import { identifierNameProblems } from '../model/identifier-name';
import { cidrProblems } from '../model/cidr-block';
import { KvPath } from '../model/kv-path';
import { PolicyDocument } from '../model/policy-document';
import { SecretDeclaration } from '../model/secret-declaration';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { StorePolicy } from './store-policy';

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
    this.name = props.name;
    this.environment = props.environment;
    this.roleName = props.roleName ?? `${props.name}-${props.environment}`;
    this.roleNameGiven = props.roleName !== undefined;
    this.authPath = props.auth.path;
    this.identityName = `${props.auth.path}/${this.roleName}`;
    this.tokenTtl = props.tokenTtl ?? Duration.hours(12);
    this.tokenMaxTtl = props.tokenMaxTtl ?? Duration.hours(24);
    this.secretIdTtl = props.secretIdTtl ?? Duration.seconds(0);
    this.renewalInterval = props.renewalInterval ?? Duration.minutes(45);
    this.secretIdNumUses = props.secretIdNumUses ?? 0;
    this.secretIdBoundCidrs = [...(props.secretIdBoundCidrs ?? [])];
    this.tokenBoundCidrs = [...(props.tokenBoundCidrs ?? [])];
    const prefix = `${settings.organisation}/${props.environment}/${props.name}`;
    this.readablePath = KvPath.subtree(settings.kvMount, prefix);
    const secrets = props.secrets ?? {};
    this.secretPaths = Object.keys(secrets).sort();
    this.secrets = this.secretPaths.map(
      (sub) =>
        new SecretDeclaration({
          path: KvPath.secret(settings.kvMount, `${prefix}/${sub}`),
          keys: secrets[sub],
          consumers: [props.name],
        }),
    );

    this.policyResource = new StorePolicy(this, 'policy', { name: this.roleName });
    this.policy = this.policyResource.document;
    Grant.onPath(this, this.readablePath.policyPath, ['read'], this.node.path);
    this.role = new ApproleAuthBackendRole(this, 'role', {
      backend: props.auth.backend.path,
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
    });
    this.roleIdOutput = new TerraformOutput(this, 'role-id', {
      value: this.role.roleId,
      description: terraformString(`Role ID of AppRole ${this.roleName} (non-sensitive; the Secret ID is issued by deployment automation)`),
    });
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  private problems(): ValidationProblem[] {
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
    return problems;
  }
}

/** Longest token max TTL accepted: the store's default `max_lease_ttl` (32 days). */
export const MAX_TOKEN_MAX_TTL = Duration.hours(768);

const MAX_TOKEN_MAX_TTL_REASON = 'the store caps tokens at its max_lease_ttl (768h by default) without saying so';
