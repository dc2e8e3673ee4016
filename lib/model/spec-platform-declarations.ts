import { RegistryPermission } from './registry-permission-scope';

/**
 * The platform's own declarations, as the spec names them (`../shared/spec/credential-brokering.md`
 * §2.1, §2.3, §2.4): the stacks declare these whatever the configuration says. One place for them:
 * the `ci-access` and `app-roles` stacks declare exactly these, and what must know that a
 * declaration is the platform's own (the usage report's fix texts: no configuration field removes
 * it) reads the same lists. Plain data, free of the rendering layer.
 */

/** One of the spec's registry service accounts (§2.1). */
export interface SpecRegistryAccount {
  /** `{name}` of `svc-{name}`; the construct id is `svc-{name}`. */
  readonly name: string;
  /** Its registry permissions (each account a distinct scope). */
  readonly permissions: readonly RegistryPermission[];
  /** Who uses it. */
  readonly usedBy: string;
  /** The CI job kinds that read it (none: not readable by CI). */
  readonly consumers?: readonly string[];
  /** Whether CI jobs (`registry-ci`) read it; the pull-only account is not readable by CI (§2.3). */
  readonly readByCi: boolean;
}

/** One of the spec's other CI secrets (§2.1). */
export interface SpecCiSecret {
  /** The construct id, in the `ci-access` stack. */
  readonly id: string;
  /** Its path under the KV mount, `secret/{path}`. */
  readonly path: string;
  /** Its keys. */
  readonly keys: readonly string[];
  /** The CI job kinds that read it. */
  readonly consumers: readonly string[];
  /** What it is. */
  readonly description: string;
}

/** One of the spec's applications (§2.4). */
export interface SpecApplication {
  /** The construct id, in the `app-roles` stack. */
  readonly id: string;
  /** `{app}` of its paths. */
  readonly name: string;
  /** `{env}` of its paths. */
  readonly environment: string;
  /** Its AppRole role's name, when it is not the id. */
  readonly roleName?: string;
  /** Its secrets, by name under its path, with their keys. */
  readonly secrets?: Readonly<Record<string, readonly string[]>>;
}

/** The spec's registry service accounts, in the spec's order. */
export const SPEC_REGISTRY_ACCOUNTS: readonly SpecRegistryAccount[] = [
  {
    name: 'orchestrator',
    permissions: ['container-image:read', 'container-image:write', 'rpm:read', 'rpm:write', 'raw:read', 'raw:write', 'pypi:read', 'pypi:write'],
    usedBy: 'platform CI builds and deployments; default for all platform services; publishes the shared Python library',
    consumers: ['image-build', 'image-push', 'image-scan'],
    readByCi: true,
  },
  {
    name: 'executor',
    permissions: ['rpm:read', 'rpm:write', 'raw:read', 'raw:write'],
    usedBy: 'the executor project only',
    consumers: ['executor-rpm-build'],
    readByCi: true,
  },
  // Pull-only account of cluster pods and VM deployment scripts: not readable by CI (spec §2.3).
  { name: 'deployer', permissions: ['container-image:read'], usedBy: 'cluster pods and virtual-machine deployment scripts', readByCi: false },
];

/** The spec's other CI secrets, in the spec's order. */
export const SPEC_CI_SECRETS: readonly SpecCiSecret[] = [
  { id: 'codequality', path: 'codequality/svc-orchestrator', keys: ['token', 'url'], consumers: ['code-quality-scan'], description: 'code-quality service token and URL' },
  { id: 'vulnmgmt', path: 'vulnmgmt/svc-orchestrator', keys: ['token'], consumers: ['vulnerability-import'], description: 'vulnerability-management import token' },
  { id: 'e2e-test-user', path: 'orchestrator/e2e-test-user', keys: ['username', 'password'], consumers: ['e2e-test'], description: 'end-to-end test user (global setup login)' },
  { id: 'testreport', path: 'testreport/svc-orchestrator', keys: ['api_key'], consumers: ['e2e-test'], description: 'test-reporting client API key' },
];

/** The spec's applications, in the spec's order. */
export const SPEC_APPLICATIONS: readonly SpecApplication[] = [
  { id: 'orchestrator-dev', name: 'orchestrator', environment: 'dev', secrets: { database: ['pg_host', 'pg_user', 'pg_password'] } },
  { id: 'identity-shared', name: 'identity', environment: 'shared', roleName: 'authentik-role' },
  { id: 'sourcehost-shared', name: 'sourcehost', environment: 'shared', roleName: 'gitlab-role' },
  { id: 'registry-shared', name: 'registry', environment: 'shared', roleName: 'registry' },
];
