import type { DeclaredStoreObject } from '../constructs/declared-store-objects';
import { ValidationProblem } from '../model/validation-problem';

/**
 * The clause a finding on `object` ends with when an override set one of its identity attributes
 * (`; name set by addOverride('name', …) on user/innocent`): the value the rule read is the final
 * document's, and the reader is told which escape hatch wrote it. `''` when the constructs wrote
 * every identity attribute themselves.
 */
export function overrideClause(object: DeclaredStoreObject): string {
  const overrides = Object.entries(object.overrides ?? {});
  return overrides.map(([field, by]) => `; ${field} ${by}`).join('');
}

/** `problem` with {@link overrideClause} of `object` added to its rule text. */
export function withOverrideClause(problem: ValidationProblem, object: DeclaredStoreObject): ValidationProblem {
  const clause = overrideClause(object);
  return clause === '' ? problem : new ValidationProblem(problem.field, problem.value, `${problem.rule}${clause}`, problem.ruleId);
}
