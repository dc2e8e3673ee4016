import { PlatformRule, RuleFinding } from './platform-rule';
import type { PlatformDeclarations } from '../constructs/platform-declarations';
import { ConfigurationPipelineRole } from '../constructs/configuration-pipeline-role';
import { grantsOf } from '../constructs/pipeline-stack-grant';
import { StorePolicy } from '../constructs/store-policy';
import { Acl, AclRule, listLookupOf } from '../acl/acl';
import { AclPolicy } from '../acl/acl-policy';
import { RulePath } from '../acl/rule-path';
import { StoreCapability, capabilityMask } from '../acl/store-capability';
import { StoreTarget } from '../model/store-target';
import { storePolicyName } from '../model/store-policy-name';
import { ValidationProblem } from '../model/validation-problem';
import { compareStrings } from '../private/compare-strings';
import { IdentityKind } from '../invariants/identity-kind';
import { invariantViolations } from '../invariants/invariant-check';
import { InvariantSubject } from '../invariants/invariant-subject';
import { invariantPathText } from '../invariants/invariant-violation';

/** A role construct of the platform, with the policies on its tokens. */
interface DeclaredRole {
  readonly path: string;
  readonly identityName: string;
  readonly kind: IdentityKind;
  readonly policies: readonly StorePolicy[];
  /** An application's declared own path (`readablePath`): what is its, whatever else it is granted. */
  readonly ownPath?: string;
}

/**
 * SSI-R16: no declared role breaks a security team's access invariant (`AccessInvariants`). Each
 * role's ACL is built from the policies the platform attaches to it (a pipeline role's grants
 * included) the way the store builds it, and checked with the invariant checker; every violation is
 * reported on the role, naming the invariant, the capability, a request path and the declarations
 * that asked for the rule.
 */
export const SSI_R16: PlatformRule = {
  id: 'SSI-R16',
  description:
    'No role breaks an access invariant (AccessInvariants): no identity an invariant selects holds a capability it forbids on a path it covers, evaluated as the store evaluates ACLs.',
  check: (d) => {
    const invariants = d.invariants.flatMap((i) => i.invariants);
    if (invariants.length === 0) return [];
    const target = d.stacks[0]?.settings.store ?? StoreTarget.DEFAULT;
    const roles = declaredRoles(d);
    const byName = new Map(roles.map((r) => [r.identityName, r]));
    const violations = invariantViolations(
      roles.map((r) => subjectOf(r, target)),
      invariants,
    );
    const where = d.invariants.map((i) => i.node.path).join(', ');
    return violations.map((v): RuleFinding => {
      const granted = v.declaredBy.length > 0 ? `; granted by ${v.declaredBy.join(', ')}` : '';
      const policies = `polic${v.policies.length === 1 ? 'y' : 'ies'} ${v.policies.join(', ')}`;
      return {
        constructPath: byName.get(v.identity)!.path,
        problem: new ValidationProblem(
          `policy.rules["${v.rule}"]`,
          v.capabilities,
          `breaks invariant "${v.invariant}" (${v.reason}; declared at ${where}): ${v.identity} (${v.kind}) can ${v.capabilities.join(', ')} ${v.path}, ` +
            `which ${invariantPathText(v)} covers (${policies}${granted}); take the grant away or change the invariant`,
          'SSI-R16',
        ),
      };
    });
  },
};

function declaredRoles(d: PlatformDeclarations): DeclaredRole[] {
  return [
    ...d.jwtRoles.map((r) => ({
      path: r.node.path,
      identityName: r.identityName,
      kind: (r instanceof ConfigurationPipelineRole ? 'pipeline' : 'ci') as IdentityKind,
      policies: r instanceof ConfigurationPipelineRole ? [r.policyResource, ...grantsOf(r)] : [r.policyResource],
    })),
    ...d.applications.map((a) => ({ path: a.node.path, identityName: a.identityName, kind: 'application' as IdentityKind, policies: [a.policyResource], ownPath: a.readablePath.policyPath })),
    ...d.peopleRoles.map((p) => ({ path: p.node.path, identityName: p.identityName, kind: 'person' as IdentityKind, policies: [p.policyResource] })),
  ];
}

/** A role's ACL from its policy documents, as the store would build it from the rendered texts. */
function subjectOf(role: DeclaredRole, target: StoreTarget): InvariantSubject {
  const parsed: AclPolicy[] = [];
  const sources = new Map<string, string[]>();
  for (const policy of role.policies) {
    // Rendering completes a policy whose rules depend on the rest of the app (a pipeline role's).
    void policy.policyText;
    const name = storePolicyName(policy.document.name);
    const rules = [];
    for (const rule of policy.document.rules) {
      let path: RulePath;
      try {
        path = RulePath.parse(rule.path);
      } catch {
        continue; // a path the store refuses is reported by the policy's own checks
      }
      rules.push({ path, mask: capabilityMask(rule.capabilities as readonly StoreCapability[]), constraints: [] });
      sources.set(path.slot, [...(sources.get(path.slot) ?? []), ...rule.sources]);
    }
    parsed.push({ name, rules, syntax: 'library' });
  }
  const acl = Acl.fromPolicies(parsed, { store: target.kind, listLookup: listLookupOf(target) });
  return {
    name: role.identityName,
    kind: role.kind,
    acl,
    ...(role.ownPath !== undefined ? { ownPaths: [role.ownPath] } : {}),
    declaredBy: (rule: AclRule) => [...new Set(sources.get(rule.path.slot) ?? [])].sort(compareStrings),
  };
}
