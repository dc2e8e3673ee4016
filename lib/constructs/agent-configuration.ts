import { Construct } from 'constructs';
import { AgentRenewalLoop, renderAgentEntrypoint, StoreClientProcess } from '../render/agent-entrypoint';
import { AgentEnvTemplate } from '../render/agent-env-template';
import { renderAgentHcl } from '../render/agent-hcl';
import { renderProxyHcl } from '../render/proxy-hcl';
import { StoreCli } from '../model/store-target';
import { AppRoleApplication } from './approle-application';
import { ApplicationStacks } from './application-stacks';
import { Duration, DURATION_HINT } from '../model/duration';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';
import { httpUrlProblems } from '../model/http-url';
import {
  CheckedProps,
  expectArrayOf,
  expectBoolean,
  expectEnum,
  expectInstance,
  expectNumber,
  expectShape,
  expectString,
  optional,
  PropsSchema,
} from '../model/props-check';

/**
 * Which process serves an application's loopback API proxy: the store's agent (its `api_proxy`,
 * deprecated by both stores) or the store's proxy (`bao proxy` / `vault proxy`, a process of its own).
 */
export const API_PROXY_PROCESSES: readonly StoreClientProcess[] = ['agent', 'proxy'];

/** The run-time checks of {@link AgentConfigurationsProps}. */
export const AGENT_CONFIGURATIONS_SCHEMA: PropsSchema = {
  applications: optional(expectArrayOf(expectInstance(AppRoleApplication, 'an AppRoleApplication construct'), 'a list of AppRoleApplication constructs')),
  outputDirectory: optional(expectString),
  paths: optional(
    expectShape({
      configFile: optional(expectString),
      templateFile: optional(expectString),
      roleIdFile: optional(expectString),
      secretIdFile: optional(expectString),
      envFile: optional(expectString),
      proxyConfigFile: optional(expectString),
      proxyRoleIdFile: optional(expectString),
      proxySecretIdFile: optional(expectString),
    }),
  ),
  secretRefreshInterval: optional(expectInstance(Duration, DURATION_HINT)),
  exitOnError: optional(expectBoolean),
  storeAddress: optional(expectString),
  renewalLoop: optional(expectBoolean),
  proxyPort: optional(expectNumber),
  apiProxy: optional(expectEnum(API_PROXY_PROCESSES)),
};

/** Where the agent (and, with `apiProxy: 'proxy'`, the proxy) finds and writes its files, inside its container. */
export interface AgentPaths {
  /**
   * The agent configuration itself (`bao agent -config=<this>`, `vault agent` on Vault).
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
  /**
   * The proxy configuration (`bao proxy -config=<this>`, `vault proxy` on Vault), with `apiProxy: 'proxy'`.
   * @default '/secretstore/config/proxy.hcl'
   */
  readonly proxyConfigFile?: string;
  /**
   * Role ID file of the proxy's own AppRole auto-auth (written by proxy-entrypoint.sh), with
   * `apiProxy: 'proxy'`. Apart from the agent's, so that the two never race for one file when they
   * share a directory.
   * @default '/secretstore/proxy-auth/role-id'
   */
  readonly proxyRoleIdFile?: string;
  /**
   * Secret ID file of the proxy's AppRole auto-auth, removed after reading, with `apiProxy: 'proxy'`.
   * Keep its directory on a tmpfs.
   * @default '/secretstore/proxy-auth/secret-id'
   */
  readonly proxySecretIdFile?: string;
}

/** Properties of {@link AgentConfigurations}. */
export interface AgentConfigurationsProps {
  /**
   * The applications whose agents to configure; those without declared secrets are skipped.
   * @default every AppRoleApplication of the enclosing stack, including those declared later, so that
   * adding an application is still one instantiation; in an ApplicationStacks mount stack, also those
   * of its shard stacks
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
   * the store's CLI, `bao` or `vault`), logging the HTTP status only. No token is written to disk, held
   * by the script or logged. With `apiProxy: 'proxy'` the listener is the proxy's and the loop runs in
   * `proxy-entrypoint.sh`, renewing the proxy's token.
   *
   * Exposure: the listener serves any process that can reach 127.0.0.1 in the agent container's network
   * namespace (in a Kubernetes pod or a container sharing the namespace: the application too). Such a
   * process can act with the agent's token and can obtain the token itself (e.g. with a response-wrapped
   * request); see docs/operators.md.
   *
   * When false: no loop, and no listener unless `apiProxy` is `'proxy'`; the lifetime watcher alone
   * renews the token, at about two thirds of the lease.
   * @default true
   */
  readonly renewalLoop?: boolean;
  /**
   * Loopback port of the API proxy listener: the agent's (with `renewalLoop`) or the proxy's (with
   * `apiProxy: 'proxy'`).
   * @default 8100
   */
  readonly proxyPort?: number;
  /**
   * Which process serves the loopback API proxy on `127.0.0.1:<proxyPort>` that the renew-self loop,
   * and an application that talks to the store without a token of its own, use:
   * - `'agent'`: the agent's own API proxy (`api_proxy` and `listener` in `agent.hcl`), present only
   *   with `renewalLoop`. Both stores have announced its removal from the agent (OpenBao 2.4.0 and
   *   Vault 1.21.1 print a deprecation note at start when the agent has a listener).
   * - `'proxy'`: the store's proxy, `bao proxy` (OpenBao) or `vault proxy` (Vault), in a container of
   *   its own: synthesis also writes `proxy.hcl` (AppRole auto-auth from its own Role ID and Secret ID
   *   files, `api_proxy { use_auto_auth_token = true }`, the listener, no cache) and
   *   `proxy-entrypoint.sh` (which runs the renew-self loop with `renewalLoop`). The agent then only
   *   renders the env file: no listener in `agent.hcl`, and its token is renewed by its lifetime
   *   watcher. Agent and proxy log in separately with the same Role ID and Secret ID, so a Secret ID
   *   must allow two logins (`secretIdNumUses` 0 or at least 2).
   * @default 'agent' (the files of earlier releases, unchanged)
   */
  readonly apiProxy?: StoreClientProcess;
}

/** Resolved {@link AgentPaths}. */
export type ResolvedAgentPaths = Required<AgentPaths>;

const DEFAULT_PATHS: ResolvedAgentPaths = {
  configFile: '/secretstore/config/agent.hcl',
  templateFile: '/secretstore/config/env.ctmpl',
  roleIdFile: '/secretstore/auth/role-id',
  secretIdFile: '/secretstore/auth/secret-id',
  envFile: '/secretstore/secrets/.env',
  proxyConfigFile: '/secretstore/config/proxy.hcl',
  proxyRoleIdFile: '/secretstore/proxy-auth/role-id',
  proxySecretIdFile: '/secretstore/proxy-auth/secret-id',
};

/** File names below `<outputDirectory>/<role>/`; the proxy's two only with `apiProxy: 'proxy'`. */
export const AGENT_ARTIFACT_FILES = {
  config: 'agent.hcl',
  template: 'env.ctmpl',
  entrypoint: 'entrypoint.sh',
  proxyConfig: 'proxy.hcl',
  proxyEntrypoint: 'proxy-entrypoint.sh',
} as const;

/** One own, text field of a paths object. */
function ownPath(paths: AgentPaths, key: string): string | undefined {
  const value: unknown = Object.prototype.hasOwnProperty.call(paths, key) ? (paths as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

const SAFE_PATH = /^\/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$/;
const SAFE_RELATIVE = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/**
 * The sidecar agents of the applications (spec §4.1 flow 2, §2.4). For every application that declares
 * secrets, synthesis writes to `<outputDirectory>/<role>/`:
 * - `agent.hcl` ({@link renderAgentHcl}): the configuration of the target store's agent (`bao agent`,
 *   `vault agent`): AppRole auto-auth from the Role ID and Secret ID files,
 *   the Secret ID file removed after reading; one template rendering the declared keys to the env file
 *   with mode 0600, missing keys being an error; KV secrets re-read every `secretRefreshInterval`.
 * - `env.ctmpl`: the template ({@link AgentEnvTemplate}).
 * - `entrypoint.sh` ({@link renderAgentEntrypoint}): the agent container's entrypoint: turns the provisioned `SECRETSTORE_ROLE_ID` /
 *   `SECRETSTORE_SECRET_ID` (the env file of spec §4.1 flow 3) into the two files, maps
 *   `SECRETSTORE_ADDR` to `BAO_ADDR` and `VAULT_ADDR`, and runs the target store's agent (`bao` or `vault`).
 *
 * Token renewal: the agent renews its token by itself (its lifetime watcher), at about two thirds of
 * the remaining lease: with the 12h TTL after roughly 8h, again until the 24h max TTL, then it logs in
 * again with the Secret ID it keeps in memory. The agent has no setting for that interval; with
 * `renewalLoop` (the default) the entrypoint adds the spec's renewal every `renewalInterval` (45m)
 * through the agent's loopback API proxy, which adds the token; see docs/operators.md.
 *
 * With `apiProxy: 'proxy'` the loopback API proxy is the store's proxy instead (`bao proxy`,
 * `vault proxy`), in a container of its own: `proxy.hcl` ({@link renderProxyHcl}) and
 * `proxy-entrypoint.sh` join the three files, the renew-self loop moves to the proxy's entrypoint, and
 * the agent only renders the env file.
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
  /** Which process serves the loopback API proxy: the agent, or the store's proxy. */
  readonly apiProxy: StoreClientProcess;

  constructor(scope: Construct, id: string, props: AgentConfigurationsProps = {}) {
    super(scope, id);
    const checked = (this.checked = new CheckedProps(AGENT_CONFIGURATIONS_SCHEMA, props, true));
    this.declaredApplications = checked.value<readonly AppRoleApplication[] | undefined>('applications', undefined);
    this.outputDirectory = checked.value('outputDirectory', 'agents');
    // A paths object of the wrong type is reported; only its own, known fields are read.
    const paths = checked.value<AgentPaths>('paths', {});
    this.paths = Object.fromEntries(
      Object.entries(DEFAULT_PATHS).map(([k, v]) => [k, ownPath(paths, k) ?? v]),
    ) as ResolvedAgentPaths;
    this.secretRefreshInterval = checked.value('secretRefreshInterval', Duration.minutes(5));
    this.exitOnError = checked.value('exitOnError', true);
    this.storeAddress = checked.value<string | undefined>('storeAddress', undefined);
    this.renewalLoop = checked.value('renewalLoop', true);
    this.proxyPort = checked.value('proxyPort', 8100);
    this.apiProxy = checked.value<StoreClientProcess>('apiProxy', 'agent');
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /**
   * Every candidate application: the given list, or the stack's applications at the time of asking
   * (in an {@link ApplicationStacks} mount stack: also those of its shards).
   */
  private get candidates(): readonly AppRoleApplication[] {
    if (this.declaredApplications) return this.declaredApplications;
    const stack = SecretStoreStack.of(this);
    if (stack instanceof ApplicationStacks) return stack.allApplications();
    return stack.node.findAll().filter((c): c is AppRoleApplication => c instanceof AppRoleApplication);
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

  /** The renew-self loop of one application, when on (run by the process that serves the API proxy). */
  private renewalOf(app: AppRoleApplication): AgentRenewalLoop | undefined {
    return this.renewalLoop ? { interval: app.renewalInterval, proxyPort: this.proxyPort } : undefined;
  }

  /** The renew-self loop the entrypoint of `which` runs for one application, if any. */
  private renewalIn(which: StoreClientProcess, app: AppRoleApplication): AgentRenewalLoop | undefined {
    return which === this.apiProxy ? this.renewalOf(app) : undefined;
  }

  /** The target store's CLI, whose agent and proxy the files are for. */
  private cliOf(app: AppRoleApplication): StoreCli {
    return SecretStoreStack.of(app).settings.store.cli;
  }

  /** What the agent's and the proxy's configurations of one application both say: the store's CLI, the login, the address. */
  private loginOf(app: AppRoleApplication) {
    return {
      cli: this.cliOf(app),
      roleName: app.roleName,
      authPath: app.authPath,
      namespace: SecretStoreStack.of(app).settings.namespace,
      tokenTtl: app.tokenTtl,
      exitOnError: this.exitOnError,
      storeAddress: this.storeAddress,
    };
  }

  /** The agent configuration of one application ({@link renderAgentHcl}). */
  agentConfig(app: AppRoleApplication): string {
    return renderAgentHcl({
      ...this.loginOf(app),
      renewalInterval: app.renewalInterval,
      paths: this.paths,
      secretRefreshInterval: this.secretRefreshInterval,
      renewal: this.renewalIn('agent', app),
      separateProxy: this.apiProxy === 'proxy' ? { configFile: this.paths.proxyConfigFile, proxyPort: this.proxyPort } : undefined,
    });
  }

  /** The proxy configuration of one application, with `apiProxy: 'proxy'` ({@link renderProxyHcl}). */
  proxyConfig(app: AppRoleApplication): string {
    return renderProxyHcl({
      ...this.loginOf(app),
      paths: { configFile: this.paths.proxyConfigFile, roleIdFile: this.paths.proxyRoleIdFile, secretIdFile: this.paths.proxySecretIdFile },
      proxyPort: this.proxyPort,
      renewal: this.renewalIn('proxy', app),
    });
  }

  /** The agent container's entrypoint of one application, POSIX sh ({@link renderAgentEntrypoint}). */
  entrypoint(app: AppRoleApplication): string {
    return this.entrypointOf('agent', app);
  }

  /** The proxy container's entrypoint of one application, with `apiProxy: 'proxy'` ({@link renderAgentEntrypoint}). */
  proxyEntrypoint(app: AppRoleApplication): string {
    return this.entrypointOf('proxy', app);
  }

  private entrypointOf(which: StoreClientProcess, app: AppRoleApplication): string {
    const proxy = which === 'proxy';
    return renderAgentEntrypoint({
      process: which,
      roleName: app.roleName,
      configFile: proxy ? this.paths.proxyConfigFile : this.paths.configFile,
      roleIdFile: proxy ? this.paths.proxyRoleIdFile : this.paths.roleIdFile,
      secretIdFile: proxy ? this.paths.proxySecretIdFile : this.paths.secretIdFile,
      addressInConfiguration: this.storeAddress !== undefined,
      renewal: this.renewalIn(which, app),
      agentBinary: this.cliOf(app),
    });
  }

  /** Three files per configured application, five with `apiProxy: 'proxy'`. */
  artifacts(): SynthesisArtifact[] {
    return this.applications.flatMap((app) => {
      const dir = this.directoryOf(app);
      return [
        { path: `${dir}/${AGENT_ARTIFACT_FILES.config}`, content: this.agentConfig(app), mode: 0o644 },
        { path: `${dir}/${AGENT_ARTIFACT_FILES.template}`, content: this.templateOf(app).render(), mode: 0o644 },
        { path: `${dir}/${AGENT_ARTIFACT_FILES.entrypoint}`, content: this.entrypoint(app), mode: 0o755 },
        ...(this.apiProxy === 'proxy'
          ? [
              { path: `${dir}/${AGENT_ARTIFACT_FILES.proxyConfig}`, content: this.proxyConfig(app), mode: 0o644 },
              { path: `${dir}/${AGENT_ARTIFACT_FILES.proxyEntrypoint}`, content: this.proxyEntrypoint(app), mode: 0o755 },
            ]
          : []),
      ];
    });
  }

  private readonly checked: CheckedProps;

  /** The directory this construct writes alone (`<outputDirectory>/`): no other artifact may lie in it or over it. */
  exclusiveDirectories(): Readonly<Record<string, string>> {
    return { outputDirectory: this.outputDirectory };
  }

  private problems(): ValidationProblem[] {
    return this.checked.with(this.valueProblems());
  }

  private valueProblems(): ValidationProblem[] {
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
    if (this.storeAddress !== undefined) {
      problems.push(...httpUrlProblems('storeAddress', this.storeAddress, SecretStoreStack.of(this).settings.httpPolicy));
    }
    for (const app of this.applications) {
      if (this.apiProxy === 'proxy' && app.secretIdNumUses === 1) {
        problems.push(
          new ValidationProblem(
            `applications["${app.roleName}"].secretIdNumUses`,
            1,
            'allows one login per Secret ID, but with apiProxy "proxy" the agent and the proxy each log in with it: allow at least 2 (0: unlimited), or set apiProxy "agent"',
          ),
        );
      }
      problems.push(
        ...this.templateOf(app)
          .problems()
          .map((p) => new ValidationProblem(`applications["${app.roleName}"].${p.field}`, p.value, p.rule)),
      );
    }
    return problems;
  }
}
