import { TerraformElement, TerraformStack } from '../framework/framework';
import { IConstruct } from 'constructs';
import { KvMount } from '../model/kv-mount';
import { compareStrings } from '../private/compare-strings';
import { PlatformDeclarations } from './platform-declarations';
import { SecretStoreStack } from './secret-store-stack';
import { DECLARED_KV_MOUNTS_METADATA_KEY } from '../sources/synth-output';
import { markStackLocal } from './stack-local-element';

export { DECLARED_KV_MOUNTS_METADATA_KEY };

/** Construct id of the record in its stack. */
const RECORD_ID = 'secretstore-iac-kv-mounts';

/**
 * The record of one stack's KV mounts: a Terraform element that writes nothing but its metadata
 * (`//.metadata["secretstore-iac-kv-mounts"]` in `cdk.tf.json`).
 */
export class DeclaredKvMounts extends TerraformElement {
  private mounts: readonly KvMount[] = [];

  /** The stack's record, created on first use, holding `mounts` from now on. */
  static record(stack: TerraformStack, mounts: readonly KvMount[]): DeclaredKvMounts {
    const existing = stack.node.tryFindChild(RECORD_ID);
    const record = existing instanceof DeclaredKvMounts ? existing : markStackLocal(new DeclaredKvMounts(stack, RECORD_ID));
    record.mounts = [...mounts].sort((a, b) => compareStrings(a.path, b.path));
    return record;
  }

  override toTerraform(): any {
    return {};
  }

  override toMetadata(): any {
    if (this.mounts.length === 0) return {};
    return { [DECLARED_KV_MOUNTS_METADATA_KEY]: Object.fromEntries(this.mounts.map((m) => [m.path, { version: m.version }])) };
  }
}

/**
 * Records, in each stack, the KV mounts its declared paths rely on (CI secrets, registry accounts,
 * application paths and their secrets): each mount path once, with the version the stack declares.
 * Run once the declarations are valid, before the stacks are written.
 */
export function recordDeclaredKvMounts(root: IConstruct): void {
  const d = PlatformDeclarations.of(root);
  const byStack = new Map<SecretStoreStack, Map<string, KvMount>>();
  const use = (c: IConstruct, mount: KvMount) => {
    const stack = SecretStoreStack.of(c);
    let mounts = byStack.get(stack);
    if (!mounts) byStack.set(stack, (mounts = new Map()));
    mounts.set(`${mount.path}\u0000${mount.version}`, mount);
  };
  for (const { construct, secret } of d.ciSecretDeclarations) use(construct, secret.path.mount);
  for (const a of d.applications) {
    use(a, a.readablePath.mount);
    a.secrets.forEach((s) => use(a, s.path.mount));
  }
  for (const [stack, mounts] of byStack) DeclaredKvMounts.record(stack, [...mounts.values()]);
}
