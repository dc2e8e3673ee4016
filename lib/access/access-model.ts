import { Acl, AclRule, ListLookup, listLookupOf } from '../acl/acl';
import { AclPolicy } from '../acl/acl-policy';
import { DEFAULT_POLICY_NAME, DEFAULT_POLICY_TEXT, ROOT_POLICY_NAME, defaultPolicyText } from '../acl/default-policy';
import { StoreTarget } from '../model/store-target';
import { PolicyParser } from '../acl/policy-parser';
import { Identity } from './identity';
import { JWT_METHOD_FIELDS, StoreConfiguration, declaredPolicyIn } from './store-configuration';
import { labelOf, namespacedLabel } from './namespaced-name';
import { compareStrings } from '../private/compare-strings';
import { AuthMount, authMountsOfIdentities } from './auth-mount';
import { MachinePathReasons } from './machine-path-reason';
import { loginTokenPolicies, storeHeldPolicyText } from './login-token-policies';

/** One identity with the ACL of the tokens it logs in to. */
export interface IdentityAccess {
  /** The identity. */
  readonly identity: Identity;
  /**
   * Policies on its tokens, as the store computes them at login: `token_policies` plus `default`
   * unless `token_no_default_policy` (an explicitly listed `default` stays), sorted.
   */
  readonly tokenPolicies: readonly string[];
  /** The ACL of its tokens (templated paths kept literally: its entity is unknown offline). */
  readonly acl: Acl;
  /**
   * The parsed policies the ACL was built from, in name order. A parser shared between two models
   * gives the same objects for the same texts, so equal lists mean equal ACLs.
   */
  readonly policies: readonly AclPolicy[];
  /** What the analysis could not take into account, or a login the store would refuse. */
  readonly problems: readonly string[];
  /** True when the store refuses every login of this identity (it lists the root policy). */
  readonly loginRefused: boolean;
  /**
   * The policies on its tokens that are not fully evaluated, each with why (a key the store accepts
   * and the evaluator does not model, or a store-held text this parser cannot read), by policy
   * name; empty when every policy is. Their readable rules count; the identity may have more access.
   */
  readonly unevaluated: ReadonlyMap<string, readonly string[]>;
}

/**
 * The problem line of an identity holding a policy that is not fully evaluated: "may have more
 * access", naming the policy and what was not evaluated.
 */
export function notFullyEvaluatedLine(policy: string, reasons: readonly string[]): string {
  return `may have more access: policy "${policy}" is not fully evaluated (${reasons.join('; ')}); its other rules count`;
}

/**
 * The effective access of every identity of a configuration: identities joined to their token
 * policies, the policies parsed and combined into ACLs the way the store does.
 */
export class AccessModel {
  /**
   * Parses the policies the identities use and builds their ACLs.
   * @param parser shared between configurations so that identical texts are parsed once
   * @param memo shared between configurations (with the parser) so that an identity read once for
   *   both (the same object) with the same parsed policies is evaluated once
   * @throws Error naming the policy when the store would refuse a policy text
   */
  static async load(configuration: StoreConfiguration, parser?: PolicyParser, memo?: IdentityAccessMemo): Promise<AccessModel> {
    const target = configuration.store ?? StoreTarget.DEFAULT;
    parser ??= new PolicyParser(undefined, target.kind);
    // Texts read from a live store were accepted by it: a gap of the model marks the policy, it
    // does not stop the analysis of every other identity.
    const storeAccepted = configuration.liveStore === true;
    // Every policy is a namespace's own: an identity gets the policies of its namespace only, and
    // each namespace has its own `default` (keys: namespacedLabel(name, namespace)).
    const textOf = (namespace: string | undefined, name: string): string | undefined =>
      storeHeldPolicyText(name, declaredPolicyIn(configuration, namespace, name)?.text, target.kind);
    const parsed = new Map<string, AclPolicy>();
    const used = new Map<string, { namespace?: string; name: string }>();
    for (const identity of configuration.identities) {
      for (const name of tokenPolicyNames(identity)) used.set(namespacedLabel(name, identity.namespace), { namespace: identity.namespace, name });
    }
    for (const key of [...used.keys()].sort()) {
      const { namespace, name } = used.get(key)!;
      const text = textOf(namespace, name);
      if (text === undefined) continue;
      try {
        parsed.set(key, await parser.parse(name, text, { kind: target.kind, storeAccepted }));
      } catch (e) {
        // Same-named policies of two namespaces are two objects: the error says which one.
        if (namespace === undefined || namespace === '' || !(e instanceof Error)) throw e;
        throw new Error((e as Error).message.replace(/^policy "([^"]*)": /, (_m, n: string) => `policy "${n}" (namespace ${namespace}): `));
      }
    }
    const listLookup = listLookupOf(target);
    const evaluate = (identity: Identity) => access(identity, parsed, listLookup, target, configuration.liveStore === true);
    const identities = configuration.identities.map((identity) => (memo ? memo.of(identity, parsed, target, configuration.liveStore === true, evaluate) : evaluate(identity)));
    const unattached = [...configuration.policies.keys()].filter((key) => !used.has(key)).sort();
    const namespaces = new Set(configuration.namespaces ?? ['']);
    for (const o of [...configuration.identities, ...configuration.policies.values()]) namespaces.add(o.namespace ?? '');
    const defaults = new Map(
      [...namespaces].map((namespace) => [
        namespace,
        {
          builtin: declaredPolicyIn(configuration, namespace, DEFAULT_POLICY_NAME) === undefined,
          text: textOf(namespace, DEFAULT_POLICY_NAME) ?? defaultPolicyText(target.kind),
        },
      ]),
    );
    return new AccessModel(
      identities,
      unattached,
      declaredPolicyIn(configuration, '', DEFAULT_POLICY_NAME) === undefined,
      configuration.stacks,
      textOf('', DEFAULT_POLICY_NAME) ?? defaultPolicyText(target.kind),
      target,
      configuration.authMounts ?? authMountsOfIdentities(configuration.identities, JWT_METHOD_FIELDS),
      configuration.machinePathReasons ?? new Map(),
      defaults,
    );
  }

  private readonly byName: ReadonlyMap<string, IdentityAccess>;

  private constructor(
    /** Identities sorted by name (then namespace, the root namespace's first). */
    readonly identities: readonly IdentityAccess[],
    /**
     * Declared policies no identity of their namespace uses, sorted; a policy of another namespace
     * than the root as `namespacedLabel` gives it (`app-x (namespace ns1)`).
     */
    readonly unattachedPolicies: readonly string[],
    /** True when the root namespace's `default` is the store's built-in policy (no stack rewrites it); see {@link builtinDefaultIn}. */
    readonly builtinDefault: boolean,
    /** Stacks read. */
    readonly stacks: readonly string[],
    /**
     * Text of the root namespace's `default` policy, which every token of it carries: the declared
     * one, else the built-in one; see {@link defaultPolicyTextIn}.
     */
    readonly defaultPolicyText: string = DEFAULT_POLICY_TEXT,
    /** The store the configuration targets, whose capabilities, `default` policy and LIST semantics the ACLs follow. */
    readonly store: StoreTarget = StoreTarget.DEFAULT,
    /** The auth methods (login methods), sorted by path. */
    readonly authMounts: readonly AuthMount[] = [],
    /** The stated reasons of people rules that reach CI or application paths, by identity and rule path. */
    readonly machinePathReasons: MachinePathReasons = new Map(),
    /** Per store namespace of the configuration (`''` the root), whether its `default` is the built-in one, and its text. */
    private readonly defaults: ReadonlyMap<string, { readonly builtin: boolean; readonly text: string }> = new Map([['', { builtin: builtinDefault, text: defaultPolicyText }]]),
  ) {
    this.byName = new Map(identities.map((i) => [labelOf(i.identity), i]));
  }

  /**
   * The store namespaces of the configuration, sorted (`''` the root namespace): the stacks', the
   * live store's, and those its identities and policies are in.
   */
  get namespaces(): readonly string[] {
    return [...this.defaults.keys()].sort(compareStrings);
  }

  /** True when the `default` policy of `namespace` is the store's built-in one (no stack of the namespace rewrites it). */
  builtinDefaultIn(namespace: string | undefined): boolean {
    return this.defaults.get(namespace ?? '')?.builtin ?? true;
  }

  /** The text of the `default` policy every token of `namespace` carries (the declared one, else the built-in one). */
  defaultPolicyTextIn(namespace: string | undefined): string {
    return this.defaults.get(namespace ?? '')?.text ?? defaultPolicyText(this.store.kind);
  }

  /**
   * The identity `name` (`jwt/registry-ci`) of the root namespace, or the one `labelOf` names
   * (`jwt/registry-ci (namespace ns1)`), if any.
   */
  get(name: string): IdentityAccess | undefined {
    return this.byName.get(name);
  }

  /**
   * True when a rule of an identity of `namespace` (the root when undefined) comes from that
   * namespace's built-in `default` policy alone: the same on every identity that has it, so reports
   * fold it into one line.
   */
  isBuiltinDefaultOnly(rule: AclRule, namespace?: string): boolean {
    return this.builtinDefaultIn(namespace) && rule.policies.length === 1 && rule.policies[0] === DEFAULT_POLICY_NAME;
  }
}

/** The policies on an identity's tokens at login ({@link loginTokenPolicies}). */
function tokenPolicyNames(identity: Identity): string[] {
  return loginTokenPolicies(identity.tokenPolicies, identity.noDefaultPolicy);
}

/**
 * The access of identities already evaluated, by identity object: the review of saved plans loads
 * both sides, whose identities of the stacks without a plan are the same objects
 * (lib/access/store-configuration.ts, StackReadings) with the same parsed policies (a shared
 * {@link PolicyParser} gives the same object for the same text). An identity is evaluated again when
 * any of its inputs differs: a parsed policy of its tokens, the store target, live or synthesized.
 */
export class IdentityAccessMemo {
  private readonly kept = new WeakMap<Identity, { readonly inputs: readonly unknown[]; readonly access: IdentityAccess }>();

  /** The access of `identity`: the one kept when its inputs are the same objects, else `evaluate`'s. */
  of(identity: Identity, parsed: ReadonlyMap<string, AclPolicy>, target: StoreTarget, liveStore: boolean, evaluate: (identity: Identity) => IdentityAccess): IdentityAccess {
    const inputs = [String(target), liveStore, ...tokenPolicyNames(identity).flatMap((n) => [n, parsed.get(namespacedLabel(n, identity.namespace))])];
    const kept = this.kept.get(identity);
    if (kept !== undefined && kept.inputs.length === inputs.length && kept.inputs.every((v, i) => v === inputs[i])) return kept.access;
    const evaluated = evaluate(identity);
    this.kept.set(identity, { inputs, access: evaluated });
    return evaluated;
  }
}

function access(identity: Identity, parsed: ReadonlyMap<string, AclPolicy>, listLookup: ListLookup, target: StoreTarget, liveStore: boolean): IdentityAccess {
  // Names as the store files them, whatever the source wrote (it trims and lower-cases).
  const names = new Set(tokenPolicyNames(identity));
  const tokenPolicies = [...names];
  const problems: string[] = [];
  if (names.has(ROOT_POLICY_NAME)) {
    // The store refuses the login ("auth methods cannot create root tokens"): no token, no access.
    problems.push('lists the root policy: the store refuses every login ("auth methods cannot create root tokens")');
    return { identity, tokenPolicies, acl: Acl.fromPolicies([]), policies: [], problems, loginRefused: true, unevaluated: new Map() };
  }
  const policies: AclPolicy[] = [];
  // The store looks the names up in the identity's namespace: another namespace's policy of the same name is not it.
  const inNamespace = identity.namespace === undefined ? '' : ` in the namespace ${identity.namespace}`;
  for (const name of tokenPolicies) {
    const policy = parsed.get(namespacedLabel(name, identity.namespace));
    if (policy) policies.push(policy);
    else if (liveStore) problems.push(`policy "${name}" is missing on the store${inNamespace}; the store ignores a policy it does not have, so it grants nothing until it is written (a declared policy: apply its stack)`);
    else problems.push(`policy "${name}" is not declared${inNamespace} in the synthesized stacks; the store ignores a policy it does not have, so it grants nothing here`);
  }
  const unevaluated = new Map<string, readonly string[]>();
  for (const policy of policies) {
    if (!policy.unevaluated || policy.unevaluated.length === 0) continue;
    unevaluated.set(policy.name, policy.unevaluated);
    problems.push(notFullyEvaluatedLine(policy.name, policy.unevaluated));
  }
  const acl = Acl.fromPolicies(policies, { templating: 'literal', listLookup, store: target.kind });
  return { identity, tokenPolicies, acl, policies, problems, loginRefused: false, unevaluated };
}
