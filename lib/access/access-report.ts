import { AclRule } from '../acl/acl';
import { RuleKind } from '../acl/rule-path';
import { capabilityNames } from '../acl/store-capability';
import { AccessModel, IdentityAccess } from './access-model';
import { BindingValue, Identity } from './identity';
import { labelOf } from './namespaced-name';

/** One path pattern of an identity in a report. */
export interface ReportRule {
  /** The pattern, normalised (`secret/data/app/*`). */
  readonly path: string;
  /** How it matches. */
  readonly kind: RuleKind;
  /** Capabilities in documentation order (`deny` alone for a deny rule). */
  readonly capabilities: readonly string[];
  /** Policies that have a rule for this pattern. */
  readonly policies: readonly string[];
  /** Parameter constraints, if any (they narrow, never widen). */
  readonly constraints: readonly string[];
  /** True when it comes from the built-in `default` policy alone. */
  readonly builtinDefault: boolean;
}

/** One identity in a report: who it is (as in {@link Identity}), its bindings and its rules. */
export interface ReportIdentity extends Pick<Identity, 'name' | 'namespace' | 'method' | 'mount' | 'role' | 'stack' | 'declaredAt'> {
  /** Bindings, keyed by the provider's field names. */
  readonly bindings: Readonly<Record<string, BindingValue>>;
  /** Policies on its tokens (with `default` unless disabled). */
  readonly policies: readonly string[];
  /** True when the built-in `default` policy is among them. */
  readonly defaultPolicy: boolean;
  /** Path patterns with capabilities, sorted by path. */
  readonly rules: readonly ReportRule[];
  /** Rules of the built-in `default` policy left out of {@link rules}. */
  readonly omittedDefaultRules: number;
  /** What the analysis could not take into account, or a login the store would refuse. */
  readonly problems: readonly string[];
}

/** The `access` command's report: per identity, bindings and every path pattern. */
export interface AccessReport {
  /** Stacks read. */
  readonly stacks: readonly string[];
  /** Identities sorted by name. */
  readonly identities: readonly ReportIdentity[];
  /** Declared policies no identity uses (one of another namespace than the root as `namespacedLabel` gives it). */
  readonly unattachedPolicies: readonly string[];
}

/** Options of {@link accessReport}. */
export interface AccessReportOptions {
  /** List the built-in `default` policy's rules on every identity. @default false */
  readonly includeDefault?: boolean;
  /** Only identities whose name (or `labelOf` label, for one of a namespace) is in this list. @default all */
  readonly identities?: readonly string[];
}

/**
 * Builds the access report of a model.
 * @throws Error naming an identity of `options.identities` that does not exist
 */
export function accessReport(model: AccessModel, options: AccessReportOptions = {}): AccessReport {
  let selected = model.identities;
  if (options.identities && options.identities.length > 0) {
    // A name selects that identity in every namespace; a label (`approle/app (namespace ns1)`) one namespace's.
    const named = (i: IdentityAccess, n: string) => i.identity.name === n || labelOf(i.identity) === n;
    const missing = options.identities.filter((n) => !model.identities.some((i) => named(i, n)));
    if (missing.length > 0) throw new Error(`no identity named ${missing.join(', ')}; known: ${model.identities.map((i) => labelOf(i.identity)).join(', ')}`);
    selected = model.identities.filter((i) => options.identities!.some((n) => named(i, n)));
  }
  return {
    stacks: model.stacks,
    identities: selected.map((i) => reportIdentity(model, i, options.includeDefault ?? false)),
    unattachedPolicies: model.unattachedPolicies,
  };
}

/** The report rows of some identities of a model (the diff's added and removed ones), in the order given. */
export function reportIdentities(model: AccessModel, identities: readonly IdentityAccess[], includeDefault = false): ReportIdentity[] {
  return identities.map((i) => reportIdentity(model, i, includeDefault));
}

/** One merged ACL rule of an identity of `namespace` as a report row. */
function reportRule(model: AccessModel, rule: AclRule, namespace: string | undefined): ReportRule {
  return {
    path: rule.path.display,
    kind: rule.path.kind,
    capabilities: capabilityNames(rule.mask),
    policies: rule.policies,
    constraints: rule.constraints,
    builtinDefault: model.isBuiltinDefaultOnly(rule, namespace),
  };
}

function reportIdentity(model: AccessModel, access: IdentityAccess, includeDefault: boolean): ReportIdentity {
  const { identity } = access;
  const rules = access.acl.rules.map((r) => reportRule(model, r, identity.namespace));
  const shown = includeDefault ? rules : rules.filter((r) => !r.builtinDefault);
  return {
    name: identity.name,
    ...(identity.namespace === undefined ? {} : { namespace: identity.namespace }),
    method: identity.method,
    mount: identity.mount,
    role: identity.role,
    stack: identity.stack,
    declaredAt: identity.declaredAt,
    bindings: identity.bindings,
    policies: access.tokenPolicies,
    defaultPolicy: access.tokenPolicies.includes('default'),
    rules: shown,
    omittedDefaultRules: rules.length - shown.length,
    problems: access.problems,
  };
}
