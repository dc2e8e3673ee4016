/**
 * Issue 30 and issue 27's removal gap, on a real store with OpenTofu and Terraform 1.11.4: the
 * configuration pipeline's grants live with each stack (one policy per pipeline role and stack,
 * attached to the role by name in ci-access), and every store resource of the stack depends on the
 * apply role's grant. Applied with the pipeline apply role's own token (a JWT login signed by the
 * test's key), never the root token:
 * - the first apply of a stack: the role lists the stack's grant before the store has it, the login
 *   succeeds, the engine creates the grant first, and the same token (and the provider's child token)
 *   may then write the objects: the store reads a token's policies by name at each request;
 * - an application removed and another added in one apply: the engine destroys the removed
 *   application's role and policy before it narrows the grant (its dependency is in the state), and
 *   creates the new one after widening it: no 403; afterwards the token can no longer read the
 *   removed role's path (the grant was what allowed it);
 * - right after these applies, `drift` is clean: the `depends_on` meta-argument is not compared with
 *   the store (issue 37);
 * - SSI-R17's reason (issue 45): an object the grants were not derived from (a block only a stack
 *   override writes) is refused at synthesis; written into the document by hand, past the rule, the
 *   store refuses the apply role's token (HTTP 403) and nothing is written.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { runEngine } from '../support/store/engine';
import { runStoreCli } from '../support/store/store-cli';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { clientToken, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';
import { TEST_LOCAL_STATE_REASON } from '../support/platform-config';

const TERRAFORM = process.env.SECRETSTORE_IAC_TERRAFORM || '/usr/local/bin/terraform';
const ENGINES = [
  { engine: 'OpenTofu', binary: () => toolchain().tofu },
  { engine: 'Terraform 1.11.4', binary: () => TERRAFORM },
];
const PROJECT_ID = '4242';

describe.each(ENGINES)('the pipeline roles\' grants live with each stack, with $engine', ({ engine, binary }) => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let fixture: PlatformFixture;
  /** The configuration with these applications (beside the platform's own). */
  const config = (applications: Record<string, { name: string; environment: string }>) =>
    testPlatformConfig(key.publicKeyPem, { configurationProject: { projectId: PROJECT_ID, localStateReason: TEST_LOCAL_STATE_REASON }, applications });
  const run = (stack: string, args: string[], token = store.rootToken) =>
    runEngine(fixture.stackDir(stack), args, { store, token, binary: binary(), allowCodes: [0, 1] });
  /** A protected-branch job's login with the apply role: its store token. */
  const applyRoleToken = async () =>
    clientToken(
      await jwtLogin(
        store,
        'secretstore-iac-pipeline',
        signJwt(key.privateKey, gitlabJobClaims({ project_id: PROJECT_ID, ref_protected: 'true', ref_type: 'branch' }, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid }),
      ),
    );
  const applied = (r: { code: number; stdout: string; stderr: string }, what: string) => {
    if (r.code !== 0) throw new Error(`${engine} ${what} failed:\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    store = await startStore();
    key = generateSigningKey();
    fixture = PlatformFixture.create(store, `stack-grants-${engine.split(' ')[0].toLowerCase()}`);
    fixture.synthPlatform(config({ 'billing-dev': { name: 'billing', environment: 'dev' } }));
    // The administrator's bootstrap: ci-access (the pipeline roles), with the root token.
    for (const stack of ['ci-access', 'app-roles']) applied(await run(stack, ['init']), `init ${stack}`);
    applied(await run('ci-access', ['apply', '-auto-approve']), 'bootstrap apply of ci-access');
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it(`${engine}: the apply role lists app-roles' grant before it exists; its first apply creates the grant, then (same token) the mount, roles and policies`, async () => {
    const role = await storeRequest(store, 'GET', 'auth/jwt/role/secretstore-iac-pipeline');
    expect(role.body.data.token_policies).toEqual(['secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles']);
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/secretstore-iac-pipeline-app-roles')).status).toBe(404);
    const token = await applyRoleToken();
    // Before the grant: the token may not read an application's role.
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev', undefined, token)).status).toBe(403);
    const out = applied(await run('app-roles', ['apply', '-auto-approve'], token), 'first apply of app-roles with the apply role');
    expect(out).not.toMatch(/permission denied/);
    const grantCreated = out.indexOf('vault_policy.secretstore-iac-grant-pipeline-apply: Creation complete');
    const roleCreating = out.search(/vault_approle_auth_backend_role\.billing-dev_role_[A-F0-9]+: Creating/);
    expect(grantCreated).toBeGreaterThan(0);
    expect(roleCreating).toBeGreaterThan(grantCreated);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(200);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev', undefined, token)).status).toBe(200);
  });

  it(`${engine}: SSI-R17's reason, on the store: an object only a stack override writes is refused at synthesis; the same block written into cdk.tf.json by hand is applied with HTTP 403 (the grant does not reach it) and nothing is written`, async () => {
    const policy = { name: 'backdoor', policy: 'path "secret/*" {\n  capabilities = ["read"]\n}\n' };
    const before = fs.readFileSync(path.join(fixture.stackDir('app-roles'), 'cdk.tf.json'), 'utf8');
    expect(() => fixture.synthPlatform(config({ 'billing-dev': { name: 'billing', environment: 'dev' } }), (p) => p.appRoles.addOverride('resource.vault_policy.backdoor', policy))).toThrow(
      /\[app-roles\] SSI-R17 name = "backdoor": is written by the engine \(vault_policy\.backdoor in stack app-roles\) where the configuration pipeline's policies do not reach: create, read, update, delete on sys\/policies\/acl\/backdoor/,
    );
    // Without the rule: the block the override writes, added to the document the engine loads.
    const document = JSON.parse(before);
    document.resource.vault_policy.backdoor = policy;
    fs.writeFileSync(path.join(fixture.stackDir('app-roles'), 'cdk.tf.json'), JSON.stringify(document, null, 2));
    try {
      const out = await run('app-roles', ['apply', '-auto-approve'], await applyRoleToken());
      expect(out.code).toBe(1);
      expect(`${out.stdout}\n${out.stderr}`).toMatch(/Code: 403|permission denied/);
      expect((await storeRequest(store, 'GET', 'sys/policies/acl/backdoor')).status).toBe(404);
    } finally {
      fs.writeFileSync(path.join(fixture.stackDir('app-roles'), 'cdk.tf.json'), before);
    }
    // The stack is as before: the refused create left nothing in the state.
    expect(applied(await run('app-roles', ['plan', '-detailed-exitcode'], await applyRoleToken()), 'plan after the refused apply')).toMatch(/No changes/);
  });

  it(`${engine}: an application removed and one added in one apply: the removed role and policy are destroyed before the grant narrows, the new ones created after it widens; no 403`, async () => {
    fixture.synthPlatform(config({ 'payments-dev': { name: 'payments', environment: 'dev' } }));
    const token = await applyRoleToken();
    const out = applied(await run('app-roles', ['apply', '-auto-approve'], token), 'apply of the change with the apply role');
    expect(out).not.toMatch(/permission denied/);
    const at = (pattern: RegExp) => {
      const i = out.search(pattern);
      expect({ pattern: String(pattern), found: i >= 0 }).toEqual({ pattern: String(pattern), found: true });
      return i;
    };
    const narrowing = at(/vault_policy\.secretstore-iac-grant-pipeline-apply: Modifying/);
    const narrowed = at(/vault_policy\.secretstore-iac-grant-pipeline-apply: Modifications complete/);
    expect(at(/vault_approle_auth_backend_role\.billing-dev_role_[A-F0-9]+: Destruction complete/)).toBeLessThan(narrowing);
    expect(at(/vault_policy\.billing-dev_policy_[A-F0-9]+: Destruction complete/)).toBeLessThan(narrowing);
    expect(at(/vault_approle_auth_backend_role\.payments-dev_role_[A-F0-9]+: Creating/)).toBeGreaterThan(narrowed);
    expect(out).toMatch(/Apply complete! Resources: 2 added, 2 changed, 2 destroyed/);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(404);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/payments-dev')).status).toBe(200);
    // The grant is what let the token at the removed role: narrowed, the path is out of reach.
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev', undefined, token)).status).toBe(403);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/payments-dev', undefined, token)).status).toBe(200);
    // ci-access did not change: adding and removing an application is the application stack's business.
    expect(applied(await run('ci-access', ['plan'], token), 'plan of ci-access')).toMatch(/No changes/);
  });

  it(`${engine}: right after those applies, drift of every stack is clean (exit 0): the depends_on on each resource is the engine's, not a field of the role (issue 37)`, async () => {
    const drift = await runStoreCli(['drift', 'cdktf.out'], { cwd: fixture.dir, addr: store.addr, token: store.rootToken });
    expect({ code: drift.code, stderr: drift.stderr }).toEqual({ code: 0, stderr: '' });
    expect(drift.stdout).toContain('**In sync.**');
  });

  it(`${engine}: a raw policy named with capitals (Upper-Case) is applied by the apply role: the provider requests sys/policies/acl/Upper-Case and ACL paths are case-sensitive, so its grant holds the name as given beside the stored one (before: HTTP 403)`, async () => {
    fixture.synthPlatform(config({ 'payments-dev': { name: 'payments', environment: 'dev' } }), (p) => void new Policy(p.appRoles, 'user_upper', { name: 'Upper-Case', policy: 'path "secret/data/x" {\n  capabilities = ["read"]\n}\n' }));
    const out = applied(await run('app-roles', ['apply', '-auto-approve'], await applyRoleToken()), 'apply of a policy named with capitals');
    expect(out).toMatch(/vault_policy\.user_upper: Creation complete after \S+ \[id=Upper-Case\]/);
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/upper-case')).status).toBe(200);
  });
});
