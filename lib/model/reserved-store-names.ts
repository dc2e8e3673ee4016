import { ValidationProblem } from './validation-problem';
import { StoreKind } from './store-target';
import { storePolicyName } from './store-policy-name';
import { goLowerCase } from './go-unicode';

/**
 * Policy names the store itself defines. `root` and `response-wrapping` cannot be written at all;
 * `default` can be written but never deleted, and it is attached to every token (a role named
 * `default` replaces what every token of the store may do, and destroying the stack cannot undo it).
 */
export const RESERVED_POLICY_NAMES: readonly string[] = ['default', 'response-wrapping', 'root'];

/**
 * Name of the live-store reader's policy that docs/adoption.md has an operator write by hand
 * (`bao policy write secretstore-iac-reader ...`): reserved for the construct that manages that
 * policy (LiveStoreReaderPolicy), since any other policy of that name overwrites it, or is
 * overwritten by it, at every apply.
 */
export const READER_POLICY_NAME = 'secretstore-iac-reader';

/** Kinds of mount: an auth method (`auth/<path>`) or a secrets engine (`<path>`). */
export type MountKind = 'auth' | 'secrets';

/**
 * Mount paths each store reserves, per kind of mount, as the stores refuse them (test/store/hardening
 * on both): an auth method cannot be mounted at `token` (the token method itself) on either store,
 * nor at `cubbyhole` or `identity` on OpenBao (HashiCorp Vault accepts those two); a secrets engine
 * not at `sys`, `identity`, `cubbyhole`, `audit` or `auth` on either. Declaring one fails at apply,
 * or for `token` replaces the store's own method (an AppRole mount there made apply delete every role).
 */
export const RESERVED_MOUNT_PATHS_BY_STORE: Readonly<Record<StoreKind, Readonly<Record<MountKind, readonly string[]>>>> = {
  openbao: { auth: ['cubbyhole', 'identity', 'token'], secrets: ['audit', 'auth', 'cubbyhole', 'identity', 'sys'] },
  vault: { auth: ['token'], secrets: ['audit', 'auth', 'cubbyhole', 'identity', 'sys'] },
};

/** Mount paths either store reserves: what is refused when the target store is not known. */
export const RESERVED_MOUNT_PATHS: Readonly<Record<MountKind, readonly string[]>> = {
  auth: [...new Set([...RESERVED_MOUNT_PATHS_BY_STORE.openbao.auth, ...RESERVED_MOUNT_PATHS_BY_STORE.vault.auth])].sort(),
  secrets: [...new Set([...RESERVED_MOUNT_PATHS_BY_STORE.openbao.secrets, ...RESERVED_MOUNT_PATHS_BY_STORE.vault.secrets])].sort(),
};

/** The reserved mount paths of a store kind, or of either store when `store` is undefined. */
export function reservedMountPaths(kind: MountKind, store?: StoreKind): readonly string[] {
  return store ? RESERVED_MOUNT_PATHS_BY_STORE[store][kind] : RESERVED_MOUNT_PATHS[kind];
}

/** True when `name` is one of the store's built-in policies, compared as the store compares policy names (trimmed, lower-cased). */
export function isReservedPolicyName(name: string): boolean {
  return RESERVED_POLICY_NAMES.includes(storePolicyName(name));
}

/**
 * True when the first segment of `path` is a mount path the store reserves for this kind.
 * @param store the target store; undefined: reserved by either store
 */
export function isReservedMountPath(path: string, kind: MountKind, store?: StoreKind): boolean {
  return reservedMountPaths(kind, store).includes(goLowerCase(path.split('/')[0]));
}

/**
 * The start of a reserved-name problem when the store files the name under another key than it is
 * written (`is "default" on the store (...), which `); empty when they are the same.
 */
function asTheStoreFilesIt(name: unknown, key: string | undefined): string {
  return key === undefined || key === name ? '' : `is ${JSON.stringify(key)} on the store (policy names are trimmed and lower-cased), which `;
}

/**
 * The problem of a policy named after one of the store's built-in policies (SSI-R9).
 * @param field the field that holds the name as declared (`name`)
 * @param name the name as declared
 * @param key the name as the store compares it, when it differs from `name`
 */
export function reservedPolicyNameProblem(field: string, name: unknown, key?: string): ValidationProblem {
  const onStore = asTheStoreFilesIt(name, key);
  return new ValidationProblem(
    field,
    name,
    `${onStore}is a built-in policy of the store (${RESERVED_POLICY_NAMES.join(', ')}): writing it would change what every token may do, or fail; choose another name`,
    'SSI-R9',
  );
}

/** The problem of a policy other than the live-store reader's that takes the reader's documented name (SSI-R9). */
export function reservedReaderPolicyNameProblem(field: string, name: unknown, key: string): ValidationProblem {
  const onStore = asTheStoreFilesIt(name, key);
  return new ValidationProblem(
    field,
    name,
    `${onStore}is the name of the live-store reader's policy that docs/adoption.md has operators write by hand: it is reserved for LiveStoreReaderPolicy (readerPolicy), since another policy of that name overwrites the operator's reader policy, or is overwritten by it, at every apply; choose another name`,
    'SSI-R9',
  );
}

/** The problem of a mount path the store reserves (SSI-R9); `store` as for {@link isReservedMountPath}. */
export function reservedMountProblem(field: string, path: string, kind: MountKind, store?: StoreKind): ValidationProblem {
  const what = kind === 'auth' ? 'for auth methods' : 'for secrets engines';
  return new ValidationProblem(
    field,
    path,
    `is reserved by the store ${what} (${reservedMountPaths(kind, store).join(', ')}): mounting there fails or replaces what the store itself serves; choose another path`,
    'SSI-R9',
  );
}

/**
 * The configuration pipeline roles' default names (docs/pipelines.md): their grants are named
 * `<role name>-<stack>` whatever the configuration of a given commit declares, since a change may
 * add, rename or retire the pipeline roles and the stacks together.
 */
export const DEFAULT_PIPELINE_ROLE_NAMES: readonly string[] = ['secretstore-iac-pipeline', 'secretstore-iac-plan'];

/**
 * The pipeline role name whose grants' name space `policyKey` (a policy name as the store compares it)
 * falls in: a name `<role name>-<anything>` is the grant of that role for the stack `<anything>`
 * (pipelineGrantPolicyName), for a stack of this synthesis or of any other commit, one it retires or
 * one a later change adds. Undefined when it is none.
 * @param roleKeys the role names, as the store compares them (the defaults and those the synthesis declares)
 */
export function pipelineGrantRoleOf(policyKey: string, roleKeys: readonly string[]): string | undefined {
  return roleKeys.find((r) => policyKey.startsWith(`${r}-`) && policyKey.length > r.length + 1);
}

/** The problem of a policy, other than a pipeline role's grant, named in a grant's name space (SSI-R9). */
export function reservedPipelineGrantNameProblem(field: string, name: unknown, key: string, role: string): ValidationProblem {
  const onStore = asTheStoreFilesIt(name, key);
  const stack = key.slice(role.length + 1);
  return new ValidationProblem(
    field,
    name,
    `${onStore}is the name of the configuration pipeline role ${JSON.stringify(role)}'s grant for a stack named ${JSON.stringify(stack)} (<role name>-<stack>, docs/pipelines.md §9): names beginning ${JSON.stringify(`${role}-`)} are reserved for those grants, since a change that retires or adds that stack would make this policy the pipeline role's grant, or the grant this policy (a retiring grant taken for a move into it gave the merge-request plan role this policy's secrets); choose another name (another application name or environment, another roleName)`,
    'SSI-R9',
  );
}

/** The problem of a policy, other than a configuration pipeline role's own, named like one of those roles (SSI-R9). */
export function reservedPipelineRoleNameProblem(field: string, name: unknown, key: string): ValidationProblem {
  const onStore = asTheStoreFilesIt(name, key);
  return new ValidationProblem(
    field,
    name,
    `${onStore}is the name of a configuration pipeline role's own policy (the role's name, docs/pipelines.md §9): reserved for that role whether or not this configuration declares it, since a change that adds or removes the pipeline would make this policy the role's, or the role's this policy; choose another name`,
    'SSI-R9',
  );
}
