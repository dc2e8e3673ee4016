import { TerraformElement } from '../framework/framework';
import { Construct } from 'constructs';
import { PlatformSettings } from '../model/platform-settings';
import { STORE_TARGET_METADATA_KEY } from '../sources/synth-output';

/**
 * The record of the store a stack targets, when `settings.store` gives it: a Terraform element that
 * writes nothing but its metadata (`//.metadata["secretstore-iac-store"] = {"kind": "vault",
 * "version": "1.21.1"}` in `cdk.tf.json`, which Terraform ignores). The offline analyses of a
 * synthesized output (`access`, `who-can`, `access-diff`) read it to use that store's capabilities,
 * `default` policy and LIST semantics; without it they assume OpenBao. Nothing is written when
 * `settings.store` is not given, so such outputs stay byte-identical.
 */
export class StoreTargetRecord extends TerraformElement {
  constructor(
    scope: Construct,
    id: string,
    private readonly settings: PlatformSettings,
  ) {
    super(scope, id);
  }

  override toTerraform(): any {
    return {};
  }

  override toMetadata(): any {
    if (!this.settings.storeGiven) return {};
    const { kind, version } = this.settings.store;
    return { [STORE_TARGET_METADATA_KEY]: version === undefined ? { kind } : { kind, version } };
  }
}
