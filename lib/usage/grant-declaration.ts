import { SPEC_APPLICATIONS, SPEC_CI_SECRETS, SPEC_REGISTRY_ACCOUNTS } from '../model/spec-platform-declarations';

/**
 * A change of the `PlatformConfig` object literal that removes one declaration: `accounts.<name>.readByCi`
 * set to `false` (its `consumers` dropped, SSI-R8), a people group's `reads[<i>]` removed, or a
 * role that never logged in retired (`narrow --retire-idle`): the application `applications.<id>`
 * or the people group `people.groups.<name>` removed.
 */
export type ConfigEdit =
  | { readonly kind: 'account-not-read-by-ci'; readonly account: string }
  | { readonly kind: 'remove-group-read'; readonly group: string; readonly index: number }
  | { readonly kind: 'retire-application'; readonly application: string }
  | { readonly kind: 'retire-group'; readonly group: string };

/**
 * Where a configuration changes one grant of a rendered policy, told by the construct path the
 * library writes above the rule (`# ci-access/svc-executor`, lib/usage/rule-sources.ts): the
 * `PlatformConfig` field that declares it (`accounts.mirror.readByCi`), or, for the platform's own
 * declarations (the spec's accounts, CI secrets and applications, which the stacks declare
 * whatever the configuration says), that no field changes it. Fix texts name these, never a field
 * the configuration does not have.
 */
export interface GrantDeclaration {
  /** The construct path the rule's comment names. */
  readonly constructPath: string;
  /** The `PlatformConfig` field to change, dotted (`accounts.mirror.readByCi`); undefined when none declares it. */
  readonly field?: string;
  /** What to change, or why nothing in the configuration can, in a few words. */
  readonly text: string;
  /** The edit of the configuration's source that makes the change, when {@link field} has one (`narrow --write`). */
  readonly edit?: ConfigEdit;
}

/** The spec's registry accounts, declared by the `ci-access` stack itself (lib/model/spec-platform-declarations.ts). */
const SPEC_ACCOUNTS = new Set(SPEC_REGISTRY_ACCOUNTS.map((a) => a.name));
/** The spec's other CI secrets, declared by the `ci-access` stack itself, by construct id. */
const SPEC_CI_SECRET_IDS = new Set(SPEC_CI_SECRETS.map((s) => s.id));
/** The spec's four applications (§2.4), declared by the `app-roles` stack itself, by construct id. */
const SPEC_APPLICATION_IDS = new Set(SPEC_APPLICATIONS.map((a) => a.id));

/** The declaration behind a rule, from the construct path in its comment. */
export function grantDeclaration(constructPath: string): GrantDeclaration {
  const at = { constructPath };
  const account = /^ci-access\/svc-([^/]+)$/.exec(constructPath);
  if (account) {
    return SPEC_ACCOUNTS.has(account[1])
      ? { ...at, text: `the spec's registry account svc-${account[1]}, which the ci-access stack declares whatever the configuration says: no PlatformConfig field removes it` }
      : {
          ...at,
          field: `accounts.${account[1]}.readByCi`,
          edit: { kind: 'account-not-read-by-ci', account: account[1] },
          text: `set accounts.${account[1]}.readByCi to false in the PlatformConfig and drop its consumers (SSI-R8: no CI job reads it then), or remove accounts.${account[1]}`,
        };
  }
  const ciSecret = /^ci-access\/([^/]+)$/.exec(constructPath);
  if (ciSecret && SPEC_CI_SECRET_IDS.has(ciSecret[1])) {
    return { ...at, text: `the spec's CI secret ${ciSecret[1]}, which the ci-access stack declares whatever the configuration says: no PlatformConfig field removes it` };
  }
  const application = /^app-roles(?:-[^/]+)?\/([^/]+)$/.exec(constructPath);
  if (application) {
    return SPEC_APPLICATION_IDS.has(application[1])
      ? { ...at, text: `the spec's application ${application[1]}, which the app-roles stack declares whatever the configuration says: no PlatformConfig field removes it` }
      : {
          ...at,
          field: `applications.${application[1]}`,
          text: `remove applications.${application[1]} from the PlatformConfig if the application is retired (its policy reads its whole secret path: no field narrows it)`,
        };
  }
  // A people group's read: `people/group-<name>/reads[<i>]` (lib/constructs/oidc-group-role.ts).
  const group = /^people\/group-([^/]+)\/reads\[(\d+)\]$/.exec(constructPath);
  if (group) {
    const field = `people.groups.${group[1]}.reads[${group[2]}]`;
    return { ...at, field, text: `remove ${field} from the PlatformConfig`, edit: { kind: 'remove-group-read', group: group[1], index: Number(group[2]) } };
  }
  return { ...at, text: `change the construct at ${constructPath}` };
}

/** Where a configuration retires one role, told by the construct path of the role resource. */
export interface RoleDeclaration {
  /** The `PlatformConfig` field that declares the role (`applications.search-dev`, `people.groups.ops`); undefined when none does. */
  readonly field?: string;
  /** The edit of the configuration's source that removes it (`narrow --retire-idle`), when {@link field} has one. */
  readonly edit?: ConfigEdit;
}

/**
 * The declaration behind a role, from the construct path of its role resource
 * (`app-roles-02/search-dev/role`, `people/group-ops/role`): the application or people group of the
 * `PlatformConfig` that declares it, or nothing (the spec's applications, the CI role, the
 * pipeline's roles: the stacks declare them whatever the configuration says).
 */
export function roleDeclaration(declaredAt: string | undefined): RoleDeclaration {
  const application = /^app-roles(?:-[^/]+)?\/([^/]+)\/role$/.exec(declaredAt ?? '');
  if (application && !SPEC_APPLICATION_IDS.has(application[1])) {
    return { field: `applications.${application[1]}`, edit: { kind: 'retire-application', application: application[1] } };
  }
  const group = /^people\/group-([^/]+)\/role$/.exec(declaredAt ?? '');
  if (group) return { field: `people.groups.${group[1]}`, edit: { kind: 'retire-group', group: group[1] } };
  return {};
}
