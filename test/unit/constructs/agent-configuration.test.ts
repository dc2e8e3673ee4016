import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { AgentConfigurations, AgentConfigurationsProps } from '../../../lib/constructs/agent-configuration';
import { AppRoleApplication, AppRoleAuth, Duration, KvMount, PlatformSettings, SecretStoreApp, SecretStoreValidationError, SecretStoreStack } from '../../../lib';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform, tempOutdir } from '../../support/synthesized-platform';

// Spec §4.1 flow 2 and §2.4: one agent configuration per application, written next to the stacks.

const SETTINGS = { organisation: 'acme', ciUrl: 'https://gitlab.acme.example', registryHost: 'registry.acme.example' };

/** Synthesizes one stack with applications and their agents; returns the output dir. */
function synth(
  apps: { name: string; environment: string; roleName?: string; renewalInterval?: Duration; secretIdNumUses?: number; secrets?: Record<string, string[]> }[],
  props: Omit<AgentConfigurationsProps, 'applications'> = {},
  options: { authPath?: string; kvMount?: KvMount; store?: { kind: 'openbao' | 'vault' } } = {},
): { outdir: string; agents: AgentConfigurations } {
  const outdir = tempOutdir();
  const app = new SecretStoreApp({ outdir });
  const stack = new SecretStoreStack(app, 'apps', { settings: new PlatformSettings({ ...SETTINGS, kvMount: options.kvMount, store: options.store }) });
  const auth = new AppRoleAuth(stack, 'approle', { path: options.authPath });
  const applications = apps.map((a) => new AppRoleApplication(stack, `${a.name}-${a.environment}`, { auth, ...a }));
  const agents = new AgentConfigurations(stack, 'agents', { applications, ...props });
  app.synth();
  return { outdir, agents };
}

const read = (outdir: string, rel: string): string => fs.readFileSync(path.join(outdir, rel), 'utf8');
const modeOf = (outdir: string, rel: string): number => fs.statSync(path.join(outdir, rel)).mode & 0o777;

describe('the platform synthesis writes the agent files of every application that declares secrets', () => {
  const platform = synthesizePlatform();

  it('writes agents/orchestrator-dev/{agent.hcl,env.ctmpl,entrypoint.sh} next to the stacks', () => {
    const dir = path.join(platform.outdir, 'agents');
    expect(fs.readdirSync(dir)).toEqual(['orchestrator-dev']);
    expect(fs.readdirSync(path.join(dir, 'orchestrator-dev')).sort()).toEqual(['agent.hcl', 'entrypoint.sh', 'env.ctmpl']);
    expect(modeOf(platform.outdir, 'agents/orchestrator-dev/agent.hcl')).toBe(0o644);
    expect(modeOf(platform.outdir, 'agents/orchestrator-dev/env.ctmpl')).toBe(0o644);
    expect(modeOf(platform.outdir, 'agents/orchestrator-dev/entrypoint.sh')).toBe(0o755);
  });

  it('renders the DEV database keys of §2.4 from secret/data/{org}/dev/orchestrator/database', () => {
    expect(read(platform.outdir, 'agents/orchestrator-dev/env.ctmpl')).toBe(
      [
        `{{- /* secretstore-iac: environment of AppRole orchestrator-dev, one NAME='value' line per declared key (docs/operators.md). No secret in this file. */ -}}`,
        '{{ with secret "secret/data/acme/dev/orchestrator/database" -}}',
        `PG_HOST='{{ printf "%v" .Data.data.pg_host | replaceAll "'" "'\\\\''" }}'`,
        `PG_PASSWORD='{{ printf "%v" .Data.data.pg_password | replaceAll "'" "'\\\\''" }}'`,
        `PG_USER='{{ printf "%v" .Data.data.pg_user | replaceAll "'" "'\\\\''" }}'`,
        '{{ end -}}',
        '',
      ].join('\n'),
    );
  });

  it('takes its output directory and container paths from the platform configuration', () => {
    const custom = synthesizePlatform({
      ...platformConfig,
      agents: { outputDirectory: 'sidecars', paths: { envFile: '/run/app/.env' } },
    });
    expect(fs.readdirSync(path.join(custom.outdir, 'sidecars'))).toEqual(['orchestrator-dev']);
    expect(read(custom.outdir, 'sidecars/orchestrator-dev/agent.hcl')).toMatch(/destination += "\/run\/app\/.env"/);
  });

  it('configures AppRole auto-auth, the 0600 env file, the re-read interval and the renew-self proxy', () => {
    expect(read(platform.outdir, 'agents/orchestrator-dev/agent.hcl')).toMatchSnapshot();
  });
});

describe('agent.hcl', () => {
  const { outdir } = synth([{ name: 'orchestrator', environment: 'dev', secrets: { database: ['pg_host'] } }]);
  const hcl = read(outdir, 'agents/orchestrator-dev/agent.hcl');

  it('logs in with AppRole from the Role ID and Secret ID files and removes the Secret ID file', () => {
    expect(hcl).toContain('method "approle" {');
    expect(hcl).toContain('mount_path  = "auth/approle"');
    expect(hcl).toContain('role_id_file_path                   = "/secretstore/auth/role-id"');
    expect(hcl).toContain('secret_id_file_path                 = "/secretstore/auth/secret-id"');
    expect(hcl).toContain('remove_secret_id_file_after_reading = true');
  });

  it('renders the template to /secretstore/secrets/.env with mode 0600; a missing key is an error', () => {
    expect(hcl).toContain('source               = "/secretstore/config/env.ctmpl"');
    expect(hcl).toContain('destination          = "/secretstore/secrets/.env"');
    expect(hcl).toContain('perms                = "0600"');
    expect(hcl).toContain('error_on_missing_key = true');
  });

  it('re-reads KV secrets every 5 minutes and exits on login or render failure by default', () => {
    expect(hcl).toContain('static_secret_render_interval = "5m"');
    expect(hcl).toContain('exit_on_retry_failure         = true');
    expect(hcl).toContain('exit_on_err = true');
  });

  it('states the renewal every 45m through the loopback proxy and its exposure, and writes no sink (no token on disk)', () => {
    expect(hcl).toContain('# Token renewal: every 45m (2700 s) entrypoint.sh POSTs auth/token/renew-self to the API proxy\n# below (127.0.0.1:8100)');
    expect(hcl).toContain('the agent\'s lifetime watcher also renews, about\n# 8h into the 12h TTL.');
    expect(hcl).toContain("Any process in this container's network namespace can use (and obtain) the\n# token through that listener");
    expect(hcl).not.toMatch(/\bsink\b/);
    expect(hcl).not.toMatch(/^vault \{/m);
  });

  it('opens the API proxy on 127.0.0.1:8100, adding the agent\'s token to requests that carry none', () => {
    expect(hcl).toContain('api_proxy {\n  use_auto_auth_token = true\n}');
    expect(hcl).toContain(
      'listener "tcp" {\n  address                = "127.0.0.1:8100"\n  tls_disable            = true\n  require_request_header = true\n}',
    );
    expect(hcl.match(/^listener /gm)).toHaveLength(1);
  });
});

describe('the renew-self loop (spec §4.1 flow 2 step 4)', () => {
  const apps: Parameters<typeof synth>[0] = [
    { name: 'orchestrator', environment: 'dev', secrets: { database: ['pg_host'] } },
    { name: 'billing', environment: 'prod', renewalInterval: Duration.minutes(20), secrets: { smtp: ['password'] } },
  ];
  const on = synth(apps, { proxyPort: 18200 });
  const off = synth(apps, { renewalLoop: false });

  it('renews every renewalInterval in seconds through the configured port, each application with its own interval', () => {
    const orchestrator = read(on.outdir, 'agents/orchestrator-dev/entrypoint.sh');
    expect(orchestrator).toContain('\nrenew_every=2700\nrenew_proxy=http://127.0.0.1:18200\n');
    expect(read(on.outdir, 'agents/billing-prod/entrypoint.sh')).toContain('\nrenew_every=1200\n');
    expect(read(on.outdir, 'agents/orchestrator-dev/agent.hcl')).toContain('address                = "127.0.0.1:18200"');
    expect(read(on.outdir, 'agents/billing-prod/agent.hcl')).toContain('# Token renewal: every 20m (1200 s)');
    expect(on.agents.renewalLoop).toBe(true);
    expect(on.agents.proxyPort).toBe(18200);
  });

  it('POSTs renew-self without a token, logs the status only, and starts the loop in the background just before exec', () => {
    const script = read(on.outdir, 'agents/orchestrator-dev/entrypoint.sh');
    expect(script).toContain(
      `curl -q -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Vault-Request: true' --max-time 60 "$renew_proxy/v1/auth/token/renew-self"`,
    );
    expect(script).toContain(`wget -S -O /dev/null --header 'X-Vault-Request: true' --post-data '' "$renew_proxy/v1/auth/token/renew-self"`);
    expect(script).toContain('"$renew_with" write -f auth/token/renew-self 2>&1 >/dev/null');
    expect(script).toContain('echo "secretstore agent: renew-self: HTTP $(renew_self)" >&2');
    expect(script).not.toMatch(/X-Vault-Token|_TOKEN=/);
    const lines = script.trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual(['renew_loop </dev/null &', 'exec "${SECRETSTORE_AGENT_BINARY:-bao}" agent -config=/secretstore/config/agent.hcl']);
    // The loop is forked after the credentials are unset, so it never carries the Secret ID.
    expect(lines.indexOf('unset SECRETSTORE_ROLE_ID SECRETSTORE_SECRET_ID')).toBeLessThan(lines.indexOf('renew_loop </dev/null &'));
    expect(() => execFileSync('sh', ['-n', path.join(on.outdir, 'agents/orchestrator-dev/entrypoint.sh')])).not.toThrow();
  });

  it('when off: no api_proxy, no listener, no loop, and the header of the lifetime watcher alone', () => {
    const hcl = read(off.outdir, 'agents/orchestrator-dev/agent.hcl');
    const script = read(off.outdir, 'agents/orchestrator-dev/entrypoint.sh');
    expect(hcl).not.toMatch(/api_proxy|listener|127\.0\.0\.1/);
    expect(hcl).toMatch(
      /# Token renewal: automatic \(lifetime watcher\), at about 2\/3 of the remaining lease: about 8h into the 12h TTL; declared interval 45m \(not settable in bao agent, see docs\/operators.md\)\.\n\nauto_auth \{/,
    );
    expect(script).not.toMatch(/renew/);
    expect(script.trimEnd().split('\n').slice(-2)).toEqual([
      'unset SECRETSTORE_ROLE_ID SECRETSTORE_SECRET_ID',
      'exec "${SECRETSTORE_AGENT_BINARY:-bao}" agent -config=/secretstore/config/agent.hcl',
    ]);
    expect(off.agents.renewalLoop).toBe(false);
  });
});

describe("apiProxy 'proxy': the store's proxy serves the loopback API proxy, the agent only renders", () => {
  const apps: Parameters<typeof synth>[0] = [{ name: 'orchestrator', environment: 'dev', secrets: { database: ['pg_host'] } }];
  const on = synth(apps, { apiProxy: 'proxy', proxyPort: 18200 });
  const quiet = synth(apps, { apiProxy: 'proxy', renewalLoop: false });
  const files = (outdir: string) => fs.readdirSync(path.join(outdir, 'agents/orchestrator-dev')).sort();

  it("writes proxy.hcl (0644) and proxy-entrypoint.sh (0755) beside the agent's three files; 'agent' (the default) writes three", () => {
    expect(files(on.outdir)).toEqual(['agent.hcl', 'entrypoint.sh', 'env.ctmpl', 'proxy-entrypoint.sh', 'proxy.hcl']);
    expect(modeOf(on.outdir, 'agents/orchestrator-dev/proxy.hcl')).toBe(0o644);
    expect(modeOf(on.outdir, 'agents/orchestrator-dev/proxy-entrypoint.sh')).toBe(0o755);
    expect(on.agents.apiProxy).toBe('proxy');
    expect(synth(apps).agents.apiProxy).toBe('agent');
    expect(files(synth(apps).outdir)).toEqual(['agent.hcl', 'entrypoint.sh', 'env.ctmpl']);
  });

  it('proxy.hcl: AppRole auto-auth from its own files, the token-adding API proxy on 127.0.0.1:<proxyPort>; no cache, no sink, no template', () => {
    const hcl = read(on.outdir, 'agents/orchestrator-dev/proxy.hcl');
    expect(hcl).toContain('mount_path  = "auth/approle"');
    expect(hcl).toContain('role_id_file_path                   = "/secretstore/proxy-auth/role-id"');
    expect(hcl).toContain('secret_id_file_path                 = "/secretstore/proxy-auth/secret-id"');
    expect(hcl).toContain('remove_secret_id_file_after_reading = true');
    expect(hcl).toContain('exit_on_err = true');
    expect(hcl).toContain('api_proxy {\n  use_auto_auth_token = true\n}');
    expect(hcl).toContain('listener "tcp" {\n  address                = "127.0.0.1:18200"\n  tls_disable            = true\n  require_request_header = true\n}');
    expect(hcl).not.toMatch(/^\s*(cache|sink|template|template_config)\b/m);
    expect(hcl).toContain('#   bao proxy -config=/secretstore/config/proxy.hcl\n');
  });

  it('agent.hcl has no listener and says where the API proxy is', () => {
    const hcl = read(on.outdir, 'agents/orchestrator-dev/agent.hcl');
    expect(hcl).not.toMatch(/^(api_proxy|listener)\b/m);
    expect(hcl).toContain("# No API proxy here (the agent's is deprecated): the loopback listener 127.0.0.1:18200 is bao proxy's,");
    expect(hcl).toContain('# Token renewal: automatic (lifetime watcher)');
  });

  it('the renew-self loop moves to proxy-entrypoint.sh, which execs `bao proxy`; entrypoint.sh runs the agent without a loop', () => {
    const proxy = read(on.outdir, 'agents/orchestrator-dev/proxy-entrypoint.sh');
    expect(proxy).toContain('\nrenew_every=2700\nrenew_proxy=http://127.0.0.1:18200\n');
    expect(proxy).toContain(`printf '%s' "$SECRETSTORE_SECRET_ID" > /secretstore/proxy-auth/secret-id`);
    expect(proxy).toContain('echo "secretstore proxy: renew-self: HTTP $(renew_self)" >&2');
    expect(proxy.trimEnd().split('\n').slice(-2)).toEqual(['renew_loop </dev/null &', 'exec "${SECRETSTORE_AGENT_BINARY:-bao}" proxy -config=/secretstore/config/proxy.hcl']);
    const agent = read(on.outdir, 'agents/orchestrator-dev/entrypoint.sh');
    expect(agent).not.toMatch(/renew/);
    expect(agent.trimEnd().split('\n').pop()).toBe('exec "${SECRETSTORE_AGENT_BINARY:-bao}" agent -config=/secretstore/config/agent.hcl');
    expect(() => execFileSync('sh', ['-n', path.join(on.outdir, 'agents/orchestrator-dev/proxy-entrypoint.sh')])).not.toThrow();
  });

  it('without renewalLoop the proxy still listens (the application uses it), and no entrypoint loops', () => {
    expect(read(quiet.outdir, 'agents/orchestrator-dev/proxy.hcl')).toContain('address                = "127.0.0.1:8100"');
    expect(read(quiet.outdir, 'agents/orchestrator-dev/proxy.hcl')).toContain('# Token renewal: automatic (lifetime watcher)');
    expect(read(quiet.outdir, 'agents/orchestrator-dev/proxy-entrypoint.sh')).not.toMatch(/renew/);
    expect(read(quiet.outdir, 'agents/orchestrator-dev/agent.hcl')).not.toMatch(/^(api_proxy|listener)\b/m);
  });

  it('takes apiProxy and the proxy paths from the platform configuration', () => {
    const custom = synthesizePlatform({ ...platformConfig, agents: { apiProxy: 'proxy', paths: { proxyConfigFile: '/run/proxy/proxy.hcl' } } });
    expect(read(custom.outdir, 'agents/orchestrator-dev/proxy-entrypoint.sh')).toContain(' proxy -config=/run/proxy/proxy.hcl\n');
  });
});

describe('the files name the target store\'s CLI (settings.store.kind)', () => {
  const apps: Parameters<typeof synth>[0] = [{ name: 'orchestrator', environment: 'dev', secrets: { database: ['pg_host'] } }];
  const all = (outdir: string) =>
    ['agent.hcl', 'env.ctmpl', 'entrypoint.sh', 'proxy.hcl', 'proxy-entrypoint.sh'].map((f) => read(outdir, `agents/orchestrator-dev/${f}`)).join('\n');

  it('on Vault: `vault agent` and `vault proxy`, the binary run by default, and no `bao` anywhere', () => {
    const { outdir } = synth(apps, { apiProxy: 'proxy' }, { store: { kind: 'vault' } });
    expect(read(outdir, 'agents/orchestrator-dev/agent.hcl')).toMatch(/^# vault agent configuration of AppRole orchestrator-dev .*\n.*\n#   vault agent -config=/);
    expect(read(outdir, 'agents/orchestrator-dev/proxy.hcl')).toMatch(/^# vault proxy configuration of AppRole orchestrator-dev/);
    expect(read(outdir, 'agents/orchestrator-dev/entrypoint.sh')).toContain('exec "${SECRETSTORE_AGENT_BINARY:-vault}" agent -config=');
    expect(read(outdir, 'agents/orchestrator-dev/proxy-entrypoint.sh')).toContain('exec "${SECRETSTORE_AGENT_BINARY:-vault}" proxy -config=');
    expect(all(outdir)).not.toMatch(/\bbao\b/);
    const watcherOnly = synth(apps, { renewalLoop: false }, { store: { kind: 'vault' } });
    expect(read(watcherOnly.outdir, 'agents/orchestrator-dev/agent.hcl')).toContain('(not settable in vault agent, see docs/operators.md)');
  });

  it('on OpenBao: `bao agent` and `bao proxy`, and no `vault` CLI named', () => {
    const { outdir } = synth(apps, { apiProxy: 'proxy' }, { store: { kind: 'openbao' } });
    expect(all(outdir)).toContain('#   bao agent -config=');
    expect(all(outdir)).toContain('#   bao proxy -config=');
    expect(all(outdir)).not.toMatch(/`vault|vault (agent|proxy)\b|:-vault\}/);
  });
});

describe('configurable output directory, paths, interval, exit behaviour and address', () => {
  const paths = {
    configFile: '/srv/agent/agent.hcl',
    templateFile: '/srv/agent/tmpl/env.ctmpl',
    roleIdFile: '/run/agent/role',
    secretIdFile: '/run/agent/secret',
    envFile: '/srv/shared/app.env',
  };
  const { outdir } = synth(
    [{ name: 'billing', environment: 'prod', secrets: { smtp: ['smtp_password'] } }],
    {
      outputDirectory: 'deploy/agents',
      paths,
      secretRefreshInterval: Duration.seconds(30),
      exitOnError: false,
      storeAddress: 'https://secrets.acme.example:8200',
    },
    { authPath: 'apps' },
  );
  const hcl = read(outdir, 'deploy/agents/billing-prod/agent.hcl');
  const entrypoint = read(outdir, 'deploy/agents/billing-prod/entrypoint.sh');

  it('writes below the configured directory and uses the configured paths and auth mount', () => {
    expect(hcl).toContain('mount_path  = "auth/apps"');
    expect(hcl).toContain('role_id_file_path                   = "/run/agent/role"');
    expect(hcl).toContain('secret_id_file_path                 = "/run/agent/secret"');
    expect(hcl).toContain('source               = "/srv/agent/tmpl/env.ctmpl"');
    expect(hcl).toContain('destination          = "/srv/shared/app.env"');
    expect(entrypoint).toContain('exec "${SECRETSTORE_AGENT_BINARY:-bao}" agent -config=/srv/agent/agent.hcl');
    expect(entrypoint).toContain(`printf '%s' "$SECRETSTORE_SECRET_ID" > /run/agent/secret`);
  });

  it('uses the interval, the exit behaviour and the address', () => {
    expect(hcl).toContain('static_secret_render_interval = "30s"');
    expect(hcl).toContain('exit_on_err = false');
    expect(hcl).toContain('exit_on_retry_failure         = false');
    expect(hcl).toContain('vault {\n  address = "https://secrets.acme.example:8200"\n}');
  });

  it('addresses a KV v1 mount without data/', () => {
    const v1 = synth([{ name: 'legacy', environment: 'dev', secrets: { db: ['user'] } }], {}, { kvMount: new KvMount('kv', 1) });
    const template = read(v1.outdir, 'agents/legacy-dev/env.ctmpl');
    expect(template).toContain('{{ with secret "kv/acme/dev/legacy/db" -}}');
    expect(template).toContain(`USER='{{ printf "%v" .Data.user | replaceAll`);
  });
});

describe('validation', () => {
  const problemsOf = (fn: () => void): string => {
    try {
      fn();
    } catch (e) {
      if (e instanceof SecretStoreValidationError) return e.message;
      throw e;
    }
    throw new Error('expected a validation error');
  };

  it('rejects two keys that become one variable', () => {
    const message = problemsOf(() =>
      synth([{ name: 'shop', environment: 'dev', secrets: { db: ['password'], smtp: ['password'] } }]),
    );
    expect(message).toContain(
      'applications["shop-dev"].secrets = "acme/dev/shop/smtp:password": becomes the environment variable PASSWORD, as acme/dev/shop/db:password does',
    );
  });

  it('rejects relative or unsafe paths, an escaping output directory, a zero interval and a bad address', () => {
    const message = problemsOf(() =>
      synth([{ name: 'shop', environment: 'dev', secrets: { db: ['x'] } }], {
        outputDirectory: '../out',
        paths: { envFile: 'secrets/.env', roleIdFile: '/run/a b', secretIdFile: '/run/agent/../x' },
        secretRefreshInterval: Duration.seconds(0),
        storeAddress: 'secrets:8200',
      }),
    );
    expect(message).toContain('outputDirectory = "../out"');
    expect(message).toContain('paths.envFile = "secrets/.env"');
    expect(message).toContain('paths.roleIdFile = "/run/a b"');
    expect(message).toContain('paths.secretIdFile = "/run/agent/../x"');
    expect(message).toContain('secretRefreshInterval = "0s"');
    expect(message).toContain('storeAddress = "secrets:8200"');
  });

  it('rejects a proxy port that is not a TCP port', () => {
    for (const port of [0, 65536, 81.5]) {
      expect(problemsOf(() => synth([{ name: 'shop', environment: 'dev', secrets: { db: ['x'] } }], { proxyPort: port }))).toContain(
        `proxyPort = ${port}: must be a TCP port, a whole number from 1 to 65535`,
      );
    }
  });

  it('rejects an apiProxy other than "agent" or "proxy"', () => {
    expect(problemsOf(() => synth([{ name: 'shop', environment: 'dev', secrets: { db: ['x'] } }], { apiProxy: 'sidecar' as any }))).toContain(
      'apiProxy = "sidecar": must be one of',
    );
  });

  it('with apiProxy "proxy", rejects a Secret ID good for one login: the agent and the proxy each log in', () => {
    const message = problemsOf(() =>
      synth([{ name: 'shop', environment: 'dev', secretIdNumUses: 1, secrets: { db: ['x'] } }], { apiProxy: 'proxy' }),
    );
    expect(message).toContain('applications["shop-dev"].secretIdNumUses = 1: allows one login per Secret ID, but with apiProxy "proxy" the agent and the proxy each log in with it');
    expect(() => synth([{ name: 'shop', environment: 'dev', secretIdNumUses: 1, secrets: { db: ['x'] } }])).not.toThrow();
    expect(() => synth([{ name: 'shop', environment: 'dev', secretIdNumUses: 2, secrets: { db: ['x'] } }], { apiProxy: 'proxy' })).not.toThrow();
  });

  it('rejects two files at the same path', () => {
    const message = problemsOf(() =>
      synth([{ name: 'shop', environment: 'dev', secrets: { db: ['x'] } }], { paths: { envFile: '/secretstore/auth/secret-id' } }),
    );
    expect(message).toContain('paths.envFile = "/secretstore/auth/secret-id": is also paths.secretIdFile');
    const proxy = problemsOf(() =>
      synth([{ name: 'shop', environment: 'dev', secrets: { db: ['x'] } }], { apiProxy: 'proxy', paths: { proxySecretIdFile: '/secretstore/auth/secret-id' } }),
    );
    expect(proxy).toContain('paths.proxySecretIdFile = "/secretstore/auth/secret-id": is also paths.secretIdFile');
  });

  it('skips applications without declared secrets rather than rendering an empty env file (spec §7)', () => {
    const { outdir, agents } = synth([
      { name: 'identity', environment: 'shared', roleName: 'authentik-role' },
      { name: 'shop', environment: 'dev', secrets: { db: ['x'] } },
    ]);
    expect(agents.skipped.map((a) => a.roleName)).toEqual(['authentik-role']);
    expect(fs.readdirSync(path.join(outdir, 'agents'))).toEqual(['shop-dev']);
  });
});
