import { CiJwtRole, SSI_R1, SSI_R2 } from '../../../lib';
import { Platform } from '../../../lib/platform/platform';
import { findingsOf } from '../../support/rule-findings';

describe('SSI-R2: policy names are unique in the store', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R2)).toEqual([]);
  });

  // A JWT role and an AppRole role may share a name (different methods, so SSI-R1 holds), but
  // their policies would be one policy in the store.
  const jwtRoleNamedLikeAnApplication = (p: Platform) =>
    new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'orchestrator-dev' });

  it('a JWT role whose policy takes an application\'s policy name is reported on the later holder', () => {
    expect(findingsOf(SSI_R2, jwtRoleNamedLikeAnApplication)).toEqual([
      '[app-roles/orchestrator-dev] SSI-R2 policy = "orchestrator-dev": policy name is already used by ci-access/x',
    ]);
  });

  it('is not an SSI-R1 finding: the roles live on different auth methods', () => {
    expect(findingsOf(SSI_R1, jwtRoleNamedLikeAnApplication)).toEqual([]);
  });
});
