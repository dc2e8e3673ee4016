import { ValidationProblem } from './validation-problem';

/**
 * Policy names the store itself defines. `root` and `response-wrapping` cannot be written at all;
 * `default` can be written but never deleted, and it is attached to every token (a role named
 * `default` replaces what every token of the store may do, and destroying the stack cannot undo it).
 */
export const RESERVED_POLICY_NAMES: readonly string[] = ['default', 'response-wrapping', 'root'];

/**
 * Mount paths the store reserves for its own engines and auth methods: `token` (the token auth
 * method, `auth/token/`), `sys`, `identity`, `cubbyhole`, and the `auth`/`audit` prefixes of the
 * system backend. Mounting over them either fails at apply or changes what the store itself does
 * (an AppRole mount at `token` makes the engine delete the roles of the existing mount).
 */
export const RESERVED_MOUNT_PATHS: readonly string[] = ['audit', 'auth', 'cubbyhole', 'identity', 'sys', 'token'];

/** True when `name` is one of the store's built-in policies. */
export function isReservedPolicyName(name: string): boolean {
  return RESERVED_POLICY_NAMES.includes(name.toLowerCase());
}

/** True when the first segment of `path` is a mount the store reserves. */
export function isReservedMountPath(path: string): boolean {
  return RESERVED_MOUNT_PATHS.includes(path.split('/')[0].toLowerCase());
}

/** The problem of a role (and so its policy) named after one of the store's built-in policies (SSI-R9). */
export function reservedPolicyNameProblem(name: string): ValidationProblem {
  return new ValidationProblem(
    'roleName',
    name,
    `is a built-in policy of the store (${RESERVED_POLICY_NAMES.join(', ')}): writing it would change what every token may do, or fail; choose another name`,
    'SSI-R9',
  );
}

/** The problem of a mount path the store reserves (SSI-R9). */
export function reservedMountProblem(field: string, path: string): ValidationProblem {
  return new ValidationProblem(
    field,
    path,
    `is reserved by the store (${RESERVED_MOUNT_PATHS.join(', ')}): mounting there fails or replaces what the store itself serves; choose another path`,
    'SSI-R9',
  );
}
