import { AclPolicy, PolicySyntax } from './acl-policy';
import { DEFAULT_POLICY_DECODED, DEFAULT_POLICY_TEXT, VAULT_DEFAULT_POLICY_DECODED, VAULT_DEFAULT_POLICY_TEXT } from './default-policy';
import { hcl1JsonItems } from './hcl1-json-items';
import { hcl2Items, parseHclPolicyText } from './hcl-policy-parser';
import { readLibraryPolicy } from './library-policy-reader';
import { decodePolicy } from './policy-decoder';
import { PolicyItem, PolicyValue } from './policy-item';
import { storePolicyName } from '../model/store-policy-name';
import { StoreKind } from '../model/store-target';

/**
 * Parses policy texts into {@link AclPolicy} values, the way the store reads them, with a cache:
 * a base and a head configuration share most policy texts, and each distinct text is parsed once.
 *
 * Which reader is used, in order:
 * 1. JSON (the text starts with `{`, as the store decides): `JSON.parse`, then the store's HCL 1
 *    reading of JSON ({@link hcl1JsonItems});
 * 2. this library's own output, recognised by exact re-rendering ({@link readLibraryPolicy});
 * 3. anything else: the HCL parser package ({@link parseHclPolicyText}).
 * The built-in `default` policy text is read from its decoded table ({@link DEFAULT_POLICY_DECODED}).
 * All three feed the same decoder, which applies the store's validation.
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

  private async parseUncached(name: string, text: string, kind: StoreKind, storeAccepted: boolean): Promise<AclPolicy> {
    try {
      return await this.read(name, text, kind, storeAccepted);
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

  private async read(name: string, text: string, kind: StoreKind, storeAccepted: boolean): Promise<AclPolicy> {
    const decode = (items: PolicyItem[], syntax: PolicySyntax) => decodePolicy(name, items, syntax, this.now, kind, storeAccepted);
    if (text === DEFAULT_POLICY_TEXT) return decode(hcl2Items(DEFAULT_POLICY_DECODED), 'builtin');
    if (text === VAULT_DEFAULT_POLICY_TEXT) return decode(hcl2Items(VAULT_DEFAULT_POLICY_DECODED), 'builtin');
    if (text.trimStart().startsWith('{')) {
      let decoded: unknown;
      try {
        decoded = JSON.parse(text);
      } catch (e) {
        throw new Error(`policy "${name}": not valid JSON: ${(e as Error).message}`);
      }
      return decode(hcl1JsonItems(decoded as PolicyValue), 'json');
    }
    const library = readLibraryPolicy(text);
    if (library) {
      return decode(
        library.map((r) => ({ keys: ['path', r.path], value: { capabilities: [...r.capabilities] } })),
        'library',
      );
    }
    return decode(await parseHclPolicyText(name, text), 'hcl');
  }
}
