import { AclRule, requestPathOf } from '../acl/acl';
import { sudoOnlyPath } from '../acl/sudo-path';
import { STORE_CAPABILITIES, StoreCapability, capabilitiesOf, isDenyMask, maskHas } from '../acl/store-capability';
import { STORE_KINDS, StoreTarget } from '../model/store-target';
import { AccessModel } from './access-model';
import { KnownKvMount, kvPathForm } from './kv-path-form';
import { pathSeenFrom } from '../model/store-namespace';

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
  /** The identity's store namespace; absent for the root namespace. */
  readonly namespace?: string;
  /** The governing rule's path pattern. */
  readonly rule: string;
  /** Policies contributing to that rule. */
  readonly policies: readonly string[];
  /**
   * The keys that narrow what the rule allows (`allowed_parameters`, `max_wrapping_ttl`, ...),
   * when it has any: the identity can, but only within them. Absent for an unconstrained rule.
   */
  readonly constraints?: readonly string[];
}

/** An identity holding a policy that is not fully evaluated: it may have more access than shown. */
export interface WhoCanUnevaluated {
  /** Identity name. */
  readonly identity: string;
  /** The identity's store namespace; absent for the root namespace. */
  readonly namespace?: string;
  /** The policies not fully evaluated, each with why (the key, or what could not be read). */
  readonly policies: ReadonlyArray<{ readonly name: string; readonly reasons: readonly string[] }>;
}

/** Who can use a capability on a path, and who is stopped by an explicit deny. */
export interface WhoCanAnswer {
  /** The capability asked about. */
  readonly capability: StoreCapability;
  /** The request path asked about. */
  readonly path: string;
  /** The store namespace the request is made in; absent for the root namespace. */
  readonly namespace?: string;
  /**
   * The path the answer is for, as the store checks it: `/` appended for LIST and SCAN, the KV
   * form the mount serves (see {@link notes}).
   */
  readonly evaluatedPath: string;
  /** Why {@link evaluatedPath} differs from {@link path}, and what else the reader must know; one line each. */
  readonly notes: readonly string[];
  /** Identities allowed, with the rule that allows them, sorted by identity. */
  readonly allowed: readonly WhoCanEntry[];
  /** Identities whose governing rule is a `deny`, sorted by identity. */
  readonly denied: readonly WhoCanEntry[];
  /**
   * Identities whose governing rule has the capability but not `sudo`, on a path the store
   * protects with `sudo` (root-protected): the store refuses them. Sorted by identity.
   */
  readonly needSudo: readonly WhoCanEntry[];
  /**
   * Identities holding a policy that is not fully evaluated, whatever the answer for them: they
   * may have more access than shown. Sorted by identity.
   */
  readonly notFullyEvaluated: readonly WhoCanUnevaluated[];
}

/** Options of {@link whoCan}. */
export interface WhoCanOptions {
  /**
   * The KV mounts whose version is known (declared by the stacks, or read from the store): a path
   * in the other version's form is answered for the form the mount serves, with a note.
   */
  readonly kvMounts?: readonly KnownKvMount[];
  /**
   * The store namespace the request is made in (`ns1`, canonical; `''` the root namespace). Paths
   * are a namespace's own: a token of that namespace is checked at the path, one of a namespace
   * above it at the path with the namespaces between in front (`ns1/secret/...` for a token of the
   * root, as the store checks it), and one of any other namespace cannot act there.
   * @default the model's namespace, when it has one only (the root namespace for a configuration without `settings.namespace`)
   */
  readonly namespace?: string;
}

/**
 * The namespace {@link whoCan} answers for: the one given, else the model's only one.
 * @throws Error naming the namespaces when the model has several and none is given
 */
export function whoCanNamespace(model: AccessModel, given?: string): string {
  if (given !== undefined) return given;
  const namespaces = model.namespaces;
  if (namespaces.length === 1) return namespaces[0];
  throw new Error(
    `the configuration's identities are in several store namespaces (${namespaces.map((n) => (n === '' ? '(root)' : n)).join(', ')}), ` +
      'whose paths are different objects: say which namespace the request is made in (--namespace)',
  );
}

/**
 * The identities that can use `capability` on `path`, each with the single rule that governs the
 * request, answered as the store decides it (`Acl.check`): LIST and SCAN paths end in `/` as the
 * store makes them, a root-protected path needs `sudo` as well, and a KV path in the other KV
 * version's form is answered for the form its mount serves (`options.kvMounts`). Templated rules
 * are matched literally, so a path naming a real entity id is not matched by
 * `{{identity.entity.id}}` rules.
 * @throws Error with {@link whoCanRefusal}'s reason when the model's store does not know `capability`
 */
export function whoCan(model: AccessModel, capability: StoreCapability, path: string, options: WhoCanOptions = {}): WhoCanAnswer {
  const refusal = whoCanRefusal(capability, model.store);
  if (refusal !== undefined) throw new Error(refusal);
  const namespace = whoCanNamespace(model, options.namespace);
  const notes: string[] = [];
  const form = kvPathForm(capability, path, options.kvMounts ?? []);
  if (form) notes.push(form.note);
  const asked = form?.path ?? path;
  const evaluatedPath = requestPathOf(capability, asked);
  if (capability === 'list' || capability === 'scan') {
    if (!asked.endsWith('/')) notes.push(`the store adds a trailing "/" to every ${capability.toUpperCase()} request: answered for ${evaluatedPath}`);
  }
  const sudoPath = sudoOnlyPath(model.store.kind, evaluatedPath);
  if (sudoPath !== undefined && capability !== 'sudo') {
    notes.push(`${evaluatedPath} is root-protected (${sudoPath}): a request there needs "sudo" on the governing rule besides "${capability}"`);
  }
  const allowed: WhoCanEntry[] = [];
  const denied: WhoCanEntry[] = [];
  const needSudo: WhoCanEntry[] = [];
  const notFullyEvaluated: WhoCanUnevaluated[] = [];
  for (const access of model.identities) {
    if (access.loginRefused) continue;
    // The path as the identity's policies see it, or none: its tokens cannot act in that namespace.
    const seen = pathSeenFrom(access.identity.namespace ?? '', namespace, asked);
    if (seen === undefined) continue;
    const at = access.identity.namespace === undefined ? {} : { namespace: access.identity.namespace };
    if (access.unevaluated.size > 0) {
      notFullyEvaluated.push({ identity: access.identity.name, ...at, policies: [...access.unevaluated].map(([name, reasons]) => ({ name, reasons })) });
    }
    const decision = access.acl.check(capability, seen);
    if (!decision.rule) continue;
    const entry = entryOf(access.identity.name, access.identity.namespace, decision.rule);
    if (decision.allowed) allowed.push(entry);
    else if (isDenyMask(decision.rule.mask)) denied.push(entry);
    else if (decision.sudoPath !== undefined && maskHas(decision.rule.mask, capability)) needSudo.push(entry);
  }
  if (notFullyEvaluated.length > 0) {
    notes.push(
      `${notFullyEvaluated.length} ${notFullyEvaluated.length === 1 ? 'identity holds' : 'identities hold'} a policy that is not fully evaluated: ` +
        'the answer counts its other rules, and they may have more access than shown (listed below)',
    );
  }
  return { capability, path, ...(namespace === '' ? {} : { namespace }), evaluatedPath, notes, allowed, denied, needSudo, notFullyEvaluated };
}

function entryOf(identity: string, namespace: string | undefined, rule: AclRule): WhoCanEntry {
  return {
    identity,
    ...(namespace === undefined ? {} : { namespace }),
    rule: rule.path.display,
    policies: rule.policies,
    ...(rule.constraints.length > 0 ? { constraints: rule.constraints } : {}),
  };
}
