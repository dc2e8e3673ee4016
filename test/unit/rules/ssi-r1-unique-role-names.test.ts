import { AppRoleApplication, CiJwtAuth, CiJwtRole, SSI_R1 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';

describe('SSI-R1: role names are unique within an auth method', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R1)).toEqual([]);
  });

  it('a second JWT role of the same name on the same method is reported, naming the first', () => {
    expect(
      findingsOf(SSI_R1, (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'registry-ci' })),
    ).toEqual(['[ci-access/x] SSI-R1 roleName = "registry-ci": is already declared by ci-access/registry-ci']);
  });

  it('the same role name on another JWT method is allowed', () => {
    expect(
      findingsOf(SSI_R1, (p) => {
        const other = new CiJwtAuth(p.ciAccess, 'jwt2', { path: 'jwt2' });
        new CiJwtRole(p.ciAccess, 'x', { auth: other, roleName: 'registry-ci' });
      }),
    ).toEqual([]);
  });

  it('an AppRole application with the role name of another is reported', () => {
    expect(
      findingsOf(SSI_R1, (p) =>
        new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev', roleName: 'orchestrator-dev' }),
      ),
    ).toEqual(['[app-roles/x] SSI-R1 roleName = "orchestrator-dev": is already declared by app-roles/orchestrator-dev']);
  });
});
