import { AccessModel } from './access-model';
import { RiskFlag } from './risk-flag';
import { AccessInvariant } from '../invariants/access-invariant';
import { invariantViolations } from '../invariants/invariant-check';
import { InvariantViolation } from '../invariants/invariant-violation';
import { invariantSubjects } from './invariant-subjects';
import { assertInvariantsSelect } from '../invariants/invariant-selection';
import { labelOf } from './namespaced-name';

/** A violation's key: the same invariant, identity and rule on both sides is the same violation. */
const keyOf = (v: InvariantViolation) => `${v.invariant}\u0000${labelOf({ name: v.identity, namespace: v.namespace })}\u0000${v.rule}`;

/**
 * The review's flags of broken invariants: one per violation of `head` (identity, rule, invariant),
 * blocking whether the change brings it or base already had it (an invariant broken on base is
 * still broken after the merge). The message names the change: the identity and the rule with its
 * policies that grant the forbidden capability, and whether the change brings it.
 * @throws InvariantSelectionError when an invariant speaks of no identity of `head`
 */
export function invariantFlags(base: AccessModel, head: AccessModel, invariants: readonly AccessInvariant[]): RiskFlag[] {
  if (invariants.length === 0) return [];
  const subjects = invariantSubjects(head);
  // Head is what the change makes: an invariant that speaks of nobody there checks nothing.
  assertInvariantsSelect(subjects, invariants);
  const before = new Set(invariantViolations(invariantSubjects(base), invariants, base.namespaces).map(keyOf));
  return invariantViolations(subjects, invariants, head.namespaces).map((v) => {
    const policies = v.policies.map((p) => `\`${p}\``).join(', ');
    const when = before.has(keyOf(v)) ? 'already broken on base, still broken by this change' : 'this change breaks it';
    const identity = labelOf({ name: v.identity, namespace: v.namespace });
    return {
      kind: 'invariant-broken',
      identity,
      identities: [identity],
      message:
        `${when}: invariant \`${v.invariant}\` (${v.reason}): rule \`${v.rule}\` (${policies}) gives ${v.kind} identity \`${v.identity}\`${v.namespace === undefined ? '' : ` of the namespace \`${v.namespace}\``} ` +
        `${v.capabilities.map((c) => `\`${c}\``).join(', ')} on \`${v.path}\`, which \`${v.invariantPath}\`${v.owner === undefined ? '' : `, the own path of \`${v.owner}\`,`} covers`,
    };
  });
}

/** True when any flag is a broken invariant: the review blocks (exit code 1). */
export function breaksInvariant(flags: readonly RiskFlag[]): boolean {
  return flags.some((f) => f.kind === 'invariant-broken');
}
