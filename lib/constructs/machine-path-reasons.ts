import { TerraformElement, TerraformStack } from '../framework/framework';
import { IConstruct } from 'constructs';
import { compareStrings } from '../private/compare-strings';
import { terraformString } from '../render/text-encoders';
import { MACHINE_PATHS_METADATA_KEY } from '../sources/synth-output';
import { machinePaths, machinePathsReached } from './machine-path';
import { PlatformDeclarations } from './platform-declarations';
import { SecretStoreStack } from './secret-store-stack';
import { markStackLocal } from './stack-local-element';

export { MACHINE_PATHS_METADATA_KEY };

/** Construct id of the record in its stack. */
const RECORD_ID = 'secretstore-iac-machine-paths';

/** One rule of a people role granted with a reason, as the record holds it. */
interface ReasonEntry {
  readonly reason: string;
  readonly reaches: readonly { readonly kind: string; readonly owner: string; readonly path: string; readonly declaredAt: string }[];
}

/**
 * The record of one stack's people rules granted with a `machinePathReason`: a Terraform element
 * that writes nothing but its metadata (`//.metadata["secretstore-iac-machine-paths"]` in
 * `cdk.tf.json`, which the engine ignores). Every text is written as a Terraform JSON literal.
 */
export class MachinePathReasons extends TerraformElement {
  private entries = new Map<string, Map<string, ReasonEntry>>();

  /** The stack's record, created on first use. */
  static of(stack: TerraformStack): MachinePathReasons {
    const existing = stack.node.tryFindChild(RECORD_ID);
    return existing instanceof MachinePathReasons ? existing : markStackLocal(new MachinePathReasons(stack, RECORD_ID));
  }

  /** Records the reason of one rule of `identity`. */
  add(identity: string, rulePath: string, entry: ReasonEntry): void {
    let rules = this.entries.get(identity);
    if (!rules) this.entries.set(identity, (rules = new Map()));
    rules.set(rulePath, entry);
  }

  override toTerraform(): any {
    return {};
  }

  override toMetadata(): any {
    if (this.entries.size === 0) return {};
    const sorted = <T>(map: ReadonlyMap<string, T>) => [...map.entries()].sort(([a], [b]) => compareStrings(a, b));
    const record = Object.fromEntries(
      sorted(this.entries).map(([identity, rules]) => [
        terraformString(identity),
        Object.fromEntries(
          sorted(rules).map(([path, e]) => [
            terraformString(path),
            {
              reason: terraformString(e.reason),
              reaches: e.reaches.map((m) => ({ kind: m.kind, owner: terraformString(m.owner), path: terraformString(m.path), declaredAt: terraformString(m.declaredAt) })),
            },
          ]),
        ),
      ]),
    );
    return { [MACHINE_PATHS_METADATA_KEY]: record };
  }
}

/**
 * Records, in the stack of each people role, every rule granted with a `machinePathReason`: the
 * reason and the CI and application paths the rule reaches (as SSI-R12 finds them), so that the
 * access diff can say what a person gains and why. Run once the declarations are valid, before the
 * stacks are written; a configuration without reasons gets no record (its output is unchanged).
 */
export function recordMachinePathReasons(root: IConstruct): void {
  const d = PlatformDeclarations.of(root);
  if (d.peopleRoles.length === 0) return;
  const machine = machinePaths(d);
  for (const role of d.peopleRoles) {
    for (const rule of role.policy.rules) {
      const reason = role.machinePathReason(rule.path);
      if (reason === undefined) continue;
      const reaches = machinePathsReached(machine, rule.path).map((m) => ({ kind: m.kind, owner: m.owner, path: m.path.policyPath, declaredAt: m.declaredAt }));
      MachinePathReasons.of(SecretStoreStack.of(role)).add(role.identityName, rule.path, { reason, reaches });
    }
  }
}
