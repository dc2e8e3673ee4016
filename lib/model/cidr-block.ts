import * as net from 'net';
import { ValidationProblem } from './validation-problem';

/**
 * Checks a CIDR block as the store's `*_bound_cidrs` fields take it: an IPv4 or IPv6 address with
 * a prefix length (`10.0.0.0/8`, `10.1.2.3/32`, `fd00::/8`).
 * @returns the problems found, empty when the block is valid
 */
export function cidrProblems(field: string, value: string): ValidationProblem[] {
  const match = typeof value === 'string' ? value.match(/^([0-9A-Fa-f.:]+)\/([0-9]{1,3})$/) : null;
  const ok =
    match !== null &&
    ((net.isIPv4(match[1]) && Number(match[2]) <= 32) || (net.isIPv6(match[1]) && Number(match[2]) <= 128)) &&
    !/^0[0-9]/.test(match[2]);
  return ok
    ? []
    : [new ValidationProblem(field, value, 'must be a CIDR block, an IPv4 or IPv6 address with a prefix length (10.0.0.0/8; one address is 10.1.2.3/32)')];
}
