import { Construct } from 'constructs';
import { AgentEnvTemplate } from './agent-env-template';
import { AppRoleApplication } from './approle-application';
import { Duration } from './model/duration';
import { ValidationProblem } from './model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';

/** Where the agent finds and writes its files, inside the agent's container. */
export interface AgentPaths {
  /**
   * The agent configuration itself (`bao agent -config=<this>`).
   * @default '/secretstore/config/agent.hcl'
   */
  readonly configFile?: string;
  /**
   * The template the agent renders.
   * @default '/secretstore/config/env.ctmpl'
   */
  readonly templateFile?: string;
  /**
   * Role ID file the AppRole auto-auth reads (written by the entrypoint from `SECRETSTORE_ROLE_ID`).
   * @default '/secretstore/auth/role-id'
   */
  readonly roleIdFile?: string;
  /**
   * Secret ID file the AppRole auto-auth reads and then removes (written by the entrypoint from
   * `SECRETSTORE_SECRET_ID`). Keep its directory on a tmpfs.
   * @default '/secretstore/auth/secret-id'
   */
  readonly secretIdFile?: string;
  /**
   * The rendered environment file (spec §2.4).
   * @default '/secretstore/secrets/.env'
   */
  readonly envFile?: string;
}

/** Properties of {@link AgentConfigurations}. */
export interface AgentConfigurationsProps {
  /**
   * The applications whose agents to configure; those without declared secrets are skipped.
   * @default every AppRoleApplication of the enclosing stack, including those declared later, so that
   * adding an application is still one instantiation
   */
  readonly applications?: readonly AppRoleApplication[];
  /**
   * Directory below the synthesis output that receives one sub-directory per application role.
   * @default 'agents'
   */
  readonly outputDirectory?: string;
  /** Paths inside the agent's container. */
  readonly paths?: AgentPaths;
  /**
   * How often the agent re-reads the (non-leased) KV secrets and re-renders the file when they changed
   * (`template_config.static_secret_render_interval`).
   * @default Duration.minutes(5)
   */
  readonly secretRefreshInterval?: Duration;
  /**
   * Exit when a login fails instead of retrying with backoff (`exit_on_err`), and when a template
   * cannot be rendered (`exit_on_retry_failure`): an invalid Role ID / Secret ID then stops the agent
   * container at once with the reason in its log (spec §7), rather than leaving the application
   * waiting for an env file that never comes.
   * @default true
   */
  readonly exitOnError?: boolean;
  /**
   * Store address written into the configuration (`vault { address }`). Without it the agent takes
   * `BAO_ADDR` / `VAULT_ADDR`, which the entrypoint sets from `SECRETSTORE_ADDR`.
   * @default none
   */
  readonly storeAddress?: string;
}

/** Resolved {@link AgentPaths}. */
export type ResolvedAgentPaths = Required<AgentPaths>;

const DEFAULT_PATHS: ResolvedAgentPaths = {
  configFile: '/secretstore/config/agent.hcl',
  templateFile: '/secretstore/config/env.ctmpl',
  roleIdFile: '/secretstore/auth/role-id',
  secretIdFile: '/secretstore/auth/secret-id',
  envFile: '/secretstore/secrets/.env',
};

/** File names below `<outputDirectory>/<role>/`. */
export const AGENT_ARTIFACT_FILES = { config: 'agent.hcl', template: 'env.ctmpl', entrypoint: 'entrypoint.sh' } as const;

const SAFE_PATH = /^\/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$/;
const SAFE_RELATIVE = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/** Text as an HCL (and JSON) string literal. */
function hclString(s: string): string {
  return JSON.stringify(s);
}

/**
 * The sidecar agents of the applications (spec §4.1 flow 2, §2.4). For every application that declares
 * secrets, synthesis writes to `<outputDirectory>/<role>/`:
 * - `agent.hcl`: `bao agent` configuration: AppRole auto-auth from the Role ID and Secret ID files,
 *   the Secret ID file removed after reading; one template rendering the declared keys to the env file
 *   with mode 0600, missing keys being an error; KV secrets re-read every `secretRefreshInterval`.
 * - `env.ctmpl`: the template ({@link AgentEnvTemplate}).
 * - `entrypoint.sh`: the agent container's entrypoint: turns the provisioned `SECRETSTORE_ROLE_ID` /
 *   `SECRETSTORE_SECRET_ID` (the env file of spec §4.1 flow 3) into the two files, maps
 *   `SECRETSTORE_ADDR` to `BAO_ADDR`, and runs the agent.
 *
 * Token renewal: the agent renews its token by itself (its lifetime watcher), at about two thirds of
 * the remaining lease: with the 12h TTL after roughly 8h, again until the 24h max TTL, then it logs in
 * again with the Secret ID it keeps in memory. `bao agent` has no setting for that interval, so the
 * application's `renewalInterval` (45m) is not a knob of these files; see docs/operators.md.
 *
 * None of the files holds a secret.
 */
export class AgentConfigurations extends Construct implements IArtifactSource {
  private readonly declaredApplications?: readonly AppRoleApplication[];
  /** Directory below the synthesis output. */
  readonly outputDirectory: string;
  /** Paths inside the agent's container. */
  readonly paths: ResolvedAgentPaths;
  /** KV re-read interval. */
  readonly secretRefreshInterval: Duration;
  /** Whether the agent exits on login and render failures. */
  readonly exitOnError: boolean;
  /** Store address in the configuration, if any. */
  readonly storeAddress?: string;

  constructor(scope: Construct, id: string, props: AgentConfigurationsProps = {}) {
    super(scope, id);
    this.declaredApplications = props.applications;
    this.outputDirectory = props.outputDirectory ?? 'agents';
    this.paths = { ...DEFAULT_PATHS, ...(props.paths ?? {}) };
    this.secretRefreshInterval = props.secretRefreshInterval ?? Duration.minutes(5);
    this.exitOnError = props.exitOnError ?? true;
    this.storeAddress = props.storeAddress;
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /** Every candidate application: the given list, or the stack's applications at the time of asking. */
  private get candidates(): readonly AppRoleApplication[] {
    return (
      this.declaredApplications ??
      SecretStoreStack.of(this)
        .node.findAll()
        .filter((c): c is AppRoleApplication => c instanceof AppRoleApplication)
    );
  }

  /** The configured applications (those that declare secrets). */
  get applications(): readonly AppRoleApplication[] {
    return this.candidates.filter((a) => a.secrets.length > 0);
  }

  /** Applications skipped because they declare no secrets: their env file would be empty (spec §7). */
  get skipped(): readonly AppRoleApplication[] {
    return this.candidates.filter((a) => a.secrets.length === 0);
  }

  /** Directory of one application's files, relative to the synthesis output. */
  directoryOf(app: AppRoleApplication): string {
    return `${this.outputDirectory}/${app.roleName}`;
  }

  /** The env template of one application. */
  templateOf(app: AppRoleApplication): AgentEnvTemplate {
    return new AgentEnvTemplate(app.roleName, app.secrets);
  }

  /** The `bao agent` configuration of one application. */
  agentConfig(app: AppRoleApplication): string {
    const p = this.paths;
    const mountPath = `auth/${app.authPath}`;
    const lines = [
      `# bao agent configuration of AppRole ${app.roleName} (spec §4.1 flow 2, §2.4).`,
      '# Generated by secretstore-iac; holds no secret. Started by entrypoint.sh:',
      `#   bao agent -config=${p.configFile}`,
      `# Token renewal: automatic (lifetime watcher), at about 2/3 of the remaining lease: about ${Duration.seconds(
        Math.floor((app.tokenTtl.toSeconds() * 2) / 3),
      )} into the ${app.tokenTtl} TTL; declared interval ${app.renewalInterval} (not settable in bao agent, see docs/operators.md).`,
      '',
    ];
    if (this.storeAddress !== undefined) {
      lines.push('vault {', `  address = ${hclString(this.storeAddress)}`, '}', '');
    }
    lines.push(
      'auto_auth {',
      '  method "approle" {',
      `    mount_path  = ${hclString(mountPath)}`,
      `    exit_on_err = ${this.exitOnError}`,
      '    config = {',
      `      role_id_file_path                   = ${hclString(p.roleIdFile)}`,
      `      secret_id_file_path                 = ${hclString(p.secretIdFile)}`,
      '      remove_secret_id_file_after_reading = true',
      '    }',
      '  }',
      '}',
      '',
      'template_config {',
      `  static_secret_render_interval = ${hclString(this.secretRefreshInterval.toString())}`,
      `  exit_on_retry_failure         = ${this.exitOnError}`,
      '}',
      '',
      'template {',
      `  source               = ${hclString(p.templateFile)}`,
      `  destination          = ${hclString(p.envFile)}`,
      '  perms                = "0600"',
      '  error_on_missing_key = true',
      '}',
    );
    return `${lines.join('\n')}\n`;
  }

  /** The agent container's entrypoint of one application (POSIX sh). */
  entrypoint(app: AppRoleApplication): string {
    const p = this.paths;
    const dirs = [...new Set([p.roleIdFile, p.secretIdFile].map((f) => f.slice(0, f.lastIndexOf('/')) || '/'))];
    return [
      '#!/bin/sh',
      `# Entrypoint of the agent container of AppRole ${app.roleName} (generated by secretstore-iac; holds no secret).`,
      '# The container definition references the provisioned env file (secretstore-iac provision, spec §4.1 flow 3),',
      '# so SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID arrive in the environment; the agent reads them from files.',
      '# SECRETSTORE_AGENT_BINARY overrides the agent binary (default: bao).',
      'set -eu',
      'fail() { echo "secretstore agent: $*" >&2; exit 78; }',
      '[ -n "${SECRETSTORE_ROLE_ID:-}" ] || fail "SECRETSTORE_ROLE_ID is not set: provision the host (secretstore-iac provision) and reference its env file in the container definition"',
      '[ -n "${SECRETSTORE_SECRET_ID:-}" ] || fail "SECRETSTORE_SECRET_ID is not set: provision the host (secretstore-iac provision) and reference its env file in the container definition"',
      'if [ -z "${BAO_ADDR:-}${VAULT_ADDR:-}" ] && [ -n "${SECRETSTORE_ADDR:-}" ]; then export BAO_ADDR="$SECRETSTORE_ADDR"; fi',
      ...(this.storeAddress === undefined
        ? [
            '[ -n "${BAO_ADDR:-}${VAULT_ADDR:-}" ] || fail "SECRETSTORE_ADDR is unset or empty (nor BAO_ADDR / VAULT_ADDR): define the store address for the agent container"',
          ]
        : []),
      'umask 077',
      `mkdir -p ${dirs.join(' ')}`,
      `printf '%s' "$SECRETSTORE_ROLE_ID" > ${p.roleIdFile}`,
      `printf '%s' "$SECRETSTORE_SECRET_ID" > ${p.secretIdFile}`,
      'unset SECRETSTORE_ROLE_ID SECRETSTORE_SECRET_ID',
      `exec "\${SECRETSTORE_AGENT_BINARY:-bao}" agent -config=${p.configFile}`,
      '',
    ].join('\n');
  }

  /** Three files per configured application. */
  artifacts(): SynthesisArtifact[] {
    return this.applications.flatMap((app) => {
      const dir = this.directoryOf(app);
      return [
        { path: `${dir}/${AGENT_ARTIFACT_FILES.config}`, content: this.agentConfig(app), mode: 0o644 },
        { path: `${dir}/${AGENT_ARTIFACT_FILES.template}`, content: this.templateOf(app).render(), mode: 0o644 },
        { path: `${dir}/${AGENT_ARTIFACT_FILES.entrypoint}`, content: this.entrypoint(app), mode: 0o755 },
      ];
    });
  }

  private problems(): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    if (!SAFE_RELATIVE.test(this.outputDirectory) || this.outputDirectory.split('/').some((s) => s === '.' || s === '..')) {
      problems.push(
        new ValidationProblem('outputDirectory', this.outputDirectory, 'must be a relative path of letters, digits, ".", "_", "-", without "." or ".." segments'),
      );
    }
    for (const [field, value] of Object.entries(this.paths)) {
      if (!SAFE_PATH.test(value) || value.split('/').some((s) => s === '.' || s === '..')) {
        problems.push(
          new ValidationProblem(`paths.${field}`, value, 'must be an absolute file path of letters, digits, ".", "_", "-" and "/", without "." or ".." segments'),
        );
      }
    }
    const files = Object.entries(this.paths);
    files.forEach(([field, value], i) => {
      const other = files.slice(0, i).find(([, v]) => v === value);
      if (other) problems.push(new ValidationProblem(`paths.${field}`, value, `is also paths.${other[0]}`));
    });
    if (!this.secretRefreshInterval.isValid || this.secretRefreshInterval.toSeconds() === 0) {
      problems.push(new ValidationProblem('secretRefreshInterval', this.secretRefreshInterval.toString(), 'must be a positive whole number of seconds'));
    }
    if (this.storeAddress !== undefined && !/^https?:\/\/[^\s/"\\]+(\/[^\s"\\]*)?$/.test(this.storeAddress)) {
      problems.push(new ValidationProblem('storeAddress', this.storeAddress, 'must be an http(s) URL such as https://secrets.example:8200'));
    }
    for (const app of this.applications) {
      problems.push(
        ...this.templateOf(app)
          .problems()
          .map((p) => new ValidationProblem(`applications["${app.roleName}"].${p.field}`, p.value, p.rule)),
      );
    }
    return problems;
  }
}
