/**
 * Issue 19 on a real store: Terraform JSON strings are templates to the engine, and the library
 * writes every literal escaped. The hostile bound claim of the finding, `acme/${"\u002c\u002a"}`
 * (which the engine evaluated to `acme/,*`, letting jobs of any group log in), and an audience
 * `${path.cwd}` are applied by OpenTofu as the exact text: the store holds them literally, a job of
 * another group is still refused, the plan after apply is empty, and drift reads them as literal.
 */
import * as path from 'node:path';
import { CiJwtRole } from '../../lib';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { firstError, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { runStoreCli } from '../support/store/store-cli';

const CI = TEST_SETTINGS.ciUrl;
const N39 = 'acme/${"\\u002c\\u002a"}';
const CWD_AUDIENCE = '${path.cwd}';

describe('Terraform JSON literals on a real store (issue 19)', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  const key: JwtSigningKey = generateSigningKey();

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'tf-literal');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem, { ciBoundClaims: { namespace_path: N39 } }), (p) => {
      new CiJwtRole(p.ciAccess, 'cwd-probe', {
        auth: p.ciAccess.jwtAuth,
        roleName: 'cwd-probe',
        audiences: [CWD_AUDIENCE],
        boundClaims: { namespace_path: 'acme' },
      }).policy.addRule('secret/data/sonar/probe', ['read'], 'probe');
    });
    await fixture.apply();
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it('the store holds the bound claim and the audience exactly as declared', async () => {
    const role = await storeRequest(store, 'GET', 'auth/jwt/role/registry-ci');
    expect(role.body.data.bound_claims).toEqual({ namespace_path: [N39] });
    const probe = await storeRequest(store, 'GET', 'auth/jwt/role/cwd-probe');
    expect(probe.body.data.bound_audiences).toEqual([CWD_AUDIENCE]);
  });

  it('a job of another group is refused (400), as are jobs of "acme/,*"; only the literal value matches', async () => {
    const refused: string[] = [];
    for (const group of ['other', 'acme/x', 'acme/,*', ',*']) {
      const jwt = signJwt(key.privateKey, gitlabJobClaims({ namespace_path: group, project_path: `${group}/x` }, { ciUrl: CI }), { kid: key.kid });
      const login = await jwtLogin(store, 'registry-ci', jwt);
      refused.push(`${group}: ${login.status} ${firstError(login)}`);
    }
    expect(refused).toEqual(
      ['other', 'acme/x', 'acme/,*', ',*'].map((g) => `${g}: 400 error validating claims: claim "namespace_path" does not match any associated bound claim values`),
    );
    const literal = signJwt(key.privateKey, gitlabJobClaims({ namespace_path: N39, project_path: 'acme/x' }, { ciUrl: CI }), { kid: key.kid });
    expect((await jwtLogin(store, 'registry-ci', literal)).status).toBe(200);
  });

  it('the engine plans no change after the apply (the literal round-trips through state)', async () => {
    for (const stack of fixture.stacks) expect((await fixture.plan(stack)).code).toBe(0);
  });

  it('drift reads the values as literal: in sync for the declared roles, no "cannot resolve"', async () => {
    const r = await runStoreCli(['drift', 'cdktf.out'], { cwd: fixture.dir, addr: store.addr, token: store.rootToken });
    const report = r.stdout;
    expect(r.stderr).not.toContain('cannot resolve');
    expect(r.code).not.toBe(3);
    expect(report).not.toMatch(/registry-ci.*(changed|differs)/);
    expect(report).not.toMatch(/cwd-probe.*(changed|differs)/);
    expect(path.isAbsolute(fixture.dir)).toBe(true);
  });
});
