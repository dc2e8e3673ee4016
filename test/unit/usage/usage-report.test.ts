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
import { UsageAggregator, UsageReport } from '../../../lib/usage/usage-report';
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
    expect(r.counts).toEqual({ lines: 18, responses: 10, malformed: 0, malformedAt: [], unattributed: 1 });
  });

  it('the CI role: its login, the rules it used, the four CI paths it never read (with their constructs), its denial', () => {
    const ci = identity(r, 'jwt/registry-ci');
    expect(ci.logins).toBe(1);
    expect(ci.used.map((g) => [g.rule, g.policies, g.operations, g.count])).toEqual([
      ['secret/data/codequality/svc-orchestrator', ['registry-ci'], ['read'], 1],
      ['secret/data/registry/svc-orchestrator', ['registry-ci'], ['read'], 1],
    ]);
    expect(ci.unused.map((g) => [g.rule, g.capabilities, g.declaredBy])).toEqual([
      ['secret/data/orchestrator/e2e-test-user', ['read'], ['ci-access/e2e-test-user']],
      ['secret/data/registry/svc-executor', ['read'], ['ci-access/svc-executor']],
      ['secret/data/testreport/svc-orchestrator', ['read'], ['ci-access/testreport']],
      ['secret/data/vulnmgmt/svc-orchestrator', ['read'], ['ci-access/vulnmgmt']],
    ]);
    expect(ci.unused[1].fix).toBe('to take "secret/data/registry/svc-executor" from jwt/registry-ci: narrow the CI secret\'s readByCi at ci-access/svc-executor (policy "registry-ci"); access-diff then shows the narrowing');
    expect(ci.unused[0].policies).toEqual([{ name: 'registry-ci', declaredAt: expect.stringContaining('registry-ci') }]);
    expect(ci.denied).toEqual([
      {
        path: 'secret/data/acme/dev/orchestrator/database',
        operation: 'read',
        count: 1,
        lastTime: expect.stringMatching(/^\d{4}-/),
        cause: "HTTP 403 reading a secret: path not in the role's policy → update the policy",
        grantedBy: [{ identity: 'approle/orchestrator-dev', rule: 'secret/data/acme/dev/orchestrator/*', policies: ['orchestrator-dev'] }],
        fix: expect.stringContaining("CI secret's readByCi"),
      },
    ]);
  });

  it('the application: its login, its one rule used, a denial another application is granted', () => {
    const app = identity(r, 'approle/orchestrator-dev');
    expect([app.logins, app.used.map((g) => [g.rule, g.count]), app.unused]).toEqual([1, [['secret/data/acme/dev/orchestrator/*', 1]], []]);
    expect(app.denied.map((d) => [d.path, d.grantedBy.map((g) => g.identity)])).toEqual([['secret/data/acme/shared/identity/config', ['approle/authentik-role']]]);
    expect(app.denied[0].fix).toContain("add the path to the application's paths");
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
    expect(JSON.stringify(entry)).not.toContain('hmac-sha256');
    expect(parseAuditLine('{"type":"response","time":"x","request":{}}')).toBeUndefined();
  });
});

describe('the identity of a token: role metadata and the mount in its display name', () => {
  // Two JWT mounts declare a role "ci" (jwt/ci reads a, jwt-prod/ci reads b); lines are the real
  // Vault CI read with its role, display name and path changed.
  const policy = (name: string, p: string) => [name, { name, stack: 's', text: `path "${p}" {\n  capabilities = ["read"]\n}\n` }] as const;
  const id = (mount: string) => ({ name: `${mount}/ci`, method: 'jwt' as const, mount, role: 'ci', stack: 's', tokenPolicies: [mount], noDefaultPolicy: true, bindings: {} });
  const configuration = { identities: [id('jwt'), id('jwt-prod')], policies: new Map([policy('jwt', 'secret/data/a'), policy('jwt-prod', 'secret/data/b')]), stacks: ['s'] };
  const ciRead = fs.readFileSync(fixture('vault'), 'utf8').split('\n').find((l) => l.includes('"type":"response"') && l.includes('"role":"registry-ci"') && l.includes('svc-orchestrator'))!;
  const entry = (display: string, p: string) => {
    const e = JSON.parse(ciRead);
    e.auth.display_name = display;
    e.auth.metadata.role = 'ci';
    e.request.path = p;
    return parseAuditLine(JSON.stringify(e)) as Exclude<ReturnType<typeof parseAuditLine>, 'skip' | undefined>;
  };

  it('picks the mount whose path starts the display name, the longest one; another mount is not attributed', async () => {
    const aggregator = new UsageAggregator(await AccessModel.load(configuration), configuration);
    aggregator.add(entry('jwt-acme/platform/orchestrator', 'secret/data/a'));
    aggregator.add(entry('jwt-prod-acme/platform/orchestrator', 'secret/data/b'));
    aggregator.add(entry('jwt-prod-acme/platform/orchestrator', 'secret/data/b'));
    aggregator.add(entry('ci-jwt-acme/platform/orchestrator', 'secret/data/a'));
    const r = aggregator.report({ lines: 4, responses: 4, malformed: [], malformedCount: 0 }, {});
    expect(r.identities.map((u) => [u.identity, u.used.map((g) => [g.rule, g.count])])).toEqual([
      ['jwt-prod/ci', [['secret/data/b', 2]]],
      ['jwt/ci', [['secret/data/a', 1]]],
    ]);
    expect(r.counts.unattributed).toBe(1);
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
    const line = fs.readFileSync(fixture('openbao'), 'utf8').split('\n').find((l) => l.includes('"type":"response"') && l.includes('acme/shared/identity/config'))!;
    const file = path.join(tmp, 'hostile.log');
    fs.writeFileSync(file, line.replace('secret/data/acme/shared/identity/config', 'secret/data/<img src=x>`|\\u001b[31m'));
    const md = await cli(['usage', BASE, '--log', file]);
    expect(md.stdout).toContain('| `` secret/data/<img src=x>`\\|\\u001b[31m `` | read | 1 |');
    expect(md.stdout).not.toContain('\u001b');
    const text = await cli(['usage', BASE, '--log', file, '--format', 'text']);
    expect(text.stdout).not.toContain('\u001b');
  });

  it.each([
    [['usage', BASE], '--log FILE is required'],
    [['usage', BASE, '--log', 'nope.log'], 'no such audit log'],
    [['usage', BASE, '--log', fixture('vault'), '--since', 'last week'], '--since last week: not a time'],
    [['usage', BASE, '--log', fixture('vault'), '--since', '1d', '--until', '2d'], '--since must be before --until'],
    [['usage', BASE, '--log', fixture('vault'), '--format', 'html'], 'html'],
  ])('usage error (exit 2): %j', async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });
});
