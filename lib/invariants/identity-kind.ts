/**
 * What an identity is, for an invariant: `ci` (a CI job's JWT role), `pipeline` (a role of the
 * configuration pipeline that plans and applies the stacks), `application` (an AppRole role) or
 * `person` (a people's OIDC group role).
 */
export type IdentityKind = 'ci' | 'pipeline' | 'application' | 'person';

/** The kinds, in the order the documentation lists them. */
export const IDENTITY_KINDS: readonly IdentityKind[] = ['ci', 'pipeline', 'application', 'person'];
