/**
 * CDK Terrain on a real store (issue 29, docs/cdk-terrain.md): the library compiled against cdktn
 * 0.24 and the vault provider bindings generated locally (scripts/cdktn-bindings.js) synthesizes a
 * platform; OpenTofu applies it from the local provider mirror; an application logs in through the
 * AppRole role it declared and reads its own secret path only. Then the default build (cdktf 0.21 +
 * @cdktf/provider-vault) synthesizes the same configuration over the same state: the plan has no
 * change, so moving between the frameworks keeps state and addresses.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Duration } from '../../lib';
import { REPO_ROOT } from '../support/paths';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, firstError, PlatformFixture, TEST_SETTINGS, testPlatformConfig, writeKv2 } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';

/** The application the test declares: role `billing-dev`, reading `secret/data/acme/dev/billing/*`. */
const BILLING = { name: 'billing', environment: 'dev', secrets: { database: ['pg_user', 'pg_password'] } };
/** A second application, so that reading another application's path is refused. */
const LEDGER = { name: 'ledger', environment: 'dev', secrets: { database: ['pg_user'] } };
const JOB_TIMEOUT_MINUTES = 15;

/**
 * Synthesizes with the CDK Terrain build in its own node process (it loads cdktn and constructs
 * 10.6, not this process's cdktf): the same configuration as `testPlatformConfig(pem, { applications })`.
 */
const CDKTN_SYNTH = `
const path = require('path');
const [buildRoot, outdir] = process.argv.slice(2);
const lib = require(path.join(buildRoot, 'dist', 'lib', 'index.js'));
const { definePlatform } = require(path.join(buildRoot, 'dist', 'lib', 'platform', 'platform.js'));
const c = JSON.parse(process.env.SSI_CDKTN_CASE);
const app = new lib.SecretStoreApp({ outdir });
definePlatform(app, {
  ciKeySource: lib.JwtKeySource.publicKeys([c.pem]),
  ciJobTimeout: lib.Duration.minutes(c.jobTimeoutMinutes),
  applications: c.applications,
  settings: { ...c.settings, store: { kind: c.kind } },
});
app.synth();
`;

describe(`CDK Terrain (cdktn) output applied to a real ${storeKind()} store`, () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let build: string;
  let scratch: string;
  let cdktnVersion: string;
  let pem: string;

  beforeAll(async () => {
    // The bindings and the CDK Terrain build of these sources, as `npm run test:frameworks` left them
    // in the toolchain cache (made here when it did not run first).
    const { ensureBindings } = require(path.join(REPO_ROOT, 'scripts', 'cdktn-bindings.js'));
    const { cachedCdktnBuild } = require(path.join(REPO_ROOT, 'scripts', 'framework-compare.js'));
    ({ dir: build, version: cdktnVersion } = cachedCdktnBuild(await ensureBindings()));
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-cdktn-synth-'));
    store = await startStore();
    fixture = PlatformFixture.create(store, 'cdktn');
    pem = generateSigningKey().publicKeyPem;
    const script = path.join(scratch, 'synth.js');
    fs.writeFileSync(script, CDKTN_SYNTH);
    const testCase = { pem, jobTimeoutMinutes: JOB_TIMEOUT_MINUTES, applications: { 'billing-dev': BILLING, 'ledger-dev': LEDGER }, settings: TEST_SETTINGS, kind: storeKind() };
    execFileSync(process.execPath, [script, build, path.join(fixture.dir, 'cdktf.out')], { env: { ...process.env, SSI_CDKTN_CASE: JSON.stringify(testCase) }, stdio: ['ignore', 'pipe', 'inherit'] });
    fixture.stacks = fs.readdirSync(path.join(fixture.dir, 'cdktf.out', 'stacks')).sort();
    await fixture.apply();
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('the output applied is CDK Terrain\'s: each stack names cdktn in its metadata', () => {
    expect(cdktnVersion).toMatch(/^0\.24\./);
    expect(fixture.stacks).toEqual(['app-roles', 'ci-access']);
    for (const stack of fixture.stacks) expect(fixture.stackJson(stack)['//'].metadata.version).toBe(cdktnVersion);
    expect(JSON.parse(fs.readFileSync(path.join(fixture.dir, 'cdktf.out', 'manifest.json'), 'utf8')).version).toBe(cdktnVersion);
  });

  it('the store has the role and policy it declared: billing-dev with its policy, the policy text as synthesized', async () => {
    const role = await storeRequest(store, 'GET', 'auth/approle/role/billing-dev');
    expect(role.status).toBe(200);
    expect(role.body.data.token_policies).toEqual(['billing-dev']);
    const policy = await storeRequest(store, 'GET', 'sys/policy/billing-dev');
    expect(policy.status).toBe(200);
    const synthesized = Object.values<any>(fixture.stackJson('app-roles').resource.vault_policy).find((p) => p.name === 'billing-dev');
    expect(policy.body.rules ?? policy.body.data.rules).toBe(synthesized.policy);
  });

  it('an AppRole login through the role works, and the token reads its own path and not another application\'s', async () => {
    await writeKv2(store, 'secret', 'acme/dev/billing/database', { pg_user: 'billing', pg_password: 'test-only' });
    await writeKv2(store, 'secret', 'acme/dev/ledger/database', { pg_user: 'ledger' });
    const roleIds = await fixture.outputs('app-roles');
    const roleId = Object.entries(roleIds).find(([name]) => /billing/.test(name))?.[1];
    expect(typeof roleId).toBe('string');
    const secretId = await storeRequest(store, 'POST', 'auth/approle/role/billing-dev/secret-id');
    expect(secretId.status).toBe(200);
    const login = await appRoleLogin(store, roleId, secretId.body.data.secret_id);
    const token = clientToken(login);
    expect(login.body.auth.policies).toEqual(['billing-dev', 'default']);
    const own = await storeRequest(store, 'GET', 'secret/data/acme/dev/billing/database', undefined, token);
    expect(own.status).toBe(200);
    expect(Object.keys(own.body.data.data).sort()).toEqual(['pg_password', 'pg_user']);
    const other = await storeRequest(store, 'GET', 'secret/data/acme/dev/ledger/database', undefined, token);
    expect(other.status).toBe(403);
    expect(firstError(other)).toContain('permission denied');
  });

  it('plans no change on the applied state: with the CDK Terrain output, then with the default cdktf output of the same configuration', async () => {
    for (const stack of fixture.stacks) expect((await fixture.plan(stack)).code).toBe(0);
    // The default build over the same state (the stack directories and their state stay): a move
    // between the frameworks plans nothing.
    fixture.synthPlatform(testPlatformConfig(pem, { ciJobTimeout: Duration.minutes(JOB_TIMEOUT_MINUTES), applications: { 'billing-dev': BILLING, 'ledger-dev': LEDGER } }));
    for (const stack of fixture.stacks) {
      expect(fixture.stackJson(stack)['//'].metadata.version).toBe('0.21.0');
      const plan = await fixture.plan(stack);
      expect({ stack, code: plan.code }).toEqual({ stack, code: 0 });
    }
  });
});
