import { AclPolicy, PolicySyntax } from './acl-policy';
import { DEFAULT_POLICY_TEXT, VAULT_DEFAULT_POLICY_TEXT } from './default-policy';
import { hcl1PolicyItems } from './hcl1-decoder';
import { isHcl1Json } from './hcl1-syntax';
import { readLibraryPolicy } from './library-policy-reader';
import { decodePolicy } from './policy-decoder';
import { PolicyItem } from './policy-item';
import { storePolicyName } from '../model/store-policy-name';
import { StoreKind } from '../model/store-target';

/** Vault 1.21's refusal of an attribute given twice (`hcl` v1.0.1-vault-7). */
const DUPLICATE_ATTRIBUTE = /Each argument can only be defined once/;

/**
 * Parses policy texts into {@link AclPolicy} values, the way the store reads them, with a cache:
 * a base and a head configuration share most policy texts, and each distinct text is parsed once.
 *
 * Which reader is used, in order:
 * 1. this library's own output, recognised by exact re-rendering ({@link readLibraryPolicy});
 * 2. anything else, JSON or HCL: a port of the stores' own HCL 1 parser and decoder
 *    ({@link hcl1PolicyItems}; Vault's parser refuses an attribute given twice, OpenBao's keeps it).
 * Both feed the same decoder, which applies the store's validation.
 *
 * Which layer reads which escapes: a policy text in the synthesized `cdk.tf.json` is a Terraform
 * JSON string, in which `$${` and `%%{` stand for `${` and `%{`; the engine reads them once, and
 * the store receives the result. The access model reads those strings through
 * `ReferenceResolver` (lib/sources/terraform-reference.ts), which reads Terraform's escapes exactly
 * once, so the text given here is always the text the store receives, and it is read with HCL 1's
 * rules only (where `$${x}` is the literal `$${x}`).
 */
export class PolicyParser {
  private readonly cache = new Map<string, Promise<AclPolicy>>();

  /**
   * @param now time against which rule `expiration`s are checked (the store drops expired rules)
   * @param kind the store that reads the policies: which keys and capability words it accepts
   */
  constructor(
    private readonly now: Date = new Date(),
    readonly kind: StoreKind = 'openbao',
  ) {}

  /**
   * Parses one policy.
   * @param name the policy's name in the store
   * @param options `kind`: the store that reads it (default: the parser's); `storeAccepted`: the
   *   text is held by the store (read from a live store), so what this parser cannot read or does
   *   not model marks the policy "not fully evaluated" ({@link AclPolicy.unevaluated}) instead of
   *   failing
   * @throws Error naming the policy when the store would refuse the text (never with `storeAccepted`)
   */
  parse(name: string, text: string, options: { readonly kind?: StoreKind; readonly storeAccepted?: boolean } = {}): Promise<AclPolicy> {
    const kind = options.kind ?? this.kind;
    const storeAccepted = options.storeAccepted ?? false;
    const key = `${kind}\u0000${storeAccepted}\u0000${name}\u0000${text}`;
    let parsed = this.cache.get(key);
    if (!parsed) {
      parsed = this.parseUncached(name, text, kind, storeAccepted);
      this.cache.set(key, parsed);
    }
    return parsed;
  }

  /**
   * Parses one policy at once (the reading is synchronous; {@link parse} shares parses between callers):
   * what a synthesis rule, which cannot wait, reads a policy text with.
   * @throws Error naming the policy when the store would refuse the text
   */
  parseNow(name: string, text: string, kind: StoreKind = this.kind): AclPolicy {
    return this.read(name, text, kind, false);
  }

  private async parseUncached(name: string, text: string, kind: StoreKind, storeAccepted: boolean): Promise<AclPolicy> {
    try {
      return this.read(name, text, kind, storeAccepted);
    } catch (e) {
      if (!storeAccepted) throw e;
      // The store holds a text this parser cannot read at all: no rule is known, which the
      // reports say; the other policies and identities are analysed as usual.
      return {
        name: storePolicyName(name),
        rules: [],
        syntax: 'hcl',
        unevaluated: [(e as Error).message.replace(/^policy "[^"]*": /, '')],
      };
    }
  }

  private read(name: string, text: string, kind: StoreKind, storeAccepted: boolean): AclPolicy {
    const decode = (items: PolicyItem[], syntax: PolicySyntax) => decodePolicy(name, items, syntax, this.now, kind, storeAccepted);
    if (text === DEFAULT_POLICY_TEXT || text === VAULT_DEFAULT_POLICY_TEXT) return decode(hcl1PolicyItems(name, text, kind), 'builtin');
    if (isHcl1Json(text)) return decode(hcl1PolicyItems(name, text, kind), 'json');
    const library = readLibraryPolicy(text);
    if (library) {
      return decode(
        library.map((r) => ({ keys: ['path', r.path], value: { capabilities: [...r.capabilities] } })),
        'library',
      );
    }
    try {
      return decode(hcl1PolicyItems(name, text, kind), 'hcl');
    } catch (e) {
      // A Vault text with an attribute given twice, held by the store: it was written before Vault
      // refused them, or the store runs with VAULT_ALLOW_PENDING_REMOVAL_DUPLICATE_HCL_ATTRIBUTES and
      // joins them as OpenBao does. Read so (the most access the text can give), and say why.
      if (!storeAccepted || kind !== 'vault' || !DUPLICATE_ATTRIBUTE.test((e as Error).message)) throw e;
      const policy = decode(hcl1PolicyItems(name, text, kind, true), 'hcl');
      const why = 'an attribute is given twice: Vault reads the text only with VAULT_ALLOW_PENDING_REMOVAL_DUPLICATE_HCL_ATTRIBUTES set, and it is read as Vault then reads it';
      return { ...policy, unevaluated: [...(policy.unevaluated ?? []), why] };
    }
  }
}
