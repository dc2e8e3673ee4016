/**
 * `access-diff` with the use of what a change removes (issue 38): the real audit lines of both
 * stores (test/fixtures/usage/*-audit.log) aggregated against the base fixture, compared with heads
 * that remove or narrow a used grant, an unused one, a whole identity, or override a used rule.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { diffAccess } from '../../../lib/access/access-diff';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { runCli } from '../../../lib/cli/run-cli';
import { terminalJson } from '../../../lib/private/terminal-text';
import { AccessDiffWithUsage, daysAgo, removedAccessUse, withRemovedAccessUse } from '../../../lib/usage/removed-access-use';
import { removedAccessUseSection } from '../../../lib/usage/removed-access-use-markdown';
import { readUsageFile } from '../../../lib/usage/usage-file';
import { UsageReport, usageOfAuditLog } from '../../../lib/usage/usage-report';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';
import { appliedValues, planDocument } from '../../support/saved-plan-document';
import { readSynthOutput } from '../../../lib/sources/synth-output';

const BASE = path.join(ACCESS_FIXTURES, 'base');
const LOG = (store: string) => path.join(REPO_ROOT, 'test', 'fixtures', 'usage', `${store}-audit.log`);
/** Three and a half days after the fixtures' requests (2026-11-28T04:07Z). */
const NOW = Date.parse('2026-12-01T16:00:00Z');
const SOURCE = { kind: 'audit-log' as const, files: ['audit.log'] };

/** The note as `access-diff` writes it with usage: the usage section after the risk flags. */
const note = (diff: AccessDiffWithUsage) => renderAccessDiffMarkdown(diff, { base: 'main', head: 'HEAD', afterFlags: removedAccessUseSection(diff.usage) });

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'removed-access-use-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A copy of the base fixture with the policy texts edited by `edit` (policy name → text). */
function variant(name: string, edit: (policies: Record<string, { policy: string }>, resources: { ci: any; apps: any }) => void): string {
  const dir = path.join(tmp, name);
  fs.cpSync(BASE, dir, { recursive: true });
  const file = (s: string) => path.join(dir, 'stacks', s, 'cdk.tf.json');
  const ci = JSON.parse(fs.readFileSync(file('ci-access'), 'utf8'));
  const apps = JSON.parse(fs.readFileSync(file('app-roles'), 'utf8'));
  edit({ ...ci.resource.vault_policy, ...apps.resource.vault_policy }, { ci, apps });
  fs.writeFileSync(file('ci-access'), JSON.stringify(ci));
  fs.writeFileSync(file('app-roles'), JSON.stringify(apps));
  return dir;
}

const CI_POLICY = 'registry-ci_policy_FD942459';
const APP_POLICY = 'orchestrator-dev_policy_125D2537';
const dropRule = (text: string, rulePath: string) => text.replace(new RegExp(`(# [^\\n]*\\n)?path "${rulePath.replace(/[*]/g, '\\*')}" \\{\\n[^}]*\\}\\n`), '');

/** registry-ci loses a used path and an unused one; orchestrator-dev's wildcard narrowed to the one path it used. */
const narrowed = () =>
  variant('narrowed', (p) => {
    p[CI_POLICY].policy = dropRule(dropRule(p[CI_POLICY].policy, 'secret/data/registry/svc-orchestrator'), 'secret/data/registry/svc-executor');
    p[APP_POLICY].policy = p[APP_POLICY].policy.replace('secret/data/acme/dev/orchestrator/*', 'secret/data/acme/dev/orchestrator/database');
  });

async function review(head: string, store = 'openbao', usage?: UsageReport, baseDir = BASE): Promise<{ diff: AccessDiffWithUsage; usage: UsageReport }> {
  const parser = new PolicyParser();
  const configuration = readStoreConfiguration(baseDir);
  const base = await AccessModel.load(configuration, parser);
  const after = await AccessModel.load(readStoreConfiguration(head), parser);
  const report = usage ?? (await usageOfAuditLog([LOG(store)], {}, base, configuration));
  return { diff: withRemovedAccessUse(diffAccess(base, after), base, after, report, SOURCE, NOW), usage: report };
}

describe.each(['openbao', 'vault'])('the use of the access a change removes, from a real %s audit log', (store) => {
  it('a used path removed: listed with its last use, and a risk flag naming identity, path, last use and "N days ago"', async () => {
    const { diff } = await review(narrowed(), store);
    const grants = diff.usage!.grants;
    expect(grants.map((g) => [g.identity, g.rule, g.removal, g.lost, g.count, g.denied.map((r) => [r.operation, r.path, r.count])])).toEqual([
      ['approle/orchestrator-dev', 'secret/data/acme/dev/orchestrator/*', 'rule removed', ['read'], 1, []],
      ['jwt/registry-ci', 'secret/data/registry/svc-executor', 'rule removed', ['read'], 0, []],
      ['jwt/registry-ci', 'secret/data/registry/svc-orchestrator', 'rule removed', ['read'], 1, [['read', 'secret/data/registry/svc-orchestrator', 1]]],
    ]);
    expect(grants[0].lastUse).toMatch(/^2026-11-28T04:07:\d\d\.\d+Z$/);
    expect(grants[1].lastUse).toBeUndefined();
    const used = grants[2].denied[0].lastUse;
    expect(grants[2].lastUse).toBe(used);
    const flags = diff.flags.filter((f) => f.kind === 'used-access-removed');
    expect(flags).toEqual([
      {
        kind: 'used-access-removed',
        identity: 'jwt/registry-ci',
        identities: ['jwt/registry-ci'],
        message: `this change denies requests made 3 days ago: \`jwt/registry-ci\` made \`read\` on \`secret/data/registry/svc-orchestrator\` last at \`${used}\` (1 request), allowed before by \`secret/data/registry/svc-orchestrator\``,
      },
    ]);
    // The flags of the access diff itself stay, and the usage flag takes its place in the review's order.
    const plain = diffAccess(await AccessModel.load(readStoreConfiguration(BASE)), await AccessModel.load(readStoreConfiguration(narrowed())));
    expect(diff.flags.filter((f) => f.kind !== 'used-access-removed')).toEqual(plain.flags);
    expect(diff.usage!.now).toBe('2026-12-01T16:00:00.000Z');
    expect(diff.usage!.source).toEqual(SOURCE);
  });

  it('an identity removed: every rule it used is denied, unused rules listed as not used', async () => {
    const head = variant('app-removed', (_, { apps }) => {
      delete apps.resource.vault_approle_auth_backend_role['orchestrator-dev_role_125D2539'];
    });
    const { diff } = await review(head, store);
    const app = diff.usage!.grants.filter((g) => g.identity === 'approle/orchestrator-dev');
    expect(app.map((g) => [g.rule, g.removal, g.lost, g.count, g.denied.length])).toEqual([['secret/data/acme/dev/orchestrator/*', 'identity removed', ['read'], 1, 1]]);
    expect(diff.flags.filter((f) => f.kind === 'used-access-removed').map((f) => f.identity)).toEqual(['approle/orchestrator-dev']);
    // Unused identities removed alongside: no flag.
    const both = variant('apps-removed', (_, { apps }) => {
      delete apps.resource.vault_approle_auth_backend_role['registry-shared_role_55A57924'];
    });
    const { diff: unused } = await review(both, store);
    expect(unused.usage!.grants.map((g) => [g.identity, g.rule, g.removal, g.count])).toEqual([['approle/registry', 'secret/data/acme/shared/registry/*', 'identity removed', 0]]);
    expect(unused.flags.filter((f) => f.kind === 'used-access-removed')).toEqual([]);
  });

  it('a new rule that refuses what an unchanged rule allowed (deny on a used path): overridden, flagged', async () => {
    const head = variant('deny-added', (p) => {
      p[APP_POLICY].policy += '\npath "secret/data/acme/dev/orchestrator/database" {\n  capabilities = ["deny"]\n}\n';
    });
    const { diff } = await review(head, store);
    expect(diff.usage!.grants.map((g) => [g.identity, g.rule, g.removal, g.lost, g.count, g.denied.map((r) => r.path)])).toEqual([
      ['approle/orchestrator-dev', 'secret/data/acme/dev/orchestrator/*', 'overridden', [], 1, ['secret/data/acme/dev/orchestrator/database']],
    ]);
    expect(diff.flags.map((f) => f.kind)).toContain('used-access-removed');
  });
});

describe('edges of the evaluation', () => {
  it('a request base refuses too is not the change\'s doing; a window with no use: listed, no flag', async () => {
    const { usage } = await review(BASE);
    const ci = usage.identities.find((u) => u.identity === 'jwt/registry-ci')!;
    const strange: UsageReport = {
      ...usage,
      identities: [{ ...ci, used: [{ ...ci.used[0], requests: [{ path: 'secret/data/not/granted', operation: 'read', count: 4, lastUse: '2026-11-30T00:00:00Z' }, { path: 'secret/data/registry/svc-orchestrator', operation: 'bogus', count: 1, lastUse: '2026-11-30T00:00:00Z' }, { path: 'secret/data/registry/svc-orchestrator', operation: 'update', count: 1, lastUse: '2026-11-30T00:00:00Z' }] }] }],
    };
    const { diff } = await review(narrowed(), 'openbao', strange);
    expect(diff.usage!.grants.every((g) => g.count === 0 && g.denied.length === 0)).toBe(true);
    expect(diff.flags.some((f) => f.kind === 'used-access-removed')).toBe(false);
  });

  it('a capability lost on a rule used with another one it keeps: listed, not used, no flag', async () => {
    const both = variant('read-list', (p) => {
      p[APP_POLICY].policy = p[APP_POLICY].policy.replace('capabilities = ["read"]', 'capabilities = ["read", "list"]');
    });
    const { diff } = await review(BASE, 'vault', undefined, both);
    expect(diff.usage!.grants.map((g) => [g.identity, g.rule, g.removal, g.lost, g.count, g.lastUse, g.denied])).toEqual([
      ['approle/orchestrator-dev', 'secret/data/acme/dev/orchestrator/*', 'narrowed', ['list'], 0, undefined, []],
    ]);
    expect(diff.flags).toEqual([]);
    expect(note(diff)).toContain('No request in the window used what the change takes away.');
  });

  it('an identity whose login head refuses (the root policy listed): its requests are denied', async () => {
    const head = variant('login-refused', (_, { apps }) => {
      apps.resource.vault_approle_auth_backend_role['orchestrator-dev_role_125D2539'].token_policies = ['root'];
    });
    const { diff } = await review(head, 'vault');
    expect(diff.usage!.grants.map((g) => [g.identity, g.removal, g.denied.length])).toEqual([['approle/orchestrator-dev', 'rule removed', 1]]);
  });

  it('no removed grant: the section says so; a capability kept is not listed', async () => {
    const { diff } = await review(path.join(ACCESS_FIXTURES, 'head-account-added'));
    expect(diff.usage!.grants).toEqual([]);
    expect(note(diff)).toContain('### Use of the access this change removes\n\nFrom the audit log `audit.log`: window the start of the log to the end of the log; requests seen ');
  });

  it('counts and last use add up over the requests of a grant; the flag names at most five paths, the latest first', async () => {
    const { usage } = await review(BASE);
    const app = usage.identities.find((u) => u.identity === 'approle/orchestrator-dev')!;
    const requests = Array.from({ length: 7 }, (_, i) => ({ path: `secret/data/acme/dev/orchestrator/s${i}`, operation: 'read', count: i + 1, lastUse: `2026-11-2${i}T00:00:00Z` }));
    const many: UsageReport = { ...usage, identities: [{ ...app, used: [{ ...app.used[0], requests }] }] };
    const head = variant('app-gone', (_, { apps }) => delete apps.resource.vault_approle_auth_backend_role['orchestrator-dev_role_125D2539']);
    const { diff } = await review(head, 'openbao', many);
    const g = diff.usage!.grants[0];
    expect([g.count, g.lastUse, g.denied.map((r) => r.path.slice(-2))]).toEqual([28, '2026-11-26T00:00:00Z', ['s6', 's5', 's4', 's3', 's2', 's1', 's0']]);
    const flag = diff.flags.find((f) => f.kind === 'used-access-removed')!;
    expect(flag.message).toMatch(/^this change denies requests made 5 days ago: `approle\/orchestrator-dev` made `read` on `secret\/data\/acme\/dev\/orchestrator\/s6` last at `2026-11-26T00:00:00Z` \(7 requests\), .* and 2 more, allowed before by `secret\/data\/acme\/dev\/orchestrator\/\*`$/);
    expect(flag.message).toContain('`s2` last'.replace('`s2`', '`secret/data/acme/dev/orchestrator/s2`'));
    expect(flag.message).not.toContain('orchestrator/s1`');
  });

  it.each([
    ['2026-12-01T15:00:00Z', 'less than a day ago'],
    ['2026-11-30T15:59:59Z', '1 day ago'],
    ['2026-11-30T16:00:01Z', 'less than a day ago'],
    ['2026-11-29T16:00:00Z', '2 days ago'],
    ['2026-12-02T00:00:00Z', 'less than a day ago'],
  ])('%s is %s', (time, text) => {
    expect(daysAgo(time, NOW)).toBe(text);
  });

  it('removedAccessUse alone gives the section and the flags without touching the diff', async () => {
    const parser = new PolicyParser();
    const configuration = readStoreConfiguration(BASE);
    const base = await AccessModel.load(configuration, parser);
    const head = await AccessModel.load(readStoreConfiguration(narrowed()), parser);
    const diff = diffAccess(base, head);
    const found = removedAccessUse(diff, base, head, await usageOfAuditLog([LOG('vault')], {}, base, configuration), SOURCE, NOW);
    expect(found.flags).toHaveLength(1);
    expect('usage' in diff).toBe(false);
  });
});

describe('the note: encoding and content', () => {
  it('one row per grant; every value from the log as inline code, no cell broken by a path', async () => {
    const { usage } = await review(BASE);
    const app = usage.identities.find((u) => u.identity === 'approle/orchestrator-dev')!;
    const hostile = 'secret/data/acme/dev/orchestrator/<img src=x>`|@all\n# title\u001b[31m';
    // Its log ends at that request (a request after the log's end would be set apart, not counted).
    const evil: UsageReport = { ...usage, seen: { ...usage.seen, last: '2026-11-30T00:00:00Z' }, identities: [{ ...app, used: [{ ...app.used[0], requests: [{ path: hostile, operation: 'read', count: 2, lastUse: '2026-11-30T00:00:00Z' }] }] }] };
    const head = variant('evil-gone', (_, { apps }) => delete apps.resource.vault_approle_auth_backend_role['orchestrator-dev_role_125D2539']);
    const { diff } = await review(head, 'openbao', evil);
    const md = note(diff);
    expect(md).not.toContain('\u001b');
    expect(md).not.toMatch(/^# title/m);
    const rows = md.split('\n').filter((l) => l.startsWith('| `approle/orchestrator-dev` |'));
    expect(rows).toEqual([
      '| `approle/orchestrator-dev` | `secret/data/acme/dev/orchestrator/*` | identity removed: read | `2026-11-30T00:00:00Z` (1 day ago, 2 requests) | read `` secret/data/acme/dev/orchestrator/<img src=x>`\\|@all\\u000a# title\\u001b[31m `` x2, last `2026-11-30T00:00:00Z` |',
    ]);
    const flagLine = md.split('\n').find((l) => l.startsWith('- **access in use removed**'))!;
    // The path's backtick shifts the message's parts: the message is then one code span, never live Markdown.
    expect(flagLine).toMatch(/^- \*\*access in use removed\*\*, `approle\/orchestrator-dev`: this change denies requests made 1 day ago: `` `approle\/orchestrator-dev` made .*<img src=x>.* ``$/);
  });

  it('the section follows the risk flags and says how many used grants the change takes', async () => {
    const { diff } = await review(narrowed());
    const md = note(diff);
    const section = md.indexOf('### Use of the access this change removes');
    expect(md.indexOf('### Risk flags')).toBeLessThan(section);
    expect(section).toBeLessThan(md.indexOf('### Changed:'));
    expect(md).toContain('**1 grant removed or narrowed was used in the window**: the requests below are refused after the change.');
    expect(md).toContain('| `jwt/registry-ci` | `secret/data/registry/svc-executor` | rule removed: read | not used | none |');
    expect(md).toMatch(/\| `approle\/orchestrator-dev` \| `secret\/data\/acme\/dev\/orchestrator\/\*` \| rule removed: read \| `2026-11-28T04:07:\d\d\.\d+Z` \(3 days ago, 1 request\) \| none \|/);
  });
});

describe('the usage file', () => {
  it('the JSON of `usage` read back gives the same review as the audit log', async () => {
    const { diff, usage } = await review(narrowed(), 'vault');
    const file = path.join(tmp, 'usage.json');
    fs.writeFileSync(file, terminalJson(usage));
    const read = readUsageFile(file);
    expect(read.format).toBe('secretstore-iac-usage');
    expect(read.version).toBe(1);
    const again = await review(narrowed(), 'vault', read);
    expect(again.diff).toEqual(diff);
  });

  it('a file of another shape or version: every problem named at once, with the file', () => {
    const write = (name: string, value: unknown) => {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
      return file;
    };
    expect(() => readUsageFile(write('text.json', 'not json'))).toThrow(/^cannot read the usage file .*text\.json: /);
    expect(() => readUsageFile(write('other.json', { format: 'x' }))).toThrow('format: must be "secretstore-iac-usage"');
    expect(() => readUsageFile(write('v2.json', { format: 'secretstore-iac-usage', version: 2 }))).toThrow('version: must be 1, found 2');
    const bad = write('bad.json', {
      format: 'secretstore-iac-usage',
      version: 1,
      window: {},
      seen: null,
      identities: [{ identity: '', used: [{ requests: [{ path: 'p', operation: 'read', count: 0, lastUse: 'yesterday' }, 'x'] }, {}] }, { identity: 'jwt/x', used: 3 }],
    });
    let message = '';
    try {
      readUsageFile(bad);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.split('\n')).toEqual([
      `the usage file ${bad} is not a usage report:`,
      '  - seen: must be an object',
      '  - identities[0].identity: must be a name (`jwt/registry-ci`)',
      '  - identities[0].used[0].requests[0].count: must be a whole number of at least 1',
      '  - identities[0].used[0].requests[0].lastUse: must be a time (RFC 3339)',
      '  - identities[0].used[0].requests[1]: must be an object',
      '  - identities[0].used[1].requests: must be an array',
      '  - identities[1].used: must be an array',
    ]);
  });
});

describe('secretstore-iac access-diff --usage-log / --usage', () => {
  async function cli(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { env: {}, cwd: tmp, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('from the audit log and from the usage file written by `usage --format json`: the same flag', async () => {
    const head = narrowed();
    const fromLog = await cli(['access-diff', BASE, head, '--usage-log', LOG('openbao'), '--format', 'json']);
    expect([fromLog.code, fromLog.stderr]).toEqual([1, '']);
    const diff = JSON.parse(fromLog.stdout);
    expect(diff.usage.source).toEqual({ kind: 'audit-log', files: [LOG('openbao')] });
    expect(diff.flags.filter((f: any) => f.kind === 'used-access-removed').map((f: any) => f.identity)).toEqual(['jwt/registry-ci']);
    const usage = await cli(['usage', BASE, '--log', LOG('openbao'), '--format', 'json']);
    fs.writeFileSync(path.join(tmp, 'drift-usage.json'), usage.stdout);
    const fromFile = await cli(['access-diff', BASE, head, '--usage', 'drift-usage.json']);
    expect(fromFile.code).toBe(1);
    expect(fromFile.stdout).toContain('- **access in use removed**, `jwt/registry-ci`: this change denies requests made ');
    expect(fromFile.stdout).toContain('From the usage file `drift-usage.json`: window the start of the log to the end of the log;');
    // A window that ends before the requests: nothing used, no flag.
    const before = await cli(['access-diff', BASE, head, '--usage-log', LOG('openbao'), '--until', '2026-01-01', '--format', 'json']);
    expect(JSON.parse(before.stdout).flags.some((f: any) => f.kind === 'used-access-removed')).toBe(false);
    expect(JSON.parse(before.stdout).usage.window).toEqual({ until: '2026-01-01T00:00:00.000Z' });
  });

  it.each([
    [['--usage-log', 'a.log', '--usage', 'u.json'], '--usage-log and --usage: give one or the other'],
    [['--since', '30d'], '--since and --until go with --usage-log'],
    [['--usage', 'u.json', '--until', '1d'], '--since and --until go with --usage-log'],
    [['--usage-log', 'nope.log'], '--usage-log nope.log: no such file; give the path of the file audit device\'s log'],
    [['--usage-log', LOG('vault'), '--since', 'soon'], '--since soon: not a time'],
  ])('usage error (exit 2): %j', async (extra, message) => {
    const run = await cli(['access-diff', BASE, BASE, ...extra]);
    expect([run.code, run.stdout]).toEqual([2, '']);
    expect(run.stderr).toContain(message);
  });

  it('with saved plans: a plan that narrows a used wildcard is flagged, in the note after the plan flags and in the JSON', async () => {
    const outdir = BASE;
    const appRoles = readSynthOutput(outdir).find((s) => s.name === 'app-roles')!;
    const applied = appliedValues(appRoles);
    const POLICY = `vault_policy.${APP_POLICY}`;
    const narrowing = 'path "secret/data/acme/dev/orchestrator/other" {\n  capabilities = ["read"]\n}\n';
    const plan = path.join(tmp, 'plans', 'app-roles.tfplan.json');
    fs.mkdirSync(path.dirname(plan), { recursive: true });
    fs.writeFileSync(plan, JSON.stringify(planDocument(appRoles, [{ address: POLICY, actions: ['update'], before: applied.get(POLICY)!, after: { ...applied.get(POLICY)!, policy: narrowing } }])));
    const md = await cli(['access-diff', '--plans', 'plans', '--outdir', outdir, '--usage-log', LOG('vault'), '--risk-flag-count', 'flags.txt']);
    expect([md.code, md.stderr]).toEqual([1, '']);
    expect(md.stdout).toContain('| `app-roles` | `plans/app-roles.tfplan.json` |');
    expect(md.stdout).toMatch(/- \*\*access in use removed\*\*, `approle\/orchestrator-dev`: this change denies requests made (?:less than a day|\d+ days?) ago: `approle\/orchestrator-dev` made `read` on `secret\/data\/acme\/dev\/orchestrator\/database` last at `2026-11-28T04:07:\d\d\.\d+Z` \(1 request\), allowed before by `secret\/data\/acme\/dev\/orchestrator\/\*`/);
    expect(md.stdout.indexOf('### Use of the access this change removes')).toBeGreaterThan(md.stdout.indexOf('### Risk flags'));
    expect(md.stdout).toMatch(/\| `approle\/orchestrator-dev` \| `secret\/data\/acme\/dev\/orchestrator\/\*` \| rule removed: read \| `2026-11-28T04:07:\d\d\.\d+Z` \((?:less than a day|\d+ days?) ago, 1 request\) \| read `secret\/data\/acme\/dev\/orchestrator\/database` x1/);
    expect(fs.readFileSync(path.join(tmp, 'flags.txt'), 'utf8')).toBe(`${md.stdout.match(/(\d+) risk flags?\./)![1]}\n`);
    const json = JSON.parse((await cli(['access-diff', '--plan', `app-roles=${plan}`, '--outdir', outdir, '--usage-log', LOG('vault'), '--format', 'json'])).stdout);
    expect(json.plans.map((p: any) => p.stack)).toEqual(['app-roles']);
    expect(json.diff.usage.grants.map((g: any) => [g.identity, g.rule, g.denied.length])).toEqual([['approle/orchestrator-dev', 'secret/data/acme/dev/orchestrator/*', 1]]);
    expect(json.diff.flags.filter((f: any) => f.kind === 'used-access-removed')).toHaveLength(1);
    // Without usage: the plan review as before, no usage section.
    const plain = await cli(['access-diff', '--plans', 'plans', '--outdir', outdir]);
    expect(plain.stdout).not.toContain('Use of the access this change removes');
    expect(plain.stdout).not.toContain('access in use removed');
  });
});
