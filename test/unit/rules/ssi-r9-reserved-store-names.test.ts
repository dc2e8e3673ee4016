import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { AppRoleApplication, AppRoleAuth, CiJwtAuth, CiJwtRole, LiveStoreReaderPolicy, SSI_R9 } from '../../../lib';
import { platformConfig } from '../../../stacks/platform.config';
import { findingsOf } from '../../support/rule-findings';
import { userStack } from '../../support/user-stack';

const RESERVED_POLICY =
  'is a built-in policy of the store (default, response-wrapping, root): writing it would change what every token may do, or fail; choose another name';
const RESERVED_AUTH_MOUNT =
  'is reserved by the store for auth methods (cubbyhole, identity, token): mounting there fails or replaces what the store itself serves; choose another path';
const READER_NAME =
  "is the name of the live-store reader's policy that docs/adoption.md has operators write by hand: it is reserved for LiveStoreReaderPolicy (readerPolicy), since another policy of that name overwrites the operator's reader policy, or is overwritten by it, at every apply; choose another name";

describe("SSI-R9: the store's built-in policies, the reader's documented policy and reserved mounts are not the platform's", () => {
  it('holds for the platform as declared, with the reader policy', () => {
    expect(findingsOf(SSI_R9)).toEqual([]);
    expect(findingsOf(SSI_R9, undefined, { ...platformConfig, readerPolicy: true })).toEqual([]);
  });

  it.each(['default', 'root', 'response-wrapping'])("an application role named %s is reported on its policy", (name) => {
    expect(
      findingsOf(SSI_R9, (p) => new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name: 'b', environment: 'dev', roleName: name })),
    ).toEqual([`[app-roles/x/policy] SSI-R9 name = "${name}": ${RESERVED_POLICY}`]);
  });

  it('a CI role named default is reported', () => {
    expect(findingsOf(SSI_R9, (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'default' }))).toEqual([
      `[ci-access/x/policy] SSI-R9 name = "default": ${RESERVED_POLICY}`,
    ]);
  });

  it('the reader policy named default is reported', () => {
    expect(findingsOf(SSI_R9, undefined, { ...platformConfig, readerPolicy: { name: 'default' } })).toEqual([
      `[ci-access/reader-policy/policy] SSI-R9 name = "default": ${RESERVED_POLICY}`,
    ]);
  });

  it('a raw vault_policy " Default " in a user stack is default on the store: reported', () => {
    expect(findingsOf(SSI_R9, (_p, app) => void new Policy(userStack(app), 'policy', { name: ' Default ', policy: '' }))).toEqual([
      `[user/policy] SSI-R9 name = " Default ": is "default" on the store (policy names are trimmed and lower-cased), which ${RESERVED_POLICY}`,
    ]);
  });

  it("the reader's documented name is refused for any producer but the LiveStoreReaderPolicy", () => {
    expect(findingsOf(SSI_R9, (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'secretstore-iac-reader' }))).toEqual([
      `[ci-access/x/policy] SSI-R9 name = "secretstore-iac-reader": ${READER_NAME}`,
    ]);
    expect(findingsOf(SSI_R9, (_p, app) => void new Policy(userStack(app), 'policy', { name: 'SecretStore-IaC-Reader', policy: '' }))).toEqual([
      `[user/policy] SSI-R9 name = "SecretStore-IaC-Reader": is "secretstore-iac-reader" on the store (policy names are trimmed and lower-cased), which ${READER_NAME}`,
    ]);
  });

  it('a LiveStoreReaderPolicy in any stack may take it', () => {
    expect(findingsOf(SSI_R9, (p) => void new LiveStoreReaderPolicy(p.appRoles, 'reader'))).toEqual([]);
  });

  it.each(['token', 'identity', 'cubbyhole'])('an auth method mounted at %s is reported', (mount) => {
    expect(findingsOf(SSI_R9, (p) => new AppRoleAuth(p.appRoles, 'x', { path: mount }))).toEqual([
      `[app-roles/x/backend] SSI-R9 path = "${mount}": ${RESERVED_AUTH_MOUNT}`,
    ]);
    expect(findingsOf(SSI_R9, (p) => new CiJwtAuth(p.ciAccess, 'y', { path: mount }))).toEqual([
      `[ci-access/y/backend] SSI-R9 path = "${mount}": ${RESERVED_AUTH_MOUNT}`,
    ]);
  });

  it('a raw auth mount of type token without a path (so at token) in a user stack is reported', () => {
    expect(findingsOf(SSI_R9, (_p, app) => void new AuthBackend(userStack(app), 'mount', { type: 'token' }))).toEqual([
      `[user/mount] SSI-R9 type = "token": ${RESERVED_AUTH_MOUNT}`,
    ]);
  });

  it('names that only start like a reserved one, and sys for an auth method (the store allows auth/sys), are allowed', () => {
    expect(findingsOf(SSI_R9, (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'tokens' }))).toEqual([]);
    expect(findingsOf(SSI_R9, (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'sys' }))).toEqual([]);
  });
});
