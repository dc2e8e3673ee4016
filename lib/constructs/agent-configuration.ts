import { Construct } from 'constructs';
import { AgentEnvTemplate } from '../render/agent-env-template';
import { AppRoleApplication } from './approle-application';
import { Duration } from '../model/duration';
import { ValidationProblem } from '../model/validation-problem';
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
  /**
   * Make the application's `renewalInterval` real (spec §4.1 flow 2 step 4): `agent.hcl` gets an API
   * proxy listener on `127.0.0.1:<proxyPort>` that adds the agent's own token to requests
   * (`api_proxy { use_auto_auth_token = true }`, `listener "tcp"` with `require_request_header`), and
   * `entrypoint.sh` POSTs `auth/token/renew-self` to it every `renewalInterval` (curl, else wget, else
   * the `bao` CLI), logging the HTTP status only. No token is written to disk, held by the script or
   * logged.
   *
   * Exposure: the listener serves any process that can reach 127.0.0.1 in the agent container's network
   * namespace (in a Kubernetes pod or a container sharing the namespace: the application too). Such a
   * process can act with the agent's token and can obtain the token itself (e.g. with a response-wrapped
   * request); see docs/operators.md.
   *
   * When false: no listener and no loop; the agent's lifetime watcher alone renews the token, at about
   * two thirds of the lease.
   * @default true
   */
  readonly renewalLoop?: boolean;
  /**
   * Loopback port of the agent's API proxy listener (with `renewalLoop`).
   * @default 8100
   */
  readonly proxyPort?: number;
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
 * again with the Secret ID it keeps in memory. `bao agent` has no setting for that interval; with
 * `renewalLoop` (the default) the entrypoint adds the spec's renewal every `renewalInterval` (45m)
 * through the agent's loopback API proxy, which adds the token; see docs/operators.md.
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
  /** Whether the agent opens its loopback API proxy and the entrypoint renews every `renewalInterval`. */
  readonly renewalLoop: boolean;
  /** Loopback port of the API proxy listener. */
  readonly proxyPort: number;

  constructor(scope: Construct, id: string, props: AgentConfigurationsProps = {}) {
    super(scope, id);
    this.declaredApplications = props.applications;
    this.outputDirectory = props.outputDirectory ?? 'agents';
    this.paths = { ...DEFAULT_PATHS, ...(props.paths ?? {}) };
    this.secretRefreshInterval = props.secretRefreshInterval ?? Duration.minutes(5);
    this.exitOnError = props.exitOnError ?? true;
    this.storeAddress = props.storeAddress;
    this.renewalLoop = props.renewalLoop ?? true;
    this.proxyPort = props.proxyPort ?? 8100;
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
    const watcher = Duration.seconds(Math.floor((app.tokenTtl.toSeconds() * 2) / 3));
    const lines = [
      `# bao agent configuration of AppRole ${app.roleName} (spec §4.1 flow 2, §2.4).`,
      '# Generated by secretstore-iac; holds no secret. Started by entrypoint.sh:',
      `#   bao agent -config=${p.configFile}`,
      ...(this.renewalLoop
        ? [
            `# Token renewal: every ${app.renewalInterval} (${app.renewalInterval.toSeconds()} s) entrypoint.sh POSTs auth/token/renew-self to the API proxy`,
            `# below (127.0.0.1:${this.proxyPort}), which adds this agent's token; the agent's lifetime watcher also renews, about`,
            `# ${watcher} into the ${app.tokenTtl} TTL. Any process in this container's network namespace can use (and obtain) the`,
            '# token through that listener: see docs/operators.md.',
          ]
        : [
            `# Token renewal: automatic (lifetime watcher), at about 2/3 of the remaining lease: about ${watcher} into the ${app.tokenTtl} TTL; declared interval ${app.renewalInterval} (not settable in bao agent, see docs/operators.md).`,
          ]),
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
    if (this.renewalLoop) {
      lines.push(
        '',
        '# Loopback API proxy for the renew-self loop of entrypoint.sh: requests without a token get the agent\'s.',
        'api_proxy {',
        '  use_auto_auth_token = true',
        '}',
        '',
        'listener "tcp" {',
        `  address                = "127.0.0.1:${this.proxyPort}"`,
        '  tls_disable            = true',
        '  require_request_header = true',
        '}',
      );
    }
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
      ...(this.renewalLoop ? this.renewalLoopLines(app) : []),
      `exec "\${SECRETSTORE_AGENT_BINARY:-bao}" agent -config=${p.configFile}`,
      '',
    ].join('\n');
  }

  /**
   * The entrypoint's renew-self loop (spec §4.1 flow 2 step 4), started in the background just before
   * the shell `exec`s the agent: the agent keeps the shell's pid (still PID 1 in a container, receiving
   * SIGTERM itself), the loop is its child and stops within a second after it. The loop POSTs to the
   * agent's loopback API proxy, which adds the token, so the loop never holds one; it logs the HTTP
   * status only, never a response body.
   */
  private renewalLoopLines(app: AppRoleApplication): string[] {
    const proxy = `http://127.0.0.1:${this.proxyPort}`;
    return [
      `# Spec §4.1 flow 2 step 4: every ${app.renewalInterval}, POST auth/token/renew-self to the agent's API proxy on ${proxy},`,
      '# which adds the agent\'s token (agent.hcl api_proxy): this script never holds a token. One log line per attempt,',
      '# the HTTP status only. The loop is a child of the agent (exec keeps this pid) and stops within 1 s after it.',
      `renew_every=${app.renewalInterval.toSeconds()}`,
      `renew_proxy=${proxy}`,
      'agent_pid=$$',
      'renew_self() {',
      '  if [ "$renew_with" = curl ]; then',
      `    curl -q -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Vault-Request: true' --max-time 60 "$renew_proxy/v1/auth/token/renew-self"`,
      '  elif [ "$renew_with" = wget ]; then',
      `    out=$(wget -S -O /dev/null --header 'X-Vault-Request: true' --post-data '' "$renew_proxy/v1/auth/token/renew-self" 2>&1)`,
      '    case $out in *"HTTP/"?.?" "[0-9][0-9][0-9]*) out=${out##*HTTP/?.? }; printf %s "${out%"${out#???}"}" ;; *) printf 000 ;; esac',
      '  elif out=$("$renew_with" write -f auth/token/renew-self 2>&1 >/dev/null); then',
      '    printf 200',
      '  else',
      '    case $out in *"Code: "[0-9][0-9][0-9]*) out=${out##*Code: }; printf %s "${out%"${out#???}"}" ;; *) printf 000 ;; esac',
      '  fi',
      '}',
      'renew_loop() {',
      '  set +e',
      '  # No token of the environment, no proxy, no ~/.vault-token, ~/.curlrc or ~/.wgetrc: the agent\'s proxy adds the token.',
      '  unset BAO_TOKEN VAULT_TOKEN BAO_AGENT_ADDR VAULT_AGENT_ADDR BAO_CONFIG_PATH VAULT_CONFIG_PATH http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY',
      '  export HOME=/nonexistent BAO_ADDR="$renew_proxy" VAULT_ADDR="$renew_proxy"',
      '  if command -v curl >/dev/null 2>&1; then renew_with=curl',
      '  elif command -v wget >/dev/null 2>&1; then renew_with=wget',
      '  else renew_with="${SECRETSTORE_AGENT_BINARY:-bao}"; fi',
      '  echo "secretstore agent: renew-self every $renew_every s through $renew_proxy with ${renew_with##*/}" >&2',
      '  waited=0',
      '  while sleep 1 && kill -0 "$agent_pid" 2>/dev/null; do',
      '    waited=$((waited + 1))',
      '    [ "$waited" -ge "$renew_every" ] || continue',
      '    waited=0',
      '    echo "secretstore agent: renew-self: HTTP $(renew_self)" >&2',
      '  done',
      '}',
      'renew_loop </dev/null &',
    ];
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
    if (!Number.isInteger(this.proxyPort) || this.proxyPort < 1 || this.proxyPort > 65535) {
      problems.push(new ValidationProblem('proxyPort', this.proxyPort, 'must be a TCP port, a whole number from 1 to 65535'));
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
