import { ValidationProblem } from './validation-problem';

/** Artifact formats of the registry (spec §2.1). */
export const REGISTRY_FORMATS = ['container-image', 'rpm', 'raw', 'pypi'] as const;

/** One registry artifact format. */
export type RegistryFormat = (typeof REGISTRY_FORMATS)[number];

/** One registry permission, `<format>:read` or `<format>:write` (`container-image:read` is a pull). */
export type RegistryPermission = `${RegistryFormat}:${'read' | 'write'}`;

/** How an account logs in to the registry for container images (spec §2.2). */
export type RegistryLoginKind = 'push' | 'pull';

/**
 * The set of registry permissions of one service account.
 *
 * The spec creates a new account only for a distinct scope, so the scope's {@link key} is what the
 * platform rules compare between accounts.
 */
export class RegistryPermissionScope {
  /** The permissions, unique and sorted. */
  readonly permissions: readonly string[];

  constructor(permissions: readonly string[]) {
    // Only text counts; the construct reports a list of the wrong type (a JSON config).
    this.permissions = [...new Set(Array.isArray(permissions) ? permissions.filter((p) => typeof p === 'string') : [])].sort();
  }

  /** Canonical text of the scope, equal for equal scopes. */
  get key(): string {
    return this.permissions.join(' ');
  }

  /** True when the scope holds `permission`. */
  has(permission: RegistryPermission): boolean {
    return this.permissions.includes(permission);
  }

  /**
   * The container-image login this scope needs: `push` with `container-image:write`, `pull` with
   * only `container-image:read`, none without container images (RPM, raw, PyPI use HTTP).
   */
  get loginKind(): RegistryLoginKind | undefined {
    if (this.has('container-image:write')) return 'push';
    if (this.has('container-image:read')) return 'pull';
    return undefined;
  }

  /** Problems: an empty scope or words that are not `<format>:read|write`. */
  problems(field = 'permissions'): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    if (this.permissions.length === 0) {
      problems.push(new ValidationProblem(field, [], 'must name at least one permission'));
    }
    for (const p of this.permissions) {
      const [format, access, extra] = p.split(':');
      if (extra !== undefined || !(REGISTRY_FORMATS as readonly string[]).includes(format) || !['read', 'write'].includes(access)) {
        problems.push(
          new ValidationProblem(
            field,
            p,
            `unknown permission: use <format>:read or <format>:write with format one of ${REGISTRY_FORMATS.join(', ')}`,
          ),
        );
      }
    }
    return problems;
  }
}
