import { Construct } from 'constructs';
import { readerPolicyRules } from '../reconcile/live-store-reader';
import { SecretStoreStack } from './secret-store-stack';
import { StorePolicy } from './store-policy';
import { CheckedProps, expectString, optional, PropsSchema } from '../model/props-check';
import { identifierNameProblems } from '../model/identifier-name';
import { READER_POLICY_NAME } from '../model/reserved-store-names';

/** The run-time checks of {@link LiveStoreReaderPolicyProps}. */
export const LIVE_STORE_READER_POLICY_SCHEMA: PropsSchema = { name: optional(expectString) };

/** Name of the reader's policy in docs/adoption.md (`bao policy write secretstore-iac-reader ...`): one fact, kept with the store's other reserved names. */
export { READER_POLICY_NAME };

/** Properties of {@link LiveStoreReaderPolicy}. */
export interface LiveStoreReaderPolicyProps {
  /**
   * Policy name on the store.
   * @default 'secretstore-iac-reader'
   */
  readonly name?: string;
}

/**
 * The least-privilege policy of the live-store reader (`drift`, `adopt`, `access-diff live`):
 * read and list only, the rules of `readerPolicy(settings.store)` (docs/adoption.md), written for the
 * target store's LIST rule (for both rules when its version is not given). Declared by a stack, the
 * policy an operator wrote by hand is adopted like any other and `drift` no longer lists it as
 * unmanaged, so the documented setup can reach exit 0.
 */
export class LiveStoreReaderPolicy extends Construct {
  /** The rendered policy. */
  readonly policy: StorePolicy;

  constructor(scope: Construct, id: string, props: LiveStoreReaderPolicyProps = {}) {
    super(scope, id);
    const checked = new CheckedProps(LIVE_STORE_READER_POLICY_SCHEMA, props, true);
    const name = checked.value('name', READER_POLICY_NAME);
    this.policy = new StorePolicy(this, 'policy', { name });
    // Written for the target store's LIST lookup; for both when settings.store does not give its version.
    const settings = SecretStoreStack.of(this).settings;
    for (const rule of readerPolicyRules(settings.storeGiven ? settings.store : undefined)) this.policy.document.addRule(rule.path, rule.capabilities, 'secretstore-iac live-store reader (docs/adoption.md)');
    this.node.addValidation({
      // A built-in policy's name (`default`) is refused by SSI-R9, which sees every policy of the platform.
      validate: () => checked.with(identifierNameProblems('name', name)).map(String),
    });
  }
}
