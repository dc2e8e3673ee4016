import { ValidationProblem } from './validation-problem';

/** Characters allowed in names of roles, policies, accounts and applications. */
const NAME_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** Longest name accepted: role and policy names end up in URLs and in Terraform addresses. */
export const MAX_IDENTIFIER_LENGTH = 63;

/**
 * Checks a name used as a store identifier (role, policy, account, application, environment).
 *
 * Names are lower-case letters, digits and inner hyphens. Lower case only because the store compares
 * role and policy names case-insensitively (test/store/hardening): two names differing in case would be
 * one role. That also excludes spaces, slashes, `..` and the ACL wildcards `*` and `+`, which would
 * change the meaning of the paths and URLs the name is put into.
 *
 * @returns the problems found, empty when the name is valid
 */
export function identifierNameProblems(field: string, value: string): ValidationProblem[] {
  if (typeof value !== 'string' || value.length === 0) {
    return [new ValidationProblem(field, value, 'must not be empty')];
  }
  const reasons: string[] = [];
  if (/[A-Z]/.test(value)) reasons.push('upper case');
  if (/\s/.test(value)) reasons.push('white space');
  if (value.includes('/')) reasons.push('a slash');
  if (value.includes('..')) reasons.push('".."');
  if (/[*+]/.test(value)) reasons.push('a wildcard (* or +)');
  if (reasons.length > 0) {
    return [
      new ValidationProblem(
        field,
        value,
        `must be lower-case letters, digits and inner hyphens; it contains ${reasons.join(', ')}`,
      ),
    ];
  }
  if (!NAME_PATTERN.test(value)) {
    return [
      new ValidationProblem(
        field,
        value,
        'must be lower-case letters, digits and inner hyphens, starting and ending with a letter or digit',
      ),
    ];
  }
  if (value.length > MAX_IDENTIFIER_LENGTH) {
    return [new ValidationProblem(field, value, `must be at most ${MAX_IDENTIFIER_LENGTH} characters`)];
  }
  return [];
}
