/**
 * Issue 27: a revocation the configuration declares must reach the store, and only by a person's
 * decision. Under gitlab-ci-local against a real store and PostgreSQL state, on the scenario harness
 * (test/support/store/pipeline-scenario.ts): the `people` section and one application are removed.
 * The merge request's pipeline plans their removal (the retired `people` stack and `app-roles`) and
 * its note names what access is revoked; the default branch's apply jobs leave those plans to the
 * manual job `secretstore-iac-destroy-removed-objects`; started, it destroys them, and a person can no
 * longer log in through single sign-on.
 *
 * The pipeline roles keep what they need to destroy a removed object until the destroy is applied,
 * with no grant added by hand (issue 30): the roles' grant for an object lives in its stack and is
 * narrowed by the same apply that destroys the object, after it (the object depends on the grant); a
 * retired stack's grants stay on the roles through the override `moves` writes into ci-access.
 */
import { randomBytes } from 'crypto';
import { OIDC_CLI_REDIRECT_URI } from '../../lib';
import { PROJECT_ID } from '../support/store/configuration-pipeline-harness';
import { ssoLogin } from '../support/store/oidc-provider';
import { TEST_SETTINGS } from '../support/store/platform-fixture';
import { PipelineScenario, ScenarioParts } from '../support/store/pipeline-scenario';
import { storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';

const CLIENT_ID = 'secretstore';
const DESTROY_JOB = 'secretstore-iac-destroy-removed-objects';

/** stacks/platform.config.ts of the scenario, with or without the people section (and the billing application). */
const configSource = ({ key, store, provider }: ScenarioParts, people: boolean) => `import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  ciJobTimeout: Duration.minutes(15),
  configurationProject: { projectId: '${PROJECT_ID}' },${
    people ? "\n  applications: { 'billing-dev': { name: 'billing', environment: 'dev' } }," : ''
  }${
    people
      ? `\n  people: { discoveryUrl: ${JSON.stringify(provider!.issuer)}, clientId: '${CLIENT_ID}', storeUrl: ${JSON.stringify(store.addr)}, groups: { developers: { groups: ['developers'] } } },`
      : ''
  }
};
`;

// The pipeline's jobs run the same commands on either store: in the OpenBao suite, reported skipped
// in the Vault suite (the removal's guard and the manual apply run on Vault in
// construct-renames.store.test.ts and engine-command.store.test.ts); docs/store-tests.md says so.
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('removals through the configuration pipeline: planned in the merge request, destroyed only by the manual job (OpenBao suite only: the jobs are store-independent)', () => {
  let scenario: PipelineScenario;
  const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;
  const bobLogsIn = () => ssoLogin(scenario.store, { mount: 'oidc', role: 'developers', login: 'bob', redirectUri: OIDC_CLI_REDIRECT_URI });

  beforeAll(async () => {
    // Bootstrap by an administrator (root token), same PostgreSQL state as the pipeline.
    scenario = await PipelineScenario.start({
      name: 'pipeline-removals',
      config: (parts) => configSource(parts, true),
      oidc: { clientId: CLIENT_ID, clientSecret, accounts: { bob: ['developers'] } },
      bootstrap: ['app-roles', 'ci-access', 'people'],
      protectedVariables: { TF_VAR_oidc_client_secret: clientSecret },
      variables: {
        // The access diff's risk flags are the configuration pipeline test's subject, not this one's.
        SECRETSTORE_IAC_ACCEPT_RISK: 'true',
        GITLAB_USER_LOGIN: 'alice',
      },
    });
  });

  afterAll(async () => {
    await scenario?.stop();
  });

  it('before: a person logs in through single sign-on, and the billing application\'s role exists', async () => {
    const login = await bobLogsIn();
    expect(login.callback.status).toBe(200);
    expect((await storeRequest(scenario.store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(200);
  });

  it('people and an application removed: the MR plans their removal and its note names what is revoked; the default branch destroys only when the manual job runs', async () => {
    // The change: no people section, no billing application.
    scenario.writeConfig(configSource(scenario, false));
    // The people stack's jobs go: the committed copy of the pipeline follows the synthesis.
    scenario.refreshPipelineCopy();
    scenario.commitOnBranch('remove-people', 'remove the people section and the billing application');

    // 1. The merge request: planned with the read-only role, nothing applied, the revocation in the note.
    const review = await scenario.mergeRequest('remove-people', 11);
    let out = review.output;
    // The people stack's own 3 objects and the pipeline roles' 2 grants there, the application's role and policy.
    expect(out).toContain('### Objects removed: 7 destroyed on the store, after approval');
    expect(out).toContain('| `people` (removed) | `sys/policies/acl/secretstore-iac-pipeline-people` |');
    expect(out).toContain(`the apply jobs leave a plan that destroys them to the manual job \`${DESTROY_JOB}\``);
    expect(out).toContain('| `people` (removed) | `sys/auth/oidc` | JWT/OIDC auth method: every role under it, every login through it |');
    expect(out).toContain('| `people` (removed) | `auth/oidc/role/developers` | JWT/OIDC role: every login with it (CI jobs or people) |');
    expect(out).toContain('| `app-roles` | `auth/approle/role/billing-dev` | AppRole role: its Role ID and every Secret ID issued for it |');
    expect(out).toMatch(/secretstore-iac-plan-retired\s+> [^\n]*5 to destroy/);
    expect(out).toMatch(/secretstore-iac-plan-app-roles\s+> [^\n]*2 to destroy/);
    expect(out).toMatch(/secretstore-iac tf: people: 5 objects declared nowhere any more, destroyed by this plan \(--allow-removals\):/);
    expect(out).not.toMatch(/secretstore-iac-apply-|destroy-removed-objects\s+> /);
    expect(out).not.toMatch(/the plan would destroy or replace|nothing applied/);
    expect(review.code).toBe(0);
    expect((await bobLogsIn()).callback.status).toBe(200);

    // 2. Merged: the default branch plans again, and every apply job leaves the removals alone.
    const before = scenario.merge('remove-people');
    const pipeline = await scenario.defaultBranch(before);
    out = pipeline.output;
    for (const stack of ['people', 'app-roles']) {
      expect(out).toMatch(new RegExp(`secretstore-iac pipeline apply: ${stack}: not applied here: its plan destroys objects this configuration declares nowhere any more \\(a revocation\\): [^\\n]+; the manual job ${DESTROY_JOB} applies it \\(with its other changes\\) once a person starts it`));
    }
    expect(out).not.toMatch(/Resources: [^\n]*[1-9]\d* destroyed/);
    // ci-access keeps the retired people stack's grants on the roles (the override moves wrote) until the manual job.
    expect(out).toContain('its roles keep the policies of people until their removal is applied.');
    expect(out).not.toMatch(/permission denied/);
    expect(pipeline.code).toBe(0);
    expect((await bobLogsIn()).callback.status).toBe(200);
    expect((await storeRequest(scenario.store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(200);

    // 3. A person starts the manual job: it names what it destroys, then destroys exactly that.
    const approved = await scenario.defaultBranch(before, { jobs: [DESTROY_JOB], only: true, manual: DESTROY_JOB });
    out = approved.output;
    expect(out).toContain('secretstore-iac pipeline removals: started by alice: destroying what the configuration declares nowhere any more, in dependency order, retired stacks last:');
    expect(out).toMatch(/secretstore-iac pipeline removals: people: destroys [^\n]*sys\/auth\/oidc \(vault_jwt_auth_backend\.[^)]+\)/);
    expect(out).toMatch(/secretstore-iac pipeline removals: app-roles: destroys [^\n]*auth\/approle\/role\/billing-dev \(vault_approle_auth_backend_role\.[^)]+\)/);
    expect(out).toMatch(/Apply complete! Resources: 0 added, \d+ changed, 2 destroyed/);
    expect(out).toMatch(/Apply complete! Resources: 0 added, 0 changed, 5 destroyed/);
    // Each stack destroyed with a token of its own carrying its grant only (docs/pipelines.md §9): the
    // retired people stack's grant, which the roles kept, for people; app-roles' for app-roles.
    for (const stack of ['people', 'app-roles']) {
      expect(out).toContain(`secretstore-iac pipeline removals: ${stack}: the engine runs with a token of its own carrying default, secretstore-iac-pipeline, secretstore-iac-pipeline-${stack}: `);
    }
    expect(out).not.toMatch(/permission denied/);
    expect(approved.code).toBe(0);

    // The revocation landed: no person logs in through the OIDC method; the application's role is gone.
    await expect(bobLogsIn()).rejects.toThrow(/auth_url refused: HTTP (400|403|404)/);
    expect((await storeRequest(scenario.store, 'GET', 'sys/auth')).body.data['oidc/']).toBeUndefined();
    expect((await storeRequest(scenario.store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(404);
    expect(out).not.toContain(scenario.store.rootToken);
    expect(out).not.toContain(clientSecret);

    // 4. The roles no longer keep the people grants: the manual job applied ci-access again without
    // moves' override (a plan that only takes them away), so the scheduled drift job is green at once,
    // not after some unrelated change to ci-access (issue 37).
    expect(out).toContain("secretstore-iac pipeline removals: ci-access: its roles kept grants of the retired stacks until their removal, now applied: planned and applied again without them (tf --released-grants)");
    expect(out).toMatch(/ci-access: \S*ci-access\.released\.tfplan only ends the retired stacks' grants its roles kept/);
    const role = await storeRequest(scenario.store, 'GET', 'auth/jwt/role/secretstore-iac-pipeline');
    expect(role.body.data.token_policies.filter((p: string) => p.endsWith('-people'))).toEqual([]);
    const drift = await scenario.schedule('secretstore-iac-drift-ci-access');
    expect(drift.output).toMatch(/No changes\./);
    expect(drift.code).toBe(0);
  });

  it('a grant made by hand: the scheduled drift job names it per identity and path, as the default branch\'s comparison would, and applies nothing', async () => {
    const role = await storeRequest(scenario.store, 'GET', 'auth/approle/role/orchestrator-dev');
    expect(role.status).toBe(200);
    const policyName = (role.body.data.token_policies as string[]).find((p) => p !== 'default')!;
    const policyPath = `sys/policies/acl/${policyName}`;
    const declared = (await storeRequest(scenario.store, 'GET', policyPath)).body.data.policy as string;
    const byHand = `${declared}\npath "secret/data/acme/dev/payments/*" {\n  capabilities = ["read"]\n}\n`;
    expect((await storeRequest(scenario.store, 'PUT', policyPath, { policy: byHand })).status).toBe(204);

    const drift = await scenario.schedule('secretstore-iac-drift-app-roles');
    expect(drift.output).toContain('secretstore-iac pipeline drift: app-roles: approle/orchestrator-dev secret/data/acme/dev/payments/*: drift: the store has read where the configuration has none; applying reverts it');
    expect(drift.output).toContain('secretstore-iac pipeline drift: app-roles: drift: the store differs from the configuration (each difference above); nothing is applied; the job fails');
    expect(drift.code).not.toBe(0);
    // Nothing applied: the grant made by hand is still there.
    expect((await storeRequest(scenario.store, 'GET', policyPath)).body.data.policy).toBe(byHand);
    expect(drift.output).not.toContain(scenario.store.rootToken);
    expect(drift.output).not.toContain(clientSecret);
  });
});
