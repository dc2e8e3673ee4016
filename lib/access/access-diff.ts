import { AclRule } from '../acl/acl';
import { capabilityNames } from '../acl/store-capability';
import { AccessModel, IdentityAccess } from './access-model';
import { ReportIdentity, reportIdentities } from './access-report';
import { labelOf } from './namespaced-name';
import { BindingValue } from './identity';
import { BindingChange, IdentityChange, RuleChange } from './identity-change';
import { RiskFlag, riskFlags, sortRiskFlags } from './risk-flag';
import { AccessInvariant } from '../invariants/access-invariant';
import { invariantFlags } from './invariant-flags';
import { compareStrings } from '../private/compare-strings';

/** Effective access compared between two configurations. */
export interface AccessDiff {
  /** Identities only in head, as full reports. */
  readonly added: readonly ReportIdentity[];
  /** Identities only in base, as full reports. */
  readonly removed: readonly ReportIdentity[];
  /** Identities in both whose access or bindings changed, sorted by name. */
  readonly changed: readonly IdentityChange[];
  /** Number of identities in both with no change. */
  readonly unchanged: number;
  /** Risks the change introduces. */
  readonly flags: readonly RiskFlag[];
  /** Problems of head identities (missing policies, refused logins), each identity as `labelOf` names it. */
  readonly problems: ReadonlyArray<{ readonly identity: string; readonly problem: string }>;
}

/** True when the diff holds any access change or breaks an access invariant: the `access-diff` exit code. */
export function hasAccessChange(diff: AccessDiff): boolean {
  return diff.added.length > 0 || diff.removed.length > 0 || diff.changed.length > 0 || diff.flags.some((f) => f.kind === 'invariant-broken');
}

/** Options of {@link diffAccess}. */
export interface AccessDiffOptions {
  /** A security team's invariants: each violation of head is a blocking flag (`invariant-broken`). */
  readonly invariants?: readonly AccessInvariant[];
}

/**
 * Compares the effective access of two configurations: identities added or removed, capabilities
 * gained and lost per path pattern, changed bindings, and risk flags (with `options.invariants`,
 * one per violation of head). Policy text that changes without changing access (comments, order,
 * merging) is no change.
 */
export function diffAccess(base: AccessModel, head: AccessModel, options: AccessDiffOptions = {}): AccessDiff {
  // An identity is the same on both sides when its namespace and name are (`labelOf`).
  const added = head.identities.filter((i) => !base.get(labelOf(i.identity)));
  const removed = base.identities.filter((i) => !head.get(labelOf(i.identity)));
  const changed: IdentityChange[] = [];
  let unchanged = 0;
  for (const after of head.identities) {
    const before = base.get(labelOf(after.identity));
    if (!before) continue;
    const change = identityChange(base, before, head, after);
    if (change.rules.length > 0 || change.bindings.length > 0) changed.push(change);
    else unchanged++;
  }
  const report = (model: AccessModel, list: readonly IdentityAccess[]) => reportIdentities(model, list);
  return {
    added: report(head, added),
    removed: report(base, removed),
    changed,
    unchanged,
    flags: sortRiskFlags([...invariantFlags(base, head, options.invariants ?? []), ...riskFlags(base, head, changed)]),
    problems: head.identities.flatMap((i) => i.problems.map((problem) => ({ identity: labelOf(i.identity), problem }))),
  };
}

function identityChange(base: AccessModel, before: IdentityAccess, head: AccessModel, after: IdentityAccess): IdentityChange {
  const bindings = bindingChanges(before, after);
  const name = after.identity.name;
  const method = after.identity.method;
  const namespace = after.identity.namespace;
  const at = namespace === undefined ? {} : { namespace };
  // The same parsed policies (a shared parser returns the same object for the same text) and the
  // same default policy of the identity's namespace: the same ACL, nothing to compare rule by rule.
  if (base.builtinDefaultIn(namespace) === head.builtinDefaultIn(namespace) && samePolicies(before, after)) return { name, ...at, method, rules: [], bindings };
  const slots = (access: IdentityAccess) => new Map(access.acl.rules.map((r) => [r.path.slot, r]));
  const beforeRules = slots(before);
  const afterRules = slots(after);
  // Rules of the built-in default policy alone, or absent, on both sides: no rule change (attaching
  // or detaching `default` shows as the binding token_no_default_policy instead). Only when both
  // sides have the built-in policy: when a side rewrites `default`, its rules are compared like any
  // other, so that what it drops shows as lost.
  const bothBuiltin = base.builtinDefaultIn(namespace) && head.builtinDefaultIn(namespace);
  const defaultOrAbsent = (model: AccessModel, rule: AclRule | undefined) => !rule || (bothBuiltin && model.isBuiltinDefaultOnly(rule, namespace));
  const rules: RuleChange[] = [];
  for (const slot of new Set([...beforeRules.keys(), ...afterRules.keys()])) {
    const b = beforeRules.get(slot);
    const a = afterRules.get(slot);
    if (defaultOrAbsent(base, b) && defaultOrAbsent(head, a)) continue;
    const change = ruleChange(b, a);
    if (change) rules.push(change);
  }
  rules.sort((x, y) => compareStrings(x.path, y.path) || compareStrings(x.kind, y.kind));
  return { name, ...at, method, rules, bindings };
}

function samePolicies(before: IdentityAccess, after: IdentityAccess): boolean {
  return (
    before.loginRefused === after.loginRefused &&
    before.policies.length === after.policies.length &&
    before.policies.every((p, i) => p === after.policies[i])
  );
}

function ruleChange(before: AclRule | undefined, after: AclRule | undefined): RuleChange | undefined {
  if (before && after && before.mask === after.mask) return undefined;
  const rule = (after ?? before)!;
  const b = before ? capabilityNames(before.mask) : [];
  const a = after ? capabilityNames(after.mask) : [];
  return {
    path: rule.path.display,
    kind: rule.path.kind,
    before: b,
    after: a,
    gained: a.filter((c) => !b.includes(c)),
    lost: b.filter((c) => !a.includes(c)),
    added: !before,
    removed: !after,
  };
}

/** Bindings of an identity plus its policy attachment, as the diff compares them. */
export function comparableBindings(access: IdentityAccess): Record<string, BindingValue> {
  return {
    ...access.identity.bindings,
    token_policies: access.identity.tokenPolicies,
    token_no_default_policy: access.identity.noDefaultPolicy,
  };
}

function bindingChanges(before: IdentityAccess, after: IdentityAccess): BindingChange[] {
  const b = comparableBindings(before);
  const a = comparableBindings(after);
  // Bindings are normalised with sorted keys: equal text, no change (the common case).
  if (JSON.stringify(b) === JSON.stringify(a)) return [];
  return [...new Set([...Object.keys(b), ...Object.keys(a)])]
    .filter((field) => JSON.stringify(b[field]) !== JSON.stringify(a[field]))
    .sort(compareStrings)
    .map((field) => ({ field, before: b[field], after: a[field] }));
}
