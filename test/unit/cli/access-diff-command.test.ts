import * as fs from 'fs';
import { canonicalJson } from '../../../lib/access/access-change-record';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { createHash } from 'crypto';
import { readSynthOutput } from '../../../lib/sources/synth-output';
import { ACCESS_FIXTURES } from '../../support/paths';
import { appliedValues, planDocument } from '../../support/saved-plan-document';

// --risk-flag-count: the number the pipeline's access-diff job gates on.
describe('secretstore-iac access-diff --risk-flag-count FILE', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-flags-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function diff(head: string) {
    const file = path.join(dir, `${head}.txt`);
    const out: string[] = [];
    const code = await runCli(['access-diff', 'base', head, '--risk-flag-count', file], {
      env: {},
      cwd: ACCESS_FIXTURES,
      isTerminal: false,
      stdout: (l) => out.push(l),
      stderr: () => undefined,
    });
    return { code, count: fs.readFileSync(file, 'utf8'), markdown: out.join('\n') };
  }

  it('writes the number of risk flags the Markdown reports', async () => {
    const raised = await diff('head-ttl-raised');
    expect(raised.code).toBe(1);
    // The same number as the Markdown summary line ("N risk flags").
    const reported = raised.markdown.match(/(\d+) risk flags?\./);
    expect(reported).not.toBeNull();
    expect(raised.count).toBe(`${reported![1]}\n`);
    expect(Number(raised.count)).toBeGreaterThan(0);
    const same = await diff('head-nothing-changed');
    expect(same.code).toBe(0);
    expect(same.count).toBe('0\n');
  });
});

// Issue 36: `access-diff --plans DIR` / `--plan STACK=FILE` reviews the engine's saved plans.
describe('secretstore-iac access-diff --plans / --plan (saved plans)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-plans-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const outdir = path.join(ACCESS_FIXTURES, 'base');
  const synthesized = readSynthOutput(outdir);
  const appRoles = synthesized.find((s) => s.name === 'app-roles')!;
  const applied = appliedValues(appRoles);
  const POLICY = 'vault_policy.orchestrator-dev_policy_125D2537';

  function writePlan(name: string, document: unknown): string {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(document));
    return file;
  }

  async function run(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['access-diff', ...args], { env: {}, cwd: dir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('an override that broadens a policy: exit 1, the note names the plan file with its SHA-256 and the identity and path gaining access', async () => {
    const file = writePlan(
      'changed/app-roles.tfplan.json',
      planDocument(appRoles, [{ address: POLICY, actions: ['update'], before: applied.get(POLICY)!, after: { ...applied.get(POLICY)!, policy: 'path "secret/data/*" { capabilities = ["read"] }' } }]),
    );
    const digest = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    const r = await run(['--plans', 'changed', '--outdir', outdir, '--risk-flag-count', 'flags.txt']);
    expect([r.code, r.stderr]).toEqual([1, '']);
    expect(r.stdout).toContain(`| \`app-roles\` | \`changed/app-roles.tfplan.json\` | \`${digest}\` | 1.12.6 |`);
    expect(r.stdout).toContain('### Changed: `approle/orchestrator-dev`');
    expect(r.stdout).toContain('| `secret/data/*` (new) | read |  | read |');
    expect(r.stdout).toContain('Read from the synthesized output on both sides (no plan given, taken as unchanged): `ci-access`.');
    expect(fs.readFileSync(path.join(dir, 'flags.txt'), 'utf8')).toBe(`${r.stdout.match(/(\d+) risk flags?\./)![1]}\n`);
    // The same plan as --plan STACK=FILE, as JSON.
    const json = await run(['--plan', `app-roles=${file}`, '--outdir', outdir, '--format', 'json']);
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.plans).toEqual([{ stack: 'app-roles', file: 'changed/app-roles.tfplan.json', sha256: digest, engineVersion: '1.12.6' }]);
    expect(parsed.complete).toBe(true);
    expect(parsed.diff.changed.map((c: { name: string }) => c.name)).toEqual(['approle/orchestrator-dev']);
  });

  it('--access-change FILE (issue 46): the canonical access change of the same review, per identity and path, with the object and the plan digest', async () => {
    const file = writePlan(
      'record/app-roles.tfplan.json',
      planDocument(appRoles, [{ address: POLICY, actions: ['update'], before: applied.get(POLICY)!, after: { ...applied.get(POLICY)!, policy: 'path "secret/data/*" { capabilities = ["read"] }' } }]),
    );
    const digest = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    const r = await run(['--plans', 'record', '--outdir', outdir, '--access-change', 'access-change.json']);
    expect(r.code).toBe(1);
    const text = fs.readFileSync(path.join(dir, 'access-change.json'), 'utf8');
    const record = JSON.parse(text);
    // Canonical: the same text as its keys sorted, one line.
    expect(text).toBe(`${canonicalJson(record)}\n`);
    expect(record.format).toBe('secretstore-iac/access-change/1');
    expect(record.plans).toEqual([{ stack: 'app-roles', sha256: digest }]);
    expect(record.objects).toEqual([{ stack: 'app-roles', address: POLICY, action: 'update' }]);
    const orchestrator = record.identities.find((i: { identity: string }) => i.identity === 'approle/orchestrator-dev');
    expect(orchestrator.rules.find((x: { path: string }) => x.path === 'secret/data/*')).toEqual({ path: 'secret/data/*', kind: 'prefix', before: [], after: ['read'], gained: ['read'], lost: [] });
    // Only in plan mode.
    expect((await run([outdir, outdir, '--access-change', 'x.json'])).code).toBe(2);
  });

  it('plans of no-ops: exit 0, no access change', async () => {
    writePlan('same/app-roles.tfplan.json', planDocument(appRoles, []));
    const r = await run(['--plans', 'same', '--outdir', outdir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('**No access change.**');
  });

  it('a value unknown until apply: exit 1 with no other change, the note says the review is incomplete', async () => {
    writePlan('unknown/app-roles.tfplan.json', planDocument(appRoles, [{ address: POLICY, actions: ['update'], before: applied.get(POLICY)!, after: { ...applied.get(POLICY)!, policy: undefined }, afterUnknown: { policy: true } }]));
    const r = await run(['--plans', 'unknown', '--outdir', outdir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('**The review is incomplete:**');
    expect(r.stdout).toContain(`- **value unknown until apply**, \`app-roles: ${POLICY}\`: \`policy\` is known only after apply`);
    // A change the review cannot read, and no access change: still exit 1.
    writePlan('unread/app-roles.tfplan.json', planDocument(appRoles, [{ address: 'vault_generic_endpoint.x', actions: ['create'], before: null, after: { path: 'sys/policies/acl/registry-ci' } }]));
    const unread = await run(['--plans', 'unread', '--outdir', outdir]);
    expect(unread.code).toBe(1);
    expect(unread.stdout).toContain('**No access change.**');
    expect(unread.stdout).toContain('**The review is incomplete:**');
  });

  it('usage errors (exit 2): plans with BASE HEAD, a malformed --plan, a stack name with a path, two plans of a stack, --outdir without plans', async () => {
    writePlan('two/app-roles.tfplan', {});
    writePlan('two/app-roles.tfplan.json', {});
    const cases: Array<[string[], string]> = [
      [['base', 'head', '--plans', 'same'], '--plans / --plan replace BASE and HEAD'],
      [['--plan', 'app-roles'], '--plan takes STACK=FILE, not "app-roles"'],
      [['--plan', `../x=${path.join(dir, 'same/app-roles.tfplan.json')}`], '"../x" is not a stack name'],
      [['--plans', 'two'], 'stack app-roles has two plans'],
      [['--plan', 'app-roles=missing.json'], 'stack app-roles: --plan app-roles=missing.json: no such file; give the path of the saved plan of stack app-roles'],
      [['--outdir', 'x', 'base', 'head'], '--outdir, --engine and --access-change go with --plans / --plan'],
      [['base'], 'expects BASE and HEAD (or --plans), got 1 arguments'],
      [['--plan', `ci-acess=${path.join(dir, 'same/app-roles.tfplan.json')}`, '--outdir', outdir], 'stack ci-acess ('],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      expect([args, r.code, r.stderr]).toEqual([args, 2, expect.stringContaining(message)]);
    }
  });
});
