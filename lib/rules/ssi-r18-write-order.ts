import { PlatformRule, RuleFinding } from './platform-rule';
import { withOverrideClause } from './override-clause';
import { DeclaredStoreObject } from '../constructs/declared-store-objects';
import { FinalStackDocument } from '../constructs/final-stack-document';
import { AUTH_MOUNT_NAME_SPACE } from '../catalogue/auth-mount-object';
import { ValidationProblem } from '../model/validation-problem';

/** What an object must be written after, and why. */
interface Prerequisite {
  /** Its resource address in the object's document (`vault_auth_backend.approle_backend_05935A89`). */
  readonly address: string;
  /** Why, as the clause of a finding. */
  readonly why: string;
}

/**
 * SSI-R18: the engine writes a store object only after what the store needs first, as the final
 * documents order it (after every override): an object under an auth mount its own stack enables
 * after that mount (else a first apply's write can meet a store without the mount: HTTP 404 `no
 * handler for route`, seen on both stores), and every store object of a stack the configuration
 * pipeline applies after that stack's grant to the apply role (else the role's token may not write it
 * yet: HTTP 403; the engine writes unordered objects at once, so which comes first is a race). The library
 * declares both orders on the constructs (lib/constructs/mount-dependencies.ts,
 * `declarePipelineStackGrants`); this rule checks them where an override can undo them
 * (`addOverride('depends_on', …)`, `addOverride('backend', 'approle')`, a block only a stack override
 * wrote). Ordered means reached through `depends_on` or through a reference the object's identity
 * attributes are read through ({@link DeclaredStoreObject.references}), following other resources
 * of the document the same way; an order that only another attribute's reference gives is reported
 * (a `depends_on` says it and costs nothing).
 */
export const SSI_R18: PlatformRule = {
  id: 'SSI-R18',
  description:
    "Every store object is written after what the store needs first, in the final documents: after the auth mount of its own stack it lives under, and after its stack's grant to the configuration pipeline's apply role (depends_on, or a reference its identity attributes are read through).",
  check: (d) => {
    const objects = d.storeObjects.objects;
    if (objects.length === 0) return [];
    // Every stack's, a plain TerraformStack's too: the mount order holds wherever the engine writes.
    const documents = new Map(d.documents.map((doc) => [doc.stack.node.id, doc]));
    const grantPaths = new Set(d.pipelineGrants.map((g) => g.node.path));
    const applyGrants = new Map<string, Prerequisite[]>();
    for (const g of d.pipelineGrants) {
      if (g.grantee.access !== 'apply') continue;
      const stack = g.grantedStack.node.id;
      const why = `the configuration pipeline's grant to ${g.grantee.roleName} for this stack (${g.node.path}): written at once, the object's write can reach the store before the grant and be refused to the apply role's token (HTTP 403) on the apply that adds the grant`;
      applyGrants.set(stack, [...(applyGrants.get(stack) ?? []), { address: `${g.terraformResourceType}.${g.friendlyUniqueId}`, why }]);
    }
    const key = (o: DeclaredStoreObject, mount: string) => JSON.stringify([o.stack, o.namespace, mount]);
    const mounts = new Map<string, DeclaredStoreObject>();
    for (const o of objects) if (o.name.space === AUTH_MOUNT_NAME_SPACE && o.location.mount !== undefined) mounts.set(key(o, o.location.mount), o);
    const byAddress = new Map(objects.map((o) => [JSON.stringify([o.stack, o.address]), o]));
    const findings: RuleFinding[] = [];
    for (const o of objects) {
      const doc = documents.get(o.stack);
      const own = doc?.resource(...splitAddress(o.address));
      // Unrendered (its own problems say why) or named only when the engine plans (SSI-R15).
      if (doc === undefined || own === undefined || o.unresolved.length > 0) continue;
      const needs: Prerequisite[] = [];
      const mount = o.name.space === AUTH_MOUNT_NAME_SPACE || o.location.mount === undefined ? undefined : mounts.get(key(o, o.location.mount));
      if (mount !== undefined) {
        needs.push({
          address: mount.address,
          why: `the auth mount "${mount.location.mount}" its stack enables (${mount.constructPath}), which it lives under (${o.location.storePath}): written at once, a first apply's write can meet a store without the mount (HTTP 404 "no handler for route")`,
        });
      }
      if (!grantPaths.has(o.constructPath)) needs.push(...(applyGrants.get(o.stack) ?? []).filter((g) => doc.resource(...splitAddress(g.address)) !== undefined));
      const unmet = needs.filter((n) => !orderedAfter(o.address, n.address, doc, (address) => byAddress.get(JSON.stringify([o.stack, address]))));
      if (unmet.length === 0) continue;
      const dependsOn = own.body.depends_on;
      const setBy = doc.overrideOf(own, 'depends_on');
      const rule = `must be written after ${unmet.map((n) => `${n.address} (${n.why})`).join(', and after ')}; name ${unmet.length === 1 ? 'it' : 'them'} in depends_on${setBy === undefined ? '' : ` (depends_on ${setBy})`}`;
      findings.push({ constructPath: o.constructPath, problem: withOverrideClause(new ValidationProblem('depends_on', dependsOn ?? [], rule, 'SSI-R18'), o) });
    }
    return findings;
  },
};

/** `vault_policy.x` as `['vault_policy', 'x']` (resource names hold no dot). */
function splitAddress(address: string): [string, string] {
  const dot = address.indexOf('.');
  return [address.slice(0, dot), address.slice(dot + 1)];
}

/**
 * Whether the engine writes resource `from` of `doc` after resource `target`: `target` is reached
 * from `from` through `depends_on` entries and the references a store object's identity attributes
 * are read through, at any depth.
 */
function orderedAfter(from: string, target: string, doc: FinalStackDocument, storeObject: (address: string) => DeclaredStoreObject | undefined): boolean {
  const seen = new Set<string>([from]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    const block = doc.resource(...splitAddress(at));
    if (block === undefined) continue;
    const next = [...(Array.isArray(block.body.depends_on) ? block.body.depends_on.filter((x): x is string => typeof x === 'string') : []), ...(storeObject(at)?.references ?? [])];
    for (const n of next) {
      if (n === target) return true;
      if (!seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
    }
  }
  return false;
}
