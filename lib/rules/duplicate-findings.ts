import { IConstruct } from 'constructs';
import { RuleFinding } from './platform-rule';
import { ValidationProblem } from '../model/validation-problem';

/**
 * Reports every item whose key was already seen, naming the first holder: the shape of the
 * uniqueness rules.
 * @param items candidates in construct-tree order (the first holder of a key is not reported)
 * @param key what must be unique
 * @param path construct path a finding is attached to
 * @param problem the problem of a later holder, given the first one
 */
export function duplicateFindings<T>(
  items: readonly T[],
  key: (item: T) => string,
  path: (item: T) => string,
  problem: (item: T, first: T) => ValidationProblem,
): RuleFinding[] {
  const seen = new Map<string, T>();
  const findings: RuleFinding[] = [];
  for (const item of items) {
    const k = key(item);
    const first = seen.get(k);
    if (first === undefined) seen.set(k, item);
    else findings.push({ constructPath: path(item), problem: problem(item, first) });
  }
  return findings;
}

/** The construct path of a construct, for {@link duplicateFindings}. */
export const constructPathOf = (c: IConstruct): string => c.node.path;
