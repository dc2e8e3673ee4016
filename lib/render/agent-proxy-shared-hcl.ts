import { hclString } from './text-encoders';

/**
 * The configuration blocks the store's agent (`bao agent` / `vault agent`) and its proxy
 * (`bao proxy` / `vault proxy`) read alike: both parse them with the same code (OpenBao v2.4.0
 * `command/agentproxyshared`; `command/agent/config` and `command/proxy/config` accept the same
 * `vault`, `auto_auth`, `api_proxy` and `listener` blocks), so `agent.hcl` and `proxy.hcl` are
 * written from these lines.
 */

/** The AppRole login of `auto_auth`: from the Role ID and Secret ID files, the latter removed after reading. */
export interface AppRoleAutoAuth {
  /** Mount path of the AppRole method (`auth/approle`). */
  readonly mountPath: string;
  /**
   * Namespace to log in to; the agent also renders its templates there (OpenBao's and Vault's agent
   * take the method's namespace for the template reads when `VAULT_NAMESPACE` is unset).
   */
  readonly namespace?: string;
  /** `exit_on_err`: exit when a login fails instead of retrying with backoff. */
  readonly exitOnError: boolean;
  /** Role ID file. */
  readonly roleIdFile: string;
  /** Secret ID file, removed after reading. */
  readonly secretIdFile: string;
}

/** `vault { address }`, then a blank line; nothing when the address is undefined (the process takes `BAO_ADDR` / `VAULT_ADDR`). */
export function storeAddressLines(address: string | undefined): string[] {
  return address === undefined ? [] : ['vault {', `  address = ${hclString(address)}`, '}', ''];
}

/** `auto_auth` with `method "approle"`; no sink, so no token is written to disk. */
export function appRoleAutoAuthLines(auth: AppRoleAutoAuth): string[] {
  return [
    'auto_auth {',
    '  method "approle" {',
    `    mount_path  = ${hclString(auth.mountPath)}`,
    ...(auth.namespace ? [`    namespace   = ${hclString(auth.namespace)}`] : []),
    `    exit_on_err = ${auth.exitOnError}`,
    '    config = {',
    `      role_id_file_path                   = ${hclString(auth.roleIdFile)}`,
    `      secret_id_file_path                 = ${hclString(auth.secretIdFile)}`,
    '      remove_secret_id_file_after_reading = true',
    '    }',
    '  }',
    '}',
  ];
}

/**
 * `api_proxy { use_auto_auth_token = true }` and one `listener "tcp"` on `127.0.0.1:<port>`: a request
 * without a token gets the process's auto-auth token (one with a token keeps its own), and a request
 * without `X-Vault-Request: true` is refused (412), so a browser page cannot use the listener.
 */
export function tokenAddingListenerLines(port: number): string[] {
  return [
    'api_proxy {',
    '  use_auto_auth_token = true',
    '}',
    '',
    'listener "tcp" {',
    `  address                = "127.0.0.1:${port}"`,
    '  tls_disable            = true',
    '  require_request_header = true',
    '}',
  ];
}
