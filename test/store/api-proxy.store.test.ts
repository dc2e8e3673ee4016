/**
 * `apiProxy: 'proxy'` with the real store's proxy and agent (`bao proxy` / `vault proxy`, docs/operators.md):
 * the application talks to the store through a loopback listener served by the store's proxy, which both
 * stores offer in place of the agent's API proxy they deprecate; the agent beside it only renders the env
 * file. The platform is synthesized with an AgentConfigurations whose paths lie in a temp dir, its
 * app-roles stack applied with the real engine, and both containers are started the way a deployment
 * starts them: the generated proxy-entrypoint.sh and entrypoint.sh, each with the variables of the one
 * env file the library provisions (the same Role ID and Secret ID) and SECRETSTORE_ADDR. The store's
 * binary is on the PATH under its CLI name (`bao` or `vault`) and SECRETSTORE_AGENT_BINARY is not set,
 * so the entrypoints run the binary the configuration's `settings.store.kind` chose.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentConfigurations } from '../../lib/constructs/agent-configuration';
import { AppRoleCredentialsFile } from '../../lib/store/approle-credentials-file';
import { AppRoleOperator } from '../../lib/store/approle-operator';
import { StoreClient } from '../../lib/store/store-client';
import { AppRoleApplication, Duration } from '../../lib';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig, writeKv2 } from '../support/store/platform-fixture';
import { freePort, RunningStore, startStore } from '../support/store/store-server';
import { AGENT_API_PROXY_DEPRECATION, STORE_TOKEN_PATTERN, serviceTokenPattern, storeCli } from '../support/store/store-facts';
import { toolchain } from '../support/store/toolchain-env';
import { AgentRun, sleep, waitFor } from '../support/store/agent-run';

/** Every file below `dir`, recursively. */
function filesBelow(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesBelow(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe(`apiProxy 'proxy': the application's loopback API proxy is the real \`${storeCli()} proxy\`, the agent only renders`, () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let work: string;
  let out: string;
  let port: number;
  let proxy: AgentRun;
  let agent: AgentRun;
  let listener: string;
  /** Values that must never appear in a generated file or a log. */
  const secrets = new Set<string>();
  const VALUE = `proxied-${Date.now()}-'quoted' $value`;
  const OTHER_VALUE = `other-application-${Date.now()}`;

  /** A request through the proxy's listener, without a token, as the application sends it. */
  const throughProxy = (method: string, apiPath: string, headers: Record<string, string> = { 'X-Vault-Request': 'true' }) =>
    fetch(`${listener}/v1/${apiPath}`, { method, headers });

  beforeAll(async () => {
    store = await startStore();
    secrets.add(store.rootToken);
    secrets.add(VALUE);
    secrets.add(OTHER_VALUE);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-api-proxy-'));
    fs.chmodSync(work, 0o700);
    fixture = PlatformFixture.create(store, 'api-proxy');
    out = path.join(fixture.dir, 'cdktf.out', 'test-proxy', 'proxied-test');
    port = await freePort();
    listener = `http://127.0.0.1:${port}`;
    const home = (p: 'agent' | 'proxy') => path.join(work, p);
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem), (platform) => {
      const stack = platform.appRoles;
      // A 30 s token renewed every 3 s: the renewals are seen within the test's time.
      const proxied = new AppRoleApplication(stack, 'proxied-test', {
        auth: stack.appRoleAuth,
        name: 'proxied',
        environment: 'test',
        tokenTtl: Duration.seconds(30),
        tokenMaxTtl: Duration.minutes(10),
        renewalInterval: Duration.seconds(3),
        secrets: { config: ['value'] },
      });
      new AgentConfigurations(stack, 'test-proxy', {
        applications: [proxied],
        outputDirectory: 'test-proxy',
        apiProxy: 'proxy',
        proxyPort: port,
        secretRefreshInterval: Duration.seconds(1),
        paths: {
          configFile: path.join(out, 'agent.hcl'),
          templateFile: path.join(out, 'env.ctmpl'),
          roleIdFile: path.join(home('agent'), 'auth', 'role-id'),
          secretIdFile: path.join(home('agent'), 'auth', 'secret-id'),
          envFile: path.join(home('agent'), 'secrets', '.env'),
          proxyConfigFile: path.join(out, 'proxy.hcl'),
          proxyRoleIdFile: path.join(home('proxy'), 'auth', 'role-id'),
          proxySecretIdFile: path.join(home('proxy'), 'auth', 'secret-id'),
        },
      });
    });
    await fixture.apply(['app-roles']);
    await writeKv2(store, 'secret', 'acme/test/proxied/config', { value: VALUE });
    // Another application's secret (orchestrator-dev's, spec §2.4), which this proxy's token must not read.
    await writeKv2(store, 'secret', 'acme/dev/orchestrator/database', { pg_host: 'h', pg_user: 'u', pg_password: OTHER_VALUE });

    // One env file, as `provision` writes it, referenced by both containers.
    const operator = new AppRoleOperator(new StoreClient({ address: store.addr, token: store.rootToken }));
    const issued = await operator.issueSecretId('proxied-test', { issued_by: 'api-proxy.store.test' });
    secrets.add(issued.secretId);
    const file = new AppRoleCredentialsFile(path.join(work, 'proxied-test.env'));
    file.write({ roleId: await operator.roleId('proxied-test'), secretId: issued.secretId });
    const vars = file.readVariables()!;
    const credentials = { SECRETSTORE_ROLE_ID: vars.get('SECRETSTORE_ROLE_ID')!, SECRETSTORE_SECRET_ID: vars.get('SECRETSTORE_SECRET_ID')! };

    // The store's binary under its CLI name, first on the PATH; no SECRETSTORE_AGENT_BINARY.
    const bin = path.join(work, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(toolchain().bao, path.join(bin, storeCli()));
    const env = { ...credentials, SECRETSTORE_ADDR: store.addr, PATH: `${bin}:${process.env.PATH}` };
    for (const p of ['agent', 'proxy'] as const) fs.mkdirSync(home(p), { mode: 0o700 });
    proxy = new AgentRun(path.join(out, 'proxy-entrypoint.sh'), env, home('proxy'));
    agent = new AgentRun(path.join(out, 'entrypoint.sh'), env, home('agent'));
    await waitFor('the proxy to log in', () => (/proxy\.auth\.handler: authentication successful/.test(proxy.logText()) ? true : undefined));
    await waitFor('the env file', () => (fs.existsSync(path.join(home('agent'), 'secrets', '.env')) ? true : undefined));
  });

  afterAll(async () => {
    await proxy?.stop();
    await agent?.stop();
    await store?.stop();
    fixture?.cleanup();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it(`proxy-entrypoint.sh runs \`${storeCli()} proxy\` with proxy.hcl, which logs in with AppRole and removes its Secret ID file`, () => {
    expect(proxy.commandLine()).toEqual([storeCli(), 'proxy', `-config=${path.join(out, 'proxy.hcl')}`]);
    const log = proxy.logText();
    expect(log.match(/proxy\.auth\.handler: authenticating/g)).toHaveLength(1);
    expect(log).not.toMatch(AGENT_API_PROXY_DEPRECATION);
    expect(fs.existsSync(path.join(work, 'proxy', 'auth', 'secret-id'))).toBe(false);
    expect(fs.existsSync(path.join(work, 'proxy', 'auth', 'role-id'))).toBe(true);
    expect(proxy.exitCode).toBeUndefined();
  });

  it("a request through the listener without a token reads the application's secret", async () => {
    const res = await throughProxy('GET', 'secret/data/acme/test/proxied/config');
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.data).toEqual({ value: VALUE });
    expect(proxy.logText()).toContain('proxy.apiproxy: received request: method=GET path=/v1/secret/data/acme/test/proxied/config');
  });

  it("a request for another application's path is refused (403), and one without X-Vault-Request never reaches the store (412)", async () => {
    const other = await throughProxy('GET', 'secret/data/acme/dev/orchestrator/database');
    expect(other.status).toBe(403);
    expect(await other.text()).not.toContain(OTHER_VALUE);
    expect((await throughProxy('GET', 'secret/data/acme/test/proxied/config', {})).status).toBe(412);
  });

  it(`the agent beside it (\`${storeCli()} agent\`, the same Secret ID) only renders the env file: no listener, no deprecation note`, () => {
    expect(agent.commandLine()).toEqual([storeCli(), 'agent', `-config=${path.join(out, 'agent.hcl')}`]);
    expect(fs.readFileSync(path.join(work, 'agent', 'secrets', '.env'), 'utf8')).toMatch(/^VALUE='proxied-/);
    const log = agent.logText();
    expect(log).toContain('agent.auth.handler: authentication successful');
    expect(log).not.toMatch(AGENT_API_PROXY_DEPRECATION);
    // Its only API address is the in-process one its templates use (`http://bufconn`), no listener.
    expect(log.match(/Api Address \d+: .*/g)).toEqual(['Api Address 1: http://bufconn']);
    expect(log).not.toMatch(/apiproxy|renew-self/);
    expect(agent.exitCode).toBeUndefined();
  });

  it('the proxy token renews every renewalInterval (3 s on a 30 s token) through the listener, logging the status only', async () => {
    // The exposure docs/operators.md states: whoever reaches the listener can obtain the proxy's token,
    // here by response-wrapping a renew-self. The test takes it so as to look for it in every log.
    const wrapped = await fetch(`${listener}/v1/auth/token/renew-self`, { method: 'POST', headers: { 'X-Vault-Request': 'true', 'X-Vault-Wrap-TTL': '60' } });
    expect(wrapped.status).toBe(200);
    const admin = new StoreClient({ address: store.addr, token: store.rootToken });
    const unwrapped = await admin.request('POST', 'sys/wrapping/unwrap', undefined, ((await wrapped.json()) as any).wrap_info.token);
    const token = unwrapped.body.auth.client_token;
    expect(token).toMatch(serviceTokenPattern());
    secrets.add(token);

    // Sampled through the listener itself (lookup-self with the proxy's token): renewed about every 3 s.
    const samples: { ttl: number; last: number }[] = [];
    for (const until = Date.now() + 10_000; Date.now() < until; await sleep(250)) {
      const res = await throughProxy('GET', 'auth/token/lookup-self');
      expect(res.status).toBe(200);
      const data = ((await res.json()) as any).data;
      expect(data.meta).toMatchObject({ role_name: 'proxied-test' });
      samples.push({ ttl: data.ttl, last: data.last_renewal_time });
    }
    const renewals = [...new Set(samples.map((s) => s.last))].slice(1);
    expect(renewals.length).toBeGreaterThanOrEqual(3);
    renewals.slice(1).forEach((t, i) => expect(t - renewals[i]).toBeGreaterThanOrEqual(2));
    renewals.slice(1).forEach((t, i) => expect(t - renewals[i]).toBeLessThanOrEqual(5));
    expect(Math.min(...samples.map((s) => s.ttl))).toBeGreaterThanOrEqual(25);

    const log = proxy.logText();
    expect(log).toContain(`secretstore proxy: renew-self every 3 s through ${listener} with curl`);
    expect(log.match(/^secretstore proxy: renew-self: HTTP (\d+)$/gm)!.length).toBeGreaterThanOrEqual(3);
    expect(log.match(/^secretstore proxy: renew-self: HTTP (\d+)$/gm)!.every((l) => l.endsWith('HTTP 200'))).toBe(true);
    // Renewed, not replaced: still the one login.
    expect(log.match(/proxy\.auth\.handler: authenticating/g)).toHaveLength(1);
  });

  it('no Secret ID, token or secret value in any of the five generated files or a log', () => {
    const texts = [...filesBelow(out), proxy.log, agent.log].map((f) => [f, fs.readFileSync(f, 'utf8')] as const);
    expect(texts.map(([f]) => path.basename(f))).toEqual(expect.arrayContaining(['proxy.hcl', 'proxy-entrypoint.sh', 'agent.hcl', 'entrypoint.sh', 'env.ctmpl']));
    for (const [file, text] of texts) {
      for (const s of secrets) expect({ file, leaked: text.includes(s) }).toEqual({ file, leaked: false });
      expect({ file, token: STORE_TOKEN_PATTERN.exec(text)?.[0] }).toEqual({ file, token: undefined });
    }
  });
});
