import { Duration } from '../model/duration';
import { TUNE_FIELD_NAMES } from '../model/auth-mount-tune';
import { DeclaredObject } from './declared-object';
import { LiveAuthMount, LiveMountTune } from './live-store-reader';
import { StoreCli } from '../model/store-target';
import { shellQuote } from '../private/shell-quote';
import { storeCliCommand } from './store-cli-command';

/**
 * What applying the declarations does with one differing attribute (vault provider 5.9.0):
 * - `replace`: the attribute is ForceNew: the mount, and every role under it with its Role IDs and
 *   Secret IDs, is deleted and created again (the plan check and `tf --refuse-replace` refuse it);
 * - `in-place`: the apply changes the store's value to the declared one;
 * - `kept`: the apply leaves the store's value (not declared, or not written by the provider).
 */
export type MountAttributeEffect = 'replace' | 'in-place' | 'kept';

/** One attribute of an auth mount on which the store and the declaration differ. */
export interface MountAttributeChange {
  /** `local`, `description`, `tune.default_lease_ttl`, ... */
  readonly attribute: string;
  /** The declared value as text (`false`, `"CI job tokens"`, `0 (system default)`). */
  readonly declared: string;
  /** The store's value as text. */
  readonly store: string;
  /** What the apply does with it. */
  readonly effect: MountAttributeEffect;
  /** The consequence and the declaration that keeps the store's value, in one sentence. */
  readonly consequence: string;
}

/**
 * Where the platform configuration declares a mount's attributes (for the advice): the field of
 * each attribute it lets you declare, and the construct. `description` and `tune` are undefined
 * where the configuration has no such setting (the people's OIDC mount: its description is the
 * library's, and it takes no tune settings), so the fix is a hand command, never a field that
 * belongs to another mount.
 */
interface MountDeclaration {
  readonly construct: string;
  readonly local: string;
  readonly description?: string;
  readonly tune?: string;
}

/** The mount's {@link MountDeclaration}: by resource type, and for a JWT method by its type (`oidc`: the people's mount). */
function declaredBy(o: DeclaredObject): MountDeclaration {
  if (o.type === 'vault_auth_backend') return { construct: 'AppRoleAuth', local: 'authMounts.approle.local', description: 'authMounts.approle.description', tune: 'authMounts.approle.tune' };
  if (o.type === 'vault_jwt_auth_backend' && o.fields.type === 'oidc') return { construct: 'OidcAuth', local: 'people.local' };
  if (o.type === 'vault_jwt_auth_backend') return { construct: 'CiJwtAuth', local: 'authMounts.jwt.local', description: 'authMounts.jwt.description', tune: 'authMounts.jwt.tune' };
  return { construct: 'the mount construct', local: 'the mount\'s `local`' };
}

/** The store's value of a tune setting that was never set (the provider's unset value means the same). */
const TUNE_DEFAULTS: Readonly<LiveMountTune> = {
  default_lease_ttl: 0,
  max_lease_ttl: 0,
  listing_visibility: 'hidden',
  token_type: 'default-service',
  audit_non_hmac_request_keys: [],
  audit_non_hmac_response_keys: [],
};

const TTL = new Set(['default_lease_ttl', 'max_lease_ttl']);

/** A tune value in comparable, readable form. */
function tuneText(field: string, value: unknown): string {
  if (TTL.has(field)) {
    const seconds = typeof value === 'number' ? value : Duration.parse(String(value)).toSeconds();
    return seconds === 0 ? '0 (system default)' : Duration.seconds(seconds).toString();
  }
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : [...value].map(String).sort().join(', ');
  if (field === 'listing_visibility' && value === '') return 'hidden';
  if (field === 'token_type' && value === '') return 'default-service';
  return String(value);
}

/** How to declare a tune value in the platform configuration (`Duration.parse('1h')`, `'unauth'`, `['role']`). */
function tuneDeclaration(field: string, value: unknown): string {
  if (TTL.has(field)) return `Duration.parse('${Duration.seconds(value as number).toString()}')`;
  if (Array.isArray(value)) return JSON.stringify(value);
  return JSON.stringify(field === 'listing_visibility' && value === '' ? 'hidden' : value);
}

/**
 * The attributes of a declared auth mount (`vault_auth_backend`, `vault_jwt_auth_backend`) that
 * differ on the store, each with what applying does: `local` (ForceNew: replacement), the
 * description, and every tune setting (in place when declared, kept when not). `seal_wrap` is not
 * compared: the provider neither declares nor changes it. Hand fixes name `cli`, the store's CLI
 * (the live store's, from `sys/seal-status`). A declared TTL changed on the store is changed back
 * by the apply only for a mount being imported (`options.imported`: the import reads it): the vault
 * provider (5.9.0) keeps the TTLs it wrote in its state and never reads them back from the store
 * (`mergeAuthMethodTune`), so for a mount in state the apply leaves the store's value (seen on OpenBao).
 */
export function mountAttributeChanges(
  o: DeclaredObject,
  mount: LiveAuthMount,
  cli: StoreCli = 'bao',
  options: { readonly imported?: boolean; readonly namespace?: string } = {},
): MountAttributeChange[] {
  const by = declaredBy(o);
  // Hand commands act on this mount in the namespace the stacks apply to.
  const tune = (...flags: string[]) => `\`${storeCliCommand({ cli, namespace: options.namespace }, 'auth tune', ...flags, `${o.name}/`)}\``;
  const out: MountAttributeChange[] = [];
  const declaredLocal = o.fields.local === true;
  if (declaredLocal !== mount.local) {
    out.push({
      attribute: 'local',
      declared: String(declaredLocal),
      store: String(mount.local),
      effect: 'replace',
      consequence:
        `forces a replacement: applying would delete ${o.name}/ and every role under it (Role IDs, Secret IDs) and mount it again; ` +
        `adopt's plan check and \`tf --refuse-replace\` refuse it (exit 4). Declare \`${by.local}: ${mount.local}\` (${by.construct} \`local\`) to keep the store's mount`,
    });
  }
  const declaredDescription = typeof o.fields.description === 'string' ? o.fields.description : '';
  if (declaredDescription !== mount.description) {
    const keep =
      by.description !== undefined
        ? `declare \`${by.description}: ${JSON.stringify(mount.description)}\` to keep the store's`
        : `the configuration has no description setting for this mount (${by.construct} gives its own)`;
    out.push({
      attribute: 'description',
      declared: JSON.stringify(declaredDescription),
      store: JSON.stringify(mount.description),
      ...(o.type === 'vault_jwt_auth_backend'
        ? {
            effect: 'kept' as const,
            consequence:
              'the apply does not change it: the vault provider (5.9.0) writes a JWT mount\'s description only when it creates the mount; ' +
              `set it back by hand (${tune(`-description=${shellQuote(declaredDescription)}`)})${by.description !== undefined ? ', or' : ';'} ${keep}`,
          }
        : { effect: 'in-place' as const, consequence: `the apply changes it in place (no replacement); ${keep}` }),
    });
  }
  const declaredTune = (Array.isArray(o.fields.tune) ? o.fields.tune[0] : o.fields.tune) as Record<string, unknown> | undefined;
  for (const [camel, field] of Object.entries(TUNE_FIELD_NAMES) as [string, keyof LiveMountTune][]) {
    const declared = declaredTune?.[field];
    const isDeclared = declared !== undefined && declared !== null;
    const want = tuneText(field, isDeclared ? declared : TUNE_DEFAULTS[field]);
    const have = tuneText(field, mount.tune[field]);
    if (want === have) continue;
    const declaration = by.tune !== undefined ? `\`${by.tune}.${camel}: ${tuneDeclaration(field, mount.tune[field])}\`` : undefined;
    // The provider never reads a TTL it wrote back from the store: a hand change stays (see above).
    const unseen = isDeclared && TTL.has(field) && options.imported !== true;
    // The CLI's flag for the declared value: `-max-lease-ttl=2h` (0: the system's default).
    // A list is reset flag by flag (`-audit-non-hmac-request-keys=KEY`, repeated): no one flag to write.
    const flag = `-${field.replace(/_/g, '-')}=${want === '(none)' ? '...' : want.startsWith('0 ') ? '0' : want}`;
    out.push({
      attribute: `tune.${field}`,
      declared: isDeclared ? want : `${want}, not declared`,
      store: have,
      effect: isDeclared && !unseen ? 'in-place' : 'kept',
      consequence: unseen
        ? 'the apply does not change it: the vault provider (5.9.0) keeps the TTL it wrote in its state and never reads it back from the store; ' +
          `set it back by hand (${tune(flag)}), or declare ${declaration} to keep the store's (the next apply writes that same value once)`
        : isDeclared
          ? `the apply changes it in place (tune, no replacement); declare ${declaration} to keep the store's`
          : declaration !== undefined
            ? `not declared, so the apply keeps the store's value; declare ${declaration} to manage it, or reset it by hand (${tune(flag)})`
            : `not declared (${by.construct} takes no tune settings), so the apply keeps the store's value; reset it by hand (${tune(flag)})`,
    });
  }
  return out;
}

/** One line per change: `attribute: declared X, store Y: consequence`. */
export function describeMountAttributeChange(c: MountAttributeChange): string {
  return `${c.attribute}: declared ${c.declared}, store ${c.store}: ${c.consequence}`;
}
