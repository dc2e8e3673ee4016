import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { AppRoleApplication, AppRoleAuth, CiJwtAuth, CiJwtRole, ConfigurationPipelineRole, LiveStoreReaderPolicy, SSI_R9 } from '../../../lib';
import { Platform } from '../../../lib/platform/platform';
import { synthesisProblems } from '../../support/synthesized-platform';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
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

// Issue 36: an application named secretstore-iac-plan in environment app-roles-02 has the policy
// secretstore-iac-plan-app-roles-02, the plan role's grant of shard app-roles-02; in the change that
// retired that shard, `moves` took the grant's destroy for a move into the application's policy and
// the merge-request plan role read the application's secret. Refused at synthesis: nothing reaches
// the store, so this unit test is the proof.
describe("SSI-R9: the configuration pipeline roles' grant names are reserved for the grants, for any stack name", () => {
  const GRANT = (name: string, role: string, stack: string) =>
    `[app-roles/x/policy] SSI-R9 name = "${name}": is the name of the configuration pipeline role "${role}"'s grant for a stack named "${stack}" (<role name>-<stack>, docs/pipelines.md §9): names beginning "${role}-" are reserved`;
  const app = (name: string, environment: string, roleName?: string) => (p: Platform) =>
    void new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name, environment, ...(roleName ? { roleName } : {}) });

  it('the issue\'s application (secretstore-iac-plan in app-roles-02) is refused, whether or not the configuration declares the pipeline', () => {
    for (const config of [platformConfig, { ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } }]) {
      const findings = findingsOf(SSI_R9, app('secretstore-iac-plan', 'app-roles-02'), config);
      expect(findings).toHaveLength(1);
      expect(findings[0]).toContain(GRANT('secretstore-iac-plan-app-roles-02', 'secretstore-iac-plan', 'app-roles-02'));
    }
  });

  it('any stack name counts, the apply role\'s too, and names as the store compares them', () => {
    expect(findingsOf(SSI_R9, app('x', 'dev', 'secretstore-iac-pipeline-no-such-stack'))[0]).toContain(
      GRANT('secretstore-iac-pipeline-no-such-stack', 'secretstore-iac-pipeline', 'no-such-stack'),
    );
    expect(findingsOf(SSI_R9, (_p, a) => void new Policy(userStack(a), 'policy', { name: ' SecretStore-IaC-Plan-People ', policy: '' }))[0]).toContain(
      '[user/policy] SSI-R9 name = " SecretStore-IaC-Plan-People ": is "secretstore-iac-plan-people" on the store (policy names are trimmed and lower-cased), which is the name of the configuration pipeline role "secretstore-iac-plan"\'s grant for a stack named "people"',
    );
  });

  it('a configured pipeline role name reserves its grants\' names as well', () => {
    const findings = findingsOf(SSI_R9, (p) => {
      new ConfigurationPipelineRole(p.ciAccess, 'own-plan', { auth: p.ciAccess.jwtAuth, projectId: '4242', access: 'plan', roleName: 'cfg-plan' });
      app('cfg-plan', 'ci-access')(p);
    });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toContain(GRANT('cfg-plan-ci-access', 'cfg-plan', 'ci-access'));
  });

  it('names that only begin like the role, or are the role\'s own policy, are not grants', () => {
    expect(findingsOf(SSI_R9, app('secretstore-iac-planner', 'dev'))).toEqual([]);
    expect(findingsOf(SSI_R9, (_p, a) => void new Policy(userStack(a), 'policy', { name: 'secretstore-iac-plan-', policy: '' }))).toEqual([]);
  });

  it('the grants themselves pass: a whole synthesis with the pipeline roles and several shards succeeds', () => {
    const config = { ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } };
    expect(synthesisProblems(config)).toEqual([]);
  });
});

describe("SSI-R9: the configuration pipeline roles' own names are reserved for those roles", () => {
  it('an application whose policy is secretstore-iac-plan is refused without a pipeline; the roles themselves pass', () => {
    const { configurationProject, ...noPipeline } = platformConfig;
    void configurationProject;
    const findings = findingsOf(SSI_R9, (p) => void new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name: 'secretstore-iac', environment: 'plan' }), noPipeline);
    expect(findings).toEqual([
      '[app-roles/x/policy] SSI-R9 name = "secretstore-iac-plan": is the name of a configuration pipeline role\'s own policy (the role\'s name, docs/pipelines.md §9): reserved for that role whether or not this configuration declares it, since a change that adds or removes the pipeline would make this policy the role\'s, or the role\'s this policy; choose another name',
    ]);
    expect(findingsOf(SSI_R9, undefined, { ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } })).toEqual([]);
  });
});
