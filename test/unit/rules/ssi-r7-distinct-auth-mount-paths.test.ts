import { AppRoleAuth, CiJwtAuth, SSI_R7 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';

describe('SSI-R7: auth methods have distinct mount paths', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R7)).toEqual([]);
  });

  it('an AppRole method on the JWT method\'s path is reported, whatever the stack', () => {
    expect(findingsOf(SSI_R7, (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'jwt' }))).toEqual([
      '[app-roles/x] SSI-R7 path = "jwt": auth mount path is already used by ci-access/jwt',
    ]);
  });

  it('a second JWT method on the same path is reported', () => {
    expect(findingsOf(SSI_R7, (p) => new CiJwtAuth(p.ciAccess, 'x'))).toEqual([
      '[ci-access/x] SSI-R7 path = "jwt": auth mount path is already used by ci-access/jwt',
    ]);
  });

  it('a method on a path of its own is allowed', () => {
    expect(findingsOf(SSI_R7, (p) => new CiJwtAuth(p.ciAccess, 'x', { path: 'jwt-other' }))).toEqual([]);
  });
});
