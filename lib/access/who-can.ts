import { AclRule } from '../acl/acl';
import { STORE_CAPABILITIES, StoreCapability, capabilitiesOf, isDenyMask } from '../acl/store-capability';
import { STORE_KINDS, StoreTarget } from '../model/store-target';
import { AccessModel } from './access-model';

/** The words `who-can` asks about on the store `target`: its capabilities but `deny`, in documentation order. */
export function whoCanCapabilities(target: StoreTarget): StoreCapability[] {
  return STORE_CAPABILITIES.filter((c) => c !== 'deny' && capabilitiesOf(target.kind).has(c));
}

/** `a, b or c`. */
const either = (words: readonly string[]): string => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`);

/**
 * Why `who-can` cannot answer for `word` on the store `target`, or undefined when `word` is one of
 * its capabilities. A word only the other store knows (`scan` on Vault, `subscribe` and `recover` on
 * OpenBao) is named as such: the target store refuses every policy naming it (Vault:
 * `invalid capability "scan"`), so none of its tokens can hold it.
 */
export function whoCanRefusal(word: string, target: StoreTarget): string | undefined {
  const own = whoCanCapabilities(target);
  if ((own as string[]).includes(word)) return undefined;
  const others = STORE_KINDS.filter((k) => k !== target.kind).map((k) => new StoreTarget(k));
  const knownTo = others.find((o) => (whoCanCapabilities(o) as string[]).includes(word));
  const ask = `ask about ${either(own)}`;
  if (knownTo) {
    return (
      `"${word}" is a capability of ${knownTo.productName}, not of ${target.productName}: ${target.productName} refuses every policy ` +
      `naming it (invalid capability "${word}"), so none of its tokens can hold it; ${ask}`
    );
  }
  return `"${word}" is not a capability of ${target.productName}: ${ask}`;
}

/** One identity's answer to "can you do this here?". */
export interface WhoCanEntry {
  /** Identity name. */
  readonly identity: string;
  /** The governing rule's path pattern. */
  readonly rule: string;
  /** Policies contributing to that rule. */
  readonly policies: readonly string[];
}

/** Who can use a capability on a path, and who is stopped by an explicit deny. */
export interface WhoCanAnswer {
  /** The capability asked about. */
  readonly capability: StoreCapability;
  /** The request path asked about. */
  readonly path: string;
  /** Identities allowed, with the rule that allows them, sorted by identity. */
  readonly allowed: readonly WhoCanEntry[];
  /** Identities whose governing rule is a `deny`, sorted by identity. */
  readonly denied: readonly WhoCanEntry[];
}

/**
 * The identities that can use `capability` on `path`, each with the single rule that governs the
 * request (LIST and SCAN use the store's list lookups; everything else the plain one).
 * Templated rules are matched literally, so a path naming a real entity id is not matched by
 * `{{identity.entity.id}}` rules.
 * @throws Error with {@link whoCanRefusal}'s reason when the model's store does not know `capability`
 */
export function whoCan(model: AccessModel, capability: StoreCapability, path: string): WhoCanAnswer {
  const refusal = whoCanRefusal(capability, model.store);
  if (refusal !== undefined) throw new Error(refusal);
  const allowed: WhoCanEntry[] = [];
  const denied: WhoCanEntry[] = [];
  for (const access of model.identities) {
    if (access.loginRefused) continue;
    const decision = access.acl.check(capability, path);
    if (!decision.rule) continue;
    const entry = entryOf(access.identity.name, decision.rule);
    if (decision.allowed) allowed.push(entry);
    else if (isDenyMask(decision.rule.mask)) denied.push(entry);
  }
  return { capability, path, allowed, denied };
}

function entryOf(identity: string, rule: AclRule): WhoCanEntry {
  return { identity, rule: rule.path.display, policies: rule.policies };
}
