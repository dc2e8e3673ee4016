import { Lazy } from 'cdktf';
import { Construct } from 'constructs';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { PolicyDocument } from '../model/policy-document';
import { renderPolicyHcl } from '../render/policy-hcl';
import { commentText, terraformString } from '../render/text-encoders';

/** Properties of {@link StorePolicy}. */
export interface StorePolicyProps {
  /** Policy name in the store, also the name of its {@link PolicyDocument}. */
  readonly name: string;
  /**
   * Called before the policy is rendered, for rules that depend on the rest of the app (must be
   * idempotent).
   */
  readonly complete?: () => void;
  /**
   * Rendered as a comment when the policy has no rule (why it grants nothing): the store accepts a
   * policy of comments only, and a role may then carry it without any access.
   * @default none (an empty policy is an error)
   */
  readonly whenEmpty?: string;
}

/**
 * A store ACL policy: the model's {@link PolicyDocument} (rules added by grants) rendered ({@link renderPolicyHcl}) as the
 * provider's `vault_policy` resource. The HCL is produced lazily, at synthesis, so that grants made
 * after the construct exists are in it.
 *
 * It is the provider's `Policy` itself rather than a wrapper around one, so the resource keeps the
 * construct path, and thus the logical id, that the owning role gives it.
 */
export class StorePolicy extends Policy {
  /** The rules of the policy. */
  readonly document: PolicyDocument;

  constructor(scope: Construct, id: string, props: StorePolicyProps) {
    // The document must exist before the resource, whose `policy` argument reads it lazily.
    const document = new PolicyDocument(props.name);
    super(scope, id, {
      name: terraformString(props.name),
      policy: Lazy.stringValue({
        produce: () => {
          props.complete?.();
          // Policy comments hold free text (descriptions, construct paths): `${` there is literal too.
          if (document.isEmpty && props.whenEmpty !== undefined) {
            return terraformString(`# Policy "${commentText(document.name)}", managed by secretstore-iac. Do not edit in the store.\n\n# ${commentText(props.whenEmpty)}\n`);
          }
          return terraformString(renderPolicyHcl(document));
        },
      }),
    });
    this.document = document;
  }
}
