import { PlatformRule, RuleFinding } from './platform-rule';
import { overrideClause } from './override-clause';
import { DeclaredStoreObject, declaredStoreObjects } from '../constructs/declared-store-objects';
import { FinalStackDocument } from '../constructs/final-stack-document';
import { finalAttributeValue } from '../constructs/final-store-objects';
import { grantsOf, pipelineRoleNamespace, placePipelineRules } from '../constructs/pipeline-stack-grant';
import { configurationPipelineStacks } from '../constructs/configuration-pipeline-stacks';
import { ConfigurationPipelineRole, PIPELINE_ROLE_LEVEL_RULES } from '../constructs/configuration-pipeline-role';
import { SecretStoreStack } from '../constructs/secret-store-stack';
import { StorePolicy } from '../constructs/store-policy';
import { declaredName, StoreAccessRule } from '../catalogue/store-object-kind';
import { PolicyParser } from '../acl/policy-parser';
import { RulePath } from '../acl/rule-path';
import { capabilityMask, capabilityNames, isDenyMask } from '../acl/store-capability';
import { StoreTarget } from '../model/store-target';
import { ValidationProblem } from '../model/validation-problem';
import { compareStrings } from '../private/compare-strings';
import { storePolicyName } from '../model/store-policy-name';

/** The rules of one grant, by rule slot: the capability mask and the path as written. */
type RuleSet = Map<string, { readonly path: string; mask: number }>;

/**
 * SSI-R17: the configuration pipeline roles' policies (each role's own policy and its grant per stack,
 * `PipelineStackGrant`) are derived from the store objects the constructs were given, while the
 * engine writes the objects of the final documents (after every `addOverride`, a stack override's
 * resources included). Wherever the two differ, the pipeline's token would be refused (HTTP 403)
 * writing an object a stack writes, or be allowed to write a path no object is. So each of those
 * policies' final text must hold exactly the rules the final objects need (the catalogue's
 * `pipelineRules` for the role's access, placed as `pipelineRoleRules` places them) and, in the own
 * policy, the role-level rules (`PIPELINE_ROLE_LEVEL_RULES`). Compared rule by rule (path slot and
 * capabilities, as the store files them), for every object the engine writes and every rule the texts
 * hold, not by samples. Reported on each object a policy misses (naming the override that set its
 * identity) and on each policy for a rule nothing needs (naming what it was derived from, or the
 * override of its text). Each role's final `token_policies` must be exactly its own policy and its
 * grants: another policy attached would be every pipeline job's.
 */
export const SSI_R17: PlatformRule = {
  id: 'SSI-R17',
  description:
    "Each configuration pipeline role's own policy and grants hold, in their final texts, exactly the rules the store objects of the pipeline's stacks need as the engine writes them (after every override), besides the role-level rules, and each role carries exactly those policies: no object the pipeline could not write, no path it could write that no object is.",
  check: (d) => {
    if (d.pipelineRoles.length === 0) return [];
    const root = d.pipelineRoles[0];
    const target = d.stacks[0]?.settings.store ?? StoreTarget.DEFAULT;
    const documents = d.documents;
    const stacks = new Set(configurationPipelineStacks(root).map((s) => s.node.id));
    const grantPaths = new Set(d.pipelineGrants.map((g) => g.node.path));
    // A name the engine learns only when it plans is refused by SSI-R15; its rules cannot be known here.
    const finals = new Map<string, DeclaredStoreObject[]>();
    for (const o of d.storeObjects.objects) {
      if (!stacks.has(o.stack) || o.unresolved.length > 0) continue;
      const list = finals.get(o.stack);
      if (list) list.push(o);
      else finals.set(o.stack, [o]);
    }
    const parser = new PolicyParser(undefined, target.kind);
    const missing = new Map<DeclaredStoreObject, string[]>();
    const unreachable = new Map<DeclaredStoreObject, string[]>();
    // The grants as the engine writes them, found once (not a search of every object per grant: 200 grants at 100 shards).
    const writtenGrants = new Map(d.storeObjects.objects.filter((o) => grantPaths.has(o.constructPath)).map((o) => [o.constructPath, o]));
    const findings: RuleFinding[] = [];
    for (const role of [...d.pipelineRoles].sort((a, b) => compareStrings(a.node.path, b.node.path))) {
      const grants = grantsOf(role);
      const granted = new Set(grants.map((g) => g.grantedStack.node.id));
      // What the policies were derived from, placed only when a policy holds a rule nothing needs (to name its source).
      let given: ReturnType<typeof placedRules> | undefined;
      const givenRules = () => {
        const objects = declaredStoreObjects(root).objects;
        return (given ??= placedRules(objects.filter((o) => stacks.has(o.stack) && o.unresolved.length === 0), role, granted, grantPaths, pipelineRoleNamespace(objects, role)));
      };
      // Where the role's tokens are issued, as the engine writes it: the namespace every grant is looked up in, and the one the others' paths are relative to.
      const namespace = pipelineRoleNamespace(d.storeObjects.objects, role);
      const compare = (policy: StorePolicy, name: string, wanted: Need, derived: () => Need): void => {
        const doc = documents.find((x) => x.stack === SecretStoreStack.of(policy));
        const held = heldRules(policy, name, doc, documents, parser, target);
        if (held === undefined) return; // a text the store refuses or the engine learns when it plans: SSI-R16 and the policy's own checks say so
        const unmet: string[] = [];
        for (const [slot, want] of wanted) {
          const has = held.rules.get(slot);
          const lacking = has === undefined || isDenyMask(has.mask) ? want.mask : want.mask & ~has.mask;
          if (lacking === 0) continue;
          const text = `${capabilityNames(lacking).join(', ')} on ${want.path} (${role.roleName}'s policy ${name})`;
          // A role-level rule, or any rule of a policy whose text an override replaced: said once, on the policy.
          if (want.objects.length === 0 || held.overridden !== undefined) unmet.push(text);
          else for (const object of want.objects) missing.set(object, [...(missing.get(object) ?? []), text]);
        }
        const extra: string[] = [];
        for (const [slot, has] of [...held.rules].sort((a, b) => compareStrings(a[0], b[0]))) {
          const want = wanted.get(slot);
          const beyond = want === undefined || isDenyMask(has.mask) ? has.mask : has.mask & ~want.mask;
          if (beyond === 0) continue;
          extra.push(`${capabilityNames(beyond).join(', ')} on ${has.path}${held.overridden !== undefined ? '' : ` (${derivedFrom(derived().get(slot)?.objects ?? [])})`}`);
        }
        if (unmet.length > 0 || extra.length > 0) {
          const parts = [
            ...(extra.length > 0 ? [`holds rules no store object of the pipeline's stacks needs as the engine writes them: ${extra.join('; ')}`] : []),
            ...(unmet.length > 0 ? [`lacks rules the pipeline needs: ${unmet.join('; ')}`] : []),
          ];
          findings.push({
            constructPath: policy.node.path,
            problem: new ValidationProblem(
              'policy',
              name,
              `${parts.join('; and it ')}${held.overridden !== undefined ? `; policy ${held.overridden}` : ''}; a pipeline policy holds exactly the rules of the objects the engine writes (and the role-level ones): leave the pipeline's policy texts to the library, and give names on the constructs (their props), not by an override`,
              'SSI-R17',
            ),
          });
        }
      };
      // Stack by stack, each grant's rules compared as soon as they are placed (a shard's are dropped before the next's).
      const own: Need = new Map();
      for (const rule of PIPELINE_ROLE_LEVEL_RULES) add(own, rule, undefined);
      for (const [stack, objects] of finals) {
        const need: Need = new Map();
        placePipelineRules(
          objects,
          role,
          granted,
          grantPaths,
          namespace,
          (rule, object, to) => add(to === undefined ? own : need, rule, object),
          (object) => unreachable.set(object, [...(unreachable.get(object) ?? []), `${role.roleName} (namespace ${shownNamespace(namespace)})`]),
        );
        const grant = grants.find((g) => g.grantedStack.node.id === stack);
        if (grant !== undefined) compare(grant, grant.policyName, need, () => givenRules().byStack.get(stack) ?? new Map());
      }
      // A grant of a stack whose every object is gone holds nothing either.
      for (const grant of grants) if (!finals.has(grant.grantedStack.node.id)) compare(grant, grant.policyName, new Map(), () => givenRules().byStack.get(grant.grantedStack.node.id) ?? new Map());
      compare(role.policyResource, role.roleName, own, () => givenRules().own);
      // The store looks a token's policies up by name in the token's namespace: a grant written elsewhere grants nothing.
      for (const grant of grants) {
        const written = writtenGrants.get(grant.node.path);
        if (written === undefined || written.unresolved.length > 0 || written.namespace === namespace) continue;
        findings.push({
          constructPath: grant.node.path,
          problem: new ValidationProblem(
            'namespace',
            written.namespace,
            `is where the engine writes ${role.roleName}'s grant ${grant.policyName} (stack ${grant.grantedStack.node.id}), while the role's tokens are issued in namespace ${shownNamespace(namespace)}: the store looks a token's policies up by name in its own namespace, so the grant would grant nothing and the stack's apply be refused (HTTP 403)${overrideClause(written)}; give every stack of the configuration pipeline the role's namespace (the stacks' provider)`,
            'SSI-R17',
          ),
        });
      }
      const attached = attachedPolicies(role, [role.roleName, ...grants.map((g) => g.policyName)], documents);
      if (attached !== undefined) findings.push(attached);
    }
    for (const [object, roles] of unreachable) {
      findings.push({
        constructPath: object.constructPath,
        problem: new ValidationProblem(
          'namespace',
          object.namespace,
          `is where the engine writes ${object.address} (stack ${object.stack}), outside the namespace of the configuration pipeline's ${roles.join(', ')}: a token's policies reach its own namespace and those below it only, so the apply would be refused (HTTP 403) there${overrideClause(object)}; write it in the role's namespace or one below it`,
          'SSI-R17',
        ),
      });
    }
    for (const [object, lacking] of missing) {
      const named = declaredName(object.kind, object.fields);
      // A block only a stack override writes has no construct to give the value to.
      const onlyOverride = Object.values(object.overrides ?? {}).some((by) => by.startsWith('written by'));
      findings.push({
        constructPath: object.constructPath,
        problem: new ValidationProblem(
          named.field,
          named.value,
          `is written by the engine (${object.address} in stack ${object.stack}) where the configuration pipeline's policies do not reach: ${lacking.join('; ')}; they are derived from the values the constructs were given, so the apply would be refused (HTTP 403) there${overrideClause(object)}; ${onlyOverride ? 'declare the object as a construct (a library construct, or a provider resource) instead of a stack override' : 'give the value on the construct (its props) instead of an override'}`,
          'SSI-R17',
        ),
      });
    }
    return findings;
  },
};

/** Rules by slot (`exact:sys/policies/acl/x`): the path as written, the capabilities merged, the objects that need them (none: a role-level rule). */
type Need = Map<string, { readonly path: string; mask: number; readonly objects: DeclaredStoreObject[] }>;

/** The rules `role` needs for `objects`, placed as its policies were ({@link placePipelineRules}), with the role-level rules in its own. */
function placedRules(
  objects: readonly DeclaredStoreObject[],
  role: ConfigurationPipelineRole,
  granted: ReadonlySet<string>,
  grantPaths: ReadonlySet<string>,
  roleNamespace: string,
): { own: Need; byStack: Map<string, Need> } {
  const own: Need = new Map();
  const byStack = new Map<string, Need>();
  for (const rule of PIPELINE_ROLE_LEVEL_RULES) add(own, rule, undefined);
  placePipelineRules(objects, role, granted, grantPaths, roleNamespace, (rule, object, stack) => {
    if (stack === undefined) return add(own, rule, object);
    if (!byStack.has(stack)) byStack.set(stack, new Map());
    add(byStack.get(stack)!, rule, object);
  });
  return { own, byStack };
}

function add(need: Need, rule: StoreAccessRule, object: DeclaredStoreObject | undefined): void {
  const slot = slotOf(rule.path);
  if (slot === undefined) return;
  const mask = capabilityMask(rule.capabilities);
  const kept = need.get(slot);
  if (kept === undefined) need.set(slot, { path: rule.path, mask, objects: object === undefined ? [] : [object] });
  else {
    kept.mask |= mask;
    // An object's rules come one after the other: a repeat is the last one (no search of a listing's thousands).
    if (object !== undefined && kept.objects[kept.objects.length - 1] !== object) kept.objects.push(object);
  }
}

/** The rule slot of a path (`exact:sys/policies/acl/x`), undefined for one the store refuses. */
function slotOf(path: string): string | undefined {
  try {
    return RulePath.parse(path).slot;
  } catch {
    return undefined;
  }
}

/** The rules `policy`'s final text holds, by slot (capabilities of one slot merged, as the store merges them); undefined when the text cannot be read at synthesis. */
function heldRules(
  policy: StorePolicy,
  name: string,
  doc: FinalStackDocument | undefined,
  documents: readonly FinalStackDocument[],
  parser: PolicyParser,
  target: StoreTarget,
): { rules: RuleSet; overridden?: string } | undefined {
  const block = doc?.resource(policy.terraformResourceType, policy.friendlyUniqueId);
  const rules: RuleSet = new Map();
  // A policy a stack override removed holds nothing: every object it covers is then missed.
  if (doc === undefined || block === undefined) return { rules };
  const overridden = doc.overrideOf(block, 'policy');
  if (overridden === undefined && block.element === policy && block.body.policy === policy.policyInput) {
    // The engine loads the very text the library rendered from this document (renderPolicyHcl), whose
    // rules are the document's (the argument readLibraryPolicy makes): read them there, not by parsing
    // a shard grant's thousands of rules again.
    for (const rule of policy.document.rules) {
      const slot = slotOf(rule.path);
      if (slot === undefined) continue;
      const kept = rules.get(slot);
      if (kept === undefined) rules.set(slot, { path: rule.path, mask: capabilityMask(rule.capabilities) });
      else kept.mask |= capabilityMask(rule.capabilities);
    }
    return { rules };
  }
  const text = finalAttributeValue(block.body, 'policy', doc, documents);
  if (text !== undefined && text.unresolved !== undefined) return undefined;
  let parsed;
  try {
    parsed = parser.parseNow(name, text === undefined ? '' : String(text.value), target.kind);
  } catch {
    return undefined;
  }
  for (const rule of parsed.rules) {
    const kept = rules.get(rule.path.slot);
    if (kept === undefined) rules.set(rule.path.slot, { path: rule.path.display, mask: rule.mask });
    else kept.mask |= rule.mask;
  }
  return { rules, ...(overridden !== undefined ? { overridden } : {}) };
}

/** Which objects, as their constructs gave them, a rule was derived from: `derived from user/innocent as its construct gave it (name "innocent"), which the engine does not write`. */
function derivedFrom(objects: readonly DeclaredStoreObject[]): string {
  if (objects.length === 0) return 'derived from no object of the stacks';
  return `derived from ${objects
    .map((o) => {
      const named = declaredName(o.kind, o.fields);
      return `${o.constructPath} as its construct gave it (${named.field} ${JSON.stringify(named.value)})`;
    })
    .join(', ')}, which the engine does not write`;
}

/**
 * The finding when `role`'s final `token_policies` are not exactly `expected` (its own policy and its
 * grants, as the store names them): an override that attaches another policy would give every
 * pipeline job that policy's access, one that drops a grant would make the apply fail with 403.
 */
function attachedPolicies(role: ConfigurationPipelineRole, expected: readonly string[], documents: readonly FinalStackDocument[]): RuleFinding | undefined {
  const doc = documents.find((x) => x.stack === SecretStoreStack.of(role));
  const block = doc?.resource(role.role.terraformResourceType, role.role.friendlyUniqueId);
  if (doc === undefined || block === undefined) return undefined; // a role a stack override removed: the pipeline cannot log in, nothing to attach
  const given = block.body.token_policies;
  const names: string[] = [];
  const unknown: string[] = [];
  for (const entry of Array.isArray(given) ? given : []) {
    const v = finalAttributeValue({ entry }, 'entry', doc, documents);
    if (v === undefined) continue;
    if (v.unresolved !== undefined) unknown.push(`${String(entry)} (${v.unresolved})`);
    else names.push(storePolicyName(String(v.value)));
  }
  const want = new Set(expected.map(storePolicyName));
  const got = new Set(names);
  const added = [...got].filter((n) => !want.has(n)).sort(compareStrings);
  const dropped = [...want].filter((n) => !got.has(n)).sort(compareStrings);
  if (added.length === 0 && dropped.length === 0 && unknown.length === 0) return undefined;
  const by = doc.overrideOf(block, 'token_policies');
  const parts = [
    ...(added.length > 0 ? [`attaches ${added.join(', ')}, which the pipeline's stacks do not need (every job of the role would hold it)`] : []),
    ...(dropped.length > 0 ? [`drops ${dropped.join(', ')} (the apply would be refused with HTTP 403 where it grants)`] : []),
    ...(unknown.length > 0 ? [`holds a name the engine learns only when it plans: ${unknown.join(', ')}`] : []),
  ];
  return {
    constructPath: role.node.path,
    problem: new ValidationProblem(
      'token_policies',
      names,
      `${parts.join('; ')}; a configuration pipeline role carries exactly its own policy and its grants (${[...want].join(', ')})${by !== undefined ? `; token_policies ${by}` : ''}: leave them to the library`,
      'SSI-R17',
    ),
  };
}

/** A namespace as messages show it (`the root namespace` for `''`). */
function shownNamespace(namespace: string): string {
  return namespace === '' ? '(the root namespace)' : namespace;
}
