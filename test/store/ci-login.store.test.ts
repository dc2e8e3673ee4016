/**
 * The generated CI login template against the real store (spec §4.1 flow 1, §7): the platform is
 * synthesized with the test configuration (CI key = the test's own RSA key) and applied with the real
 * engine; the login script and job variables the synthesis wrote are then run, as a job would, by
 * dash (and BusyBox sh with BusyBox tools when installed) with job tokens signed by the test.
 *
 * The script reaches the store through a pass-through recording proxy, so that the test can tell
 * which paths each job read; for the "unparsable response" row the proxy truncates the store's real
 * login response (a broken proxy or a cut connection).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { FakeRequest, jobShells, JobShell, leakedValues, runJob } from '../support/ci-login-harness';
import { generateSigningKey, gitlabJobClaims, JwtClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { PlatformFixture, SPEC_CI_SECRETS, TEST_SETTINGS, testPlatformConfig, testSecretValues, writeKv2 } from '../support/store/platform-fixture';
import { RunningStore, startStore } from '../support/store/store-server';
import { STORE_TOKEN_PATTERN } from '../support/store/store-facts';
import * as yaml from 'js-yaml';


/** Values with everything a shell or JSON could trip on; `&<>` come back from the store as \u escapes. */
const NASTY_PASSWORD = `pa$$ 'w"o\\rd&<x>\n2nd-line é😀 $(id) \`id\``;

/** A pass-through proxy in front of the store that records requests, or truncates login responses. */
class RecordingProxy {
  readonly requests: FakeRequest[] = [];
  truncateLogin = false;
  addr = '';
  private readonly server: http.Server;

  constructor(private readonly target: string) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const p = (req.url ?? '').replace(/^\/v1\//, '');
        this.requests.push({ method: req.method ?? '', path: p, token: req.headers['x-vault-token'] as string | undefined, body: '' });
        const upstream = http.request(
          `${this.target}${req.url}`,
          { method: req.method, headers: { ...req.headers, host: new URL(this.target).host } },
          (up) => {
            const parts: Buffer[] = [];
            up.on('data', (c: Buffer) => parts.push(c));
            up.on('end', () => {
              let out = Buffer.concat(parts).toString('utf8');
              if (this.truncateLogin && p.endsWith('/login')) {
                const cut = out.indexOf('"accessor"');
                out = out.slice(0, cut > 0 ? cut : Math.floor(out.length / 2));
              }
              res.writeHead(up.statusCode ?? 502, { 'Content-Type': up.headers['content-type'] ?? 'application/json' });
              res.end(out);
            });
          },
        );
        upstream.on('error', () => {
          res.writeHead(502);
          res.end();
        });
        upstream.end(body);
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const a = this.server.address();
    this.addr = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('CI login template against the real store', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let proxy: RecordingProxy;
  let key: JwtSigningKey;
  let script: string;
  let doc: any;
  const seeded: Record<string, Record<string, string>> = {};

  /** A job token as GitLab would sign it for the template's id_tokens block. */
  const jobToken = (overrides: JwtClaims = {}) =>
    signJwt(key.privateKey, gitlabJobClaims({ aud: doc['.secretstore-login'].id_tokens.SECRETSTORE_ID_TOKEN.aud, ...overrides }, { ciUrl: TEST_SETTINGS.ciUrl }), {
      kid: key.kid,
    });
  /** The job variables of a consumer's template, as GitLab would set them (base job merged). */
  const jobVariables = (consumer: string): Record<string, string> => ({
    ...doc['.secretstore-login'].variables,
    ...doc[`.secretstore-${consumer}`].variables,
  });
  const run = (shell: JobShell, consumer: string, env: Record<string, string | undefined> = {}, more: { collect?: string[] } = {}) =>
    runJob({
      shell,
      script,
      env: { ...jobVariables(consumer), SECRETSTORE_ADDR: proxy.addr, SECRETSTORE_ID_TOKEN: jobToken(), ...env },
      ...more,
    });

  beforeAll(async () => {
    key = generateSigningKey();
    store = await startStore();
    fixture = PlatformFixture.create(store, 'ci-login');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    await fixture.apply();
    const ci = path.join(fixture.dir, 'cdktf.out', 'ci');
    script = fs.readFileSync(path.join(ci, 'secretstore-login.sh'), 'utf8');
    doc = yaml.load(fs.readFileSync(path.join(ci, 'secretstore-ci.gitlab-ci.yml'), 'utf8'));
    // The §2.3 paths, plus svc-deployer, which CI must not read.
    const paths: Record<string, readonly string[]> = { ...SPEC_CI_SECRETS, 'registry/svc-deployer': ['username', 'password'] };
    for (const [logical, keys] of Object.entries(paths)) {
      seeded[logical] = testSecretValues(keys);
      if (logical === 'registry/svc-orchestrator') seeded[logical].password = NASTY_PASSWORD;
      await writeKv2(store, 'secret', logical, seeded[logical]);
    }
    proxy = new RecordingProxy(store.addr);
    await proxy.start();
  });

  afterAll(async () => {
    await proxy?.stop();
    await store?.stop();
    fixture?.cleanup();
  });

  beforeEach(() => {
    proxy.requests.length = 0;
    proxy.truncateLogin = false;
  });

  const allValues = () => Object.values(seeded).flatMap((s) => Object.values(s));

  /** consumer → [logical path, { exported variable: key }][] as the spec (§2.1-2.3) says. */
  const EXPECTED: Record<string, [string, Record<string, string>][]> = {
    'image-build': [['registry/svc-orchestrator', { SVC_ORCHESTRATOR_USERNAME: 'username', SVC_ORCHESTRATOR_PASSWORD: 'password' }]],
    'image-push': [['registry/svc-orchestrator', { SVC_ORCHESTRATOR_USERNAME: 'username', SVC_ORCHESTRATOR_PASSWORD: 'password' }]],
    'image-scan': [['registry/svc-orchestrator', { SVC_ORCHESTRATOR_USERNAME: 'username', SVC_ORCHESTRATOR_PASSWORD: 'password' }]],
    'executor-rpm-build': [['registry/svc-executor', { SVC_EXECUTOR_USERNAME: 'username', SVC_EXECUTOR_PASSWORD: 'password' }]],
    'code-quality-scan': [['codequality/svc-orchestrator', { CODEQUALITY_TOKEN: 'token', CODEQUALITY_URL: 'url' }]],
    'vulnerability-import': [['vulnmgmt/svc-orchestrator', { VULNMGMT_TOKEN: 'token' }]],
    'e2e-test': [
      ['orchestrator/e2e-test-user', { E2E_TEST_USER_USERNAME: 'username', E2E_TEST_USER_PASSWORD: 'password' }],
      ['testreport/svc-orchestrator', { TESTREPORT_API_KEY: 'api_key' }],
    ],
  };

  describe.each(jobShells().map((s) => [s.name, s] as [string, JobShell]))('under %s', (_name, shell) => {
    it.each(Object.keys(EXPECTED))('job %s logs in, reads only its paths and exports their values; the log shows none', async (consumer) => {
      const reporting = consumer === 'e2e-test' ? { REPORTING_ENDPOINT: 'https://reports.test.example' } : {};
      const pw = consumer.startsWith('image-') ? { FAKE_LOGIN_EXPECT_USERNAME: seeded['registry/svc-orchestrator'].username, FAKE_LOGIN_EXPECT_PASSWORD: NASTY_PASSWORD } : {};
      const collect = EXPECTED[consumer].flatMap(([, vars]) => Object.keys(vars));
      const r = await run(shell, consumer, { ...reporting, ...pw }, { collect });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const expectedVars = Object.fromEntries(
        EXPECTED[consumer].flatMap(([logical, vars]) => Object.entries(vars).map(([v, k]) => [v, seeded[logical][k]])),
      );
      expect(r.vars).toEqual(expectedVars);
      expect(proxy.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
        'POST auth/jwt/login',
        ...EXPECTED[consumer].map(([logical]) => `GET secret/data/${logical}`),
      ]);
      expect(proxy.requests.slice(1).every((q) => typeof q.token === 'string' && q.token.length > 0)).toBe(true);
      if (consumer.startsWith('image-')) {
        expect(r.registryLogins).toEqual([
          {
            command: 'docker',
            args: ['login', '--username', '<username>', '--password-stdin', `${TEST_SETTINGS.registryHost}:8443`],
            gotPassword: true,
            passwordMatches: true,
            usernameMatches: true,
          },
        ]);
      } else {
        expect(r.registryLogins).toEqual([]);
      }
      expect(leakedValues(r.log, allValues())).toEqual([]);
      expect(leakedValues(r.curlCalls.join('\n'), [...allValues(), ...proxy.requests.map((q) => q.token ?? '')])).toEqual([]);
    });

    it('e2e-test without REPORTING_ENDPOINT does not read the test-report key', async () => {
      const r = await run(shell, 'e2e-test', {}, { collect: ['TESTREPORT_API_KEY', 'E2E_TEST_USER_PASSWORD'] });
      expect(r.code).toBe(0);
      expect(r.vars).toEqual({ TESTREPORT_API_KEY: undefined, E2E_TEST_USER_PASSWORD: seeded['orchestrator/e2e-test-user'].password });
      expect(proxy.requests.map((q) => q.path)).toEqual(['auth/jwt/login', 'secret/data/orchestrator/e2e-test-user']);
    });

    it('§7 SECRETSTORE_ADDR unset: stops before any request with the cause and the fix', async () => {
      const r = await run(shell, 'image-build', { SECRETSTORE_ADDR: undefined });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('SECRETSTORE_ADDR is unset or empty');
      expect(r.stderr).toContain('define SECRETSTORE_ADDR as a group-level CI/CD variable, unmasked');
      expect(proxy.requests).toEqual([]);
    });

    it('§7 wrong audience: the store answers 400, the script names the aud claim and the audience to use', async () => {
      const r = await run(shell, 'image-build', { SECRETSTORE_ID_TOKEN: jobToken({ aud: 'https://wrong-audience.example' }) });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'HTTP 400 from JWT login as registry-ci: wrong aud claim (store said: error validating token: invalid audience (aud) claim: audience claim does not match any expected audience)',
      );
      expect(r.stderr).toContain(`Fix: use the audience ${TEST_SETTINGS.ciUrl}`);
      expect(proxy.requests.map((q) => q.path)).toEqual(['auth/jwt/login']);
    });

    it('§7 job not bound to the role: the store answers 400 (spec: 403), the script says so and points at the bound claims', async () => {
      const r = await run(shell, 'image-build', {
        SECRETSTORE_ID_TOKEN: jobToken({ namespace_path: 'other-org', project_path: 'other-org/tool' }),
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 400 from JWT login as registry-ci: job not bound to the role');
      expect(r.stderr).toContain('store said: error validating claims: claim "namespace_path" does not match any associated bound claim values');
      expect(r.stderr).toContain("Fix: check the role's bound claims");
      expect(r.registryLogins).toEqual([]);
    });

    it('§7 path outside the policy: the store answers 403, the script says to update the policy', async () => {
      const r = await run(shell, 'image-build', {
        SECRETSTORE_READ: 'kv2:secret/data/registry/svc-deployer:password=SVC_DEPLOYER_PASSWORD,username=SVC_DEPLOYER_USERNAME',
        SECRETSTORE_REGISTRY_LOGIN: '',
      }, { collect: ['SVC_DEPLOYER_PASSWORD'] });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 403 reading secret/data/registry/svc-deployer: path not in the policy of role registry-ci (store said: 1 error occurred: * permission denied)');
      expect(r.stderr).toContain('Fix: update the policy');
      expect(r.vars.SVC_DEPLOYER_PASSWORD).toBeUndefined();
      expect(leakedValues(r.log, Object.values(seeded['registry/svc-deployer']))).toEqual([]);
    });

    it('§7 empty token after parsing: a truncated login response is printed, with the token redacted', async () => {
      proxy.truncateLogin = true;
      const r = await run(shell, 'image-build');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('empty token after parsing: the login response could not be parsed. Login response:');
      expect(r.stderr).toContain('"request_id":');
      expect(r.stderr).toContain('"client_token":"(redacted)"');
      expect(r.log).not.toMatch(/"client_token":"(?:hv[sbr]|[sbr])\./);
      expect(r.log).not.toMatch(STORE_TOKEN_PATTERN);
      expect(proxy.requests.map((q) => q.path)).toEqual(['auth/jwt/login']);
    });
  });
});
