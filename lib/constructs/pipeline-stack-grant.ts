import { IConstruct } from 'constructs';
import { TerraformResource } from '../framework/framework';
import type { PipelineAccess, StoreAccessRule } from '../catalogue/store-object-kind';
import { configurationPipelineStacks } from './configuration-pipeline-stacks';
import { DeclaredStoreObject, declaredStoreObjects } from './declared-store-objects';
import { SecretStoreStack } from './secret-store-stack';
import { StorePolicy } from './store-policy';
import { oncePerSynthesis } from './synthesis-round';
import { pipelineGrantConstructId, pipelineGrantPolicyName } from '../model/pipeline-grant-name';

export { pipelineGrantPolicyName };

/** What a stack grant needs to know of the configuration pipeline role it grants to. */
export interface PipelineGrantee extends IConstruct {
  /** The role's name, also its own policy's name: the grant is named `<roleName>-<stack>`. */
  readonly roleName: string;
  /** Which rules the role gets: `apply` (create, read, update, delete) or `plan` (read). */
  readonly access: PipelineAccess;
}

/** The configuration pipeline roles of each app, by app root, in the order declared. */
const granteesByRoot = new WeakMap<IConstruct, PipelineGrantee[]>();

/**
 * Records a configuration pipeline role, so that {@link declarePipelineStackGrants} gives it a grant
 * in every other stack the pipeline runs. Called by the role's constructor.
 */
export function registerPipelineGrantee(role: PipelineGrantee): void {
  const root = role.node.root;
  granteesByRoot.set(root, [...(granteesByRoot.get(root) ?? []), role]);
}

/**
 * One configuration pipeline role's grant for one stack it runs, declared in that stack: the rules
 * of the catalogue (`pipelineRules`) for every store object the stack declares, for the role's access,
 * but the listings (names only, which stay in the role's own policy: they do not grow with the number
 * of objects, and let a plan of a new object find out whether the store has it). Attached to the role by
 * name (its `token_policies`, in the role's stack), so the role's stack holds one name per stack, not
 * one rule per object: adding, changing or removing an application changes only its shard stack.
 *
 * Every other store resource of the stack depends on the apply role's grant, so the engine creates
 * the grant (or widens it) before the objects it covers, and destroys a removed object (its
 * dependency is kept in the state) before it narrows the grant: the pipeline's token may write
 * an object exactly as long as the object is in a state (docs/pipelines.md §8, §9).
 */
export class PipelineStackGrant extends StorePolicy {
  /** The construct id of `role`'s grant in a stack (`secretstore-iac-grant-pipeline-apply`). */
  static idFor(role: PipelineGrantee): string {
    return pipelineGrantConstructId(role.node.id);
  }

  /** The role granted. */
  readonly grantee: PipelineGrantee;
  /** The stack whose objects it covers, which declares it. */
  readonly grantedStack: SecretStoreStack;
  /** Its store policy name. */
  readonly policyName: string;

  constructor(stack: SecretStoreStack, grantee: PipelineGrantee) {
    const name = pipelineGrantPolicyName(grantee.roleName, stack.node.id);
    super(stack, PipelineStackGrant.idFor(grantee), {
      name,
      complete: () => oncePerSynthesis(this, 'rules', () => this.addRules()),
      whenEmpty: `stack ${stack.node.id} declares no store object: the role needs nothing here`,
    });
    this.grantee = grantee;
    this.grantedStack = stack;
    this.policyName = name;
  }

  private addRules(): void {
    const source = this.grantee.node.path;
    for (const rule of pipelineRoleRules(this.grantee).byStack.get(this.grantedStack.node.id) ?? []) this.document.addRule(rule.path, rule.capabilities, source);
  }
}

/** The grants `role` has, sorted by stack name: its `token_policies` beside its own policy. */
export function grantsOf(role: PipelineGrantee): PipelineStackGrant[] {
  return configurationPipelineStacks(role)
    .map((s) => s.node.tryFindChild(PipelineStackGrant.idFor(role)))
    .filter((g): g is PipelineStackGrant => g instanceof PipelineStackGrant && g.grantee === role)
    .sort((a, b) => (a.grantedStack.node.id < b.grantedStack.node.id ? -1 : a.grantedStack.node.id > b.grantedStack.node.id ? 1 : 0));
}

/**
 * Declares, in every stack the configuration pipeline runs but a role's own, that role's
 * {@link PipelineStackGrant} (once: a later synthesis of the same app adds only the new stacks'), and
 * makes every other store resource of the stack depend on the apply role's grant (`depends_on`,
 * kept with the resource's own). Run when the declarations are complete, before they are validated
 * (SecretStoreApp does), so the grants are store objects like any other: named, checked by the
 * platform rules, planned.
 */
export function declarePipelineStackGrants(root: IConstruct): void {
  const grantees = granteesByRoot.get(root.node.root) ?? [];
  if (grantees.length === 0) return;
  const stacks = configurationPipelineStacks(root);
  for (const role of grantees) {
    const own = SecretStoreStack.of(role);
    for (const stack of stacks) {
      if (stack !== own && stack.node.tryFindChild(PipelineStackGrant.idFor(role)) === undefined) new PipelineStackGrant(stack, role);
    }
  }
  const grants = new Set(stacks.flatMap((s) => s.node.children.filter((c): c is PipelineStackGrant => c instanceof PipelineStackGrant)));
  const grantPaths = new Set([...grants].map((g) => g.node.path));
  // The apply roles' grants each stack's objects wait for.
  const applyGrants = new Map<string, PipelineStackGrant[]>();
  for (const g of grants) if (g.grantee.access === 'apply') applyGrants.set(g.grantedStack.node.id, [...(applyGrants.get(g.grantedStack.node.id) ?? []), g]);
  const objectPaths = new Set(declaredStoreObjects(root).objects.filter((o) => applyGrants.has(o.stack) && !grantPaths.has(o.constructPath)).map((o) => o.constructPath));
  for (const stack of stacks) {
    const waitFor = (applyGrants.get(stack.node.id) ?? []).map((g) => `${g.terraformResourceType}.${g.friendlyUniqueId}`);
    if (waitFor.length === 0) continue;
    for (const c of stack.node.findAll()) {
      if (!TerraformResource.isTerraformResource(c) || !objectPaths.has(c.node.path)) continue;
      const given = c.dependsOn ?? [];
      const missing = waitFor.filter((d) => !given.includes(d));
      if (missing.length > 0) c.dependsOn = [...given, ...missing];
    }
  }
}

/** Where the rules a pipeline role needs go: its own policy, or the grant of each stack. */
export interface PipelineRoleRules {
  /** The rules of the role's own policy (besides its role-level rules). */
  readonly own: readonly StoreAccessRule[];
  /** The rules of each stack's grant, by stack name. */
  readonly byStack: ReadonlyMap<string, readonly StoreAccessRule[]>;
}

/**
 * The rules `role` needs for every store object of the stacks the configuration pipeline runs, from
 * the catalogue (each object's `pipelineRules` for the role's access), and where each goes:
 * - to the grant of the object's stack: the rules on the object's own paths, which grow with the
 *   number of objects;
 * - to the role's own policy: the listings (rules granting only `list`: names, one per listing, not
 *   per object), every rule of an object of the role's own stack or of a stack without its grant,
 *   and the rules on the grants themselves (the apply role writes its stacks' grants, the plan role
 *   reads them): a grant cannot grant its own writing.
 * Computed once per synthesis.
 */
export function pipelineRoleRules(role: PipelineGrantee): PipelineRoleRules {
  return oncePerSynthesis(role, 'pipelineRoleRules', () => {
    const stacks = configurationPipelineStacks(role);
    const names = new Set(stacks.map((s) => s.node.id));
    const granted = new Set(grantsOf(role).map((g) => g.grantedStack.node.id));
    const grantPaths = new Set(stacks.flatMap((s) => s.node.children.filter((c) => c instanceof PipelineStackGrant).map((c) => c.node.path)));
    const own: StoreAccessRule[] = [];
    const byStack = new Map<string, StoreAccessRule[]>();
    const all = declaredStoreObjects(role).objects;
    const objects = all.filter((o) => names.has(o.stack));
    placePipelineRules(objects, role, granted, grantPaths, pipelineRoleNamespace(all, role), (rule, _object, stack) => {
      if (stack === undefined) own.push(rule);
      else {
        const rules = byStack.get(stack);
        if (rules) rules.push(rule);
        else byStack.set(stack, [rule]);
      }
    });
    return { own, byStack };
  });
}

/**
 * Places each rule `role` needs for `objects` (the catalogue's `pipelineRules` for its access) as
 * {@link pipelineRoleRules} describes: `place` gets the stack whose grant holds it, or undefined for
 * the role's own policy. One placement for the grants (from the constructs' values) and for SSI-R17,
 * which places the final documents' objects the same way and compares.
 *
 * A token's policies are the role's namespace's, and a request in a namespace below it is checked
 * against the path prefixed with that namespace relative to the role's (`team-a/sys/policies/acl/x`
 * for a policy written in `team-a`): the rules of an object of such a namespace are placed so
 * (before: a 403 on OpenBao). An object in a namespace that is not the role's nor below it is out of
 * the reach of every policy the role can have: `outside` gets it, and no rule is placed.
 * @param granted the stacks that have a grant of `role`
 * @param grantPaths the construct paths of every pipeline grant (their rules go to the own policy)
 * @param roleNamespace the namespace of `role`'s JWT role ({@link pipelineRoleNamespace})
 */
export function placePipelineRules(
  objects: readonly DeclaredStoreObject[],
  role: PipelineGrantee,
  granted: ReadonlySet<string>,
  grantPaths: ReadonlySet<string>,
  roleNamespace: string,
  place: (rule: StoreAccessRule, object: DeclaredStoreObject, stack: string | undefined) => void,
  outside: (object: DeclaredStoreObject) => void = () => undefined,
): void {
  for (const object of objects) {
    const prefix = namespacePrefix(object.namespace, roleNamespace);
    if (prefix === undefined) {
      outside(object);
      continue;
    }
    const toGrant = granted.has(object.stack) && !grantPaths.has(object.constructPath);
    for (const rule of object.kind.pipelineRules(object.fields, role.access)) {
      const placed = prefix === '' ? rule : { path: `${prefix}${rule.path}`, capabilities: rule.capabilities };
      place(placed, object, !toGrant || rule.capabilities.every((c) => c === 'list') ? undefined : object.stack);
    }
  }
}

/**
 * The namespace of a configuration pipeline role's JWT role among `objects` (`''`: the root
 * namespace), where its tokens are issued and its policies looked up by name.
 */
export function pipelineRoleNamespace(objects: readonly DeclaredStoreObject[], role: PipelineGrantee): string {
  const own = objects.find((o) => o.kind.kind === 'jwt-role' && o.constructPath.startsWith(`${role.node.path}/`));
  return own?.namespace ?? '';
}

/**
 * The prefix a policy of namespace `from` writes before a path of namespace `to` (`''` for the same,
 * `team-a/` for a child), undefined when `to` is not `from` nor below it. Namespace paths compare
 * as given, segment by segment.
 */
export function namespacePrefix(to: string, from: string): string | undefined {
  if (to === from) return '';
  if (from === '') return `${to}/`;
  return to.startsWith(`${from}/`) ? `${to.slice(from.length + 1)}/` : undefined;
}
