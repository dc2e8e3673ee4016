/**
 * The generated CI login script, run by a minimal POSIX shell (dash; BusyBox sh with BusyBox tools
 * when installed) against a fake store that answers like the real one. The real store is exercised
 * by test/store/ci-login.store.test.ts; this file covers every branch quickly and deterministically.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SecretStoreApp } from '../../../lib';
import {
  JSON_VALUE_AWK,
  LEGACY_JOB_JWT_VARIABLE,
  READ_VARIABLE,
  REGISTRY_LOGIN_COMMAND_VARIABLE,
  REGISTRY_LOGIN_VARIABLE,
  renderCiLoginScript,
} from '../../../lib/render/ci-login-script';
import { CiLoginTemplate } from '../../../lib/constructs/ci-login-template';
import { CiJobTemplate } from '../../../lib/render/gitlab-ci-template';
import { definePlatform } from '../../../lib/platform/platform';
import { platformConfig } from '../../support/platform-config';
import { FakeStore, fakeJwt, goJson, JobShell, jobShells, leakedValues, runJob } from '../../support/ci-login-harness';

const CI_URL = platformConfig.settings.ciUrl;

function platformTemplate(): CiLoginTemplate {
  const app = new SecretStoreApp({ outdir: path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-')), 'out') });
  definePlatform(app, platformConfig);
  const template = app.node.findAll().find((c): c is CiLoginTemplate => c instanceof CiLoginTemplate);
  if (!template) throw new Error('the platform declares no CiLoginTemplate');
  return template;
}

const template = platformTemplate();
const SCRIPT = template.loginScript();
const JOBS: Record<string, CiJobTemplate> = Object.fromEntries(template.jobTemplates().map((j) => [j.consumer, j]));
const jobEnv = (consumer: string) => ({
  SECRETSTORE_READ: JOBS[consumer].reads.map((r) => r.entry).join('\n'),
  SECRETSTORE_REGISTRY_LOGIN: JOBS[consumer].registryLogins.map((l) => l.entry).join(' '),
});

/** Values no job log may show: quotes, `$`, backslashes, spaces, a newline, non-ASCII, `&<>` (Go escapes them). */
const NASTY_PASSWORD = `pa$$ 'w"o\\rd&<x>\n2nd-line é😀 $(id) \`id\``;
const ORCH = { username: 'svc-orchestrator-user-7Qx', password: NASTY_PASSWORD };

const SHELLS = jobShells();

describe('the JSON extractor (awk, no jq)', () => {
  const awks: [string, string[]][] = [['host awk', ['awk']]];
  if (SHELLS.some((s) => s.tools === 'busybox')) awks.push(['busybox awk', ['busybox', 'awk']]);
  const run = (awk: string[], sel: string, json: string) => {
    try {
      const out = execFileSync(awk[0], [...awk.slice(1), '-v', `sel=${sel}`, JSON_VALUE_AWK], { input: json, env: { LC_ALL: 'C', PATH: process.env.PATH } });
      return { code: 0, out: out.toString('utf8') };
    } catch (e) {
      const err = e as { status: number; stdout: Buffer };
      return { code: err.status, out: err.stdout.toString('utf8') };
    }
  };
  const envelope = goJson({
    request_id: 'x',
    data: { data: { password: NASTY_PASSWORD, n: 12.5e3, b: true, z: null, o: { a: [1, { b: 2 }] }, empty: '', 'a.b': 'dotted' }, metadata: { version: 1 } },
    warnings: null,
  });

  describe.each(awks)('%s', (_name, awk) => {
    it('decodes a KV v2 string value exactly (escapes, \\u0026, UTF-8, surrogate pairs, newline)', () => {
      expect(run(awk, 'data.data.password', envelope)).toEqual({ code: 0, out: NASTY_PASSWORD });
      expect(run(awk, 'data.data.password', '{"data":{"data":{"password":"\\ud83d\\ude00\\u00e9\\/\\t"}}}')).toEqual({ code: 0, out: '😀é/\t' });
    });
    it('gives numbers and booleans as written, null and "" as empty', () => {
      expect(run(awk, 'data.data.n', envelope)).toEqual({ code: 0, out: '12500' });
      expect(run(awk, 'data.data.b', envelope)).toEqual({ code: 0, out: 'true' });
      expect(run(awk, 'data.data.z', envelope)).toEqual({ code: 0, out: '' });
      expect(run(awk, 'data.data.empty', envelope)).toEqual({ code: 0, out: '' });
    });
    it('tells absent (3), not a scalar (4) and unparsable (2) apart', () => {
      expect(run(awk, 'data.data.missing', envelope).code).toBe(3);
      expect(run(awk, 'data.data.o', envelope).code).toBe(4);
      expect(run(awk, 'auth.client_token', '<html><body>Sign in</body></html>').code).toBe(2);
      expect(run(awk, 'auth.client_token', '{"auth":{"client_token":"s.x"}').code).toBe(2);
      expect(run(awk, 'auth.client_token', '{"auth":{"client_token":"s.x"}} trailing').code).toBe(2);
      expect(run(awk, 'auth.client_token', '').code).toBe(2);
    });
    it('reads the login token and the error list of real-shaped responses', () => {
      const login = goJson({ request_id: 'a', auth: { client_token: 's.AbC123', policies: ['default', 'registry-ci'], metadata: { role: 'registry-ci' }, lease_duration: 900 }, warnings: null });
      expect(run(awk, 'auth.client_token', `  ${login}\n`)).toEqual({ code: 0, out: 's.AbC123' });
      expect(run(awk, 'errors.*', goJson({ errors: ['1 error occurred:\n\t* permission denied\n\n', 'second'] }))).toEqual({
        code: 0,
        out: '1 error occurred:\n\t* permission denied\n\n\nsecond',
      });
      expect(run(awk, 'data.data.password', '{"data":{"data":{"password":"x","password2":"y"}}}').out).toBe('x');
    });
  });
});

describe('the script text (ci-login.sh filled in)', () => {
  const options = { roleName: "ci'role", authPath: 'jwt-$&', audience: "https://ci.example/$'x" };
  const text = renderCiLoginScript(options);

  it('reads the job variables the exported constants name', () => {
    expect(text).toContain(`for _ss_e in \${${READ_VARIABLE}:-}; do`);
    expect(text).toContain(`for _ss_e in \${${REGISTRY_LOGIN_VARIABLE}:-}; do`);
    expect(text).toContain(`_ss_cmd=\${${REGISTRY_LOGIN_COMMAND_VARIABLE}:-$_ss_login_cmd_default}`);
    expect(text).toContain(`_ss_jwt=$${LEGACY_JOB_JWT_VARIABLE}\n`);
    expect(text).toContain(`_ss_read_var='${READ_VARIABLE}'\n_ss_login_var='${REGISTRY_LOGIN_VARIABLE}'\n`);
  });

  it('fills every placeholder, shell-quotes the values it assigns and takes "$" in them literally', () => {
    expect(text).not.toMatch(/@@|^#@/m);
    expect(text).toContain(`\n_ss_role='ci'\\''role'\n_ss_auth_path='jwt-$&'\n_ss_audience='https://ci.example/$'\\''x'\n`);
    expect(text).toContain(`JWT login as role "ci'role" with the\n# job's ID token SECRETSTORE_ID_TOKEN (aud https://ci.example/$'x)`);
    expect(text).toContain(`LC_ALL=C awk -v sel="$1" '${JSON_VALUE_AWK}'\n`);
  });
});

describe.each(SHELLS.map((s) => [s.name, s] as [string, JobShell]))('the login script under %s', (_name, shell) => {
  let store: FakeStore;
  const jwt = fakeJwt({ aud: CI_URL, namespace_path: 'acme' });

  beforeAll(async () => {
    store = await FakeStore.start();
  });
  afterAll(async () => {
    await store.stop();
  });
  beforeEach(() => {
    store.reset();
    store.secrets.set('secret/data/registry/svc-orchestrator', ORCH);
  });

  const baseEnv = () => ({ SECRETSTORE_ADDR: store.addr, SECRETSTORE_ID_TOKEN: jwt });
  const run = (env: Record<string, string | undefined>, more: Partial<Parameters<typeof runJob>[0]> = {}) =>
    runJob({ shell, script: SCRIPT, env: { ...baseEnv(), ...env }, ...more });

  it('image-build: logs in as registry-ci, reads only its path, exports the keys, logs in to the registry at :8443 with the password on stdin', async () => {
    const r = await run(jobEnv('image-build'), { collect: ['SVC_ORCHESTRATOR_USERNAME', 'SVC_ORCHESTRATOR_PASSWORD'] });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.vars).toEqual({ SVC_ORCHESTRATOR_USERNAME: ORCH.username, SVC_ORCHESTRATOR_PASSWORD: ORCH.password });
    expect(store.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['POST auth/jwt/login', 'GET secret/data/registry/svc-orchestrator']);
    expect(JSON.parse(store.requests[0].body)).toEqual({ role: 'registry-ci', jwt });
    expect(store.requests[1].token).toBe(store.token);
    expect(r.registryLogins).toEqual([
      { command: 'docker', args: ['login', '--username', '<username>', '--password-stdin', 'registry.acme.example:8443'], gotPassword: true, passwordMatches: false, usernameMatches: false },
    ]);
    expect(r.stdout).toContain('secretstore: read secret/data/registry/svc-orchestrator: exported SVC_ORCHESTRATOR_PASSWORD SVC_ORCHESTRATOR_USERNAME');
    expect(r.stdout).toContain('registry login at registry.acme.example:8443 as $SVC_ORCHESTRATOR_USERNAME (password on standard input)');
    expect(leakedValues(r.log, [ORCH.username, ORCH.password, jwt, store.token])).toEqual([]);
  });

  it('pipes exactly the stored password to the registry client, and never puts a token on a command line', async () => {
    const r = await run({ ...jobEnv('image-push'), FAKE_LOGIN_EXPECT_PASSWORD: ORCH.password, FAKE_LOGIN_EXPECT_USERNAME: ORCH.username });
    expect(r.code).toBe(0);
    expect(r.registryLogins).toHaveLength(1);
    expect(r.registryLogins[0]).toMatchObject({ gotPassword: true, passwordMatches: true, usernameMatches: true });
    expect(r.curlCalls).toHaveLength(2);
    expect(leakedValues(r.curlCalls.join('\n'), [jwt, store.token, ORCH.password])).toEqual([]);
    expect(r.curlCalls[1]).toContain('-K -');
  });

  it('leaves the shell as it found it: no _ss_ variables or functions, noglob off, works under set -eu', async () => {
    const r = await run(jobEnv('image-scan'), { prelude: 'set -eu', collect: ['SVC_ORCHESTRATOR_PASSWORD'] });
    expect(r.code).toBe(0);
    expect(r.vars.SVC_ORCHESTRATOR_PASSWORD).toBe(ORCH.password);
    expect(r.after).toBeDefined();
    expect(r.after!.leftoverVariables).toEqual([]);
    expect(r.after!.leftoverFunctions).toBe(false);
    expect(r.after!.flags).toContain('e');
    expect(r.after!.flags).toContain('u');
    expect(r.after!.flags).not.toContain('f');
  });

  it("also runs in GitLab's bash (set -eo pipefail), as on Debian-based job images", async () => {
    const r = await runJob({
      shell: { name: 'bash', argv: ['/bin/bash'], tools: 'host' },
      script: SCRIPT,
      env: { ...baseEnv(), ...jobEnv('image-build') },
      prelude: 'set -eo pipefail',
      collect: ['SVC_ORCHESTRATOR_PASSWORD'],
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.vars.SVC_ORCHESTRATOR_PASSWORD).toBe(ORCH.password);
    expect(r.registryLogins).toHaveLength(1);
    expect(r.after!.leftoverVariables).toEqual([]);
  });

  it('switches shell tracing off while it runs (no value in a set -x trace) and back on after', async () => {
    const r = await run(jobEnv('image-build'), { prelude: 'set -x', collect: ['SVC_ORCHESTRATOR_PASSWORD'] });
    expect(r.code).toBe(0);
    expect(r.vars.SVC_ORCHESTRATOR_PASSWORD).toBe(ORCH.password);
    expect(r.after!.flags).toContain('x');
    expect(leakedValues(r.log, [ORCH.username, ORCH.password, jwt, store.token])).toEqual([]);
  });

  it('e2e-test: reads the test user; the test-report key only when REPORTING_ENDPOINT is set', async () => {
    const user = { username: 'e2e-admin', password: 'e2e-Pa55-word-xyz' };
    const report = { api_key: 'report-key-abcdef123' };
    store.secrets.set('secret/data/orchestrator/e2e-test-user', user);
    store.secrets.set('secret/data/testreport/svc-orchestrator', report);
    const names = ['E2E_TEST_USER_USERNAME', 'E2E_TEST_USER_PASSWORD', 'TESTREPORT_API_KEY'];

    const off = await run(jobEnv('e2e-test'), { collect: names });
    expect(off.code).toBe(0);
    expect(off.vars).toEqual({ E2E_TEST_USER_USERNAME: user.username, E2E_TEST_USER_PASSWORD: user.password, TESTREPORT_API_KEY: undefined });
    expect(store.requests.map((q) => q.path)).toEqual(['auth/jwt/login', 'secret/data/orchestrator/e2e-test-user']);
    expect(off.log).not.toMatch(/TESTREPORT|testreport/);
    expect(off.registryLogins).toEqual([]);

    store.requests.length = 0;
    const on = await run({ ...jobEnv('e2e-test'), REPORTING_ENDPOINT: 'https://reports.acme.example' }, { collect: names });
    expect(on.code).toBe(0);
    expect(on.vars.TESTREPORT_API_KEY).toBe(report.api_key);
    expect(store.requests.map((q) => q.path)).toEqual(['auth/jwt/login', 'secret/data/orchestrator/e2e-test-user', 'secret/data/testreport/svc-orchestrator']);
    expect(leakedValues(on.log, [...Object.values(user), report.api_key])).toEqual([]);
  });

  it('executor-rpm-build: exports the executor account and does no container registry login (RPM over HTTP)', async () => {
    store.secrets.set('secret/data/registry/svc-executor', { username: 'svc-executor-u', password: 'svc-executor-pw-123' });
    const r = await run(jobEnv('executor-rpm-build'), { collect: ['SVC_EXECUTOR_USERNAME', 'SVC_EXECUTOR_PASSWORD'] });
    expect(r.code).toBe(0);
    expect(r.vars).toEqual({ SVC_EXECUTOR_USERNAME: 'svc-executor-u', SVC_EXECUTOR_PASSWORD: 'svc-executor-pw-123' });
    expect(r.registryLogins).toEqual([]);
  });

  it('falls back to VAULT_ADDR when SECRETSTORE_ADDR is unset, and strips a trailing slash', async () => {
    const r = await run({ ...jobEnv('image-build'), SECRETSTORE_ADDR: undefined, VAULT_ADDR: `${store.addr}/` });
    expect(r.code).toBe(0);
    expect(store.requests[0].path).toBe('auth/jwt/login');
  });

  it('uses the configured registry client (podman login)', async () => {
    const r = await run({ ...jobEnv('image-build'), SECRETSTORE_REGISTRY_LOGIN_COMMAND: 'podman login' });
    expect(r.code).toBe(0);
    expect(r.registryLogins.map((l) => l.command)).toEqual(['podman']);
  });

  it('reads a KV version 1 entry from data.<key>', async () => {
    store.secretsV1.set('kv1/registry/svc-legacy', { username: 'legacy-u', password: 'legacy-pw-9' });
    const r = await run({ SECRETSTORE_READ: 'kv1:kv1/registry/svc-legacy:password=LEGACY_PASSWORD' }, { collect: ['LEGACY_PASSWORD'] });
    expect(r.code).toBe(0);
    expect(r.vars.LEGACY_PASSWORD).toBe('legacy-pw-9');
  });

  describe('stops with the spec §7 cause and fix', () => {
    it.each([
      ['unset', { SECRETSTORE_ADDR: undefined }],
      ['empty', { SECRETSTORE_ADDR: '' }],
    ])('SECRETSTORE_ADDR %s', async (_c, env) => {
      const r = await run({ ...jobEnv('image-build'), ...env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('SECRETSTORE_ADDR is unset or empty');
      expect(r.stderr).toContain('would target an empty host');
      expect(r.stderr).toContain('define SECRETSTORE_ADDR as a group-level CI/CD variable, unmasked');
      expect(store.requests).toEqual([]);
      expect(r.curlCalls).toEqual([]);
    });

    it('store address variables that disagree', async () => {
      const r = await run({ ...jobEnv('image-build'), VAULT_ADDR: 'https://elsewhere.example:8200' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`the store address variables disagree: SECRETSTORE_ADDR=${store.addr} but VAULT_ADDR=https://elsewhere.example:8200`);
      expect(store.requests).toEqual([]);
    });

    it('a store address that is not a URL', async () => {
      const r = await run({ SECRETSTORE_ADDR: 'secrets.example:8200' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('SECRETSTORE_ADDR=secrets.example:8200 is not an http(s) URL');
    });

    it('no ID token (job without id_tokens)', async () => {
      const r = await run({ ...jobEnv('image-build'), SECRETSTORE_ID_TOKEN: undefined });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('SECRETSTORE_ID_TOKEN is unset or empty: the job declares no ID token');
      expect(r.stderr).toContain(`extend .secretstore-login, or declare id_tokens: SECRETSTORE_ID_TOKEN: aud: ${CI_URL}`);
      expect(store.requests).toEqual([]);
    });

    it('the older CI_JOB_JWT_V2 is used when no ID token is declared', async () => {
      const r = await run({ ...jobEnv('image-build'), SECRETSTORE_ID_TOKEN: undefined, CI_JOB_JWT_V2: jwt });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('using the older CI_JOB_JWT_V2');
    });

    it('HTTP 400 wrong aud claim', async () => {
      store.loginReply = { status: 400, body: goJson({ errors: ['error validating token: invalid audience (aud) claim: audience claim does not match any expected audience'] }) };
      const r = await run(jobEnv('image-build'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 400 from JWT login as registry-ci: wrong aud claim (store said: error validating token: invalid audience (aud) claim: audience claim does not match any expected audience)');
      expect(r.stderr).toContain(`Fix: use the audience ${CI_URL}`);
    });

    it('HTTP 400 job not bound to the role (the store\'s answer to a bound-claim mismatch)', async () => {
      store.loginReply = {
        status: 400,
        body: goJson({ errors: ['error validating claims: claim "namespace_path" does not match any associated bound claim values'] }),
      };
      const r = await run(jobEnv('image-build'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('job not bound to the role');
      expect(r.stderr).toContain('this store answers a bound-claim mismatch with 400');
      expect(r.stderr).toContain("Fix: check the role's bound claims");
    });

    it('HTTP 400 for another reason names both causes', async () => {
      store.loginReply = { status: 400, body: goJson({ errors: ['something else'] }) };
      const r = await run(jobEnv('image-build'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Cause: wrong aud claim, or (on this store) the job is not bound to the role.');
      expect(r.stderr).toContain(`Fix: use the audience ${CI_URL}; check the role's bound claims.`);
    });

    it('HTTP 403 from JWT login (job not bound)', async () => {
      store.loginReply = { status: 403, body: goJson({ errors: ['permission denied'] }) };
      const r = await run(jobEnv('image-build'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 403 from JWT login as registry-ci: job not bound to the role (store said: permission denied)');
      expect(r.stderr).toContain("Fix: check the role's bound claims");
    });

    it('empty token after parsing: prints the login response (token redacted)', async () => {
      store.loginReply = { status: 200, body: '<html><body>Corporate proxy: please sign in</body></html>', contentType: 'text/html' };
      const r = await run(jobEnv('image-build'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('empty token after parsing: the login response could not be parsed. Login response:');
      expect(r.stderr).toContain('<html><body>Corporate proxy: please sign in</body></html>');
      expect(store.requests).toHaveLength(1);

      store.requests.length = 0;
      store.loginReply = { status: 200, body: goJson({ data: { client_token: 's.ShouldNotShow123' }, auth: null }) };
      const moved = await run(jobEnv('image-build'));
      expect(moved.code).toBe(1);
      expect(moved.stderr).toContain('"client_token":"(redacted)"');
      expect(moved.log).not.toContain('s.ShouldNotShow123');

      store.loginReply = { status: 200, body: goJson({ request_id: 'r', auth: { client_token: 's.TruncatedSecret456' } }).slice(0, 45) };
      const cut = await run(jobEnv('image-build'));
      expect(cut.code).toBe(1);
      expect(cut.stderr).toContain('{"request_id":"r","auth":{"client_token":"(redacted)');
      expect(cut.log).not.toContain('s.Trunc');
    });

    it('HTTP 403 reading a path outside the policy', async () => {
      store.secrets.set('secret/data/registry/svc-deployer', 403);
      const r = await run({ SECRETSTORE_READ: 'kv2:secret/data/registry/svc-deployer:password=SVC_DEPLOYER_PASSWORD' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 403 reading secret/data/registry/svc-deployer: path not in the policy of role registry-ci (store said: 1 error occurred: * permission denied)');
      expect(r.stderr).toContain('Fix: update the policy');
    });

    it('HTTP 404: the secret was never put in the store', async () => {
      store.secrets.delete('secret/data/registry/svc-orchestrator');
      const r = await run(jobEnv('image-build'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 404 reading secret/data/registry/svc-orchestrator: no secret there');
      expect(r.registryLogins).toEqual([]);
    });

    it('a declared key missing from the secret (no value printed)', async () => {
      store.secrets.set('secret/data/registry/svc-orchestrator', { username: ORCH.username });
      const r = await run(jobEnv('image-build'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('the secret has no key "password"');
      expect(leakedValues(r.log, [ORCH.username])).toEqual([]);
    });

    it('a store that cannot be reached', async () => {
      const r = await run({ ...jobEnv('image-build'), SECRETSTORE_ADDR: 'http://127.0.0.1:9' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('could not reach the secrets store at http://127.0.0.1:9 (JWT login: curl exit 7');
    });

    it('a failed registry login (no password in the log)', async () => {
      const r = await run(jobEnv('image-build'), { dockerExit: 1 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('registry login at registry.acme.example:8443 failed (docker login exit 1)');
      expect(leakedValues(r.log, [ORCH.username, ORCH.password])).toEqual([]);
    });

    it('a malformed SECRETSTORE_READ entry', async () => {
      const r = await run({ SECRETSTORE_READ: 'secret/data/registry/svc-orchestrator' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('SECRETSTORE_READ entry "secret/data/registry/svc-orchestrator" is not kv2:<api path>:<key>=<VARIABLE>');
      const bad = await run({ SECRETSTORE_READ: 'kv2:secret/data/../sys/x:a=B' });
      expect(bad.stderr).toContain('(bad path)');
      const reserved = await run({ SECRETSTORE_READ: 'kv2:secret/data/registry/svc-orchestrator:password=_ss_token' });
      expect(reserved.stderr).toContain('(reserved variable name _ss_token)');
    });
  });

  it('installs curl with apk add --no-cache curl on an Alpine image that lacks it', async () => {
    const r = await run(jobEnv('image-build'), { withCurl: false, withApk: true, collect: ['SVC_ORCHESTRATOR_PASSWORD'] });
    expect(r.apkCalls).toEqual(['add --no-cache curl']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('curl is missing on this Alpine image');
    expect(r.vars.SVC_ORCHESTRATOR_PASSWORD).toBe(ORCH.password);
  });

  it('stops when curl is missing and there is no apk', async () => {
    const r = await run(jobEnv('image-build'), { withCurl: false });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('curl is required');
  });
});
