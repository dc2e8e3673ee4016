/**
 * The usage report from audit lines captured from the real stores' file audit devices
 * (test/fixtures/usage/*-audit.log, copied from a run of test/store/usage.store.test.ts: HMAC-ed
 * values as the stores wrote them, no secret value), against the synthesized base configuration,
 * whose `jwt/registry-ci` and `approle/orchestrator-dev` roles and policies are the ones that run used.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { runCli } from '../../../lib/cli/run-cli';
import { AuditReadCounts, auditTime, parseAuditLine, readAuditEntries } from '../../../lib/usage/audit-log-reader';
import { renderUsageMarkdown } from '../../../lib/usage/usage-markdown';
import { UsageAggregator, UsageReport, usageOfAuditLog } from '../../../lib/usage/usage-report';
import { ruleSources } from '../../../lib/usage/rule-sources';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';

const BASE = path.join(ACCESS_FIXTURES, 'base');
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'usage');
const STORES = ['openbao', 'vault'] as const;
const fixture = (store: string) => path.join(FIXTURES, `${store}-audit.log`);

async function report(files: string[], window: { sinceMs?: number; untilMs?: number } = {}): Promise<UsageReport> {
  const configuration = readStoreConfiguration(BASE);
  const aggregator = new UsageAggregator(await AccessModel.load(configuration), configuration);
  const counts: AuditReadCounts = { lines: 0, responses: 0, malformed: [], malformedCount: 0 };
  for await (const e of readAuditEntries(files, window, counts)) aggregator.add(e);
  return aggregator.report(counts, {});
}

const identity = (r: UsageReport, name: string) => r.identities.find((u) => u.identity === name)!;

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-unit-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe.each(STORES)('the usage report of a real %s audit log', (store) => {
  let r: UsageReport;
  beforeAll(async () => {
    r = await report([fixture(store)]);
  });

  it('counts responses only (every request is logged twice), and the root token apart', () => {
    // The second job's login is not in this excerpt: its read is credited to none.
    expect(r.counts).toEqual({ lines: 18, responses: 10, malformed: 0, malformedAt: [], unattributed: 1, loginNotInLog: 1, otherNamespaces: 0 });
  });

  it('the CI role: its login, the rule its token used, the five CI paths it never read (with their constructs), its denial', () => {
    const ci = identity(r, 'jwt/registry-ci');
    expect(ci.logins).toBe(1);
    // codequality was read by the second job, whose login the excerpt lacks: not credited, whatever its display name.
    expect(ci.used.map((g) => [g.rule, g.policies, g.operations, g.count])).toEqual([['secret/data/registry/svc-orchestrator', ['registry-ci'], ['read'], 1]]);
    expect(ci.unused.map((g) => [g.rule, g.capabilities, g.declaredBy])).toEqual([
      ['secret/data/codequality/svc-orchestrator', ['read'], ['ci-access/codequality']],
      ['secret/data/orchestrator/e2e-test-user', ['read'], ['ci-access/e2e-test-user']],
      ['secret/data/registry/svc-executor', ['read'], ['ci-access/svc-executor']],
      ['secret/data/testreport/svc-orchestrator', ['read'], ['ci-access/testreport']],
      ['secret/data/vulnmgmt/svc-orchestrator', ['read'], ['ci-access/vulnmgmt']],
    ]);
    // The spec's svc-executor is no CiSecret and no PlatformConfig field declares it: the fix says so, naming no field that does not exist.
    expect(ci.unused[2].fix).toBe(
      'to take "secret/data/registry/svc-executor" from jwt/registry-ci: ci-access/svc-executor: the spec\'s registry account svc-executor, which the ci-access stack declares whatever the configuration says: no PlatformConfig field removes it; access-diff then shows the narrowing',
    );
    expect(ci.unused[0].policies).toEqual([{ name: 'registry-ci', declaredAt: expect.stringContaining('registry-ci') }]);
    expect(ci.denied).toEqual([
      {
        path: 'secret/data/acme/dev/orchestrator/database',
        operation: 'read',
        count: 1,
        lastTime: expect.stringMatching(/^\d{4}-/),
        cause: "HTTP 403 reading a secret: path not in the role's policy → update the policy",
        grantedBy: [{ identity: 'approle/orchestrator-dev', rule: 'secret/data/acme/dev/orchestrator/*', policies: ['orchestrator-dev'] }],
        fix: expect.stringContaining('accounts.<name>, readByCi true by default'),
      },
    ]);
  });

  it('the application: its login, its one rule used, a denial another application is granted', () => {
    const app = identity(r, 'approle/orchestrator-dev');
    expect([app.logins, app.used.map((g) => [g.rule, g.count]), app.unused]).toEqual([1, [['secret/data/acme/dev/orchestrator/*', 1]], []]);
    expect(app.denied.map((d) => [d.path, d.grantedBy.map((g) => g.identity)])).toEqual([['secret/data/acme/shared/identity/config', ['approle/authentik-role']]]);
    expect(app.denied[0].fix).toContain("an application's policy reads only its own secret path");
  });

  it('failed logins by mount with their §7 cause (role and error are HMAC-ed by the store)', () => {
    expect(r.failedLogins.map((f) => [f.mount, f.method, f.role, f.count])).toEqual([
      ['approle', 'approle', undefined, 1],
      ['jwt', 'jwt', undefined, 1],
    ]);
    expect(r.failedLogins[0].cause).toContain('invalid Role ID or Secret ID → reprovision');
    expect(r.failedLogins[1].cause).toContain('wrong aud or bound claims');
  });

  it('no other identity has a login, a use or a denial; nothing HMAC-ed is printed', () => {
    const others = r.identities.filter((u) => !['jwt/registry-ci', 'approle/orchestrator-dev'].includes(u.identity));
    expect(others.length).toBeGreaterThan(0);
    for (const u of others) expect([u.logins, u.used, u.denied, u.lastSeen]).toEqual([0, [], [], undefined]);
    expect(renderUsageMarkdown(r)).not.toContain('hmac-sha256');
  });
});

describe('reading audit files', () => {
  const lines = fs.readFileSync(fixture('vault'), 'utf8').trimEnd().split('\n');
  const strip = (r: UsageReport) => ({ ...r, counts: { ...r.counts, lines: 0, malformed: 0, malformedAt: [] } });

  it('rotated files, gzip-compressed with or without a .gz name, give the report of the whole log', async () => {
    const whole = await report([fixture('vault')]);
    const older = path.join(tmp, 'audit.log.1.gz');
    const middle = path.join(tmp, 'audit.log-20261128');
    const newest = path.join(tmp, 'audit.log');
    fs.writeFileSync(older, zlib.gzipSync(`${lines.slice(0, 6).join('\n')}\n`));
    fs.writeFileSync(middle, zlib.gzipSync(`${lines.slice(6, 12).join('\n')}\n`));
    fs.writeFileSync(newest, `${lines.slice(12).join('\n')}\n`);
    expect(await report([older, middle, newest])).toEqual(whole);
    expect(await report([newest, older, middle])).toEqual(whole);
  });

  it('a time window keeps the entries at or after since and before until', async () => {
    const approleLogin = lines.map((l) => JSON.parse(l)).find((e) => e.type === 'response' && e.request.path === 'auth/approle/login' && e.auth?.client_token);
    const at = Date.parse(approleLogin.time);
    const after = await report([fixture('vault')], { sinceMs: at });
    expect(identity(after, 'jwt/registry-ci')).toMatchObject({ logins: 0, used: [], denied: [] });
    expect(identity(after, 'approle/orchestrator-dev').logins).toBe(1);
    expect(after.failedLogins.map((f) => f.mount)).toEqual(['approle']);
    const before = await report([fixture('vault')], { untilMs: at });
    expect(identity(before, 'approle/orchestrator-dev').logins).toBe(0);
    expect(identity(before, 'jwt/registry-ci').logins).toBe(1);
    expect(before.counts.responses + after.counts.responses).toBe(10);
  });

  it("a person's OIDC callback is a login: issuing a token, of its role's identity; refused, a failed OIDC login", async () => {
    const entries = lines.map((l) => JSON.parse(l));
    const jwtLogins = entries.filter((e) => e.type === 'response' && e.request.path === 'auth/jwt/login');
    const ok = jwtLogins.find((e) => e.auth?.client_token)!;
    const refused = jwtLogins.find((e) => !e.auth?.client_token)!;
    const callback = (e: any) => JSON.stringify({ ...e, request: { ...e.request, path: `${e.request.mount_point}oidc/callback` } });
    const asOidc = (e: any) => JSON.stringify({ ...e, request: { ...e.request, path: 'auth/oidc/oidc/callback', mount_point: 'auth/oidc/', mount_type: 'oidc' } });
    const file = path.join(tmp, 'oidc.log');
    fs.writeFileSync(file, [callback(ok), asOidc(refused), JSON.stringify({ ...ok, request: { ...ok.request, path: 'auth/jwt/oidc/auth_url' } })].join('\n'));
    const r = await report([file]);
    expect(identity(r, 'jwt/registry-ci').logins).toBe(1);
    expect(r.failedLogins.map((f) => [f.mount, f.method, f.count, f.cause.split(':')[0]])).toEqual([['oidc', 'oidc', 1, 'HTTP 400 from the OIDC login']]);
    // The authorization URL request is no login.
    expect(r.counts.unattributed).toBe(0);
  });

  it('malformed lines are counted with their place and skipped; the rest is read', async () => {
    const file = path.join(tmp, 'malformed.log');
    const noTime = JSON.stringify({ ...JSON.parse(lines[1]), time: undefined });
    fs.writeFileSync(file, [lines[0], '{"type":"response"', lines[1], '[1,2]', '', noTime, ...lines.slice(2)].join('\n'));
    const r = await report([file]);
    expect(r.counts.malformed).toBe(3);
    expect(r.counts.malformedAt).toEqual([`${file}:2`, `${file}:4`, `${file}:6`]);
    expect(strip(r)).toEqual(strip(await report([fixture('vault')])));
  });

  it('an unreadable gzip file is an error naming the file', async () => {
    const file = path.join(tmp, 'broken.gz');
    fs.writeFileSync(file, zlib.gzipSync(lines.join('\n')).subarray(0, 200));
    await expect(report([file])).rejects.toThrow(`cannot read the audit log ${file}`);
  });

  it('parseAuditLine: a request twin is skipped, a response keeps no HMAC-ed value', () => {
    expect(parseAuditLine(lines[0])).toBe('skip');
    const entry = parseAuditLine(lines[1]);
    expect(entry).toMatchObject({ path: 'secret/data/registry/svc-orchestrator', operation: 'create', mountPoint: 'secret/', responseError: false });
    // Only the token's link (its accessor, HMAC-ed as the device wrote it) is kept, to tie requests to their login; never printed.
    const { token, issued, ...rest } = entry as Exclude<typeof entry, 'skip' | undefined>;
    expect([token, issued]).toEqual([expect.stringMatching(/^hmac-sha256:/), undefined]);
    expect(JSON.stringify(rest)).not.toContain('hmac-sha256');
    expect(parseAuditLine('{"type":"response","time":"x","request":{}}')).toBeUndefined();
  });
});

describe('attribution by token lineage: the login that issued the token, never a display-name prefix (issue 47)', () => {
  const policy = (name: string, rules: string[]) =>
    [name, { name, stack: 's', text: rules.map((p) => `path "${p}" {\n  capabilities = ["${p === 'auth/token/create' ? 'update' : 'read'}"]\n}\n`).join('\n') }] as const;
  const id = (mount: string, role: string, method: 'jwt' | 'approle', policies: string[]) => ({ name: `${mount}/${role}`, method, mount, role, stack: 's', tokenPolicies: policies, noDefaultPolicy: true, bindings: {} });
  const COUNTS = { lines: 0, responses: 0, malformed: [], malformedCount: 0 };

  async function aggregate(configuration: any, entries: any[], namespace?: string): Promise<UsageReport> {
    const aggregator = new UsageAggregator(await AccessModel.load(configuration), configuration, namespace);
    for (const e of entries) {
      const parsed = parseAuditLine(typeof e === 'string' ? e : JSON.stringify(e));
      if (parsed !== 'skip' && parsed !== undefined) aggregator.add(parsed);
    }
    return aggregator.report(COUNTS, {});
  }
  const summary = (r: UsageReport) =>
    r.identities.map((u) => [u.identity, u.logins, u.used.map((g) => [g.rule, g.count]), u.denied.map((d) => [d.path, d.count])]);

  describe('mounts jwt and jwt-prod both declare role deploy; a job of project prod-infra/deployer logs in on jwt', () => {
    // The real Vault lines of a JWT login, a read and a refused read by its token, with the mount,
    // role, display name and path of the issue's case (the user claim `project_path` is the name).
    const vault = fs.readFileSync(fixture('vault'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    const login = vault.find((e) => e.type === 'response' && e.request.path === 'auth/jwt/login' && e.auth?.client_token);
    const token = login.auth.accessor;
    const byToken = vault.filter((e) => e.type === 'response' && e.auth?.accessor === token && e.request.path !== 'auth/jwt/login');
    const read = byToken.find((e) => !e.error);
    const refused = byToken.find((e) => /permission denied/.test(e.error ?? ''));
    const asJob = (e: any, path?: string) => {
      const c = JSON.parse(JSON.stringify(e));
      c.auth.display_name = 'jwt-prod-infra/deployer';
      c.auth.metadata = { role: 'deploy' };
      if (c.response?.auth) Object.assign(c.response.auth, { display_name: 'jwt-prod-infra/deployer', metadata: { role: 'deploy' } });
      if (path !== undefined) c.request.path = path;
      return c;
    };
    const jobLogin = asJob(login);
    const reads = [1, 2, 3].map(() => asJob(read, 'secret/data/deploy/db'));
    const denied = asJob(refused, 'secret/data/prod/db');
    const configuration = {
      identities: [id('jwt', 'deploy', 'jwt', ['jwt-deploy']), id('jwt-prod', 'deploy', 'jwt', ['jwt-prod-deploy'])],
      policies: new Map([policy('jwt-deploy', ['secret/data/deploy/db']), policy('jwt-prod-deploy', ['secret/data/prod/*'])]),
      stacks: ['s'],
    };

    it('the login on auth/jwt/login names the mount: its three reads and its denial are jwt/deploy\'s; jwt-prod/deploy did nothing', async () => {
      expect([token, read.auth.accessor, refused.auth.accessor]).toEqual([login.response.auth.accessor, token, token]);
      const r = await aggregate(configuration, [jobLogin, ...reads, denied]);
      expect(summary(r)).toEqual([
        ['jwt-prod/deploy', 0, [], []],
        ['jwt/deploy', 1, [['secret/data/deploy/db', 3]], [['secret/data/prod/db', 1]]],
      ]);
      expect(r.identities.find((u) => u.identity === 'jwt/deploy')!.unused).toEqual([]);
      expect(r.counts).toMatchObject({ unattributed: 0, loginNotInLog: 0, otherNamespaces: 0 });
    });

    it('without its login in the log, the display name fits both mounts: nobody is credited, the requests are counted as login not in the log', async () => {
      const r = await aggregate(configuration, [...reads, denied]);
      expect(summary(r)).toEqual([
        ['jwt-prod/deploy', 0, [], []],
        ['jwt/deploy', 0, [], []],
      ]);
      expect(r.counts).toMatchObject({ unattributed: 0, loginNotInLog: 4 });
      expect(renderUsageMarkdown(r)).toContain('unattributed: login not in the log (4 requests)');
    });

    it('without its login, a display name that fits one declared mount only is still credited to none: the store may hold an undeclared mount it fits too', async () => {
      // Only jwt/deploy declared; the store also has jwt-prod/deploy (hand-made, or removed since):
      // its job of project infra/deployer is displayed jwt-prod-infra/deployer, which starts with `jwt-`.
      const only = { ...configuration, identities: [configuration.identities[0]] };
      const r = await aggregate(only, [...reads, denied]);
      expect(summary(r)).toEqual([['jwt/deploy', 0, [], []]]);
      expect(r.counts).toMatchObject({ unattributed: 0, loginNotInLog: 4 });
      const jwtOnly = reads.map((e) => ({ ...e, auth: { ...e.auth, display_name: 'jwt-infra/deployer' } }));
      expect((await aggregate(only, jwtOnly)).counts).toMatchObject({ unattributed: 0, loginNotInLog: 3 });
    });

    it("in a namespace (display name ns1-auth-jwt-<name> on OpenBao 2.4), a mount named like the namespace is not credited with jwt's requests", async () => {
      const ns1Reads = reads.map((e) => {
        const c = JSON.parse(JSON.stringify(e));
        c.request.namespace = { id: 'n1', path: 'ns1/' };
        c.auth.display_name = 'ns1-auth-jwt-infra/deployer';
        return c;
      });
      const nsConfiguration = { ...configuration, identities: [id('jwt', 'deploy', 'jwt', ['jwt-deploy']), id('ns1', 'deploy', 'jwt', ['jwt-prod-deploy'])], namespaces: ['ns1'] };
      const r = await aggregate(nsConfiguration, ns1Reads, 'ns1');
      expect(summary(r)).toEqual([
        ['jwt/deploy', 0, [], []],
        ['ns1/deploy', 0, [], []],
      ]);
      expect(r.counts).toMatchObject({ unattributed: 0, loginNotInLog: 3, otherNamespaces: 0 });
    });

    it('a login on an undeclared mount with a declared role name is nobody\'s, whatever its display name', async () => {
      const elsewhere = { ...jobLogin, request: { ...jobLogin.request, path: 'auth/jwt-staging/login' } };
      const r = await aggregate(configuration, [elsewhere, ...reads]);
      expect(summary(r).every(([, logins, used]) => logins === 0 && (used as unknown[]).length === 0)).toBe(true);
      expect(r.counts).toMatchObject({ unattributed: 4, loginNotInLog: 0 });
    });
  });

  describe('a real OpenBao log (test/fixtures/usage/openbao-lineage-audit.log): a child token, a batch token, a namespace', () => {
    // Written by OpenBao 2.4's file audit device (bao server -dev): approle/app logs in, reads, creates
    // a child token (auth/token/create, display name token-terraform, no role metadata) that reads;
    // approle/bapp logs in with a batch token (no accessor) and reads; in namespace ns1, approle/app
    // (the same role name) logs in twice and reads once.
    const file = path.join(FIXTURES, 'openbao-lineage-audit.log');
    const entries = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    const configuration = {
      identities: [id('approle', 'app', 'approle', ['p1']), id('approle', 'bapp', 'approle', ['p1'])],
      policies: new Map([policy('p1', ['secret/data/x', 'auth/token/create'])]),
      stacks: ['s'],
    };

    it('the log is as the store wrote it: the child token names no role, the batch token has no accessor, ns1 is in request.namespace.path', () => {
      const responses = entries.map((l) => JSON.parse(l)).filter((e) => e.type === 'response');
      const create = responses.find((e) => e.request.path === 'auth/token/create');
      expect([create.response.auth.display_name, create.response.auth.metadata, create.auth.metadata]).toEqual(['token-terraform', undefined, { role_name: 'app' }]);
      const batch = responses.find((e) => e.auth?.metadata?.role_name === 'bapp');
      expect([batch.auth.token_type, batch.auth.accessor ?? '']).toEqual(['batch', '']);
      expect(responses.filter((e) => e.request.namespace.path === 'ns1/').map((e) => e.request.path)).toEqual(['auth/approle/login', 'secret/data/x', 'auth/approle/login']);
    });

    it('root namespace: the child token\'s read is its parent\'s (approle/app), the batch token\'s is approle/bapp\'s; ns1 is counted apart', async () => {
      const r = await aggregate(configuration, entries);
      expect(summary(r)).toEqual([
        ['approle/app', 1, [['auth/token/create', 1], ['secret/data/x', 2]], []],
        ['approle/bapp', 1, [['secret/data/x', 1]], []],
      ]);
      expect(r.counts).toMatchObject({ unattributed: 0, loginNotInLog: 0, otherNamespaces: 3 });
      expect(r.namespace).toBeUndefined();
    });

    it('namespace ns1: its own logins and read only; the root namespace\'s are counted apart', async () => {
      // The identities and policies of ns1 (issue 45: an identity without a namespace is the root
      // namespace's, and ns1's logins are not its own).
      const inNs1 = {
        ...configuration,
        identities: configuration.identities.map((i) => ({ ...i, namespace: 'ns1' })),
        policies: new Map([...configuration.policies].map(([name, p]) => [`${name} (namespace ns1)`, { ...p, namespace: 'ns1' }])),
        namespaces: ['ns1'],
      };
      const r = await aggregate(inNs1, entries, 'ns1/');
      expect(summary(r)).toEqual([
        ['approle/app', 2, [['secret/data/x', 1]], []],
        ['approle/bapp', 0, [], []],
      ]);
      expect(r.counts).toMatchObject({ unattributed: 0, loginNotInLog: 0, otherNamespaces: 6 });
      expect(r.namespace).toBe('ns1');
      expect(renderUsageMarkdown(r)).toContain('namespace: ns1');
    });

    it('rotated files given newest first are read oldest first: the lineage holds', async () => {
      const older = path.join(tmp, 'lineage.log.1');
      const newer = path.join(tmp, 'lineage.log');
      fs.writeFileSync(older, `${entries.slice(0, 6).join('\n')}\n`);
      fs.writeFileSync(newer, `${entries.slice(6).join('\n')}\n`);
      const model = await AccessModel.load(configuration as any);
      const whole = await usageOfAuditLog([file], {}, model, configuration as any);
      expect(await usageOfAuditLog([newer, older], {}, model, configuration as any)).toEqual(await usageOfAuditLog([older, newer], {}, model, configuration as any));
      expect(summary(await usageOfAuditLog([newer, older], {}, model, configuration as any))).toEqual(summary(whole));
    });

    it('a window starting after the logins still credits the requests inside it to them', async () => {
      const responses = entries.map((l) => JSON.parse(l)).filter((e) => e.type === 'response');
      const firstRead = responses.find((e) => e.request.path === 'secret/data/x');
      const model = await AccessModel.load(configuration as any);
      const r = await usageOfAuditLog([file], { sinceMs: Date.parse(firstRead.time) }, model, configuration as any);
      expect(summary(r)).toEqual([
        ['approle/app', 0, [['auth/token/create', 1], ['secret/data/x', 2]], []],
        ['approle/bapp', 1, [['secret/data/x', 1]], []],
      ]);
      expect(r.counts.loginNotInLog).toBe(0);
    });
  });
});

describe('window times and rule sources', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  it.each([
    ['90d', now - 90 * 86_400_000],
    ['12h', now - 12 * 3_600_000],
    ['30m', now - 30 * 60_000],
    ['2026-11-01', Date.parse('2026-11-01T00:00:00Z')],
    ['2026-11-01T12:00:00Z', Date.parse('2026-11-01T12:00:00Z')],
    ['yesterday', undefined],
    ['12', undefined],
    ['2026-13-45', undefined],
  ])('%s', (value, expected) => expect(auditTime(value, now)).toBe(expected));

  it('the construct comments above each rule of a library-rendered policy; none for a hand-written one', () => {
    const text = '# Policy "p", managed by secretstore-iac. Do not edit in the store.\n\n# ci-access/a\n# ci-access/b\npath "secret/data/a" {\n  capabilities = ["read"]\n}\n\npath "secret/data/c" {\n}\n';
    expect([...ruleSources(text)]).toEqual([['secret/data/a', ['ci-access/a', 'ci-access/b']]]);
    expect([...ruleSources('# Hand-written: lists names\npath "secret/metadata/*" {\n}\n')]).toEqual([]);
  });
});

describe('secretstore-iac usage', () => {
  async function cli(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { env: {}, cwd: process.cwd(), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('exit 1 with the Markdown report when there are denials or failed logins; values as inline code', async () => {
    const run = await cli(['usage', BASE, '--log', fixture('openbao')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('## `jwt/registry-ci`');
    expect(run.stdout).toContain('| `secret/data/registry/svc-executor` | read | `ci-access/svc-executor` |');
    expect(run.stdout).toContain('| `secret/data/acme/shared/identity/config` | read | 1 |');
    expect(run.stdout).toMatch(/\| `jwt` \| HMAC-ed in the log \| 1 \|/);
  });

  it('exit 0 when the window holds no denial and no failed login', async () => {
    const run = await cli(['usage', BASE, '--log', fixture('openbao'), '--until', '2000-01-01', '--format', 'json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).counts.responses).toBe(0);
  });

  it('a path from the log that could be Markdown or a terminal control is encoded', async () => {
    const lines = fs.readFileSync(fixture('openbao'), 'utf8').split('\n');
    // The application's login (it names the token), then its refused read with a hostile path.
    const login = lines.find((l) => l.includes('"type":"response"') && l.includes('"role_name":"orchestrator-dev"') && l.includes('auth/approle/login'))!;
    const line = lines.find((l) => l.includes('"type":"response"') && l.includes('acme/shared/identity/config'))!;
    const file = path.join(tmp, 'hostile.log');
    fs.writeFileSync(file, `${login}\n${line.replace('secret/data/acme/shared/identity/config', 'secret/data/<img src=x>`|\\u001b[31m')}`);
    const md = await cli(['usage', BASE, '--log', file]);
    expect(md.stdout).toContain('| `` secret/data/<img src=x>`\\|\\u001b[31m `` | read | 1 |');
    expect(md.stdout).not.toContain('\u001b');
    const text = await cli(['usage', BASE, '--log', file, '--format', 'text']);
    expect(text.stdout).not.toContain('\u001b');
  });

  it.each([
    [['usage', BASE], '--log FILE is required'],
    [['usage', BASE, '--log', 'nope.log'], '--log nope.log: no such file'],
    [['usage', BASE, '--log', fixture('vault'), '--since', 'last week'], '--since last week: not a time'],
    [['usage', BASE, '--log', fixture('vault'), '--since', '1d', '--until', '2d'], '--since must be before --until'],
    [['usage', BASE, '--log', fixture('vault'), '--format', 'html'], 'html'],
  ])('usage error (exit 2): %j', async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });
});
