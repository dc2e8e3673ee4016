import { Capability, normalizeCapabilities } from './capability';
import { PolicyDocument } from './policy-document';
import { kindOf, PropCheck } from './props-check';
import { ValidationProblem } from './validation-problem';

/**
 * Something that can be given access: a store identity (an auth role) with its own policy.
 * Implemented by the CI JWT role and by AppRole applications.
 */
export interface IGrantee {
  /** Unique identity name, `<auth mount>/<role>`, e.g. `jwt/registry-ci`. */
  readonly identityName: string;
  /** The policy that grants this identity its access. */
  readonly policy: PolicyDocument;
}

/** True when `value` can be given access: an identity name and a policy document. */
export function isGrantee(value: unknown): value is IGrantee {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as IGrantee).identityName === 'string' &&
    (value as IGrantee).policy instanceof PolicyDocument
  );
}

/** The run-time check of a list of grantees (`readers`). */
export const expectGrantees: PropCheck = (field, value) =>
  Array.isArray(value)
    ? value.flatMap((v, i) =>
        isGrantee(v) ? [] : [new ValidationProblem(`${field}[${i}]`, v, `must be a role or application construct (a CiJwtRole, an AppRoleApplication), not ${kindOf(v)}`)],
      )
    : [new ValidationProblem(field, value, `must be a list of role or application constructs, not ${kindOf(value)}`)];

/**
 * A record of access given: which identity, through which policy, what on which path, and who
 * asked for it. Returned by every `grant*` method so callers and reviewers can see what was added.
 */
export class Grant {
  /**
   * Adds the capabilities on `path` to the grantee's policy and returns the record.
   * @param source the declaration that grants (a construct path)
   */
  static onPath(grantee: IGrantee, path: string, capabilities: readonly Capability[], source: string): Grant {
    grantee.policy.addRule(path, capabilities, source);
    return new Grant(grantee.identityName, grantee.policy.name, path, normalizeCapabilities(capabilities), source);
  }

  private constructor(
    /** Identity given access. */
    readonly identity: string,
    /** Policy the rule was added to. */
    readonly policyName: string,
    /** ACL path of the rule. */
    readonly path: string,
    /** Capabilities granted by this call. */
    readonly capabilities: readonly Capability[],
    /** Declaration that granted. */
    readonly source: string,
  ) {}

  /** `jwt/registry-ci: read on secret/data/registry/svc-executor (policy registry-ci)`. */
  toString(): string {
    return `${this.identity}: ${this.capabilities.join(',')} on ${this.path} (policy ${this.policyName})`;
  }
}
