/**
 * `secretstore-iac usage` against the audit log of a workload as it really runs (issue 38), on a
 * store with a real file audit device: CI jobs log in and read through the generated login script
 * (dash, job tokens the test signs with the key the JWT method trusts), the real agents of two
 * applications (AppRole, the generated entrypoint.sh, `bao agent` / `vault agent`), a person
 * through OIDC with a real OpenID provider; refused reads (a job reading a path its role lacks, an
 * application reading another's, the person reading an application's) and failed logins (a job
 * token of the wrong audience, a bad Secret ID, a person outside the role's groups). The test keeps
 * the ground truth of what each identity did; the report's used, never used, denied and failed sets
 * must equal it exactly. Then `access-diff --usage-log` on that log flags the removal of a used grant.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import * as yaml from 'js-yaml';
import { OIDC_CLI_REDIRECT_URI } from '../../lib';
import { AccessModel } from '../../lib/access/access-model';
import { readStoreConfiguration } from '../../lib/access/store-configuration';
import { isDenyMask } from '../../lib/acl/store-capability';
import { AgentConfigurations } from '../../lib/constructs/agent-configuration';
import { AppRoleOperator } from '../../lib/store/approle-operator';
import { StoreClient } from '../../lib/store/store-client';
import { jobShells, leakedValues, runJob } from '../support/ci-login-harness';
import { AgentRun, waitFor } from '../support/store/agent-run';
import { startAuditedStore } from '../support/store/audit-device';
import { generateSigningKey, gitlabJobClaims, JwtClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { RunningOidcProvider, ssoLogin, startOidcProvider } from '../support/store/oidc-provider';
import { appRoleLogin, clientToken, PlatformFixture, SPEC_CI_SECRETS, TEST_SETTINGS, testPlatformConfig, testSecretValues, writeKv2 } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, storeRequest } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';

const CLIENT_ID = 'secretstore';
/** The two applications run by their agents: role → its one secret (the agent renders it). */
const AGENT_APPS: Record<string, string> = {
  'orchestrator-dev': 'acme/dev/orchestrator/database',
  'billing-dev': 'acme/dev/billing/config',
};
/** The keys each application declares for its secret. */
const APP_KEYS: Record<string, string[]> = {
  'acme/dev/orchestrator/database': ['pg_host', 'pg_user', 'pg_password'],
  'acme/dev/billing/config': ['api_key'],
};
/** The CI jobs run through the login script, each once: consumer → the paths it reads. */
const CI_JOBS: Record<string, string[]> = {
  'image-build': ['registry/svc-orchestrator'],
  'code-quality-scan': ['codequality/svc-orchestrator'],
};
/** A path no CI role may read: a job whose SECRETSTORE_READ names it is refused (HTTP 403). */
const CI_FORBIDDEN = 'registry/svc-deployer';

/** One key of a ground truth: `identity path operation`. */
type Truth = Map<string, number>;
const count = (truth: Truth, key: string, n = 1) => truth.set(key, (truth.get(key) ?? 0) + n);

describe('usage: the audit log of a real workload (login script, agents, a person) equals its ground truth', () => {
  let store: RunningStore;
  let provider: RunningOidcProvider;
  let fixture: PlatformFixture;
  let key: JwtSigningKey;
  let work: string;
  let log: string;
  const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;
  /** Successful logins, by identity. */
  const logins: Truth = new Map();
  /** Requests the store allowed, by `identity rule operation` (rules the configuration declares). */
  const used: Truth = new Map();
  /** Requests the store refused, by `identity path operation`. */
  const denied: Truth = new Map();
  /** Failed logins, by auth mount. */
  const failed: Truth = new Map();
  /** Every secret the workload handled: none may appear in a report. */
  const secrets: string[] = [];
  const agents: AgentRun[] = [];

  const out = () => path.join(fixture.dir, 'cdktf.out');
  const agentHome = (role: string) => path.join(work, role);
  /** The directory of an application's agent files: `<outputDirectory>/<role>`. */
  const agentFiles = (role: string) => path.join(out(), 'usage-agents', role, role);

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-usage-workload-'));
    fs.chmodSync(work, 0o700);
    log = path.join(work, 'audit.log');
    key = generateSigningKey();
    store = await startAuditedStore(log);
    secrets.push(store.rootToken);
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret, redirectUris: [OIDC_CLI_REDIRECT_URI], accounts: { alice: ['platform-admins'], mallory: ['contractors'] } });
    fixture = PlatformFixture.create(store, 'usage-workload');
    fixture.engineEnv = { TF_VAR_oidc_client_secret: clientSecret };
    const config = testPlatformConfig(key.publicKeyPem, {
      // The second application run by its agent (the platform's other applications declare no secrets).
      applications: { 'billing-dev': { name: 'billing', environment: 'dev', secrets: { config: ['api_key'] } } },
      people: {
        discoveryUrl: provider.issuer,
        clientId: CLIENT_ID,
        storeUrl: store.addr,
        groups: { 'platform-admins': { groups: ['platform-admins'], reads: [{ path: 'team/runbooks', subtree: true }] } },
      },
    });
    fixture.synthPlatform(config, (platform) => {
      const stack = platform.appRoles;
      for (const role of Object.keys(AGENT_APPS)) {
        // Where the container reads them: here, the synthesized files themselves (<outputDirectory>/<role>/).
        const files = agentFiles(role);
        new AgentConfigurations(stack, `usage-agents-${role}`, {
          applications: stack.applications.filter((a) => a.roleName === role),
          outputDirectory: `usage-agents/${role}`,
          paths: {
            configFile: path.join(files, 'agent.hcl'),
            templateFile: path.join(files, 'env.ctmpl'),
            roleIdFile: path.join(agentHome(role), 'auth', 'role-id'),
            secretIdFile: path.join(agentHome(role), 'auth', 'secret-id'),
            envFile: path.join(agentHome(role), 'secrets', '.env'),
          },
          renewalLoop: false,
        });
      }
    });
    await fixture.apply();
    for (const [logical, keys] of Object.entries({ ...SPEC_CI_SECRETS, [CI_FORBIDDEN]: ['username', 'password'] })) {
      await writeKv2(store, 'secret', logical, testSecretValues(keys));
    }
    for (const [logical, keys] of Object.entries({ ...APP_KEYS, 'team/runbooks/oncall': ['phone'] })) {
      const values = testSecretValues(keys);
      secrets.push(...Object.values(values));
      await writeKv2(store, 'secret', logical, values);
    }

    // CI: each job through the generated login script, as GitLab runs it.
    const ci = path.join(out(), 'ci');
    const script = fs.readFileSync(path.join(ci, 'secretstore-login.sh'), 'utf8');
    const doc: any = yaml.load(fs.readFileSync(path.join(ci, 'secretstore-ci.gitlab-ci.yml'), 'utf8'));
    const aud = doc['.secretstore-login'].id_tokens.SECRETSTORE_ID_TOKEN.aud;
    const jobToken = (claims: JwtClaims = {}) => {
      const jwt = signJwt(key.privateKey, gitlabJobClaims({ aud, ...claims }, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
      secrets.push(jwt);
      return jwt;
    };
    const shell = jobShells()[0];
    const job = (consumer: string, env: Record<string, string> = {}) =>
      runJob({
        shell,
        script,
        env: { ...doc['.secretstore-login'].variables, ...doc[`.secretstore-${consumer}`].variables, SECRETSTORE_ADDR: store.addr, SECRETSTORE_ID_TOKEN: jobToken(), ...env },
      });
    for (const [consumer, paths] of Object.entries(CI_JOBS)) {
      const r = await job(consumer);
      expect([consumer, r.code, r.stderr]).toEqual([consumer, 0, '']);
      count(logins, 'jwt/registry-ci');
      for (const p of paths) count(used, `jwt/registry-ci secret/data/${p} read`);
    }
    // A job whose read list names a path its role lacks (a copied variable): logged in, refused.
    const refused = await job('image-build', { SECRETSTORE_READ: `kv2:secret/data/${CI_FORBIDDEN}:username=DEPLOYER_USERNAME`, SECRETSTORE_REGISTRY_LOGIN: '' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('HTTP 403');
    count(logins, 'jwt/registry-ci');
    count(denied, `jwt/registry-ci secret/data/${CI_FORBIDDEN} read`);
    // A job token of another audience: the login fails.
    const wrongAud = await job('image-build', { SECRETSTORE_ID_TOKEN: jobToken({ aud: 'https://wrong-audience.example' }) });
    expect(wrongAud.code).toBe(1);
    count(failed, 'jwt');
    for (const r of [refused, wrongAud]) expect(leakedValues(r.log, secrets)).toEqual([]);

    // The applications: each agent started as its container would be, stopped once it rendered.
    const operator = new AppRoleOperator(new StoreClient({ address: store.addr, token: store.rootToken }));
    for (const [role, logical] of Object.entries(AGENT_APPS)) {
      const issued = await operator.issueSecretId(role, { issued_by: 'usage-workload.store.test' });
      const roleId = await operator.roleId(role);
      secrets.push(issued.secretId, roleId);
      fs.mkdirSync(agentHome(role), { recursive: true, mode: 0o700 });
      const agent = new AgentRun(
        path.join(agentFiles(role), 'entrypoint.sh'),
        { SECRETSTORE_ROLE_ID: roleId, SECRETSTORE_SECRET_ID: issued.secretId, SECRETSTORE_ADDR: store.addr, SECRETSTORE_AGENT_BINARY: toolchain().bao },
        agentHome(role),
      );
      agents.push(agent);
      const env = path.join(agentHome(role), 'secrets', '.env');
      const variable = `${APP_KEYS[logical][0].toUpperCase()}=`;
      await waitFor(`the env file of ${role}`, () => (fs.existsSync(env) && fs.readFileSync(env, 'utf8').includes(variable) ? true : undefined), 60_000).catch((e) => {
        throw new Error(`${e.message}; the agent's log:\n${agent.logText()}`);
      });
      await agent.stop();
      expect(leakedValues(agent.logText(), secrets)).toEqual([]);
      count(logins, `approle/${role}`);
      used.set(`approle/${role} secret/data/${logical.replace(/\/[^/]+$/, '/*')} read`, 0);
    }
    // An application that reads another's path with its own token: refused. A bad Secret ID: failed.
    const roleId = await operator.roleId('billing-dev');
    const secretId = (await operator.issueSecretId('billing-dev', { issued_by: 'usage-workload.store.test' })).secretId;
    const appToken = clientToken(await appRoleLogin(store, roleId, secretId));
    secrets.push(secretId, appToken);
    count(logins, 'approle/billing-dev');
    expect((await storeRequest(store, 'GET', `secret/data/${AGENT_APPS['orchestrator-dev']}`, undefined, appToken)).status).toBe(403);
    count(denied, `approle/billing-dev secret/data/${AGENT_APPS['orchestrator-dev']} read`);
    expect((await appRoleLogin(store, roleId, `${secretId.slice(0, -4)}0000`)).status).toBe(400);
    count(failed, 'approle');

    // A person through single sign-on: reads a runbook, is refused an application's secret; another
    // person, outside the role's groups, fails to log in.
    const alice = await ssoLogin(store, { mount: 'oidc', role: 'platform-admins', login: 'alice', redirectUri: OIDC_CLI_REDIRECT_URI });
    expect(alice.callback.status).toBe(200);
    const person = clientToken(alice.callback);
    secrets.push(person);
    count(logins, 'oidc/platform-admins');
    expect((await storeRequest(store, 'GET', 'secret/data/team/runbooks/oncall', undefined, person)).status).toBe(200);
    count(used, 'oidc/platform-admins secret/data/team/runbooks/* read');
    expect((await storeRequest(store, 'GET', `secret/data/${AGENT_APPS['orchestrator-dev']}`, undefined, person)).status).toBe(403);
    count(denied, `oidc/platform-admins secret/data/${AGENT_APPS['orchestrator-dev']} read`);
    const mallory = await ssoLogin(store, { mount: 'oidc', role: 'platform-admins', login: 'mallory', redirectUri: OIDC_CLI_REDIRECT_URI });
    expect(mallory.callback.status).toBe(400);
    count(failed, 'oidc');
  });

  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    await provider?.stop();
    await store?.stop();
    fixture?.cleanup();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  const usage = (...args: string[]) => runStoreCli(['usage', out(), '--log', log, ...args], { cwd: work, addr: store.addr });

  it('logins, used, never used, denied and failed sets equal the ground truth exactly; nothing secret printed', async () => {
    const run = await usage('--format', 'json');
    expect([run.code, run.stderr]).toEqual([1, '']);
    const report = JSON.parse(run.stdout);
    // Rules of the store's built-in `default` policy (the agents' token renewal, the KV mount lookup)
    // are the tools' own housekeeping: no configuration declares them, so they are left out here.
    const declared = (g: any) => !(g.policies.length === 1 && g.policies[0] === 'default');
    const got = {
      logins: new Map<string, number>(report.identities.filter((u: any) => u.logins > 0).map((u: any) => [u.identity, u.logins])),
      used: new Map<string, number>(
        report.identities.flatMap((u: any) => u.used.filter(declared).flatMap((g: any) => g.operations.map((op: string) => [`${u.identity} ${g.rule} ${op}`, g.count]))),
      ),
      denied: new Map<string, number>(report.identities.flatMap((u: any) => u.denied.map((d: any) => [`${u.identity} ${d.path} ${d.operation}`, d.count]))),
      failed: new Map<string, number>(report.failedLogins.map((f: any) => [f.mount, f.count])),
    };
    // The agents' reads are counted as the store saw them (an agent may read again): at least once.
    const agentReads = [...used.entries()].filter(([, n]) => n === 0).map(([k]) => k);
    for (const k of agentReads) expect([k, (got.used.get(k) ?? 0) >= 1]).toEqual([k, true]);
    const sorted = (m: Map<string, number>, loose: string[] = []) => [...m.entries()].map(([k, n]) => [k, loose.includes(k) ? 'n' : n]).sort();
    expect(sorted(got.logins)).toEqual(sorted(logins));
    expect(sorted(got.used, agentReads)).toEqual(sorted(used, agentReads));
    expect(sorted(got.denied)).toEqual(sorted(denied));
    expect(sorted(got.failed)).toEqual(sorted(failed));

    // Never used: every rule the configuration declares for an identity, minus the used ones.
    const model = await AccessModel.load(readStoreConfiguration(out()));
    const usedRules = new Set([...used.keys()].map((k) => k.split(' ').slice(0, 2).join(' ')));
    const declaredRules = model.identities.flatMap((i) =>
      i.acl.rules.filter((r) => !isDenyMask(r.mask) && !model.isBuiltinDefaultOnly(r)).map((r) => `${i.identity.name} ${r.path.display}`),
    );
    const unused = report.identities.flatMap((u: any) => u.unused.map((g: any) => `${u.identity} ${g.rule}`));
    expect(unused.sort()).toEqual(declaredRules.filter((r) => !usedRules.has(r)).sort());
    expect(report.failedLogins.map((f: any) => [f.mount, f.cause.split(':')[0]])).toEqual([
      ['approle', 'HTTP 400/403 from the AppRole login'],
      ['jwt', 'HTTP 400 from the JWT login'],
      ['oidc', 'HTTP 400 from the OIDC login'],
    ]);
    expect(report.counts.malformed).toBe(0);
    for (const format of ['md', 'text', 'json']) {
      const text = format === 'json' ? run.stdout : (await usage('--format', format)).stdout;
      expect([format, leakedValues(text, secrets)]).toEqual([format, []]);
    }
  });

  it('access-diff --usage-log: removing a grant the workload used is flagged with its last use; an unused one is not', async () => {
    const head = path.join(work, 'head');
    fs.cpSync(out(), head, { recursive: true });
    const file = path.join(head, 'stacks', 'ci-access', 'cdk.tf.json');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    const [name, policy] = Object.entries<any>(doc.resource.vault_policy).find(([, p]) => String(p.name).includes('registry-ci') || String(p.policy).includes('registry-ci'))!;
    const drop = (text: string, rule: string) => text.replace(new RegExp(`(# [^\\n]*\\n)?path "${rule}" \\{\\n[^}]*\\}\\n`), '');
    doc.resource.vault_policy[name].policy = drop(drop(policy.policy, 'secret/data/registry/svc-orchestrator'), 'secret/data/registry/svc-executor');
    fs.writeFileSync(file, JSON.stringify(doc));
    const run = await runStoreCli(['access-diff', out(), head, '--usage-log', log, '--format', 'json'], { cwd: work, addr: store.addr });
    expect([run.code, run.stderr]).toEqual([1, '']);
    const diff = JSON.parse(run.stdout);
    expect(diff.usage.grants.map((g: any) => [g.identity, g.rule, g.count, g.denied.map((r: any) => r.path)])).toEqual([
      ['jwt/registry-ci', 'secret/data/registry/svc-executor', 0, []],
      ['jwt/registry-ci', 'secret/data/registry/svc-orchestrator', 1, ['secret/data/registry/svc-orchestrator']],
    ]);
    expect(diff.flags.filter((f: any) => f.kind === 'used-access-removed').map((f: any) => f.message)).toEqual([
      expect.stringMatching(/^this change denies requests made less than a day ago: `jwt\/registry-ci` made `read` on `secret\/data\/registry\/svc-orchestrator` last at `[0-9T:.-]+Z` \(1 request\)/),
    ]);
  });
});
