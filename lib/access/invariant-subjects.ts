import { IdentityKind } from '../invariants/identity-kind';
import { InvariantSubject } from '../invariants/invariant-subject';
import { isSecretReadRule } from '../invariants/secret-read-rule';
import { AccessModel } from './access-model';
import { Identity } from './identity';

/**
 * The claims the configuration pipeline's roles bind (`ConfigurationPipelineRole`): the project by
 * its numeric id, and for `apply` its protected branches; a CI role binds its project by path.
 */
const PIPELINE_CLAIMS = new Set(['project_id', 'ref_protected', 'ref_type']);

/**
 * The kind of an identity read from synthesized stacks, saved plans or a live store, where the
 * constructs are not at hand: an OIDC role is a person's, an AppRole role an application's, and a
 * JWT role is the configuration pipeline's when it binds the project by `project_id` and nothing
 * but `ref_protected` and `ref_type` besides (the claims `ConfigurationPipelineRole` binds), else a
 * CI job's. At synthesis the constructs say it (rule SSI-R16).
 */
export function identityKindOf(identity: Identity): IdentityKind {
  if (identity.method === 'oidc') return 'person';
  if (identity.method === 'approle') return 'application';
  return jwtRoleKindOf(identity.bindings.bound_claims);
}

/**
 * The kind of a JWT role by the claims it binds (`bound_claims`): the configuration pipeline's when it
 * binds the project by `project_id` and nothing but `ref_protected` and `ref_type` besides, else a CI job's.
 */
export function jwtRoleKindOf(claims: unknown): IdentityKind {
  const names = claims !== undefined && claims !== null && typeof claims === 'object' && !Array.isArray(claims) ? Object.keys(claims) : [];
  return names.includes('project_id') && names.every((n) => PIPELINE_CLAIMS.has(n)) ? 'pipeline' : 'ci';
}

/**
 * The identities of an access model (synthesized stacks, saved plans or a live store) as invariant
 * subjects, their kinds told by {@link identityKindOf}, an application's own paths its secret read
 * rules (`isSecretReadRule`, as the shared-read flag counts them); an identity whose every login the store
 * refuses holds no token and is left out.
 */
export function invariantSubjects(model: AccessModel): InvariantSubject[] {
  return model.identities
    .filter((i) => !i.loginRefused)
    .map((i) => {
      const kind = identityKindOf(i.identity);
      const own = kind === 'application' ? { ownPaths: i.acl.rules.filter(isSecretReadRule).map((r) => r.path.display) } : {};
      return { name: i.identity.name, ...(i.identity.namespace === undefined ? {} : { namespace: i.identity.namespace }), kind, acl: i.acl, ...own };
    });
}
