import { RuleFinding } from './platform-rule';
import { declaredName, StoreObjectKindName } from '../catalogue/store-object-kind';
import type { DeclaredStoreObject } from '../constructs/declared-store-objects';
import { ValidationProblem } from '../model/validation-problem';
import { overrideClause } from './override-clause';

/** The field of a finding as a user writes it: the provider attribute in camel case (`role_name` → `roleName`), as the construct props and the provider classes name it. */
export function findingField(attribute: string): string {
  return attribute.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The findings of a uniqueness rule derived from the catalogue: the objects of `kinds`, grouped by
 * store namespace, name space and name as the store compares them (`DeclaredStoreObject.name`), whoever declares
 * them and in whichever stack. Every later holder of a name is reported, naming the first holder's
 * construct path; when the store's normalisation is what makes two names one, the finding says so.
 * @param objects every object the tree synthesizes, in construct-tree order
 * @param consequence what two declarations of one object do on the store, given the name space
 */
export function storeNameCollisions(
  objects: readonly DeclaredStoreObject[],
  kinds: readonly StoreObjectKindName[],
  ruleId: string,
  consequence: (space: string) => string,
): RuleFinding[] {
  const first = new Map<string, DeclaredStoreObject>();
  const findings: RuleFinding[] = [];
  for (const o of objects) {
    if (!kinds.includes(o.kind.kind)) continue;
    // One namespace's objects never share a name with another's.
    const id = `${o.namespace}\u0000${o.name.space}\u0000${o.name.key}`;
    const holder = first.get(id);
    if (holder === undefined) {
      first.set(id, o);
      continue;
    }
    // The names as synthesized: an expression the engine evaluates (`${lower("X")}`) is shown as written.
    const own = declaredName(o.kind, o.written);
    const theirs = declaredName(holder.kind, holder.written);
    const evaluated = own.value !== declaredName(o.kind, o.fields).value;
    // Said when the names differ as typed: the reader then sees why the store takes them for one.
    const onStore =
      own.value === o.name.key ? '' : `is ${JSON.stringify(o.name.key)} on the store (${evaluated ? 'the engine evaluates the expression; ' : ''}${o.kind.nameComparison}), `;
    const as = theirs.value === own.value ? '' : ` as ${JSON.stringify(theirs.value)}`;
    findings.push({
      constructPath: o.constructPath,
      problem: new ValidationProblem(
        findingField(own.field),
        own.value,
        `${onStore}${onStore ? 'already' : 'is already'} declared by ${holder.constructPath}${as}${theirOverrides(holder)}: ${consequence(o.name.space)}${overrideClause(o)}`,
        ruleId,
      ),
    });
  }
  return findings;
}

/** The first holder's overrides, said in parentheses (` (name set by addOverride(…) on …)`): its name too may be an override's. */
function theirOverrides(holder: DeclaredStoreObject): string {
  const clause = overrideClause(holder);
  return clause === '' ? '' : ` (${clause.slice(2).replace(/; /g, ', ')})`;
}
