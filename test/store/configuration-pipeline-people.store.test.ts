/**
 * The generated pipeline of a configuration with people (an OIDC method, a real OpenID provider on
 * 127.0.0.1), three hash shards and the reader policy, run by gitlab-ci-local against a real store
 * and a PostgreSQL state (issue 26), on the scenario harness (test/support/store/pipeline-scenario.ts):
 * the pipeline roles' policies are derived from what the stacks declare, so the first default-branch
 * pipeline plans and applies every stack with the roles' own tokens, people and the shards (by the
 * shard jobs) included; the grants for each stack's objects live in that stack (issue 30), so the
 * roles list grants the store does not have yet and each stack's apply creates its own first, and a
 * change to the people groups plans and applies the people stack only; the client secret reaches only
 * the people stack's jobs, from the protected CI/CD variable TF_VAR_oidc_client_secret, and is in no
 * log, artifact or state; a merge request plans without it (a placeholder), with the read-only role.
 * The only root token is the administrator's bootstrap of ci-access, which creates the pipeline roles
 * (docs/pipelines.md). A default-branch job without the variable failing before the engine runs is
 * test/unit/pipeline/pipeline-stack-jobs.test.ts's.
 */
import { execFileSync } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { OIDC_CLI_REDIRECT_URI } from '../../lib';
import { PROJECT_ID } from '../support/store/configuration-pipeline-harness';
import { ssoLogin } from '../support/store/oidc-provider';
import { TEST_SETTINGS } from '../support/store/platform-fixture';
import { PipelineScenario, ScenarioParts } from '../support/store/pipeline-scenario';
import { postgresBinDir } from '../support/store/postgres-server';
import { storeKind } from '../support/store/toolchain-env';

const CLIENT_ID = 'secretstore';

/** Every regular file below `dir`, `.terraform` provider binaries and node_modules left out. */
function filesBelow(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isSymbolicLink()) return [];
    if (e.isDirectory()) return ['providers', 'node_modules', '.git'].includes(e.name) ? [] : filesBelow(p);
    return e.isFile() ? [p] : [];
  });
}

/** stacks/platform.config.ts of the scenario, with the people groups given. */
const configSource = ({ key, store, provider }: ScenarioParts, groups: Record<string, unknown>) => `import { JwtKeySource, PlatformConfig } from 'secretstore-iac';

export const platformConfig: PlatformConfig = {
  settings: ${JSON.stringify(TEST_SETTINGS)},
  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(key.publicKeyPem)}]),
  configurationProject: { projectId: '${PROJECT_ID}' },
  applicationSharding: { by: 'hash', shards: 3 },
  readerPolicy: true,
  people: {
    discoveryUrl: ${JSON.stringify(provider!.issuer)},
    clientId: '${CLIENT_ID}',
    storeUrl: ${JSON.stringify(store.addr)},
    groups: ${JSON.stringify(groups)},
  },
};
`;
const ADMINS = { 'platform-admins': { groups: ['platform-admins'], reads: [{ path: 'team/runbooks', subtree: true }] } };
const WITH_DEVELOPERS = { ...ADMINS, developers: { groups: ['developers'] } };

// OpenBao suite only, reported skipped in the Vault suite: the pipeline's jobs run the same commands on either store (docs/store-tests.md).
const describeOnOpenBao = storeKind() === 'openbao' ? describe : describe.skip;

describeOnOpenBao('the configuration pipeline with people, hash shards and the reader policy, under gitlab-ci-local (OpenBao suite only)', () => {
  let scenario: PipelineScenario;
  const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;

  /** What must never show: the client secret and the root token, in the log, the artifacts, the state. */
  const expectNoSecretAnywhere = (output: string) => {
    expect(output).not.toContain(clientSecret);
    expect(output).not.toContain(scenario.store.rootToken);
    for (const file of filesBelow(path.join(scenario.repo, '.gitlab-ci-local'))) {
      expect({ file, holds: fs.readFileSync(file).includes(clientSecret) }).toEqual({ file, holds: false });
    }
    const dump = execFileSync(path.join(postgresBinDir(), 'pg_dump'), [scenario.pg.connStr], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(dump).toContain('vault_jwt_auth_backend');
    expect(dump.includes(clientSecret)).toBe(false);
  };

  beforeAll(async () => {
    // Bootstrap by an administrator: ci-access only, which holds the pipeline roles (they exist only
    // after a first apply). Every other stack is the pipeline's first run.
    scenario = await PipelineScenario.start({
      name: 'config-pipeline-people',
      config: (parts) => configSource(parts, ADMINS),
      oidc: { clientId: CLIENT_ID, clientSecret, accounts: { alice: ['platform-admins'], bob: ['developers'] } },
      bootstrap: ['ci-access'],
      // The protected CI/CD variable, given to default-branch pipelines only (as GitLab gives protected variables).
      protectedVariables: { TF_VAR_oidc_client_secret: clientSecret },
    });
  });

  afterAll(async () => {
    await scenario?.stop();
  });

  it('the first default-branch pipeline plans and applies every stack with the pipeline roles\' tokens: people, the shards, the reader policy; green', async () => {
    const pipeline = await scenario.defaultBranch(undefined);
    const out = pipeline.output;
    expect(out).toContain('no previous commit to compare with: every stack is planned');
    expect(out).not.toMatch(/permission denied/);
    // Every planned create was looked up: the apply role reads every object its stacks declare.
    expect(out).not.toContain('could not check whether the store already has');
    for (const stack of ['ci-access', 'app-roles', 'people']) {
      expect({ stack, applied: new RegExp(`secretstore-iac-apply-${stack}\\s+finished in`).test(out) }).toEqual({ stack, applied: true });
    }
    // The two shards: applied by the shard jobs (two, no more than shards), one each.
    for (const [n, stack] of [[1, 'app-roles-01'], [2, 'app-roles-02']] as const) {
      const lines = pipeline.job(`secretstore-iac-apply-app-roles-shards-${n}`);
      const prefix = `secretstore-iac pipeline apply: job ${n} of 2 of app-roles-shards applies, in this order: `;
      const line = lines.find((l) => l.startsWith(prefix)) ?? '';
      expect({ n, stacks: line.slice(prefix.length).replace(/ \(.*$/, '').split(', '), applied: lines.some((l) => /Apply complete! Resources: [1-9]\d* added/.test(l)) }).toEqual({ n, stacks: [stack], applied: true });
    }
    expect(out).toMatch(/secretstore-iac-apply-people\s+> Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
    expect(pipeline.code).toBe(0);
    expectNoSecretAnywhere(out);

    // The store has what the pipeline applied, and the client secret it wrote works: alice logs in.
    const headers = { 'X-Vault-Token': scenario.store.rootToken };
    expect((await fetch(`${scenario.store.addr}/v1/sys/policies/acl/secretstore-iac-reader`, { headers })).status).toBe(200);
    expect((await fetch(`${scenario.store.addr}/v1/auth/approle/role/orchestrator-dev`, { headers })).status).toBe(200);
    const { callback } = await ssoLogin(scenario.store, { mount: 'oidc', role: 'platform-admins', login: 'alice', redirectUri: OIDC_CLI_REDIRECT_URI });
    expect(callback.status).toBe(200);
  });

  it('a merge request adding a group plans people only (ci-access unchanged: the grants are people\'s) with the read-only role, without the protected client secret (a placeholder): the OIDC method unchanged', async () => {
    scenario.writeConfig(configSource(scenario, WITH_DEVELOPERS));
    scenario.commitOnBranch('developers', 'people: developers');
    const planned = await scenario.mergeRequest('developers', 3, { jobs: ['secretstore-iac-plan-people', 'secretstore-iac-plan-ci-access'] });
    const out = planned.output;
    // The base from the default branch's pipeline above (the copy it wrote for merge requests).
    expect(out).toMatch(/secretstore-iac: base [0-9a-f]{12}: its synthesis from the target branch's pipeline/);
    expect(out).toMatch(/stacks to plan and apply, in dependency order \(against [0-9a-f]{40}\):\n[^\n]*?\bpeople\n/);
    expect(out).toContain('secretstore-iac pipeline plan: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan');
    expect(out).toContain('TF_VAR_oidc_client_secret is not set (merge-request pipelines get no protected variable): oidc_client_secret of stack people is planned with a placeholder');
    // The new group's role and policy, and the pipeline roles' two grants in people widened to them; the OIDC method (whose write-only secret the plan does not compare) unchanged.
    expect(out).toMatch(/secretstore-iac-plan-people\s+> Plan: 2 to add, 2 to change, 0 to destroy/);
    expect(out).not.toMatch(/vault_jwt_auth_backend\.[^\s]+ will be/);
    expect(out).not.toMatch(/secretstore-iac-plan-ci-access\s+> Plan:/);
    expect(out).not.toMatch(/permission denied/);
    expect(planned.code).toBe(0);
    expectNoSecretAnywhere(out);
  });

  it('merged: the default-branch pipeline applies people only (its grants first); the new group logs in', async () => {
    const pipeline = await scenario.defaultBranch(scenario.merge('developers'));
    const out = pipeline.output;
    expect(out).not.toMatch(/permission denied/);
    expect(out).toMatch(/secretstore-iac-apply-people\s+> Apply complete! Resources: 2 added, 2 changed, 0 destroyed/);
    expect(pipeline.code).toBe(0);
    expect(out).toContain('secretstore-iac pipeline apply: stack ci-access is unchanged (same content digest as the base, and no stack it depends on changed): nothing to apply');
    // The grant widened before the new group's role was created with it (the role depends on the grant).
    const widened = out.search(/vault_policy\.secretstore-iac-grant-pipeline-apply: Modifications complete/);
    expect(widened).toBeGreaterThan(0);
    expect(out.search(/vault_jwt_auth_backend_role\.group-developers_role_[A-F0-9]+: Creating/)).toBeGreaterThan(widened);
    expectNoSecretAnywhere(out);
    const { callback } = await ssoLogin(scenario.store, { mount: 'oidc', role: 'developers', login: 'bob', redirectUri: OIDC_CLI_REDIRECT_URI });
    expect(callback.status).toBe(200);
  });
});
