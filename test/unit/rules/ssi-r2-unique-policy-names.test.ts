import { Fn } from 'cdktf';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { VaultProvider } from '@cdktf/provider-vault/lib/provider';
import { CiJwtRole, LiveStoreReaderPolicy, SSI_R1, SSI_R2 } from '../../../lib';
import { Platform } from '../../../lib/platform/platform';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { withPeople } from '../../support/people-config';
import { findingsOf } from '../../support/rule-findings';
import { userStack } from '../../support/user-stack';

const OVERWRITE = 'both texts would be written to one store policy, each apply replacing the other, and every role holding it would get the last text written';
const POLICY_NAMES = 'policy names are one name space for the whole store, trimmed and lower-cased';
const reader = (name: string) => ({ ...platformConfig, readerPolicy: { name } });

describe('SSI-R2: policy names are unique in the store, as the store compares them, whoever declares them', () => {
  it('holds for the platform as declared, with people, the pipeline roles and the reader policy', () => {
    expect(findingsOf(SSI_R2)).toEqual([]);
    expect(findingsOf(SSI_R2, undefined, { ...withPeople(), configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON }, readerPolicy: true })).toEqual([]);
  });

  // A JWT role and an AppRole role may share a name (different methods, so SSI-R1 holds), but
  // their policies would be one policy in the store.
  const jwtRoleNamedLikeAnApplication = (p: Platform) =>
    new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'orchestrator-dev' });

  it("a JWT role whose policy takes an application's policy name is reported on the later holder", () => {
    expect(findingsOf(SSI_R2, jwtRoleNamedLikeAnApplication)).toEqual([
      `[app-roles/orchestrator-dev/policy] SSI-R2 name = "orchestrator-dev": is already declared by ci-access/x/policy: ${OVERWRITE}`,
    ]);
  });

  it('is not an SSI-R1 finding: the roles live on different auth methods', () => {
    expect(findingsOf(SSI_R1, jwtRoleNamedLikeAnApplication)).toEqual([]);
  });

  // The attack of issue 26: the reader's policy took the CI role's, and a CI job read every Role ID.
  it('the reader policy named registry-ci (the CI role\'s policy) is reported', () => {
    expect(findingsOf(SSI_R2, undefined, reader('registry-ci'))).toEqual([
      `[ci-access/reader-policy/policy] SSI-R2 name = "registry-ci": is already declared by ci-access/registry-ci/policy: ${OVERWRITE}`,
    ]);
  });

  it("the reader policy named like an application's policy is reported, across stacks", () => {
    expect(findingsOf(SSI_R2, undefined, reader('orchestrator-dev'))).toEqual([
      `[app-roles/orchestrator-dev/policy] SSI-R2 name = "orchestrator-dev": is already declared by ci-access/reader-policy/policy: ${OVERWRITE}`,
    ]);
  });

  it("the reader policy named like the pipeline role's policy is reported", () => {
    expect(findingsOf(SSI_R2, undefined, { ...reader('secretstore-iac-pipeline'), configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } })).toEqual([
      `[ci-access/pipeline-apply/policy] SSI-R2 name = "secretstore-iac-pipeline": is already declared by ci-access/reader-policy/policy: ${OVERWRITE}`,
    ]);
  });

  it("the reader policy named like a people group's role (whose policy has its name) is reported", () => {
    expect(findingsOf(SSI_R2, undefined, { ...withPeople(), readerPolicy: { name: 'platform-admins' } })).toEqual([
      `[people/group-platform-admins/policy] SSI-R2 name = "platform-admins": is already declared by ci-access/reader-policy/policy: ${OVERWRITE}`,
    ]);
  });

  it('a raw vault_policy " Registry-CI " in a user stack is registry-ci on the store: reported, saying why', () => {
    expect(findingsOf(SSI_R2, (_p, app) => void new Policy(userStack(app), 'policy', { name: ' Registry-CI ', policy: '' }))).toEqual([
      `[user/policy] SSI-R2 name = " Registry-CI ": is "registry-ci" on the store (${POLICY_NAMES}), already declared by ci-access/registry-ci/policy as "registry-ci": ${OVERWRITE}`,
    ]);
  });

  it('two user stacks declaring Team-A and team-a are reported on the second', () => {
    expect(
      findingsOf(SSI_R2, (_p, app) => {
        new Policy(userStack(app, 'one'), 'policy', { name: 'Team-A', policy: '' });
        new Policy(userStack(app, 'two'), 'policy', { name: 'team-a', policy: '' });
      }),
    ).toEqual([`[two/policy] SSI-R2 name = "team-a": is already declared by one/policy as "Team-A": ${OVERWRITE}`]);
  });

  it('a second reader policy of the same name in another stack is reported', () => {
    expect(findingsOf(SSI_R2, (p) => void new LiveStoreReaderPolicy(p.appRoles, 'reader'), { ...platformConfig, readerPolicy: true })).toEqual([
      `[app-roles/reader/policy] SSI-R2 name = "secretstore-iac-reader": is already declared by ci-access/reader-policy/policy: ${OVERWRITE}`,
    ]);
  });

  it('a policy of another store namespace is another policy: the platform in namespace team, a user stack in the root namespace', () => {
    const inTeam = { ...platformConfig, settings: { ...platformConfig.settings, namespace: 'team' } };
    expect(findingsOf(SSI_R2, (_p, app) => void new Policy(userStack(app), 'policy', { name: 'registry-ci', policy: '' }), inTeam)).toEqual([]);
  });

  it("a resource is in its provider's namespace, joined with its own: three declarations of team-a, two of them in namespace team", () => {
    expect(
      findingsOf(SSI_R2, (_p, app) => {
        const one = userStack(app, 'one');
        const team = new VaultProvider(one, 'team', { namespace: '/team/', alias: 'team' });
        new Policy(one, 'policy', { name: 'team-a', policy: '', provider: team });
        new Policy(userStack(app, 'two'), 'policy', { name: 'team-a', policy: '', namespace: 'team' });
        new Policy(userStack(app, 'three'), 'policy', { name: 'team-a', policy: '' });
      }),
    ).toEqual([`[two/policy] SSI-R2 name = "team-a": is already declared by one/policy: ${OVERWRITE}`]);
  });
});

// Issue 36: the expression text was compared, not the name the engine writes; the store's
// registry-ci policy became the user's text and a CI job token read an application's secret. The
// refusal is at synthesis (nothing reaches the store), so this unit test is its proof.
describe('SSI-R2 compares policy names as the engine writes them', () => {
  const EVALUATED = 'the engine evaluates the expression; policy names are one name space for the whole store, trimmed and lower-cased';
  it.each([
    ['${"registry-ci"}', () => '${"registry-ci"}'],
    ['Fn.lower("REGISTRY-CI")', () => Fn.lower('REGISTRY-CI')],
    ['Fn.join("-", ["registry", "ci"])', () => Fn.join('-', ['registry', 'ci'])],
    ['Fn.format("%s-ci", "REGISTRY") in a longer text', () => ` ${Fn.format('%s-ci', ['REGISTRY'])}`],
  ])('a raw vault_policy named %s takes registry-ci: reported', (_label, name) => {
    const findings = findingsOf(SSI_R2, (_p, app) => void new Policy(userStack(app), 'policy', { name: name(), policy: '' }));
    expect(findings).toEqual([
      expect.stringMatching(/^\[user\/policy\] SSI-R2 name = ".*": is "registry-ci" on the store \(/),
    ]);
    expect(findings[0]).toContain(`(${EVALUATED}), already declared by ci-access/registry-ci/policy as "registry-ci": ${OVERWRITE}`);
  });
});
