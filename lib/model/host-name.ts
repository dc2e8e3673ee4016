import { ValidationProblem } from './validation-problem';

/** One DNS label: letters, digits and inner hyphens, 1-63 characters. */
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** What a host name must look like, in words. */
export const HOST_NAME_RULE =
  'must be a DNS host name: labels of letters, digits and inner hyphens separated by single dots, no scheme, port, placeholder, leading "-" or empty label';

/**
 * Checks a host name the platform writes into commands and files (`registryHost` becomes the target
 * of `docker login`, where `--help` would be an option and `..` no host): RFC 1123 labels joined by
 * single dots, at most 253 characters. IPv4 addresses pass (their labels are digits).
 * @returns the problems found, empty when the name is acceptable
 */
export function hostNameProblems(field: string, value: unknown): ValidationProblem[] {
  if (typeof value !== 'string' || value.length === 0 || value.length > 253 || !value.split('.').every((l) => LABEL.test(l))) {
    return [new ValidationProblem(field, value, HOST_NAME_RULE)];
  }
  return [];
}
