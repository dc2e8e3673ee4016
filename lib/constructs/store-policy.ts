import { Construct } from 'constructs';
import { Policy } from '../framework/vault-provider';
import { PolicyDocument } from '../model/policy-document';
import { renderPolicyHcl } from '../render/policy-hcl';
import { commentText, terraformString } from '../render/text-encoders';
import { markStackLocal } from './stack-local-element';

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
 * provider's `vault_policy` resource. The HCL is rendered at synthesis, so that grants made after
 * the construct exists are in it, and once per revision of the document: cdktf reads a resource's
 * attributes on each of its passes, and the same rules give the same text.
 *
 * The text is not a cdktf `Lazy` token: a token records a stack trace when it is created and is
 * looked up and resolved again on every pass, which made the library slower than hand-written stacks.
 *
 * It is the provider's `Policy` itself rather than a wrapper around one, so the resource keeps the
 * construct path, and thus the logical id, that the owning role gives it.
 */
export class StorePolicy extends Policy {
  /** The rules of the policy. */
  readonly document: PolicyDocument;
  private readonly props: StorePolicyProps;
  private rendered?: { readonly revision: number; readonly text: string };

  constructor(scope: Construct, id: string, props: StorePolicyProps) {
    // `policy` is a placeholder here: synthesizeAttributes() puts the rendered text in its place.
    super(scope, id, { name: terraformString(props.name), policy: '' });
    this.document = new PolicyDocument(props.name);
    this.props = props;
    markStackLocal(this);
  }

  /**
   * The policy as the store receives it (HCL, with `${` escaped for Terraform's templates), after
   * the owner's `complete` step: what synthesis writes into the `policy` argument.
   */
  get policyText(): string {
    this.props.complete?.();
    const revision = this.document.revision;
    if (this.rendered?.revision !== revision) this.rendered = { revision, text: this.render() };
    return this.rendered.text;
  }

  private render(): string {
    const document = this.document;
    // Policy comments hold free text (descriptions, construct paths): `${` there is literal too.
    if (document.isEmpty && this.props.whenEmpty !== undefined) {
      return terraformString(`# Policy "${commentText(document.name)}", managed by secretstore-iac. Do not edit in the store.\n\n# ${commentText(this.props.whenEmpty)}\n`);
    }
    return terraformString(renderPolicyHcl(document));
  }

  /** The rendered policy ({@link policyText}): the input is the document, not a value set on the resource. */
  get policyInput(): string {
    return this.policyText;
  }

  /**
   * A reference to the policy text on the store (`${vault_policy.<id>.policy}`), as the provider's
   * resource gives it. Setting it is refused: the text is rendered from {@link document} at
   * synthesis, so a value set here would be ignored; add rules to the document (a grant) instead.
   */
  get policy(): string {
    return super.policy;
  }

  // Refused (see the getter): a value set here would be ignored.
  set policy(_value: string) {
    throw new Error(`StorePolicy ${this.node.path}: policy is rendered from its document at synthesis; add rules to document (a grant) instead of setting the text`);
  }

  protected synthesizeAttributes(): { [name: string]: unknown } {
    return { ...super.synthesizeAttributes(), policy: this.policyText };
  }

  protected synthesizeHclAttributes(): { [name: string]: unknown } {
    const attributes = super.synthesizeHclAttributes() as Record<string, { value?: unknown }>;
    return { ...attributes, policy: { ...attributes.policy, value: this.policyText } };
  }
}
