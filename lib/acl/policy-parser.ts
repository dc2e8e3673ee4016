import { AclPolicy } from './acl-policy';
import { DEFAULT_POLICY_DECODED, DEFAULT_POLICY_TEXT, VAULT_DEFAULT_POLICY_DECODED, VAULT_DEFAULT_POLICY_TEXT } from './default-policy';
import { hcl1JsonItems } from './hcl1-json-items';
import { hcl2Items, parseHclPolicyText } from './hcl-policy-parser';
import { readLibraryPolicy } from './library-policy-reader';
import { decodePolicy } from './policy-decoder';
import { PolicyValue } from './policy-item';
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
   * @param kind the store that reads the policies: which capability words it accepts
   */
  constructor(
    private readonly now: Date = new Date(),
    readonly kind: StoreKind = 'openbao',
  ) {}

  /**
   * Parses one policy.
   * @param name the policy's name in the store
   * @throws Error naming the policy when the store would refuse the text
   */
  parse(name: string, text: string): Promise<AclPolicy> {
    const key = `${name}\u0000${text}`;
    let parsed = this.cache.get(key);
    if (!parsed) {
      parsed = this.parseUncached(name, text);
      this.cache.set(key, parsed);
    }
    return parsed;
  }

  private async parseUncached(name: string, text: string): Promise<AclPolicy> {
    if (text === DEFAULT_POLICY_TEXT) return decodePolicy(name, hcl2Items(DEFAULT_POLICY_DECODED), 'builtin', this.now, this.kind);
    if (text === VAULT_DEFAULT_POLICY_TEXT) {
      return decodePolicy(name, hcl2Items(VAULT_DEFAULT_POLICY_DECODED), 'builtin', this.now, this.kind);
    }
    if (text.trimStart().startsWith('{')) {
      let decoded: unknown;
      try {
        decoded = JSON.parse(text);
      } catch (e) {
        throw new Error(`policy "${name}": not valid JSON: ${(e as Error).message}`);
      }
      return decodePolicy(name, hcl1JsonItems(decoded as PolicyValue), 'json', this.now, this.kind);
    }
    const library = readLibraryPolicy(text);
    if (library) {
      const items = library.map((r) => ({ keys: ['path', r.path], value: { capabilities: [...r.capabilities] } }));
      return decodePolicy(name, items, 'library', this.now, this.kind);
    }
    return decodePolicy(name, await parseHclPolicyText(name, text), 'hcl', this.now, this.kind);
  }
}
