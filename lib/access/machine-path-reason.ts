import { isMachinePathKind, MachinePathKind } from '../model/machine-path-kind';
import { MACHINE_PATHS_METADATA_KEY, SynthStack } from '../sources/synth-output';
import { templateParts } from '../sources/terraform-reference';

/** A CI or application path a people rule reaches. */
export interface MachinePathReached {
  /** What it is. */
  readonly kind: MachinePathKind;
  /** Whose: the account (`svc-orchestrator`), the CI secret's logical path, the application's role name. */
  readonly owner: string;
  /** Its ACL path (`secret/data/registry/svc-orchestrator`, `secret/data/acme/dev/orchestrator/*`). */
  readonly path: string;
  /** Construct path of its declaration. */
  readonly declaredAt: string;
}

/** Why a people rule reaches a machine's path, as the configuration states it (`machinePathReason`). */
export interface MachinePathReason {
  /** The stated reason. */
  readonly reason: string;
  /** The machine paths the rule reaches (empty when it reaches none: a reason given anyway). */
  readonly reaches: readonly MachinePathReached[];
}

/** Per people identity (`oidc/ops`), per policy rule path, the stated reason. */
export type MachinePathReasons = ReadonlyMap<string, ReadonlyMap<string, MachinePathReason>>;

/**
 * The reasons the stacks record in `//.metadata["secretstore-iac-machine-paths"]` (written by the
 * synthesis when a people grant has a `machinePathReason`); empty when none records one.
 * @throws Error naming the stack when a record is not what the synthesis writes
 */
export function readMachinePathReasons(stacks: readonly SynthStack[]): Map<string, Map<string, MachinePathReason>> {
  const out = new Map<string, Map<string, MachinePathReason>>();
  for (const stack of stacks) {
    const record = stack.metadata[MACHINE_PATHS_METADATA_KEY];
    if (record === undefined) continue;
    const bad = () => new Error(`stack ${stack.name}: //.metadata["${MACHINE_PATHS_METADATA_KEY}"] is not what the synthesis writes: synthesize again`);
    // The synthesis writes every text as a Terraform JSON literal (`$${` for `${`): read back as written.
    const text = (value: unknown): string => {
      if (typeof value !== 'string') throw bad();
      const parts = templateParts(value, () => bad());
      if (parts.some((p) => p.expression !== undefined)) throw bad();
      return parts.map((p) => p.literal).join('');
    };
    if (typeof record !== 'object' || record === null || Array.isArray(record)) throw bad();
    for (const [identity, rules] of Object.entries(record as Record<string, unknown>)) {
      if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) throw bad();
      const byPath = out.get(text(identity)) ?? new Map<string, MachinePathReason>();
      for (const [rulePath, entry] of Object.entries(rules as Record<string, unknown>)) {
        const e = entry as { reason?: unknown; reaches?: unknown };
        if (typeof e !== 'object' || e === null || !Array.isArray(e.reaches)) throw bad();
        const reaches = e.reaches.map((m: { kind?: unknown; owner?: unknown; path?: unknown; declaredAt?: unknown }): MachinePathReached => {
          if (!isMachinePathKind(m?.kind)) throw bad();
          return { kind: m.kind, owner: text(m.owner), path: text(m.path), declaredAt: text(m.declaredAt) };
        });
        byPath.set(text(rulePath), { reason: text(e.reason), reaches });
      }
      out.set(text(identity), byPath);
    }
  }
  return out;
}
