import { StoreClient, StoreError } from './store-client';

/** The named application has no AppRole role on the mount. */
export class UnknownApplicationError extends Error {
  constructor(
    readonly roleName: string,
    readonly mount: string,
    /** Roles the mount has, when the token may list them. */
    readonly knownRoles?: readonly string[],
    /** The namespace asked (undefined: the root namespace). */
    readonly namespace?: string,
  ) {
    const where = namespace === undefined ? 'the root namespace' : `the namespace ${namespace}`;
    super(
      `unknown application "${roleName}": the store has no AppRole role "${roleName}" on the mount "${mount}" in ${where}` +
        (knownRoles === undefined
          ? ''
          : knownRoles.length === 0
            ? ` (the mount has no roles in ${where}, or is not mounted there)`
            : ` (roles on "${mount}": ${knownRoles.join(', ')})`) +
        '. Fix: name the application by its role name as declared (e.g. orchestrator-dev), pass --mount if the AppRole method is mounted elsewhere, ' +
        (knownRoles !== undefined && knownRoles.length === 0
          ? `set BAO_NAMESPACE (or VAULT_NAMESPACE) to the namespace the platform's stacks apply in (settings.namespace) if it is not ${where}, `
          : '') +
        'and apply the app-roles stack first',
    );
    this.name = 'UnknownApplicationError';
  }
}

/** A freshly generated Secret ID and its accessor (the accessor is not secret). */
export interface IssuedSecretId {
  readonly secretId: string;
  readonly accessor: string;
}

/** The outcome of an AppRole login with a Role ID and Secret ID pair (spec §5.4). */
export type AppRoleLoginResult =
  | {
      readonly valid: true;
      /** The role the pair belongs to. */
      readonly roleName?: string;
      readonly policies: readonly string[];
      readonly ttlSeconds: number;
      readonly renewable: boolean;
    }
  | {
      readonly valid: false;
      /** 400 or 403. */
      readonly status: number;
      /** The store's reason (`invalid role or secret ID`). */
      readonly reason: string;
    };

const ROLE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;
const MOUNT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9._-]+)*$/;

/** The problem with a `--mount` value, or undefined when it is a mount path. */
export function mountPathProblem(mount: string): string | undefined {
  return MOUNT_PATTERN.test(mount) ? undefined : `--mount "${mount}" is not a mount path such as approle`;
}

/** The problem with an application (role) name, or undefined when it is one. */
export function roleNameProblem(role: string): string | undefined {
  return ROLE_PATTERN.test(role) ? undefined : `"${role}" is not a role name: use the application's role as declared, e.g. orchestrator-dev`;
}

/**
 * The store calls of the operator commands on one AppRole mount (spec §4.1 flow 3, §5.3, §5.4, reference
 * §5): read a Role ID, generate, look up and destroy Secret IDs, and log in. Secret IDs and tokens pass
 * through memory only; nothing here prints or logs them.
 */
export class AppRoleOperator {
  /**
   * @param client store client with a privileged token (except for {@link login})
   * @param mount AppRole mount path (`approle`)
   */
  constructor(
    readonly client: StoreClient,
    readonly mount: string = 'approle',
  ) {
    const problem = mountPathProblem(mount);
    if (problem) throw new Error(problem);
  }

  private rolePath(role: string, suffix: string): string {
    const problem = roleNameProblem(role);
    if (problem) throw new Error(problem);
    return `auth/${this.mount}/role/${role}/${suffix}`;
  }

  /**
   * The role's Role ID (`GET auth/<mount>/role/<role>/role-id`).
   * @throws UnknownApplicationError when the role does not exist
   */
  async roleId(role: string): Promise<string> {
    try {
      const res = await this.client.request('GET', this.rolePath(role, 'role-id'));
      const roleId = res.body?.data?.role_id;
      if (typeof roleId !== 'string' || roleId === '') throw new StoreError('server-error', `the store returned no role_id for "${role}"`);
      return roleId;
    } catch (e) {
      // A missing role answers 404; a missing mount answers 404 (root) or 400 "no handler for route".
      if (e instanceof StoreError && (e.status === 404 || (e.status === 400 && /no handler for route/.test(e.message)))) {
        throw new UnknownApplicationError(role, this.mount, await this.listRoles(), this.client.namespace);
      }
      throw e;
    }
  }

  /** Role names on the mount, or undefined when the token may not list them. */
  async listRoles(): Promise<string[] | undefined> {
    try {
      const res = await this.client.request('GET', `auth/${this.mount}/role?list=true`);
      return Array.isArray(res.body?.data?.keys) ? res.body.data.keys.map(String).sort() : [];
    } catch (e) {
      if (e instanceof StoreError && e.status === 404) return [];
      return undefined;
    }
  }

  /**
   * A new Secret ID for the role (`POST auth/<mount>/role/<role>/secret-id`).
   * @param metadata string metadata stored with the Secret ID (visible to lookups and in the audit log)
   */
  async issueSecretId(role: string, metadata: Record<string, string> = {}): Promise<IssuedSecretId> {
    const res = await this.client.request('POST', this.rolePath(role, 'secret-id'), { metadata: JSON.stringify(metadata) });
    const secretId = res.body?.data?.secret_id;
    const accessor = res.body?.data?.secret_id_accessor;
    if (typeof secretId !== 'string' || typeof accessor !== 'string') {
      throw new StoreError('server-error', `the store returned no secret_id for "${role}"`);
    }
    return { secretId, accessor };
  }

  /**
   * The accessor of a Secret ID of the role (`POST .../secret-id/lookup`), or undefined when the store
   * does not know the Secret ID (expired, destroyed, or of another role).
   */
  async accessorOf(role: string, secretId: string): Promise<string | undefined> {
    try {
      const res = await this.client.request('POST', this.rolePath(role, 'secret-id/lookup'), { secret_id: secretId });
      const accessor = res.body?.data?.secret_id_accessor;
      return typeof accessor === 'string' && accessor !== '' ? accessor : undefined;
    } catch (e) {
      if (e instanceof StoreError && (e.status === 404 || (e.status === 400 && /invalid secret id/i.test(e.message)))) return undefined;
      throw e;
    }
  }

  /**
   * True when the mount answers like an AppRole method: a login without credentials gets 400
   * ("missing role_id"); a path where nothing is mounted gets 403 from a request without a token
   * (the store cannot tell "no such mount" from "not allowed" to an unauthenticated caller).
   */
  async isAppRoleMount(): Promise<boolean> {
    try {
      await this.client.request('POST', `auth/${this.mount}/login`, {}, null);
      return true;
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
      return e.status === 400 && !/no handler for route/.test(e.message);
    }
  }

  /** Destroys a Secret ID by its accessor (`POST .../secret-id-accessor/destroy`). */
  async destroySecretId(role: string, accessor: string): Promise<void> {
    await this.client.request('POST', this.rolePath(role, 'secret-id-accessor/destroy'), { secret_id_accessor: accessor });
  }

  /**
   * Logs in with a pair (`POST auth/<mount>/login`, no token) and revokes the token it got at once, so
   * a check leaves nothing behind. 400 and 403 mean the pair is invalid (spec §5.4); other failures throw.
   */
  async login(roleId: string, secretId: string): Promise<AppRoleLoginResult> {
    let res;
    try {
      res = await this.client.request('POST', `auth/${this.mount}/login`, { role_id: roleId, secret_id: secretId }, null);
    } catch (e) {
      if (e instanceof StoreError && (e.status === 400 || e.status === 403)) {
        if (/no handler for route/.test(e.message)) throw e;
        return { valid: false, status: e.status, reason: e.storeErrors.join('; ') || `HTTP ${e.status}` };
      }
      throw e;
    }
    const auth = res.body?.auth;
    if (typeof auth?.client_token !== 'string' || auth.client_token === '') {
      throw new StoreError('server-error', 'the login response carries no client_token');
    }
    try {
      await this.client.request('POST', 'auth/token/revoke-self', undefined, auth.client_token);
    } catch {
      // The token expires with its TTL anyway.
    }
    return {
      valid: true,
      roleName: auth.metadata?.role_name,
      policies: (auth.token_policies ?? auth.policies ?? []).map(String),
      ttlSeconds: Number(auth.lease_duration ?? 0),
      renewable: Boolean(auth.renewable),
    };
  }
}
