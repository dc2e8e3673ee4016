import { Construct, IConstruct } from 'constructs';
import { CiJwtRole } from './ci-jwt-role';
import { renderCiLoginScript } from '../render/ci-login-script';
import {
  CI_ID_TOKEN_VARIABLE,
  CI_LOGIN_BASE_JOB,
  CiJobTemplate,
  CiRegistryLogin,
  CiSecretRead,
  renderGitlabCiTemplate,
} from '../render/gitlab-ci-template';
import { CiSecret } from './ci-secret';
import { SecretDeclaration } from '../model/secret-declaration';
import { ValidationProblem } from '../model/validation-problem';
import { PlatformDeclarations } from './platform-declarations';
import { RegistryServiceAccount } from './registry-service-account';
import { SecretStoreStack } from './secret-store-stack';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';
import { compareStrings } from '../private/compare-strings';
import { oncePerSynthesis } from './synthesis-round';
import { CheckedProps, expectInstance, expectRecord, expectString, optional, ownValue, PropsSchema } from '../model/props-check';

/** The run-time checks of {@link CiLoginTemplateProps}. */
export const CI_LOGIN_TEMPLATE_SCHEMA: PropsSchema = {
  role: expectInstance(CiJwtRole, 'the CiJwtRole construct jobs log in as'),
  directory: optional(expectString),
  registryLoginCommand: optional(expectString),
  readWhenSet: optional(expectRecord(expectString, 'an object of logical secret paths to variable names')),
  variablePrefixes: optional(expectRecord(expectString, 'an object of logical secret paths to variable prefixes')),
};

/** Properties of {@link CiLoginTemplate}. */
export interface CiLoginTemplateProps {
  /** The JWT role jobs log in as (`registry-ci`); its audience goes into the `id_tokens` block. */
  readonly role: CiJwtRole;
  /**
   * Directory of the artifacts in the synthesis output.
   * @default 'ci'
   */
  readonly directory?: string;
  /**
   * Registry login command the script runs with `--username <u> --password-stdin <host:port>`; a job
   * overrides it with the variable `SECRETSTORE_REGISTRY_LOGIN_COMMAND` (`podman login`, `buildah login`).
   * @default 'docker login'
   */
  readonly registryLoginCommand?: string;
  /**
   * Secrets read only when a job variable is set, by logical path: the job skips the read silently
   * while the variable is unset or empty. The spec's test-report key is read only when
   * `REPORTING_ENDPOINT` is set (spec §2.5): `{ 'testreport/svc-orchestrator': 'REPORTING_ENDPOINT' }`.
   * @default {}
   */
  readonly readWhenSet?: Readonly<Record<string, string>>;
  /**
   * Prefix of the exported variables, by logical path.
   * @default the account name for registry accounts (`SVC_ORCHESTRATOR`), the construct id for CI
   * secrets (`CODEQUALITY`), upper-cased with `-` turned into `_`
   */
  readonly variablePrefixes?: Readonly<Record<string, string>>;
}

/** File name of the GitLab CI template. */
export const CI_TEMPLATE_FILE = 'secretstore-ci.gitlab-ci.yml';
/** File name of the standalone login script. */
export const CI_LOGIN_SCRIPT_FILE = 'secretstore-login.sh';

const VARIABLE_PATTERN = /^[A-Z_][A-Z0-9_]*$/;
const RESERVED_VARIABLE_PREFIXES = ['SECRETSTORE_', 'CI_', 'GITLAB_', 'FF_', 'VAULT_', 'BAO_'];
const LOGIN_COMMAND_PATTERN = /^[A-Za-z0-9_./-]+( [A-Za-z0-9_./=-]+)*$/;

/** `svc-orchestrator` → `SVC_ORCHESTRATOR`. */
function toVariablePrefix(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

interface ReadableDeclaration {
  readonly construct: IConstruct;
  readonly secret: SecretDeclaration;
  readonly account?: RegistryServiceAccount;
  readonly description: string;
  readonly prefix: string;
}

/**
 * The CI login template (spec §4.1 flow 1, §2.4a, §5.1, §5.5, §5.8): at synthesis it writes
 *
 * - `ci/secretstore-ci.gitlab-ci.yml`, a GitLab CI file to `include`: the hidden base job
 *   `.secretstore-login` (the `id_tokens` block with `SECRETSTORE_ID_TOKEN`, `aud` = the CI URL, and
 *   the login script as `before_script`) and one hidden job `.secretstore-<consumer>` per consumer
 *   declared on a secret the role may read, setting the paths to read, the exported variable names
 *   and the registry login;
 * - `ci/secretstore-login.sh`, the same login script as a standalone POSIX `sh` file.
 *
 * Everything is derived from the declarations of the whole app: a registry account or CI secret
 * declared with consumers and granted to the role gets its job template with no other change.
 */
export class CiLoginTemplate extends Construct implements IArtifactSource {
  /** The role jobs log in as. */
  readonly role: CiJwtRole;
  /** The `aud` of the job token: the CI URL when the role accepts it, else the role's first audience. */
  readonly audience: string;
  /** Mount path of the role's JWT auth method. */
  readonly authPath: string;
  /** Output directory of the artifacts. */
  readonly directory: string;
  /** Default registry login command. */
  readonly registryLoginCommand: string;
  private readonly readWhenSet: Readonly<Record<string, string>>;
  private readonly variablePrefixes: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: CiLoginTemplateProps) {
    super(scope, id);
    const settings = SecretStoreStack.of(this).settings;
    const checked = (this.checked = new CheckedProps(CI_LOGIN_TEMPLATE_SCHEMA, props));
    // Without a role there is nothing to render; the type problem stops the synthesis before any use.
    const role = checked.value<CiJwtRole | undefined>('role', undefined);
    this.role = role as CiJwtRole;
    this.audience = !role ? settings.ciUrl : role.audiences.includes(settings.ciUrl) ? settings.ciUrl : (role.audiences[0] ?? settings.ciUrl);
    const suffix = `/${role?.roleName}`;
    this.authPath = !role ? 'jwt' : role.identityName.endsWith(suffix) ? role.identityName.slice(0, -suffix.length) : role.identityName.split('/')[0];
    this.directory = checked.value('directory', 'ci');
    this.registryLoginCommand = checked.value('registryLoginCommand', 'docker login');
    this.readWhenSet = { ...checked.value<Readonly<Record<string, string>>>('readWhenSet', {}) };
    this.variablePrefixes = { ...checked.value<Readonly<Record<string, string>>>('variablePrefixes', {}) };
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /** Path of the GitLab CI file in the synthesis output (`ci/secretstore-ci.gitlab-ci.yml`). */
  get templatePath(): string {
    return `${this.directory}/${CI_TEMPLATE_FILE}`;
  }

  /** Path of the standalone login script in the synthesis output (`ci/secretstore-login.sh`). */
  get scriptPath(): string {
    return `${this.directory}/${CI_LOGIN_SCRIPT_FILE}`;
  }

  /** Every declared CI secret of the app, with whether this template's role may read it. */
  private declarations(): { readable: ReadableDeclaration[]; unreadable: { construct: IConstruct; secret: SecretDeclaration }[] } {
    const all = PlatformDeclarations.of(this.node.root);
    const readable: ReadableDeclaration[] = [];
    const unreadable: { construct: IConstruct; secret: SecretDeclaration }[] = [];
    for (const { construct, secret } of all.ciSecretDeclarations) {
      const granted = secret.grants.some((g) => g.identity === this.role.identityName && g.path === secret.path.policyPath);
      if (!granted) {
        const anyCiRole = all.jwtRoles.some((r) => secret.grants.some((g) => g.identity === r.identityName && g.path === secret.path.policyPath));
        if (secret.consumers.length > 0 && !anyCiRole) unreadable.push({ construct, secret });
        continue;
      }
      const account = construct instanceof RegistryServiceAccount ? construct : undefined;
      const description = account
        ? `${account.accountName}: ${account.usedBy}`
        : construct instanceof CiSecret
          ? construct.description
          : construct.node.path;
      // Own entries only: a secret at `constructor` must not find Object.prototype's.
      const prefix =
        ownValue<string>(this.variablePrefixes, secret.path.logical) ?? toVariablePrefix(account ? account.accountName : construct.node.id);
      readable.push({ construct, secret, account, description, prefix });
    }
    readable.sort((a, b) => compareStrings(a.secret.path.policyPath, b.secret.path.policyPath));
    return { readable, unreadable };
  }

  private readOf(d: ReadableDeclaration): CiSecretRead {
    const apiPath = d.secret.path.policyPath;
    const variables = d.secret.keys.map((key) => ({ key, variable: `${d.prefix}_${key.toUpperCase()}` }));
    const whenSet = ownValue<string>(this.readWhenSet, d.secret.path.logical);
    const kind = d.secret.path.mount.version === 1 ? 'kv1' : 'kv2';
    const entry =
      `${kind}:${apiPath}:${variables.map((v) => `${v.key}=${v.variable}`).join(',')}` + (whenSet ? `:when=${whenSet}` : '');
    return { secret: d.secret, source: d.construct.node.path, description: d.description, apiPath, variables, whenSet, entry };
  }

  /** One job template per consumer of a secret the role may read, sorted by consumer. */
  jobTemplates(): CiJobTemplate[] {
    // Validation, rule SSI-R11 and both rendered files ask for them: computed once per synthesis.
    return [...oncePerSynthesis(this, 'jobTemplates', () => this.computeJobTemplates())];
  }

  private computeJobTemplates(): CiJobTemplate[] {
    if (!this.role) return [];
    const { readable } = this.declarations();
    const consumers = [...new Set(readable.flatMap((d) => d.secret.consumers))].sort(compareStrings);
    return consumers.map((consumer) => {
      const mine = readable.filter((d) => d.secret.consumers.includes(consumer));
      const reads = mine.map((d) => this.readOf(d));
      const registryLogins: CiRegistryLogin[] = mine
        .filter((d) => d.account?.loginKind && d.account.loginTarget)
        .map((d) => {
          const usernameVariable = `${d.prefix}_USERNAME`;
          const passwordVariable = `${d.prefix}_PASSWORD`;
          const target = d.account!.loginTarget!;
          return {
            accountName: d.account!.accountName,
            kind: d.account!.loginKind!,
            target,
            usernameVariable,
            passwordVariable,
            entry: `${target}=${usernameVariable},${passwordVariable}`,
          };
        })
        .sort((a, b) => compareStrings(a.target, b.target));
      return { consumer, jobName: `.secretstore-${consumer}`, reads, registryLogins };
    });
  }

  /** The login script (the standalone file and the base job's `before_script`). */
  loginScript(): string {
    return renderCiLoginScript({
      roleName: this.role.roleName,
      authPath: this.authPath,
      audience: this.audience,
      idTokenVariable: CI_ID_TOKEN_VARIABLE,
      registryLoginCommand: this.registryLoginCommand,
      baseJobName: CI_LOGIN_BASE_JOB,
      namespace: SecretStoreStack.of(this).settings.namespace,
    });
  }

  /** The GitLab CI file ({@link renderGitlabCiTemplate}). */
  gitlabCiYaml(): string {
    return renderGitlabCiTemplate({
      fileName: CI_TEMPLATE_FILE,
      templatePath: this.templatePath,
      roleName: this.role.roleName,
      audience: this.audience,
      registryLoginCommand: this.registryLoginCommand,
      loginScript: this.loginScript(),
      jobs: this.jobTemplates(),
      unreadable: this.declarations().unreadable.map(({ construct, secret }) => ({
        policyPath: secret.path.policyPath,
        source: construct.node.path,
        consumers: secret.consumers,
      })),
    });
  }

  /** The CI template and the standalone login script. */
  artifacts(): SynthesisArtifact[] {
    return [
      { path: this.templatePath, content: this.gitlabCiYaml() },
      { path: this.scriptPath, content: this.loginScript(), mode: 0o755 },
    ];
  }

  private readonly checked: CheckedProps;

  private problems(): ValidationProblem[] {
    return this.checked.with(this.role ? this.valueProblems() : []);
  }

  private valueProblems(): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    if (!/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(this.directory) || this.directory.split('/').some((s) => s === '.' || s === '..')) {
      problems.push(new ValidationProblem('directory', this.directory, 'must be a relative path of plain segments'));
    }
    if (!LOGIN_COMMAND_PATTERN.test(this.registryLoginCommand)) {
      problems.push(
        new ValidationProblem('registryLoginCommand', this.registryLoginCommand, 'must be a command and plain arguments, e.g. "docker login" or "podman login"'),
      );
    }
    const { readable } = this.declarations();
    const logicalPaths = new Set(readable.map((d) => d.secret.path.logical));
    for (const [logical, variable] of Object.entries(this.readWhenSet)) {
      if (!logicalPaths.has(logical)) {
        problems.push(new ValidationProblem(`readWhenSet.${logical}`, variable, `names no secret ${this.role.roleName} may read`));
      }
      if (!VARIABLE_PATTERN.test(variable)) {
        problems.push(new ValidationProblem(`readWhenSet.${logical}`, variable, 'must be an upper-case variable name'));
      }
    }
    for (const logical of Object.keys(this.variablePrefixes)) {
      if (!logicalPaths.has(logical)) {
        problems.push(new ValidationProblem(`variablePrefixes.${logical}`, this.variablePrefixes[logical], `names no secret ${this.role.roleName} may read`));
      }
    }
    const byPrefix = new Map<string, ReadableDeclaration>();
    for (const d of readable) {
      const field = `variable prefix of ${d.secret.path.logical}`;
      if (!VARIABLE_PATTERN.test(d.prefix)) {
        problems.push(new ValidationProblem(field, d.prefix, 'must be upper-case letters, digits and "_", not starting with a digit (set variablePrefixes)'));
      }
      const reserved = RESERVED_VARIABLE_PREFIXES.find((r) => `${d.prefix}_`.startsWith(r));
      if (reserved) {
        problems.push(new ValidationProblem(field, d.prefix, `must not start with ${reserved}: those variables belong to the CI system or the store clients`));
      }
      const first = byPrefix.get(d.prefix);
      if (first) {
        problems.push(
          new ValidationProblem(field, d.prefix, `is also the prefix of ${first.secret.path.logical} (${first.construct.node.path}): set variablePrefixes`),
        );
      } else {
        byPrefix.set(d.prefix, d);
      }
      const upper = d.secret.keys.map((k) => k.toUpperCase());
      const clash = upper.filter((k, i) => upper.indexOf(k) !== i);
      if (clash.length > 0) {
        problems.push(new ValidationProblem(`keys of ${d.secret.path.logical}`, d.secret.keys, `export the same variable ${d.prefix}_${clash[0]}`));
      }
    }
    for (const job of this.jobTemplates()) {
      const targets = job.registryLogins.map((l) => l.target);
      const dup = targets.find((t, i) => targets.indexOf(t) !== i);
      if (dup) {
        problems.push(
          new ValidationProblem(`consumers`, job.consumer, `reads two accounts that log in at ${dup}: one registry login per host and port`),
        );
      }
    }
    return problems;
  }
}

