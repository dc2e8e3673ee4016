import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { AppRoleAuth, CiJwtAuth, SSI_R7 } from '../../../lib';
import { withPeople } from '../../support/people-config';
import { findingsOf } from '../../support/rule-findings';
import { userStack } from '../../support/user-stack';

const ONE_MOUNT = 'the store mounts one auth method per path: the second mount fails at apply, or the stacks fight over one method and its roles';

describe('SSI-R7: auth methods have distinct mount paths, whoever declares them', () => {
  it('holds for the platform as declared, with people', () => {
    expect(findingsOf(SSI_R7)).toEqual([]);
    expect(findingsOf(SSI_R7, undefined, withPeople())).toEqual([]);
  });

  it("an AppRole method on the JWT method's path is reported, whatever the stack", () => {
    expect(findingsOf(SSI_R7, (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'jwt' }))).toEqual([
      `[app-roles/x/backend] SSI-R7 path = "jwt": is already declared by ci-access/jwt/backend: ${ONE_MOUNT}`,
    ]);
  });

  it('a second JWT method on the same path is reported', () => {
    expect(findingsOf(SSI_R7, (p) => new CiJwtAuth(p.ciAccess, 'x'))).toEqual([
      `[ci-access/x/backend] SSI-R7 path = "jwt": is already declared by ci-access/jwt/backend: ${ONE_MOUNT}`,
    ]);
  });

  it('a raw auth mount "/oidc/" in a user stack is the people method\'s path', () => {
    expect(findingsOf(SSI_R7, (_p, app) => void new AuthBackend(userStack(app), 'mount', { type: 'userpass', path: '/oidc/' }), withPeople())).toEqual([
      `[user/mount] SSI-R7 path = "/oidc/": is "oidc" on the store (auth mounts share one name space whatever their type, paths compared as given without surrounding slashes), already declared by people/oidc/backend as "oidc": ${ONE_MOUNT}`,
    ]);
  });

  it('a raw AppRole mount without a path is mounted at its type, approle: reported', () => {
    expect(findingsOf(SSI_R7, (_p, app) => void new AuthBackend(userStack(app), 'mount', { type: 'approle' }))).toEqual([
      `[user/mount] SSI-R7 type = "approle": is already declared by app-roles/approle/backend: ${ONE_MOUNT}`,
    ]);
  });

  it('a method on a path of its own is allowed; mount paths are case-sensitive', () => {
    expect(findingsOf(SSI_R7, (p) => new CiJwtAuth(p.ciAccess, 'x', { path: 'jwt-other' }))).toEqual([]);
    expect(findingsOf(SSI_R7, (p) => new CiJwtAuth(p.ciAccess, 'x', { path: 'JWT' }))).toEqual([]);
  });
});
