import { PlatformRule, RuleFinding } from './platform-rule';
import type { PlatformDeclarations } from '../constructs/platform-declarations';
import { ConfigurationPipelineRole } from '../constructs/configuration-pipeline-role';
import { StorePolicy } from '../constructs/store-policy';
import { DeclaredStoreObject } from '../constructs/declared-store-objects';
import { FinalResource, FinalStackDocument } from '../constructs/final-stack-document';
import { finalAttributeValue } from '../constructs/final-store-objects';
import { Acl, AclRule, listLookupOf } from '../acl/acl';
import { AclPolicy } from '../acl/acl-policy';
import { PolicyParser } from '../acl/policy-parser';
import { RulePath } from '../acl/rule-path';
import { StoreTarget } from '../model/store-target';
import { ValidationProblem } from '../model/validation-problem';
import { compareStrings } from '../private/compare-strings';
import { IdentityKind } from '../invariants/identity-kind';
import { invariantViolations } from '../invariants/invariant-check';
import { InvariantSubject } from '../invariants/invariant-subject';
import { invariantPathText } from '../invariants/invariant-violation';
import { invariantSelectionProblems } from '../invariants/invariant-selection';
import { jwtRoleKindOf } from '../access/invariant-subjects';
import { loginTokenPolicies, storeHeldPolicyText } from '../access/login-token-policies';

/**
 * A role the final documents write (a library construct's, a provider resource a user added, or one
 * only a stack override writes), with what its tokens carry: the final `token_policies` of its block.
 */
interface DeclaredRole {
  /** Construct path of the role's construct (or of its resource, or of the stack that writes it by an override). */
  readonly path: string;
  /** `<mount>/<role>` as the engine writes it (after every override of `backend` or `role_name`). */
  readonly identityName: string;
  readonly kind: IdentityKind;
  /** The role's final block and the document holding it. */
  readonly doc: FinalStackDocument;
  readonly block: FinalResource | undefined;
  /** Its store namespace (`''`: the root). */
  readonly namespace: string;
  /** An application's declared own path (`readablePath`): what is its, whatever else it is granted. */
  readonly ownPath?: string;
}

/**
 * SSI-R16: no declared role breaks a security team's access invariant (`AccessInvariants`). Each
 * role's ACL is built from the final documents the engine loads (its role's `token_policies`, plus
 * `default` unless its `token_no_default_policy` is true, as the store attaches them at login
 * (`loginTokenPolicies`); each policy's `policy` text, after every override: a pipeline role's grants
 * included; for a `default` no document writes, the target store's stock text), parsed and
 * evaluated the way the store does, and checked with the invariant checker; every violation is
 * reported on the role, naming the invariant, the capability, a request path and the declarations
 * (or the override) that asked for the rule.
 */
export const SSI_R16: PlatformRule = {
  id: 'SSI-R16',
  description:
    'No role breaks an access invariant (AccessInvariants): no identity an invariant selects holds a capability it forbids on a path it covers, evaluated as the store evaluates ACLs.',
  check: (d) => {
    const invariants = d.invariants.flatMap((i) => i.invariants);
    if (invariants.length === 0) return [];
    const target = d.stacks[0]?.settings.store ?? StoreTarget.DEFAULT;
    // The final documents, read once for the roles and their policies.
    const documents = d.documents;
    const roles = declaredRoles(d, documents);
    // By namespace and name: two namespaces' roles of one name are two roles.
    const byName = new Map(roles.map((r) => [`${r.namespace}\u0000${r.identityName}`, r]));
    const finals = new FinalPolicies(d, target, documents);
    const subjects = roles.map((r) => finals.subjectOf(r));
    // An invariant that speaks of no declared role checks nothing: a problem of its declaration.
    const selection = d.invariants.flatMap((declared) =>
      invariantSelectionProblems(subjects, declared.invariants).map((p): RuleFinding => ({ constructPath: declared.node.path, problem: new ValidationProblem(p.field, p.value, p.rule, 'SSI-R16') })),
    );
    const violations = invariantViolations(subjects, invariants);
    const where = d.invariants.map((i) => i.node.path).join(', ');
    return [...selection, ...finals.unreadable, ...violations.map((v): RuleFinding => {
      const granted = v.declaredBy.length > 0 ? `; granted by ${v.declaredBy.join(', ')}` : '';
      const policies = `polic${v.policies.length === 1 ? 'y' : 'ies'} ${v.policies.join(', ')}`;
      return {
        constructPath: byName.get(`${v.namespace ?? ''}\u0000${v.identity}`)!.path,
        problem: new ValidationProblem(
          `policy.rules["${v.rule}"]`,
          v.capabilities,
          `breaks invariant "${v.invariant}" (${v.reason}; declared at ${where}): ${v.identity} (${v.kind}) can ${v.capabilities.join(', ')} ${v.path}, ` +
            `which ${invariantPathText(v)} covers (${policies}${granted}); take the grant away or change the invariant`,
          'SSI-R16',
        ),
      };
    })];
  },
};

/**
 * Every role of the final documents: each role resource of a JWT/OIDC or AppRole method the final
 * store objects hold, whoever wrote it. A library construct's role keeps the construct's kind and an
 * application's own path; any other role's kind is read from its final attributes as `invariants
 * check` reads it from the synthesized output (`identityKindOf`): what the engine will create
 * is what the invariants are checked on, not what the constructs declared.
 */
function declaredRoles(d: PlatformDeclarations, documents: readonly FinalStackDocument[]): DeclaredRole[] {
  const library = new Map<string, { path: string; kind: IdentityKind; ownPath?: string }>();
  for (const r of d.jwtRoles) library.set(r.role.node.path, { path: r.node.path, kind: r instanceof ConfigurationPipelineRole ? 'pipeline' : 'ci' });
  for (const a of d.applications) library.set(a.role.node.path, { path: a.node.path, kind: 'application', ownPath: a.readablePath.policyPath });
  for (const p of d.peopleRoles) library.set(p.role.node.path, { path: p.node.path, kind: 'person' });
  const byStack = new Map(documents.map((doc) => [doc.stack.node.id, doc]));
  const roles: DeclaredRole[] = [];
  for (const o of d.storeObjects.objects) {
    if (o.kind.kind !== 'jwt-role' && o.kind.kind !== 'approle-role') continue;
    const doc = byStack.get(o.stack);
    if (doc === undefined) continue;
    const dot = o.address.indexOf('.');
    const block = doc.resource(o.address.slice(0, dot), o.address.slice(dot + 1));
    const identityName = `${o.location.mount}/${o.location.name}`;
    const known = library.get(o.constructPath);
    const kind = known?.kind ?? rawRoleKind(o.kind.kind, block, doc, documents);
    roles.push({ path: known?.path ?? o.constructPath, identityName, kind, doc, block, namespace: o.namespace, ...(known?.ownPath !== undefined ? { ownPath: known.ownPath } : {}) });
  }
  return roles;
}

/** The kind of a role no library construct wrote, from its final attributes (`role_type`, `bound_claims`: as `identityKindOf` reads them). */
function rawRoleKind(kind: string, block: FinalResource | undefined, doc: FinalStackDocument, documents: readonly FinalStackDocument[]): IdentityKind {
  if (kind === 'approle-role') return 'application';
  const body = block?.body ?? {};
  const roleType = body.role_type === undefined ? undefined : finalAttributeValue(body, 'role_type', doc, documents)?.value;
  return roleType === 'oidc' ? 'person' : jwtRoleKindOf(body.bound_claims);
}

/**
 * The policies on each role's tokens as the store gives them at login: the role's final `token_policies`
 * (references followed) and `default` unless its final `token_no_default_policy` is true
 * (`loginTokenPolicies`), each name the final `policy` text of the policies of that name in the
 * role's namespace (lib/constructs/final-store-objects.ts), or, when no document writes it, the store's
 * own text (`storeHeldPolicyText`: `default`'s stock text), parsed as the store parses it. A rule
 * is said to be declared by the construct declarations that asked for it, or by the override that
 * wrote the text or attached the policy.
 */
class FinalPolicies {
  /** Policy texts the store would refuse (an override's): reported, as the engine's apply would fail there. */
  readonly unreadable: RuleFinding[] = [];
  private readonly documents: readonly FinalStackDocument[];
  private readonly byName = new Map<string, DeclaredStoreObject[]>();
  private readonly parsed = new Map<DeclaredStoreObject, { policy?: AclPolicy; sources: Map<string, string[]> }>();
  private readonly parser: PolicyParser;
  private readonly stocks = new Map<string, AclPolicy | undefined>();

  constructor(
    d: PlatformDeclarations,
    private readonly target: StoreTarget,
    documents: readonly FinalStackDocument[],
  ) {
    this.documents = documents;
    this.parser = new PolicyParser(undefined, target.kind);
    for (const o of d.storeObjects.objects) {
      if (o.kind.kind !== 'policy') continue;
      const key = `${o.namespace}\u0000${o.name.key}`;
      this.byName.set(key, [...(this.byName.get(key) ?? []), o]);
    }
  }

  /** A role's ACL from the final policy texts its tokens carry, as the store builds it. */
  subjectOf(role: DeclaredRole): InvariantSubject {
    const { doc, block, namespace } = role;
    const attachedBy = block === undefined ? undefined : doc.overrideOf(block, 'token_policies');
    const given = block?.body.token_policies;
    const unknown: string[] = [];
    const listed = (Array.isArray(given) ? given : []).flatMap((entry) => {
      const v = finalAttributeValue({ entry }, 'entry', doc, this.documents);
      if (v?.unresolved !== undefined) unknown.push(`${String(entry)} (${v.unresolved})`);
      return v === undefined || v.unresolved !== undefined ? [] : [String(v.value)];
    });
    if (unknown.length > 0) {
      // A policy name the engine learns only when it plans could be any policy: dropping it would pass every invariant.
      this.unreadable.push({
        constructPath: role.path,
        problem: new ValidationProblem(
          'token_policies',
          unknown.join(', '),
          `holds a policy name not known at synthesis: the access invariants cannot be decided on ${role.identityName}; write each policy name as plain text or a reference to a policy of the configuration${attachedBy !== undefined ? `; token_policies ${attachedBy}` : ''}`,
          'SSI-R16',
        ),
      });
    }
    // The store adds `default` at login unless the role's final token_no_default_policy is true.
    const noDefault = block === undefined ? undefined : finalAttributeValue(block.body, 'token_no_default_policy', doc, this.documents);
    const names = loginTokenPolicies(listed, noDefault?.unresolved === undefined && noDefault?.value === true);
    const parsed: AclPolicy[] = [];
    const sources = new Map<string, string[]>();
    for (const name of names) {
      const written = this.byName.get(`${namespace}\u0000${name}`) ?? [];
      if (written.length === 0) {
        // No document writes it: the store's own text if it has one (`default`), else the store ignores the name.
        const stock = this.stock(name);
        if (stock !== undefined) parsed.push(stock);
        continue;
      }
      for (const o of written) {
        const read = this.read(o);
        if (read.policy === undefined) continue;
        parsed.push(read.policy);
        for (const [slot, from] of read.sources) sources.set(slot, [...(sources.get(slot) ?? []), ...from, ...(attachedBy !== undefined ? [`token_policies ${attachedBy}`] : [])]);
      }
    }
    const acl = Acl.fromPolicies(parsed, { store: this.target.kind, listLookup: listLookupOf(this.target) });
    return {
      name: role.identityName,
      // Its namespace's paths: another namespace's applications own none of them (issue 45).
      ...(role.namespace !== '' ? { namespace: role.namespace } : {}),
      kind: role.kind,
      acl,
      ...(role.ownPath !== undefined ? { ownPaths: [role.ownPath] } : {}),
      declaredBy: (rule: AclRule) => [...new Set(sources.get(rule.path.slot) ?? [])].sort(compareStrings),
    };
  }

  /** The store's own text of a policy no document writes (`default`'s stock text for the target store), parsed once. */
  private stock(name: string): AclPolicy | undefined {
    if (!this.stocks.has(name)) {
      const text = storeHeldPolicyText(name, undefined, this.target.kind);
      this.stocks.set(name, text === undefined ? undefined : this.parser.parseNow(name, text, this.target.kind));
    }
    return this.stocks.get(name);
  }

  /** A policy's final text, parsed once, with who declared each of its rules. */
  private read(o: DeclaredStoreObject): { policy?: AclPolicy; sources: Map<string, string[]> } {
    const kept = this.parsed.get(o);
    if (kept !== undefined) return kept;
    const doc = this.documents.find((d) => d.stack.node.id === o.stack)!;
    const dot = o.address.indexOf('.');
    const block = doc.resource(o.address.slice(0, dot), o.address.slice(dot + 1));
    const sources = new Map<string, string[]>();
    let policy: AclPolicy | undefined;
    const text = block === undefined ? undefined : finalAttributeValue(block.body, 'policy', doc, this.documents);
    const overridden = block === undefined ? undefined : doc.overrideOf(block, 'policy');
    if (block !== undefined && text !== undefined && text.unresolved === undefined) {
      try {
        policy = this.parser.parseNow(o.name.key, String(text.value), this.target.kind);
      } catch (e) {
        this.unreadable.push({
          constructPath: o.constructPath,
          problem: new ValidationProblem('policy', o.name.key, `is a text the store refuses (${(e as Error).message})${overridden !== undefined ? `; policy ${overridden}` : ''}: the engine's apply would fail there`, 'SSI-R16'),
        });
      }
      // The declarations that asked for each rule: the library's own text's, else the override or the resource that wrote it.
      const element = block.element;
      const own = element instanceof StorePolicy && overridden === undefined ? element : undefined;
      if (own !== undefined) {
        for (const rule of own.document.rules) {
          try {
            const slot = RulePath.parse(rule.path).slot;
            sources.set(slot, [...(sources.get(slot) ?? []), ...rule.sources]);
          } catch {
            // a path the store refuses is reported by the policy's own checks
          }
        }
      } else {
        for (const rule of policy?.rules ?? []) sources.set(rule.path.slot, [overridden !== undefined ? `policy ${overridden}` : o.constructPath]);
      }
    }
    if (block !== undefined && text?.unresolved !== undefined) {
      // A text the engine learns only when it plans (a file, a data source): its rules cannot be
      // evaluated here, and counting none would pass any invariant; the role's tokens carry it.
      this.unreadable.push({
        constructPath: o.constructPath,
        problem: new ValidationProblem(
          'policy',
          o.name.key,
          `is not known at synthesis (${text.unresolved})${overridden !== undefined ? `; policy ${overridden}` : ''}: the access invariants cannot be decided on a role that carries it; write the policy text as a literal`,
          'SSI-R16',
        ),
      });
    }
    const read = { ...(policy !== undefined ? { policy } : {}), sources };
    this.parsed.set(o, read);
    return read;
  }
}
