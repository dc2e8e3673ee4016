import { AppRoleApplication, AppRoleAuth, CiJwtAuth, CiJwtRole, SSI_R9 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';

const RESERVED_POLICY =
  'is a built-in policy of the store (default, response-wrapping, root): writing it would change what every token may do, or fail; choose another name';
const RESERVED_AUTH_MOUNT =
  'is reserved by the store for auth methods (cubbyhole, identity, token): mounting there fails or replaces what the store itself serves; choose another path';

describe('SSI-R9: the store\'s built-in policies and reserved mounts are not the platform\'s', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R9)).toEqual([]);
  });

  it.each(['default', 'root', 'response-wrapping'])('an application role named %s is reported', (name) => {
    expect(
      findingsOf(SSI_R9, (p) => new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name: 'b', environment: 'dev', roleName: name })),
    ).toEqual([`[app-roles/x] SSI-R9 roleName = "${name}": ${RESERVED_POLICY}`]);
  });

  it('a CI role named default is reported', () => {
    expect(findingsOf(SSI_R9, (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'default' }))).toEqual([
      `[ci-access/x] SSI-R9 roleName = "default": ${RESERVED_POLICY}`,
    ]);
  });

  it.each(['token', 'identity', 'cubbyhole'])('an auth method mounted at %s is reported', (mount) => {
    expect(findingsOf(SSI_R9, (p) => new AppRoleAuth(p.appRoles, 'x', { path: mount }))).toEqual([
      `[app-roles/x] SSI-R9 path = "${mount}": ${RESERVED_AUTH_MOUNT}`,
    ]);
    expect(findingsOf(SSI_R9, (p) => new CiJwtAuth(p.ciAccess, 'y', { path: mount }))).toEqual([
      `[ci-access/y] SSI-R9 path = "${mount}": ${RESERVED_AUTH_MOUNT}`,
    ]);
  });

  it('names that only start like a reserved one, and sys for an auth method (the store allows auth/sys), are allowed', () => {
    expect(findingsOf(SSI_R9, (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'tokens' }))).toEqual([]);
    expect(findingsOf(SSI_R9, (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'sys' }))).toEqual([]);
  });
});
