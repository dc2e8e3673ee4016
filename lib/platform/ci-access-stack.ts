import { Construct } from 'constructs';
import { CiJwtAuth } from '../constructs/ci-jwt-auth';
import { CiJwtRole } from '../constructs/ci-jwt-role';
import { CiLoginTemplate } from '../constructs/ci-login-template';
import { CiSecret } from '../constructs/ci-secret';
import { ConfigurationPipeline } from '../constructs/configuration-pipeline';
import { ConfigurationPipelineRole } from '../constructs/configuration-pipeline-role';
import { E2eTestTemplate } from '../constructs/e2e-test-template';
import { LiveStoreReaderPolicy } from '../constructs/live-store-reader-policy';
import { RegistryServiceAccount } from '../constructs/registry-service-account';
import { SecretStoreStack, StateBackendFactory } from '../constructs/secret-store-stack';
import { PlatformSettings } from '../model/platform-settings';
import { SPEC_CI_SECRETS, SPEC_REGISTRY_ACCOUNTS } from '../model/spec-platform-declarations';
import { isPlainRecord, ownEntries } from '../model/props-check';
import { ValidationProblem } from '../model/validation-problem';
import { authMountProps, PlatformConfig, readerPolicyProps, RegistryAccountConfig } from './platform-config';

/**
 * What pipelines may read (spec §2.1, §2.3, §5.1): the CI JWT auth method, the shared role
 * `registry-ci` with its read policy, the registry service accounts and the other CI secrets.
 */
export class CiAccessStack extends SecretStoreStack {
  /** The JWT auth method for CI job tokens. */
  readonly jwtAuth: CiJwtAuth;
  /** The shared CI role. */
  readonly registryCi: CiJwtRole;
  /** Registry service accounts by `{name}`: the spec's three, then those of the configuration. */
  readonly accounts: Readonly<Record<string, RegistryServiceAccount>>;
  /** Other CI secrets. */
  readonly ciSecrets: CiSecret[];
  /** The live-store reader's policy, when `readerPolicy` declares it. */
  readonly readerPolicy?: LiveStoreReaderPolicy;
  /** The configuration project's roles (apply on protected branches, read-only plan), when configured. */
  readonly pipelineRoles?: { readonly apply: ConfigurationPipelineRole; readonly plan: ConfigurationPipelineRole };

  /**
   * @param settings the platform's settings, built once from `config.settings` by `definePlatform`
   */
  constructor(scope: Construct, id: string, config: PlatformConfig, settings: PlatformSettings, stateBackend?: StateBackendFactory) {
    super(scope, id, { settings, stateBackend });
    this.jwtAuth = new CiJwtAuth(this, 'jwt', { keySource: config.ciKeySource, ...authMountProps(config.authMounts?.jwt) });
    this.registryCi = new CiJwtRole(this, 'registry-ci', {
      auth: this.jwtAuth,
      jobTimeout: config.ciJobTimeout,
      boundClaims: config.ciBoundClaims,
    });
    const ci = [this.registryCi];

    // The spec's accounts (one place: lib/model/spec-platform-declarations.ts).
    const spec: Record<string, RegistryServiceAccount> = {};
    for (const { readByCi, ...props } of SPEC_REGISTRY_ACCOUNTS) {
      spec[props.name] = new RegistryServiceAccount(this, `svc-${props.name}`, { ...props, ...(readByCi ? { readers: ci } : {}) });
    }
    // A configured name that repeats one of the spec's is reported with the other problems, not declared twice.
    // Own entries only: `constructor` or `valueOf` is an account name like any other, and a name
    // repeats a spec account only when `spec` itself has it (not Object.prototype).
    const configured = ownEntries(config.accounts).filter(([, account]) => isPlainRecord(account)) as [string, RegistryAccountConfig][];
    const isSpec = (name: string): boolean => Object.prototype.hasOwnProperty.call(spec, name);
    const repeated = configured.filter(([name]) => isSpec(name));
    this.node.addValidation({
      validate: () =>
        repeated.map(([name]) =>
          String(new ValidationProblem(`accounts.${name}`, name, `is declared by the stack already (${spec[name].node.path}): choose another name`)),
        ),
    });
    const accounts: Record<string, RegistryServiceAccount> = { ...spec };
    for (const [name, account] of configured.filter(([n]) => !isSpec(n))) {
      // readByCi of another type than boolean is reported by definePlatform; it grants nothing.
      const { readByCi, ...props } = account;
      const readers = readByCi === undefined || readByCi === true ? ci : [];
      // defineProperty: an own `__proto__` key (JSON.parse makes one) is kept as a name, never a prototype.
      Object.defineProperty(accounts, name, {
        value: new RegistryServiceAccount(this, `svc-${name}`, { ...props, name, readers }),
        enumerable: true,
      });
    }
    this.accounts = accounts;

    this.ciSecrets = SPEC_CI_SECRETS.map(({ id, ...props }) => new CiSecret(this, id, { ...props, readers: ci }));
    // The CI template: one ready job per consumer, derived from the declarations above.
    new CiLoginTemplate(this, 'ci-template', {
      role: this.registryCi,
      readWhenSet: { 'testreport/svc-orchestrator': 'REPORTING_ENDPOINT' },
    });

    // The end-to-end test job of the e2e-test consumer, with its Playwright files.
    new E2eTestTemplate(this, 'e2e-template', config.e2eTests);

    // The live-store reader's own policy, when the configuration declares it (drift then reaches exit 0).
    const reader = readerPolicyProps(config.readerPolicy);
    if (reader) this.readerPolicy = new LiveStoreReaderPolicy(this, 'reader-policy', reader);

    // The configuration repository's own pipeline: its roles, and the pipeline file.
    if (isPlainRecord(config.configurationProject)) {
      const { projectId, ...pipeline } = config.configurationProject;
      const roles = {
        apply: new ConfigurationPipelineRole(this, 'pipeline-apply', { auth: this.jwtAuth, projectId, jobTimeout: config.ciJobTimeout }),
        plan: new ConfigurationPipelineRole(this, 'pipeline-plan', { auth: this.jwtAuth, projectId, access: 'plan', jobTimeout: config.ciJobTimeout }),
      };
      this.pipelineRoles = roles;
      new ConfigurationPipeline(this, 'pipeline', { ...pipeline, applyRole: roles.apply, planRole: roles.plan });
    }
  }
}
