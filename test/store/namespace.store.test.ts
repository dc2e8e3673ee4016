/**
 * Store namespaces (issue 28): `settings.namespace` puts the whole platform in one namespace of the
 * store, and every party names it the same way: the engine's provider (the provider block), the
 * CLI's own requests (`tf`'s checks, `drift`, `adopt`, `who-can live`: X-Vault-Namespace), the
 * generated CI login and the agent files. Issue 45: policies and roles are a namespace's own, and
 * the access model's answers for same-named policies of two namespaces match the real tokens. OpenBao has namespaces since 2.3 (its dev server serves
 * them); HashiCorp Vault only in Enterprise and HCP, so on Vault open source this file checks that
 * the store refuses them and says so, instead of skipping silently.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as yaml from 'js-yaml';
import { AgentConfigurations } from '../../lib/constructs/agent-configuration';
import { Duration, KvMount } from '../../lib';
import { jobShells, leakedValues, runJob } from '../support/ci-login-harness';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { PlatformFixture, TEST_SETTINGS, testPlatformConfig, testSecretValues } from '../support/store/platform-fixture';
import { freePort, RunningStore, startStore } from '../support/store/store-server';
import { storeCli } from '../support/store/store-facts';
import { runStoreCli } from '../support/store/store-cli';
import { storeKind, toolchain } from '../support/store/toolchain-env';
import { AgentRun, waitFor } from '../support/store/agent-run';
import { AccessModel } from '../../lib/access/access-model';
import { StoreConfiguration, compareIdentities } from '../../lib/access/store-configuration';
import { whoCan } from '../../lib/access/who-can';
import { invariantSubjects } from '../../lib/access/invariant-subjects';
import { invariantViolations } from '../../lib/invariants/invariant-check';
import { liveStoreConfiguration, readLiveStore } from '../../lib/reconcile/live-store-reader';
import { StoreClient } from '../../lib/store/store-client';

const NAMESPACE = 'team-a';

/** One request to the store in a namespace (or the root namespace when `namespace` is undefined). */
async function nsRequest(store: RunningStore, namespace: string | undefined, method: string, apiPath: string, body?: unknown, token: string | null = store.rootToken) {
  const headers: Record<string, string> = {};
  if (token) headers['X-Vault-Token'] = token;
  if (namespace) headers['X-Vault-Namespace'] = namespace;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${store.addr}/v1/${apiPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : '';
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

if (storeKind() === 'vault') {
  describe('namespaces on HashiCorp Vault (open source)', () => {
    let store: RunningStore;
    beforeAll(async () => {
      store = await startStore();
    });
    afterAll(async () => store?.stop());

    it('has none: creating one is refused, so settings.namespace is for Vault Enterprise / HCP Vault only (docs/operators.md#namespaces)', async () => {
      const res = await nsRequest(store, undefined, 'POST', `sys/namespaces/${NAMESPACE}`, {});
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.body).toEqual({ errors: ['enterprise-only feature'] });
    });
  });
} else {
  describe(`the platform in the ${storeCli()} namespace "${NAMESPACE}"`, () => {
    let store: RunningStore;
    let fixture: PlatformFixture;
    let key: JwtSigningKey;
    let work: string;
    let proxyPort: number;
    /** A token of the namespace (as HCP Vault's admin token is one of `admin`). */
    let nsToken: string;
    const secrets = new Set<string>();
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: nsToken, env });

    beforeAll(async () => {
      key = generateSigningKey();
      store = await startStore();
      secrets.add(store.rootToken);
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-namespace-'));
      fs.chmodSync(work, 0o700);
      // The namespace and its KV v2 mount `secret/`, as the store's operators would make them.
      expect((await nsRequest(store, undefined, 'POST', `sys/namespaces/${NAMESPACE}`, {})).status).toBeLessThan(300);
      expect((await nsRequest(store, NAMESPACE, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBeLessThan(300);
      // The operators' token lives in the namespace. A root token of the root namespace cannot drive
      // the provider there: the child token the provider creates in the namespace inherits only
      // `default` (the root policy exists in no namespace), and every write answers 403
      // (docs/operators.md#namespaces).
      const admin = 'path "*" {\n  capabilities = ["create", "read", "update", "delete", "list", "sudo"]\n}\n';
      expect((await nsRequest(store, NAMESPACE, 'PUT', 'sys/policies/acl/platform-admin', { policy: admin })).status).toBe(204);
      const created = await nsRequest(store, NAMESPACE, 'POST', 'auth/token/create', { policies: ['platform-admin'], ttl: '1h' });
      nsToken = created.body.auth.client_token;
      secrets.add(nsToken);
      proxyPort = await freePort();
      fixture = PlatformFixture.create(store, 'namespace');
      const out = path.join(fixture.dir, 'cdktf.out', 'ns-agents');
      fixture.synthPlatform(testPlatformConfig(key.publicKeyPem, { settings: { ...TEST_SETTINGS, namespace: NAMESPACE } as any }), (platform) => {
        const stack = platform.appRoles;
        new AgentConfigurations(stack, 'ns-agents', {
          applications: stack.applications.filter((a) => a.roleName === 'orchestrator-dev'),
          outputDirectory: 'ns-agents',
          paths: {
            configFile: path.join(out, 'orchestrator-dev', 'agent.hcl'),
            templateFile: path.join(out, 'orchestrator-dev', 'env.ctmpl'),
            roleIdFile: path.join(work, 'auth', 'role-id'),
            secretIdFile: path.join(work, 'auth', 'secret-id'),
            envFile: path.join(work, 'secrets', '.env'),
          },
          secretRefreshInterval: Duration.seconds(1),
          proxyPort,
        });
      });
      // Applied through the CLI, so that its checks (store health, KV mounts, takeover lookups) ask the namespace too.
      for (const stack of ['ci-access', 'app-roles']) {
        const init = await cli(['tf', stack, '--', 'init', '-input=false']);
        expect(init.code).toBe(0);
        const apply = await cli(['tf', stack, '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
        if (apply.code !== 0) throw new Error(`apply of ${stack} failed (${apply.code}):\n${apply.stderr}\n${apply.stdout}`);
      }
    });

    afterAll(async () => {
      await store?.stop();
      fixture?.cleanup();
      if (work) fs.rmSync(work, { recursive: true, force: true });
    });

    it('both stacks are applied inside the namespace and nothing reaches the root namespace', async () => {
      const inside = await nsRequest(store, NAMESPACE, 'GET', 'sys/auth');
      expect(Object.keys(inside.body.data ?? inside.body).filter((m) => m === 'jwt/' || m === 'approle/').sort()).toEqual(['approle/', 'jwt/']);
      const root = await nsRequest(store, undefined, 'GET', 'sys/auth');
      expect(Object.keys(root.body.data ?? root.body)).not.toContain('jwt/');
      expect(Object.keys(root.body.data ?? root.body)).not.toContain('approle/');
      expect((await nsRequest(store, NAMESPACE, 'GET', 'sys/policies/acl/registry-ci')).status).toBe(200);
      expect((await nsRequest(store, undefined, 'GET', 'sys/policies/acl/registry-ci')).status).toBe(404);
    });

    it('the generated CI login logs in and reads inside the namespace (job token signed by the test)', async () => {
      const values = testSecretValues(['username', 'password']);
      Object.values(values).forEach((v) => secrets.add(v));
      expect((await nsRequest(store, NAMESPACE, 'POST', 'secret/data/registry/svc-orchestrator', { data: values })).status).toBe(200);
      const ci = path.join(fixture.dir, 'cdktf.out', 'ci');
      const script = fs.readFileSync(path.join(ci, 'secretstore-login.sh'), 'utf8');
      const doc: any = yaml.load(fs.readFileSync(path.join(ci, 'secretstore-ci.gitlab-ci.yml'), 'utf8'));
      const jwt = signJwt(key.privateKey, gitlabJobClaims({ aud: doc['.secretstore-login'].id_tokens.SECRETSTORE_ID_TOKEN.aud }, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
      const r = await runJob({
        shell: jobShells()[0],
        script,
        env: { ...doc['.secretstore-login'].variables, ...doc['.secretstore-image-scan'].variables, SECRETSTORE_ADDR: store.addr, SECRETSTORE_ID_TOKEN: jwt },
        collect: ['SVC_ORCHESTRATOR_USERNAME', 'SVC_ORCHESTRATOR_PASSWORD'],
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.vars).toEqual({ SVC_ORCHESTRATOR_USERNAME: values.username, SVC_ORCHESTRATOR_PASSWORD: values.password });
      expect(leakedValues(r.log, [...secrets])).toEqual([]);
      // The same job without the namespace reaches the root namespace, where no such role exists.
      const rootLogin = await nsRequest(store, undefined, 'POST', 'auth/jwt/login', { role: 'registry-ci', jwt }, null);
      expect(rootLogin.status).toBeGreaterThanOrEqual(400);
    });

    it('the agent logs in with the provisioned Role ID / Secret ID and renders the application\'s secret inside the namespace', async () => {
      const values = { pg_host: 'db.internal', pg_user: 'orchestrator', pg_password: testSecretValues(['p']).p };
      secrets.add(values.pg_password);
      expect((await nsRequest(store, NAMESPACE, 'POST', 'secret/data/acme/dev/orchestrator/database', { data: values })).status).toBe(200);
      // provision with the tools' namespace from the environment (no synthesized stack to read here).
      const envFile = path.join(work, 'orchestrator.env');
      const provisioned = await cli(['provision', 'orchestrator-dev', '--env-file', envFile], { BAO_NAMESPACE: NAMESPACE });
      expect(provisioned.code).toBe(0);
      const vars = Object.fromEntries(
        fs.readFileSync(envFile, 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).replace(/^'|'$/g, '')]),
      );
      secrets.add(vars.SECRETSTORE_SECRET_ID);
      const agent = new AgentRun(
        path.join(fixture.dir, 'cdktf.out', 'ns-agents', 'orchestrator-dev', 'entrypoint.sh'),
        { SECRETSTORE_ROLE_ID: vars.SECRETSTORE_ROLE_ID, SECRETSTORE_SECRET_ID: vars.SECRETSTORE_SECRET_ID, SECRETSTORE_ADDR: store.addr, SECRETSTORE_AGENT_BINARY: toolchain().bao },
        work,
      );
      try {
        const env = path.join(work, 'secrets', '.env');
        await waitFor('the env file', () => (fs.existsSync(env) && fs.readFileSync(env, 'utf8').includes('PG_HOST') ? true : undefined), 60_000);
        expect(fs.readFileSync(env, 'utf8')).toContain("PG_HOST='db.internal'");
        expect(agent.logText()).toContain('authentication successful');
        expect(leakedValues(agent.logText(), [...secrets])).toEqual([]);
      } finally {
        await agent.stop();
      }
    });

    it('drift and adopt read the namespace the stacks declare: in sync, nothing to import', async () => {
      const drift = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
      expect(drift.stderr).toBe('');
      expect(drift.code).toBe(0);
      const adopt = await cli(['adopt', '--dry-run']);
      expect(adopt.code).toBe(0);
      expect(`${adopt.stdout}${adopt.stderr}`).not.toMatch(/import \{/);
    });

    it('a VAULT_NAMESPACE that names another namespace stops drift and tf before any request (exit 3), naming both', async () => {
      const drift = await cli(['drift', 'cdktf.out'], { VAULT_NAMESPACE: 'elsewhere' });
      expect(drift.code).toBe(3);
      expect(drift.stderr).toContain(`VAULT_NAMESPACE=elsewhere but the synthesized stacks declare settings.namespace "${NAMESPACE}"`);
      const plan = await cli(['tf', 'app-roles', '--', 'plan'], { VAULT_NAMESPACE: 'elsewhere' });
      expect(plan.code).toBe(3);
    });

    it('a root token of the root namespace: tf has the provider use it itself (its child token in the namespace would get only `default`), and the apply writes in the namespace', async () => {
      const asRoot = (args: string[], env: NodeJS.ProcessEnv = {}) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken, env });
      expect((await nsRequest(store, NAMESPACE, 'DELETE', 'sys/policies/acl/orchestrator-dev')).status).toBe(204);
      // The cause, shown: with the provider's child token (the operator's own setting is kept) every write is refused.
      const childToken = await asRoot(['tf', 'app-roles', '--', 'apply', '-auto-approve', '-input=false'], { TERRAFORM_VAULT_SKIP_CHILD_TOKEN: 'false' });
      expect(childToken.code).not.toBe(0);
      expect(childToken.stderr).toMatch(/permission denied|403/);
      const applied = await asRoot(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
      expect(applied.stderr).toContain(
        `secretstore-iac tf: the token is of the root namespace and the stacks apply in namespace ${NAMESPACE}: the vault provider would make its child token in ${NAMESPACE}, ` +
          'where it gets only the `default` policy (every write refused), so it uses the token itself (TERRAFORM_VAULT_SKIP_CHILD_TOKEN=true)',
      );
      expect(applied.code).toBe(0);
      expect((await nsRequest(store, NAMESPACE, 'GET', 'sys/policies/acl/orchestrator-dev')).status).toBe(200);
      expect((await nsRequest(store, undefined, 'GET', 'sys/policies/acl/orchestrator-dev')).status).toBe(404);
      const plan = await asRoot(['tf', 'app-roles', '--', 'plan', '-input=false', '-detailed-exitcode']);
      expect(plan.code).toBe(0);
      const drift = await asRoot(['drift', 'cdktf.out', '--stack', 'app-roles']);
      expect([drift.code, drift.stderr]).toEqual([0, '']);
    });

    it('a token of another namespace: tf and drift stop (exit 3) naming both namespaces, not a missing capability', async () => {
      expect((await nsRequest(store, undefined, 'POST', 'sys/namespaces/team-b', {})).status).toBeLessThan(300);
      const admin = 'path "*" {\n  capabilities = ["create", "read", "update", "delete", "list", "sudo"]\n}\n';
      expect((await nsRequest(store, 'team-b', 'PUT', 'sys/policies/acl/platform-admin', { policy: admin })).status).toBe(204);
      const otherToken = (await nsRequest(store, 'team-b', 'POST', 'auth/token/create', { policies: ['platform-admin'], ttl: '1h' })).body.auth.client_token;
      secrets.add(otherToken);
      const asOther = (args: string[]) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: otherToken });
      const plan = await asOther(['tf', 'app-roles', '--', 'plan', '-input=false']);
      expect(plan.code).toBe(3);
      expect(plan.stderr).toContain(`The stacks apply in namespace ${NAMESPACE}, but the token belongs to namespace team-b, and the requests go to namespace ${NAMESPACE}: a token acts only in its own namespace`);
      const drift = await asOther(['drift', 'cdktf.out', '--stack', 'app-roles']);
      expect(drift.code).toBe(3);
      expect(drift.stderr).toContain(`the token belongs to namespace team-b, and the requests go to namespace ${NAMESPACE}`);
      expect(drift.stderr).not.toContain('Fix: use a token whose policy grants');
      expect(drift.stderr).not.toContain('The check needs path');
      expect(leakedValues(`${plan.stdout}${plan.stderr}${drift.stdout}${drift.stderr}`, [...secrets])).toEqual([]);
    });

    it('drift of every stack inside the namespace: its built-in token method (ns_token) is no unmanaged mount; the one finding is the operators\' own admin policy (issue 37)', async () => {
      const drift = await cli(['drift', 'cdktf.out']);
      expect({ code: drift.code, stderr: drift.stderr }).toEqual({ code: 1, stderr: '' });
      expect(drift.stdout).toContain('**1 difference.**');
      expect(drift.stdout).toContain('- `sys/policies/acl/platform-admin`: policy platform-admin is on the store but no stack declares it');
      expect(drift.stdout).not.toContain('sys/auth/token');
    });

    it('a KV mount missing in the namespace: tf stops (exit 5) with a fix that names the namespace; run as written (no BAO_NAMESPACE set) it enables the mount there, and the plan goes on (issue 37)', async () => {
      const other = PlatformFixture.create(store, 'namespace-kv');
      try {
        other.synthPlatform(testPlatformConfig(key.publicKeyPem, { settings: { ...TEST_SETTINGS, namespace: NAMESPACE, kvMount: new KvMount('team-kv', 2) } as any }));
        const inOther = (args: string[]) => runStoreCli(args, { cwd: other.dir, addr: store.addr, token: nsToken });
        expect((await inOther(['tf', 'ci-access', '--', 'init', '-input=false'])).code).toBe(0);
        const refused = await inOther(['tf', 'ci-access', '--', 'plan', '-input=false']);
        expect(refused.code).toBe(5);
        expect(refused.stderr).toContain(`team-kv/ is not mounted in the namespace ${NAMESPACE} on the store`);
        const fix = /enable it first \((.+)\)$/m.exec(refused.stderr)?.[1];
        expect(fix).toBe(`${storeCli()} secrets enable -namespace='${NAMESPACE}' -path=team-kv -version=2 kv`);
        // The operator's shell: the store's CLI on PATH, its address and token, no namespace variable.
        const ran = spawnSync('sh', ['-c', fix!], {
          env: { PATH: `${path.dirname(toolchain().bao)}${path.delimiter}${process.env.PATH}`, HOME: work, VAULT_ADDR: store.addr, BAO_ADDR: store.addr, VAULT_TOKEN: nsToken },
          encoding: 'utf8',
        });
        expect({ status: ran.status, stderr: ran.stderr }).toEqual({ status: 0, stderr: '' });
        expect(Object.keys((await nsRequest(store, NAMESPACE, 'GET', 'sys/mounts')).body.data)).toContain('team-kv/');
        expect(Object.keys((await nsRequest(store, undefined, 'GET', 'sys/mounts')).body.data)).not.toContain('team-kv/');
        const plan = await inOther(['tf', 'ci-access', '--', 'plan', '-input=false']);
        expect({ code: plan.code, stderr: plan.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('not mounted') });
      } finally {
        other.cleanup();
      }
    });

    it('who-can live asks the namespace named by BAO_NAMESPACE', async () => {
      const r = await cli(['who-can', 'read', 'secret/data/registry/svc-orchestrator', 'live'], { BAO_NAMESPACE: NAMESPACE });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('jwt/registry-ci');
      expect(r.stdout).not.toContain('has no JWT, OIDC or AppRole role');
    });

    it('provision without the namespace: the unknown application is named with the namespace asked and the variable to set, nothing written (issue 37)', async () => {
      const envFile = path.join(work, 'no-namespace.env');
      const r = await runStoreCli(['provision', 'orchestrator-dev', '--env-file', envFile], { cwd: fixture.dir, addr: store.addr, token: store.rootToken });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('unknown application "orchestrator-dev": the store has no AppRole role "orchestrator-dev" on the mount "approle" in the root namespace (the mount has no roles in the root namespace, or is not mounted there)');
      expect(r.stderr).toContain("set BAO_NAMESPACE (or VAULT_NAMESPACE) to the namespace the platform's stacks apply in (settings.namespace) if it is not the root namespace");
      expect(fs.existsSync(envFile)).toBe(false);
      const inNamespace = await runStoreCli(['provision', 'orchestrator-dev', '--env-file', envFile], { cwd: fixture.dir, addr: store.addr, token: nsToken, env: { BAO_NAMESPACE: NAMESPACE } });
      expect({ code: inNamespace.code, stderr: inNamespace.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      expect(fs.readFileSync(envFile, 'utf8')).toMatch(/^SECRETSTORE_ROLE_ID=/m);
    });

    it('who-can live without the namespace: "nobody" comes with a note that names the namespace read and the variable to set (issue 37)', async () => {
      const r = await runStoreCli(['who-can', 'read', 'secret/data/registry/svc-orchestrator', 'live'], { cwd: fixture.dir, addr: store.addr, token: store.rootToken });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('  nobody');
      expect(r.stdout).toContain(
        `note: the live store ${store.addr} (root namespace) has no JWT, OIDC or AppRole role at all: if the platform's stacks apply in a namespace (settings.namespace), set BAO_NAMESPACE or VAULT_NAMESPACE to it and ask again`,
      );
    });

    // Last: it mounts AppRole in the root namespace, which the tests above check is untouched.
    it('two namespaces with a same-named policy of different texts: the live check answers each identity as its real token reads (200/403) (issue 45)', async () => {
      const a = 'ns-a';
      const b = 'ns-b';
      const root = '';
      // Each namespace's `app-x` grants its own path; the root's reader reaches into ns-a by the path ns-a/...
      const texts: Record<string, string> = {
        [root]: 'path "secret/data/root-only/*" {\n  capabilities = ["read"]\n}\n',
        [a]: 'path "secret/data/a-only/*" {\n  capabilities = ["read"]\n}\n',
        [b]: 'path "secret/data/b-only/*" {\n  capabilities = ["read"]\n}\n',
      };
      const ok = async (r: Promise<{ status: number; body: any }>) => {
        const res = await r;
        if (res.status >= 300) throw new Error(`store answered ${res.status}: ${JSON.stringify(res.body)}`);
        return res;
      };
      const inNs = (ns: string) => (ns === root ? undefined : ns);
      for (const ns of [a, b]) await ok(nsRequest(store, undefined, 'POST', `sys/namespaces/${ns}`, {}));
      const paths = ['root-only', 'a-only', 'b-only', 'shared'];
      for (const ns of [root, a, b]) {
        const n = inNs(ns);
        if (ns !== root) await ok(nsRequest(store, n, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }));
        await ok(nsRequest(store, n, 'POST', 'sys/auth/approle', { type: 'approle' }));
        await ok(nsRequest(store, n, 'PUT', 'sys/policies/acl/app-x', { policy: texts[ns] }));
        await ok(nsRequest(store, n, 'POST', 'auth/approle/role/app', { token_policies: ['app-x'], token_ttl: '10m' }));
        for (const p of paths) {
          const value = testSecretValues(['v']).v;
          secrets.add(value);
          await ok(nsRequest(store, n, 'POST', `secret/data/${p}/s`, { data: { v: value } }));
        }
      }
      await ok(nsRequest(store, undefined, 'PUT', 'sys/policies/acl/reader', { policy: `path "${a}/secret/data/shared/*" {\n  capabilities = ["read"]\n}\n` }));
      await ok(nsRequest(store, undefined, 'POST', 'auth/approle/role/reader', { token_policies: ['reader'], token_ttl: '10m' }));
      /** A real token of a role: its own login, in its namespace. */
      const login = async (ns: string, role: string): Promise<string> => {
        const n = inNs(ns);
        const roleId = (await ok(nsRequest(store, n, 'GET', `auth/approle/role/${role}/role-id`))).body.data.role_id;
        const secretId = (await ok(nsRequest(store, n, 'POST', `auth/approle/role/${role}/secret-id`, {}))).body.data.secret_id;
        secrets.add(secretId);
        const token = (await ok(nsRequest(store, n, 'POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, null))).body.auth.client_token;
        secrets.add(token);
        return token;
      };
      const identities = [
        { ns: root, role: 'app', token: await login(root, 'app') },
        { ns: a, role: 'app', token: await login(a, 'app') },
        { ns: b, role: 'app', token: await login(b, 'app') },
        { ns: root, role: 'reader', token: await login(root, 'reader') },
      ];
      const labelOf = (ns: string, role: string) => (ns === root ? `approle/${role}` : `approle/${role} (namespace ${ns})`);
      const checked: string[] = [];
      for (const requested of [root, a, b]) {
        for (const p of paths) {
          const apiPath = `secret/data/${p}/s`;
          // The live check, as an operator runs it: who-can on the live store, in the namespace of the request.
          const r = await runStoreCli(['who-can', 'read', apiPath, 'live', '--format', 'json'], {
            cwd: fixture.dir,
            addr: store.addr,
            token: store.rootToken,
            env: requested === root ? {} : { BAO_NAMESPACE: requested },
          });
          expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
          const answer = JSON.parse(r.stdout);
          const allowed = new Set((answer.allowed as Array<{ identity: string; namespace?: string }>).map((e) => labelOf(e.namespace ?? root, e.identity.slice('approle/'.length))));
          for (const i of identities) {
            // The real token: its read in the namespace of the request (a token of another namespace: 403).
            const res = await nsRequest(store, inNs(requested), 'GET', apiPath, undefined, i.token);
            const label = labelOf(i.ns, i.role);
            // The live store is read one namespace at a time: the root's reader is not among ns-a's roles.
            const modelSays = i.ns === requested ? allowed.has(label) : undefined;
            if (modelSays !== undefined) expect([requested, apiPath, label, modelSays ? 200 : 403]).toEqual([requested, apiPath, label, res.status]);
            checked.push(`${requested || '(root)'} ${p} ${label}: ${res.status}`);
          }
        }
      }
      // Each app reads its own namespace's path only; the root's reader reads ns-a's shared path (ns-a/... in its policy).
      expect(checked.filter((c) => c.endsWith(': 200')).sort()).toEqual([
        '(root) root-only approle/app: 200',
        'ns-a a-only approle/app (namespace ns-a): 200',
        'ns-a shared approle/reader: 200',
        'ns-b b-only approle/app (namespace ns-b): 200',
      ]);
      // The model of the three namespaces read together (each live read keyed by its namespace), asked per namespace, agrees with every token.
      const reads = await Promise.all(
        [root, a, b].map(async (ns) => liveStoreConfiguration(await readLiveStore(new StoreClient({ address: store.addr, token: store.rootToken, namespace: inNs(ns) })), `store (${ns || 'root'})`)),
      );
      const appOnly = (c: StoreConfiguration): StoreConfiguration => ({
        ...c,
        identities: c.identities.filter((i) => i.mount === 'approle'),
        policies: new Map([...c.policies].filter(([, p]) => p.name === 'app-x' || p.name === 'reader')),
      });
      const together: StoreConfiguration = {
        identities: reads.flatMap((c) => appOnly(c).identities).sort(compareIdentities),
        policies: new Map(reads.flatMap((c) => [...appOnly(c).policies])),
        stacks: reads.flatMap((c) => c.stacks),
        liveStore: true,
        namespaces: [root, a, b],
        ...(reads[0].store ? { store: reads[0].store } : {}),
      };
      const model = await AccessModel.load(together);
      expect(model.identities.map((i) => labelOf(i.identity.namespace ?? root, i.identity.role))).toEqual([
        'approle/app',
        'approle/app (namespace ns-a)',
        'approle/app (namespace ns-b)',
        'approle/reader',
      ]);
      for (const requested of [root, a, b]) {
        for (const p of paths) {
          const apiPath = `secret/data/${p}/s`;
          const answer = whoCan(model, 'read', apiPath, { namespace: requested });
          const allowed = new Set(answer.allowed.map((e) => labelOf(e.namespace ?? root, e.identity.slice('approle/'.length))));
          for (const i of identities) {
            const res = await nsRequest(store, inNs(requested), 'GET', apiPath, undefined, i.token);
            const label = labelOf(i.ns, i.role);
            expect([requested, apiPath, label, allowed.has(label) ? 200 : 403]).toEqual([requested, apiPath, label, res.status]);
          }
        }
      }
      // The invariants read the same model exactly: "nobody reads secret/data/shared/*" (in any
      // namespace) is broken by exactly the identities whose real token read a shared secret (200),
      // the root's reader through its ns-a/... rule, named behind the prefix (issue 45).
      const sharedReaders = checked.filter((c) => c.includes(' shared ') && c.endsWith(': 200')).map((c) => c.slice(c.indexOf(' shared ') + ' shared '.length, -': 200'.length)).sort();
      const violations = invariantViolations(
        invariantSubjects(model),
        [{ id: 'nobody-reads-shared', reason: 'test', who: { kind: 'any' }, paths: ['secret/data/shared/*'], capabilities: ['read'] }],
        model.namespaces,
      );
      expect(violations.map((v) => labelOf(v.namespace ?? root, v.identity.slice('approle/'.length))).sort()).toEqual(sharedReaders);
      expect(violations.map((v) => [v.rule, v.path.slice(0, `${a}/secret/data/shared/`.length)])).toEqual([[`${a}/secret/data/shared/*`, `${a}/secret/data/shared/`]]);
      expect(leakedValues(JSON.stringify(checked), [...secrets])).toEqual([]);
    });
  });
}
