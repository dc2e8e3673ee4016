/**
 * What a machine's path is: a registry service account's credentials (`secret/registry/svc-*`,
 * read by CI to log in to the registry), another CI secret, or an application's paths (read by its
 * sidecar agent). SSI-R12 keeps people off them unless a `machinePathReason` says why.
 */
export type MachinePathKind = 'ci-registry-credential' | 'ci-secret' | 'application-secret';

/** How a reviewer reads each kind. */
export const MACHINE_PATH_KIND_LABEL: Readonly<Record<MachinePathKind, string>> = {
  'ci-registry-credential': 'CI registry credential',
  'ci-secret': 'CI secret',
  'application-secret': 'application secret',
};

/** True for a word that names a {@link MachinePathKind}. */
export function isMachinePathKind(value: unknown): value is MachinePathKind {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(MACHINE_PATH_KIND_LABEL, value);
}
