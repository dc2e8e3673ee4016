import { ValidationProblem } from './validation-problem';

/**
 * Problems with an auth method's mount path: one lower-case segment (`jwt`, `approle`), so that it
 * reads the same in login paths, policies and the CI template.
 */
export function mountSegmentProblems(field: string, path: string): ValidationProblem[] {
  return /^[a-z0-9][a-z0-9_-]*$/.test(path) ? [] : [new ValidationProblem(field, path, 'must be a single lower-case mount segment')];
}
