import { AclRule } from '../acl/acl';
import { StoreCapability, isDenyMask } from '../acl/store-capability';
import { AccessModel } from './access-model';

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
 */
export function whoCan(model: AccessModel, capability: StoreCapability, path: string): WhoCanAnswer {
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
