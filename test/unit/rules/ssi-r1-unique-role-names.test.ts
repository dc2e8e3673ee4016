import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { JwtAuthBackendRole } from '@cdktf/provider-vault/lib/jwt-auth-backend-role';
import { AppRoleApplication, CiJwtAuth, CiJwtRole, SSI_R1 } from '../../../lib';
import { withPeople } from '../../support/people-config';
import { findingsOf } from '../../support/rule-findings';
import { userStack } from '../../support/user-stack';

const OVERWRITE = (mount: string) => `both would be one role of auth/${mount} on the store, each apply overwriting the other's settings and policies`;

describe('SSI-R1: role names are unique within an auth method, as the store compares them, whoever declares them', () => {
  it('holds for the platform as declared, with people', () => {
    expect(findingsOf(SSI_R1)).toEqual([]);
    expect(findingsOf(SSI_R1, undefined, withPeople())).toEqual([]);
  });

  it('a second JWT role of the same name on the same method is reported, naming both holders', () => {
    expect(
      findingsOf(SSI_R1, (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'registry-ci' })),
    ).toEqual([`[ci-access/x/role] SSI-R1 roleName = "registry-ci": is already declared by ci-access/registry-ci/role: ${OVERWRITE('jwt')}`]);
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
    ).toEqual([`[app-roles/x/role] SSI-R1 roleName = "orchestrator-dev": is already declared by app-roles/orchestrator-dev/role: ${OVERWRITE('approle')}`]);
  });

  it('a raw AppRole role Billing-dev in a user stack is the application billing-dev of app-roles: the store lower-cases AppRole names', () => {
    expect(
      findingsOf(SSI_R1, (p, app) => {
        new AppRoleApplication(p.appRoles, 'billing-dev', { auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev' });
        new ApproleAuthBackendRole(userStack(app), 'role', { backend: 'approle', roleName: 'Billing-dev' });
      }),
    ).toEqual([
      `[user/role] SSI-R1 roleName = "Billing-dev": is "billing-dev" on the store (AppRole role names are lower-cased by the store, unique within their mount), already declared by app-roles/billing-dev/role as "billing-dev": ${OVERWRITE('approle')}`,
    ]);
  });

  it('a raw JWT role Platform-Admins on the people method is the group role platform-admins: the store lower-cases JWT names too', () => {
    expect(
      findingsOf(SSI_R1, (_p, app) => void new JwtAuthBackendRole(userStack(app), 'role', { backend: 'oidc', roleName: 'Platform-Admins', userClaim: 'sub' }), withPeople()),
    ).toEqual([
      `[user/role] SSI-R1 roleName = "Platform-Admins": is "platform-admins" on the store (JWT/OIDC role names are lower-cased by the store, unique within their mount), already declared by people/group-platform-admins/role as "platform-admins": ${OVERWRITE('oidc')}`,
    ]);
  });

  it('the same JWT role name on another mount is another role', () => {
    expect(
      findingsOf(SSI_R1, (_p, app) => void new JwtAuthBackendRole(userStack(app), 'role', { backend: 'jwt', roleName: 'platform-admins', userClaim: 'sub' }), withPeople()),
    ).toEqual([]);
  });

  it('a raw JWT role platform-admins on the people method is reported, across stacks', () => {
    expect(
      findingsOf(SSI_R1, (_p, app) => void new JwtAuthBackendRole(userStack(app), 'role', { backend: '/oidc/', roleName: 'platform-admins', userClaim: 'sub' }), withPeople()),
    ).toEqual([`[user/role] SSI-R1 roleName = "platform-admins": is already declared by people/group-platform-admins/role: ${OVERWRITE('oidc')}`]);
  });
});
