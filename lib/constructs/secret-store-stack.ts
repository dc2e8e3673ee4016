import { LocalBackend, TerraformStack } from '../framework/framework';
import { Construct, IConstruct } from 'constructs';
import { VaultProvider } from '../framework/vault-provider';
import { PlatformSettings, PlatformSettingsProps } from '../model/platform-settings';
import { ValidationProblem } from '../model/validation-problem';
import { checked, checkProps, expectFunction, expectInstance, expectString, optional, ownValue, PropsSchema } from '../model/props-check';
import { StoreTargetRecord } from './store-target-record';
import { terraformString } from '../render/text-encoders';
import { markStackLocal, prepareElements } from './stack-local-element';
import { IncrementalSynthesis } from '../sources/incremental-synthesis';
import { FinalStackDocument, renderFinalDocumentWith } from './final-stack-document';
import { oncePerSynthesis } from './synthesis-round';

/** The run-time checks of {@link SecretStoreStackProps}. */
export const SECRET_STORE_STACK_SCHEMA: PropsSchema = {
  settings: expectInstance(PlatformSettings, 'a PlatformSettings (new PlatformSettings({ organisation, ciUrl, registryHost }))'),
  stateBackend: optional(expectFunction),
  providerVersion: optional(expectString),
};

/** How a stack stores its Terraform state. */
export type StateBackendFactory = (stack: SecretStoreStack) => void;

/** Properties of a {@link SecretStoreStack}. */
export interface SecretStoreStackProps {
  /** The platform's settings (organisation, CI URL, registry host, KV mount). */
  readonly settings: PlatformSettings;
  /**
   * Declares the stack's state backend.
   * @default a local state file `terraform.<stack id>.tfstate` next to the output directory (the
   * project root for `cdktf.out`), outside it, so that re-synthesis never touches the state
   */
  readonly stateBackend?: StateBackendFactory;
  /**
   * Version constraint of the `hashicorp/vault` provider in the synthesized stacks. The bindings
   * (`@cdktf/provider-vault` 15.6.1) are generated from provider 5.6.0, which 5.x releases keep
   * compatible with; the real-store tests run provider 5.9.0. The engine's lock file pins the
   * version actually installed; pass `'5.6.0'` to pin it here exactly.
   * @default '>= 5.6.0, < 6.0.0'
   */
  readonly providerVersion?: string;
}

/** Default `hashicorp/vault` version constraint of synthesized stacks. */
export const DEFAULT_VAULT_PROVIDER_VERSION = '>= 5.6.0, < 6.0.0';

/**
 * A Terraform stack that configures one secrets store (Vault or OpenBao) with the `hashicorp/vault`
 * provider. The provider reads the store address and token at plan/apply time from `VAULT_ADDR` and
 * `VAULT_TOKEN` (the `secretstore-iac tf` wrapper maps the spec's `SECRETSTORE_ADDR`); nothing about
 * the store's location or credentials is written into the synthesized JSON.
 */
export class SecretStoreStack extends TerraformStack {
  /** The nearest enclosing SecretStoreStack of a construct. */
  static of(construct: IConstruct): SecretStoreStack {
    for (let c: IConstruct | undefined = construct; c; c = c.node.scope) {
      if (c instanceof SecretStoreStack) return c;
    }
    throw new Error(`${construct.node.path} must be declared inside a SecretStoreStack`);
  }

  /** Platform settings shared by the constructs of this stack. */
  readonly settings: PlatformSettings;

  constructor(scope: Construct, id: string, props: SecretStoreStackProps) {
    super(scope, id);
    renderFinalDocumentWith(this, () => this.renderDocument());
    const typeProblems = checkProps(SECRET_STORE_STACK_SCHEMA, props);
    const given = ownValue<unknown>(props, 'settings');
    // Settings given as plain props (a cast, a JSON file) are checked field by field like any others.
    this.settings = given instanceof PlatformSettings ? given : new PlatformSettings((given ?? {}) as PlatformSettingsProps);
    // The provider works in the declared namespace (an attribute of the provider block, so that the
    // engine does not depend on VAULT_NAMESPACE being set the same way everywhere).
    const namespace = this.settings.namespace;
    markStackLocal(new VaultProvider(this, 'vault', namespace === undefined ? {} : { namespace: terraformString(namespace) }));
    markStackLocal(new StoreTargetRecord(this, 'secretstore-iac-store', this.settings));
    // cdktf writes the bindings' exact version (5.6.0); a 5.x range lets the engine use the 5.x
    // release it has (the lock file then pins it).
    this.addOverride(
      'terraform.required_providers.vault.version',
      checked(optional(expectString), ownValue(props, 'providerVersion'), undefined) ?? DEFAULT_VAULT_PROVIDER_VERSION,
    );
    // The path is relative to the engine's working directory `<outdir>/stacks/<id>/`: a relative
    // path keeps the output machine-independent, and `../../../` keeps the state out of the output.
    const backend = checked<StateBackendFactory | undefined>(optional(expectFunction), ownValue(props, 'stateBackend'), undefined);
    (backend ?? ((stack) => markStackLocal(new LocalBackend(stack, { path: `../../../terraform.${id}.tfstate` }))))(this);
    this.node.addValidation({
      validate: () =>
        typeProblems
          .map(String)
          .concat(this.settings.problems().map((p) => String(new ValidationProblem(p.field ? `settings.${p.field}` : 'settings', p.value, p.rule, p.ruleId)))),
    });
  }

  /**
   * cdktf's preparation, without resolving the library's stack-local elements a first time
   * ({@link prepareElements}): the output is the same, and the synthesis a third faster.
   */
  override prepareStack(): void {
    // Prepared once per synthesis round: the rules render the documents first (lib/constructs/final-stack-document.ts).
    oncePerSynthesis(this, 'prepared', () => {
      prepareElements(this);
      return true;
    });
  }

  /**
   * The stack's final document ({@link FinalStackDocument}): cdktf's Terraform JSON of this stack,
   * in an incremental synthesis the earlier synthesis's when nothing it is derived from changed
   * (lib/sources/incremental-synthesis.ts). Rendered once per synthesis round: the platform rules
   * read the very object cdktf then writes.
   */
  override toTerraform(): any {
    const document = FinalStackDocument.of(this);
    // Never written: a document some element could not render into is the rules' only.
    if (document.unrendered.length > 0) throw new Error(`${document.unrendered[0].constructPath}: ${document.unrendered[0].message}`);
    return document.json;
  }

  /** cdktf's rendering of this stack, or the incremental synthesis's reuse of it. */
  private renderDocument(): unknown {
    const incremental = IncrementalSynthesis.of(this);
    return incremental === undefined ? super.toTerraform() : incremental.toTerraform(this, () => super.toTerraform());
  }
}
