/**
 * The synthesized agent files with the real `bao agent` against the real store (spec §4.1 flows 2-3,
 * §2.4, §7 agent rows). The platform is synthesized with a second AgentConfigurations whose paths lie
 * in a temp dir (the defaults under /secretstore are not writable here) and a 1 s re-read interval,
 * and its app-roles stack is applied with the real engine. Each agent is started the way a container
 * would start it: the generated entrypoint.sh, with the variables of an env file provisioned by
 * the library (Role ID and a new Secret ID) and SECRETSTORE_ADDR.
 *
 * Every agent with the renew-self loop (the default) gets its own free loopback port for its API proxy.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentConfigurations } from '../../lib/constructs/agent-configuration';
import { AppRoleCredentialsFile } from '../../lib/store/approle-credentials-file';
import { AppRoleOperator } from '../../lib/store/approle-operator';
import { runCli } from '../../lib/cli/run-cli';
import { StoreClient } from '../../lib/store/store-client';
import { AppRoleApplication, Duration } from '../../lib';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig, writeKv2 } from '../support/store/platform-fixture';
import { freePort, RunningStore, startStore } from '../support/store/store-server';
import { AGENT_API_PROXY_DEPRECATION, STORE_TOKEN_PATTERN, serviceTokenPattern, storeCli } from '../support/store/store-facts';
import { toolchain } from '../support/store/toolchain-env';
import { commandPath, requiredCommand } from '../support/required-command';
import { AgentRun, processesRunning, sleep, waitFor } from '../support/store/agent-run';

describe(`the synthesized agent configuration with the real ${storeCli()} agent`, () => {
  // BusyBox's wget, as in the OpenBao image, or the host's; neither fails one test naming busybox
  // (or is reported skipped with SECRETSTORE_IAC_ALLOW_SKIP=busybox).
  const WGET = commandPath('busybox') ?? commandPath('wget') ?? requiredCommand('busybox', 'the renew-self loop with wget');
  let store: RunningStore;
  let fixture: PlatformFixture;
  let work: string;
  let operator: AppRoleOperator;
  const running: AgentRun[] = [];
  /** Loopback port of each agent's API proxy, by its directory below test-agents. */
  const proxyPorts: Record<string, number> = {};
  /** The renew-self loop's clients, each run with a PATH that offers it first (curl, wget, then the store's CLI). */
  const LOOP_CLIENTS = ['curl', 'wget', storeCli()] as const;
  const renewLoopDir = (client: string) => `renew-loop-${client}/renewloop-test`;
  /** Values that must never appear in any log or output. */
  const secrets = new Set<string>();

  const paths = (role: string) => ({
    auth: path.join(work, role, 'auth'),
    env: path.join(work, role, 'secrets', '.env'),
    home: path.join(work, role),
  });

  /** Provisions a Role ID / Secret ID pair the way `provision` does; returns the env file's variables. */
  const provision = async (role: string): Promise<Record<string, string>> => {
    const file = new AppRoleCredentialsFile(path.join(work, `${role}.env`));
    const issued = await operator.issueSecretId(role, { issued_by: 'agent.store.test' });
    secrets.add(issued.secretId);
    file.write({ roleId: await operator.roleId(role), secretId: issued.secretId });
    const vars = file.readVariables()!;
    return { SECRETSTORE_ROLE_ID: vars.get('SECRETSTORE_ROLE_ID')!, SECRETSTORE_SECRET_ID: vars.get('SECRETSTORE_SECRET_ID')! };
  };

  /**
   * Where below test-agents each agent's files are: every AgentConfigurations has its own output
   * directory (nested or shared output directories are refused at synthesis).
   */
  const agentDir = (dir: string): string => ({ 'orchestrator-dev': 'main/orchestrator-dev', 'renewal-test': 'watcher/renewal-test' })[dir] ?? dir;
  /** Starts `test-agents/<agentDir(dir)>/entrypoint.sh` (dir: the role, or a sub-directory for the loop's clients). */
  const startAgent = (dir: string, credentials: Record<string, string>, env: NodeJS.ProcessEnv = {}): AgentRun => {
    const entrypoint = path.join(fixture.dir, 'cdktf.out', 'test-agents', agentDir(dir), 'entrypoint.sh');
    const agent = new AgentRun(
      entrypoint,
      { ...credentials, SECRETSTORE_ADDR: store.addr, SECRETSTORE_AGENT_BINARY: toolchain().bao, ...env },
      paths(dir).home,
    );
    running.push(agent);
    return agent;
  };

  /** The env file's variables, as a POSIX shell reads them. */
  const sourceEnv = async (file: string, names: string[]): Promise<Record<string, string>> => {
    const script = `set -a; . "$1"; printf '%s\\0' ${names.map((n) => `"\${${n}-<unset>}"`).join(' ')}`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('sh', ['-c', script, 'sh', file], { env: { PATH: process.env.PATH } });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`sh exited ${code}`))));
    });
    const values = out.split('\0');
    return Object.fromEntries(names.map((n, i) => [n, values[i]]));
  };

  const expectNoSecretsIn = (text: string) => {
    for (const s of secrets) expect(text).not.toContain(s);
  };

  beforeAll(async () => {
    store = await startStore();
    secrets.add(store.rootToken);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-agent-'));
    fs.chmodSync(work, 0o700);
    fixture = PlatformFixture.create(store, 'agent');
    const out = path.join(fixture.dir, 'cdktf.out', 'test-agents');
    for (const dir of ['orchestrator-dev', ...LOOP_CLIENTS.map(renewLoopDir)]) proxyPorts[dir] = await freePort();
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem), (platform) => {
      const stack = platform.appRoles;
      // A short-lived token to watch the agent's renewal within the test's time.
      const renewal = new AppRoleApplication(stack, 'renewal-test', {
        auth: stack.appRoleAuth,
        name: 'renewal',
        environment: 'test',
        tokenTtl: Duration.seconds(6),
        tokenMaxTtl: Duration.minutes(10),
        renewalInterval: Duration.seconds(4),
        secrets: { config: ['value'] },
      });
      // The spec's renew-self loop, at a 3 s interval on a 30 s token: the lifetime watcher would renew
      // after about 20 s only.
      const renewLoop = new AppRoleApplication(stack, 'renewloop-test', {
        auth: stack.appRoleAuth,
        name: 'renewloop',
        environment: 'test',
        tokenTtl: Duration.seconds(30),
        tokenMaxTtl: Duration.minutes(10),
        renewalInterval: Duration.seconds(3),
        secrets: { config: ['value'] },
      });
      // The per-role paths differ, but one AgentConfigurations has one set of paths: declare one per role.
      new AgentConfigurations(stack, 'test-agents-orchestrator', {
        applications: stack.applications.filter((a) => a.roleName === 'orchestrator-dev'),
        outputDirectory: 'test-agents/main',
        paths: {
          configFile: path.join(out, agentDir('orchestrator-dev'), 'agent.hcl'),
          templateFile: path.join(out, agentDir('orchestrator-dev'), 'env.ctmpl'),
          roleIdFile: path.join(paths('orchestrator-dev').auth, 'role-id'),
          secretIdFile: path.join(paths('orchestrator-dev').auth, 'secret-id'),
          envFile: paths('orchestrator-dev').env,
        },
        secretRefreshInterval: Duration.seconds(1),
        proxyPort: proxyPorts['orchestrator-dev'],
      });
      // Without the renew-self loop: today's behaviour, the lifetime watcher alone.
      new AgentConfigurations(stack, 'test-agents-renewal', {
        applications: [renewal],
        outputDirectory: 'test-agents/watcher',
        paths: {
          configFile: path.join(out, agentDir('renewal-test'), 'agent.hcl'),
          templateFile: path.join(out, agentDir('renewal-test'), 'env.ctmpl'),
          roleIdFile: path.join(paths('renewal-test').auth, 'role-id'),
          secretIdFile: path.join(paths('renewal-test').auth, 'secret-id'),
          envFile: paths('renewal-test').env,
        },
        renewalLoop: false,
      });
      // One agent container per client of the loop, each with its own files and proxy port.
      for (const client of LOOP_CLIENTS) {
        const dir = renewLoopDir(client);
        new AgentConfigurations(stack, `test-agents-renew-loop-${client}`, {
          applications: [renewLoop],
          outputDirectory: `test-agents/renew-loop-${client}`,
          paths: {
            configFile: path.join(out, dir, 'agent.hcl'),
            templateFile: path.join(out, dir, 'env.ctmpl'),
            roleIdFile: path.join(paths(dir).auth, 'role-id'),
            secretIdFile: path.join(paths(dir).auth, 'secret-id'),
            envFile: paths(dir).env,
          },
          proxyPort: proxyPorts[dir],
        });
      }
    });
    await fixture.apply(['app-roles']);
    for (const dir of ['orchestrator-dev', 'renewal-test', ...LOOP_CLIENTS.map(renewLoopDir)]) {
      fs.mkdirSync(paths(dir).home, { recursive: true, mode: 0o700 });
    }
    operator = new AppRoleOperator(new StoreClient({ address: store.addr, token: store.rootToken }));
  });

  afterEach(async () => {
    for (const agent of running.splice(0)) {
      await agent.stop();
      expectNoSecretsIn(agent.logText());
    }
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('renders exactly the declared keys to the env file with mode 0600, re-renders a changed secret, removes the Secret ID file', async () => {
    // Spec §2.4: the database secret holds pg_host, pg_user, pg_password "and further keys".
    const values = {
      pg_host: 'db.internal',
      pg_user: 'orchestrator',
      pg_password: `it's a $HOME \`id\` "quoted" \\ value\nwith a newline`,
      pg_port: '5432',
    };
    secrets.add(values.pg_password);
    await writeKv2(store, 'secret', 'acme/dev/orchestrator/database', values);
    const agent = startAgent('orchestrator-dev', await provision('orchestrator-dev'));
    const { env, auth } = paths('orchestrator-dev');

    await waitFor('the env file', () => (fs.existsSync(env) ? true : undefined));
    expect(fs.statSync(env).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(env, 'utf8');
    expect(text.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.split('=')[0])).toEqual(['PG_HOST', 'PG_PASSWORD', 'PG_USER']);
    expect(await sourceEnv(env, ['PG_HOST', 'PG_PASSWORD', 'PG_USER', 'PG_PORT'])).toEqual({
      PG_HOST: values.pg_host,
      PG_PASSWORD: values.pg_password,
      PG_USER: values.pg_user,
      PG_PORT: '<unset>',
    });
    expect(fs.existsSync(path.join(auth, 'secret-id'))).toBe(false);
    expect(fs.existsSync(path.join(auth, 'role-id'))).toBe(true);

    await writeKv2(store, 'secret', 'acme/dev/orchestrator/database', { ...values, pg_password: 'rotated-value' });
    await waitFor('the re-rendered env file', () => (fs.readFileSync(env, 'utf8').includes("PG_PASSWORD='rotated-value'") ? true : undefined));
    expect(fs.statSync(env).mode & 0o777).toBe(0o600);
    expect(agent.exitCode).toBeUndefined();
    // The agent logs "rendered" after it renamed the file into place: on a loaded runner the log line can
    // reach us after the file's new content does, so wait for the second one rather than read it at once.
    const rendered = /rendered ".*env\.ctmpl" => ".*\.env"/g;
    await waitFor('the second "rendered" log line', () => ((agent.logText().match(rendered) ?? []).length >= 2 ? true : undefined));
    const log = agent.logText();
    expect(log).toContain('agent.auth.handler: authentication successful');
    // The default configuration (renew-self loop on) is accepted by the real agent: its proxy answers.
    expect(log).toContain(`secretstore agent: renew-self every 2700 s through http://127.0.0.1:${proxyPorts['orchestrator-dev']} with curl`);
    const health = await fetch(`http://127.0.0.1:${proxyPorts['orchestrator-dev']}/v1/sys/health`, { headers: { 'X-Vault-Request': 'true' } });
    expect(health.status).toBe(200);
    // The agent's API proxy works, but the store announces its move to the proxy (apiProxy 'proxy', api-proxy.store.test.ts).
    expect(log).toMatch(AGENT_API_PROXY_DEPRECATION);
  });

  it('without the renew-self loop, renews its token before the TTL runs out (6 s TTL role): the lifetime watcher, ~2/3 into the lease', async () => {
    const hcl = fs.readFileSync(path.join(fixture.dir, 'cdktf.out', 'test-agents', agentDir('renewal-test'), 'agent.hcl'), 'utf8');
    expect(hcl).not.toMatch(/api_proxy|listener/);
    expect(hcl).toMatch(new RegExp(`^# ${storeCli()} agent configuration of AppRole renewal-test `));
    await writeKv2(store, 'secret', 'acme/test/renewal/config', { value: 'v' });
    const agent = startAgent('renewal-test', await provision('renewal-test'));
    await waitFor('the env file', () => (fs.existsSync(paths('renewal-test').env) ? true : undefined));
    // Renewals are logged as "renewed auth token"; the first comes at once, then about every 4 s.
    await waitFor('three renewals', () => ((agent.logText().match(/renewed auth token/g) ?? []).length >= 3 ? true : undefined), 20_000);
    const log = agent.logText();
    expect(log).not.toContain('error renewing token');
    // Renewed, not replaced: one login only.
    expect(log.match(/agent\.auth\.handler: authenticating/g)).toHaveLength(1);
    expect(log).not.toContain('renew-self');
    expect(log).not.toMatch(AGENT_API_PROXY_DEPRECATION);
    expect(agent.exitCode).toBeUndefined();
  });

  it(`renews through the agent's loopback proxy every renewalInterval (3 s on a 30 s token) with curl, wget or the ${storeCli()} CLI, never logging a token, and the loop ends with the agent`, async () => {
    await writeKv2(store, 'secret', 'acme/test/renewloop/config', { value: 'v' });
    // Each client first on its PATH: curl as here; wget (BusyBox, as in the OpenBao image) without curl;
    // the bao CLI alone. The entrypoint needs only sh, mkdir and sleep besides.
    const bins: Record<string, string | undefined> = { curl: undefined };
    const wget = WGET;
    for (const client of ['wget', storeCli()]) {
      if (client === 'wget' && !wget) continue;
      const bin = path.join(work, `bin-${client}`);
      fs.mkdirSync(bin, { recursive: true });
      for (const tool of ['sh', 'mkdir', 'sleep']) fs.symlinkSync(commandPath(tool)!, path.join(bin, tool));
      if (client === 'wget') fs.symlinkSync(wget!, path.join(bin, 'wget'));
      bins[client] = bin;
    }
    const clients = LOOP_CLIENTS.filter((c) => c in bins);
    const agents: Record<string, AgentRun> = {};
    for (const client of clients) {
      agents[client] = startAgent(renewLoopDir(client), await provision('renewloop-test'), bins[client] ? { PATH: bins[client] } : {});
    }
    for (const client of clients) await waitFor(`the env file (${client})`, () => (fs.existsSync(paths(renewLoopDir(client)).env) ? true : undefined));

    // The curl agent, watched from the store. The listener refuses requests without X-Vault-Request.
    const proxy = `http://127.0.0.1:${proxyPorts[renewLoopDir('curl')]}`;
    expect((await fetch(`${proxy}/v1/auth/token/lookup-self`)).status).toBe(412);
    // The exposure docs/operators.md states: whoever reaches the listener can obtain the agent's token,
    // here by response-wrapping a renew-self. The test takes it so as to look for it in every log.
    const wrapped = await fetch(`${proxy}/v1/auth/token/renew-self`, { method: 'POST', headers: { 'X-Vault-Request': 'true', 'X-Vault-Wrap-TTL': '60' } });
    expect(wrapped.status).toBe(200);
    const admin = new StoreClient({ address: store.addr, token: store.rootToken });
    const unwrapped = await admin.request('POST', 'sys/wrapping/unwrap', undefined, ((await wrapped.json()) as any).wrap_info.token);
    const { client_token: token, accessor } = unwrapped.body.auth;
    expect(token).toMatch(serviceTokenPattern());
    secrets.add(token);

    // Sample the token for 10 s: its TTL never falls far below 30 s, and it is renewed about every 3 s.
    const samples: { ttl: number; last: number }[] = [];
    for (const until = Date.now() + 10_000; Date.now() < until; await sleep(250)) {
      const data = (await admin.request('POST', 'auth/token/lookup-accessor', { accessor })).body.data;
      samples.push({ ttl: data.ttl, last: data.last_renewal_time });
    }
    // The first renewal time seen is the wrapped request's; the loop's follow, about 3 s apart.
    const renewals = [...new Set(samples.map((s) => s.last))].slice(1);
    expect(renewals.length).toBeGreaterThanOrEqual(3);
    renewals.slice(1).forEach((t, i) => expect(t - renewals[i]).toBeGreaterThanOrEqual(2));
    renewals.slice(1).forEach((t, i) => expect(t - renewals[i]).toBeLessThanOrEqual(5));
    // Without the loop, 11 s after login the 30 s token would have about 19 s left.
    expect(Math.min(...samples.map((s) => s.ttl))).toBeGreaterThanOrEqual(25);

    for (const client of clients) {
      const agent = agents[client];
      await waitFor(`two renewals (${client})`, () => ((agent.logText().match(/^secretstore agent: renew-self: HTTP 200$/gm) ?? []).length >= 2 ? true : undefined), 15_000);
      const log = agent.logText();
      expect(log).toContain(`secretstore agent: renew-self every 3 s through http://127.0.0.1:${proxyPorts[renewLoopDir(client)]} with ${client}`);
      expect(log.match(/^secretstore agent: renew-self: HTTP (\d+)$/gm)!.every((l) => l.endsWith('HTTP 200'))).toBe(true);
      // The loop's renewals are not the watcher's: one login, and the watcher's renewal at login only.
      expect(log.match(/agent\.auth\.handler: authenticating/g)).toHaveLength(1);
      expect(log.match(/renewed auth token/g)).toHaveLength(1);
      expect(log).not.toMatch(STORE_TOKEN_PATTERN);
      expect(agent.exitCode).toBeUndefined();
    }
    expect(agents.curl.logText().match(/renew-self: HTTP 200/g)!.length).toBeGreaterThanOrEqual(3);

    // The loop is the agent's child: one process of the script runs beside the agent, none once it stopped.
    for (const client of clients) {
      const agent = agents[client];
      expect(processesRunning(agent.entrypoint)).toHaveLength(1);
      await agent.stop();
      await waitFor(`the loop to end (${client})`, () => (processesRunning(agent.entrypoint).length === 0 ? true : undefined), 5_000);
    }
  });

  it('with an invalid Secret ID the agent exits at once and its log says why (spec §7)', async () => {
    const credentials = await provision('orchestrator-dev');
    const accessor = await operator.accessorOf('orchestrator-dev', credentials.SECRETSTORE_SECRET_ID);
    await operator.destroySecretId('orchestrator-dev', accessor!);
    const { env } = paths('orchestrator-dev');
    fs.rmSync(env, { force: true });

    const agent = startAgent('orchestrator-dev', credentials);
    expect(await agent.exit()).toBe(1);
    const log = agent.logText();
    expect(log).toContain('[ERROR] agent.auth.handler: error authenticating');
    expect(log).toContain('Code: 400. Errors:');
    expect(log).toContain('* invalid role or secret ID');
    expect(fs.existsSync(env)).toBe(false);

    // The spec's fix starts with "verify with the login check": check-approle on the same pair.
    const out: string[] = [];
    const code = await runCli(['check-approle'], {
      env: { SECRETSTORE_ADDR: store.addr, ...credentials },
      cwd: work,
      isTerminal: false,
      stdout: (l) => out.push(l),
      stderr: (l) => out.push(l),
    });
    expect(code).toBe(1);
    expect(out.join('\n')).toMatch(/^invalid: the store rejected the Role ID \/ Secret ID pair from the environment \(HTTP 400: invalid role or secret ID\)/);
    expectNoSecretsIn(out.join('\n'));
  });

  it('with a declared key missing in the store, the agent does not write the env file and names the key', async () => {
    await writeKv2(store, 'secret', 'acme/dev/orchestrator/database', { pg_host: 'h', pg_user: 'u' });
    const { env } = paths('orchestrator-dev');
    fs.rmSync(env, { force: true });
    const agent = startAgent('orchestrator-dev', await provision('orchestrator-dev'));
    expect(await agent.exit()).toBe(1);
    expect(agent.logText()).toMatch(/map has no entry for key \\?"pg_password\\?"/);
    expect(fs.existsSync(env)).toBe(false);
  });

  it('the entrypoint refuses to start without provisioned credentials (exit 78)', async () => {
    const agent = startAgent('orchestrator-dev', {});
    expect(await agent.exit()).toBe(78);
    expect(agent.logText()).toContain('secretstore agent: SECRETSTORE_ROLE_ID is not set: provision the host (secretstore-iac provision)');
  });
});
