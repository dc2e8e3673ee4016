import { Duration } from '../model/duration';
import { commentText, shellWord } from './text-encoders';
import { readRenderAsset } from '../private/render-asset';
import { fillTemplate } from '../private/text-template';
import { StoreCli } from '../model/store-target';

/** The store's process a container runs: the agent (templating) or the proxy (the loopback API proxy). */
export type StoreClientProcess = 'agent' | 'proxy';

/** Why the entrypoint exports both address variables, as its comment says it for the store's CLI. */
const ADDRESS_NOTES: Readonly<Record<StoreCli, string>> = {
  bao: '`bao` reads BAO_ADDR (and VAULT_ADDR)',
  vault: '`vault` reads only VAULT_ADDR (without it, it dials https://127.0.0.1:8200)',
};

/** The renew-self loop of an agent (spec §4.1 flow 2 step 4): how often, through which proxy port. */
export interface AgentRenewalLoop {
  /** The application's `renewalInterval`. */
  readonly interval: Duration;
  /** Port of the loopback API proxy listener (`127.0.0.1:<port>`) of the agent or the proxy. */
  readonly proxyPort: number;
}

/** What the entrypoint of one application's agent or proxy container needs to know. */
export interface AgentEntrypointOptions {
  /**
   * The process the entrypoint runs: `<binary> agent` (entrypoint.sh) or `<binary> proxy` (proxy-entrypoint.sh).
   * @default 'agent'
   */
  readonly process?: StoreClientProcess;
  /** The application's AppRole, named in the header. */
  readonly roleName: string;
  /** The process's configuration (`<binary> agent|proxy -config=<this>`). */
  readonly configFile: string;
  /** Role ID file the entrypoint writes from `SECRETSTORE_ROLE_ID`. */
  readonly roleIdFile: string;
  /** Secret ID file the entrypoint writes from `SECRETSTORE_SECRET_ID`. */
  readonly secretIdFile: string;
  /**
   * The agent configuration holds the store address (`vault { address }`): no check that the
   * environment gives one.
   */
  readonly addressInConfiguration: boolean;
  /** The renew-self loop, started in the background just before the process; none when undefined. */
  readonly renewal?: AgentRenewalLoop;
  /**
   * The binary run unless `SECRETSTORE_AGENT_BINARY` says otherwise: the target store's CLI.
   * @default 'bao'
   */
  readonly agentBinary?: StoreCli;
}

/**
 * The template, `agent-entrypoint.sh` next to this module: a complete POSIX sh script (shellcheck
 * reads it as it is) with `@@NAME@@` placeholders and `#@if` sections.
 */
const ENTRYPOINT_TEMPLATE = readRenderAsset(__dirname, 'agent-entrypoint.sh');

/**
 * Renders the entrypoint of one application's agent container (`agents/<role>/entrypoint.sh`) or
 * proxy container (`agents/<role>/proxy-entrypoint.sh`), POSIX sh: turns the provisioned
 * `SECRETSTORE_ROLE_ID` / `SECRETSTORE_SECRET_ID` into the two files the AppRole auto-auth reads,
 * maps `SECRETSTORE_ADDR` to `BAO_ADDR` and `VAULT_ADDR` (`vault` reads only the latter), optionally
 * starts the renew-self loop, and `exec`s `<binary> agent` or `<binary> proxy`. The loop POSTs to the
 * process's loopback API proxy, which adds the token, so the script never holds one; it logs the HTTP
 * status only. Holds no secret.
 *
 * The file paths are shell words ({@link shellWord}): bare for the paths the construct admits
 * (letters, digits, `.`, `_`, `-` and `/`), quoted for anything else.
 */
export function renderAgentEntrypoint(options: AgentEntrypointOptions): string {
  const files = [options.roleIdFile, options.secretIdFile];
  const directories = [...new Set(files.map((f) => f.slice(0, f.lastIndexOf('/')) || '/'))];
  const renewal = options.renewal;
  const proxy = renewal ? `http://127.0.0.1:${renewal.proxyPort}` : '';
  const binary = options.agentBinary ?? 'bao';
  return fillTemplate(
    ENTRYPOINT_TEMPLATE,
    {
      ROLE_NAME: commentText(options.roleName),
      AUTH_DIRECTORIES: directories.map(shellWord).join(' '),
      ROLE_ID_FILE: shellWord(options.roleIdFile),
      SECRET_ID_FILE: shellWord(options.secretIdFile),
      CONFIG_FILE: shellWord(options.configFile),
      RENEWAL_INTERVAL: renewal ? renewal.interval.toString() : '',
      RENEWAL_SECONDS: renewal ? String(renewal.interval.toSeconds()) : '',
      PROXY_URL: proxy,
      AGENT_BINARY: binary,
      PROCESS: options.process ?? 'agent',
      ADDRESS_NOTE: ADDRESS_NOTES[binary],
    },
    { ADDRESS_FROM_ENVIRONMENT: !options.addressInConfiguration, RENEWAL_LOOP: renewal !== undefined },
    'agent-entrypoint.sh',
  );
}
