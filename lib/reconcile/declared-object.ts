import { ReferenceResolver } from '../sources/terraform-reference';
import { compareStrings } from '../private/compare-strings';
import { readSynthOutput } from '../sources/synth-output';

/** Kinds of store object a stack declares. */
export type DeclaredObjectKind = 'auth-mount' | 'jwt-auth-mount' | 'jwt-role' | 'approle-role' | 'policy';

/** One store object declared by a stack resource, with how the engine imports it. */
export interface DeclaredObject {
  /** Declaring stack. */
  readonly stack: string;
  /** Resource address in the stack (`vault_policy.registry-ci_policy_FD942459`). */
  readonly address: string;
  /** Provider resource type. */
  readonly type: string;
  /** What it is. */
  readonly kind: DeclaredObjectKind;
  /** Where it lives on the store (`sys/auth/jwt`, `auth/jwt/role/registry-ci`, `sys/policies/acl/registry-ci`). */
  readonly storePath: string;
  /** The id `terraform import` / an `import` block takes for this resource type. */
  readonly importId: string;
  /** Mount path (mounts and roles). */
  readonly mount?: string;
  /** Role or policy name, or the mount path for mounts. */
  readonly name: string;
  /** Configured attributes, references resolved. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Construct path, when recorded. */
  readonly declaredAt?: string;
}

/**
 * The import id of each resource type, as the vault provider (5.x) parses it: a mount by its
 * path, a role by its full API path, a policy by its name.
 */
const TYPES: Readonly<Record<string, { kind: DeclaredObjectKind; locate: (f: Record<string, unknown>) => { mount?: string; name: string; storePath: string; importId: string } }>> = {
  vault_auth_backend: {
    kind: 'auth-mount',
    locate: (f) => {
      const p = trimSlashes(f.path ?? f.type);
      return { mount: p, name: p, storePath: `sys/auth/${p}`, importId: p };
    },
  },
  vault_jwt_auth_backend: {
    kind: 'jwt-auth-mount',
    locate: (f) => {
      const p = trimSlashes(f.path ?? 'jwt');
      return { mount: p, name: p, storePath: `sys/auth/${p}`, importId: p };
    },
  },
  vault_jwt_auth_backend_role: {
    kind: 'jwt-role',
    locate: (f) => {
      const m = trimSlashes(f.backend ?? 'jwt');
      const r = String(f.role_name);
      return { mount: m, name: r, storePath: `auth/${m}/role/${r}`, importId: `auth/${m}/role/${r}` };
    },
  },
  vault_approle_auth_backend_role: {
    kind: 'approle-role',
    locate: (f) => {
      const m = trimSlashes(f.backend ?? 'approle');
      const r = String(f.role_name);
      return { mount: m, name: r, storePath: `auth/${m}/role/${r}`, importId: `auth/${m}/role/${r}` };
    },
  },
  vault_policy: {
    kind: 'policy',
    locate: (f) => {
      const n = String(f.name).trim().toLowerCase();
      return { name: n, storePath: `sys/policies/acl/${n}`, importId: String(f.name) };
    },
  },
};

/**
 * Where an object of a resource type lives on the store and how it is imported, from its
 * attributes (a stack's resolved fields, or a plan's `before` values); undefined for a type the
 * reconciliation does not know.
 */
export function locateStoreObject(type: string, fields: Readonly<Record<string, unknown>>): { kind: DeclaredObjectKind; storePath: string; importId: string } | undefined {
  if (!Object.prototype.hasOwnProperty.call(TYPES, type)) return undefined;
  const { storePath, importId } = TYPES[type].locate(fields as Record<string, unknown>);
  return { kind: TYPES[type].kind, storePath, importId };
}

/** Resource types whose objects the reconciliation knows, sorted. */
export const RECONCILED_TYPES: readonly string[] = Object.keys(TYPES).sort();

/**
 * The store objects a synthesized output declares (mounts, JWT mounts, roles, policies), sorted
 * by stack and resource address; only `stack` when given.
 * @throws Error naming the stack when `stack` is not in the output, or a reference cannot be resolved
 */
export function readDeclaredObjects(dir: string, stack?: string): DeclaredObject[] {
  const stacks = readSynthOutput(dir);
  if (stack !== undefined && !stacks.some((s) => s.name === stack)) {
    throw new Error(`no stack "${stack}" in ${dir}: it has ${stacks.map((s) => s.name).join(', ') || 'no stacks'}`);
  }
  const out: DeclaredObject[] = [];
  for (const s of stacks) {
    if (stack !== undefined && s.name !== stack) continue;
    const resolver = new ReferenceResolver(s);
    for (const type of RECONCILED_TYPES) {
      for (const [id, block] of Object.entries(s.resources[type] ?? {})) {
        const address = `${type}.${id}`;
        const fields = Object.fromEntries(
          Object.entries(block)
            // Write-only attributes (`oidc_client_secret_wo`) name an ephemeral variable: the
            // store never returns them, so there is nothing to compare or import.
            .filter(([k]) => k !== '//' && !k.endsWith('_wo'))
            .map(([k, v]) => [k, resolver.resolve(v, `${address}.${k}`)]),
        );
        const meta = block['//'] as { metadata?: { path?: unknown } } | undefined;
        out.push({
          stack: s.name,
          address,
          type,
          kind: TYPES[type].kind,
          ...TYPES[type].locate(fields),
          fields,
          declaredAt: typeof meta?.metadata?.path === 'string' ? meta.metadata.path : undefined,
        });
      }
    }
  }
  return out.sort((a, b) => compareStrings(a.stack, b.stack) || compareStrings(a.address, b.address));
}

function trimSlashes(value: unknown): string {
  return String(value).replace(/^\/+|\/+$/g, '');
}
