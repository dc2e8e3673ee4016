import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { ACCESS_FIXTURES } from '../../support/paths';

describe('secretstore-iac invariants check SOURCE --invariants FILE', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inv-cmd-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  async function run(...args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['invariants', ...args], { env: {}, cwd: ACCESS_FIXTURES, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('lists each violation with the invariant, identity, capability, path, rule and policy; exit 1', async () => {
    const f = file('inv.yaml', '- id: no-ci-registry\n  reason: pushes go through the registry role\n  who: ci\n  paths: ["secret/data/registry/*"]\n  capabilities: [read]\n');
    const r = await run('check', 'base', '--invariants', f);
    expect(r.code).toBe(1);
    expect(r.out.split('\n')).toEqual([
      expect.stringMatching(/: \d+ identities, 1 invariants, 2 violations$/),
      '  jwt/registry-ci (ci) can read secret/data/registry/svc-executor (rule "secret/data/registry/svc-executor", policy registry-ci): breaks invariant "no-ci-registry" (pushes go through the registry role)',
      '  jwt/registry-ci (ci) can read secret/data/registry/svc-orchestrator (rule "secret/data/registry/svc-orchestrator", policy registry-ci): breaks invariant "no-ci-registry" (pushes go through the registry role)',
    ]);
  });

  it('exit 0 when none is broken; usage errors for a missing option, file or subcommand', async () => {
    const f = file('ok.json', JSON.stringify([{ id: 'no-ci-sudo', reason: 'r', who: 'ci', paths: ['*'], capabilities: ['sudo'] }]));
    const ok = await run('check', 'base', '--invariants', f, '--format', 'json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).violations).toEqual([]);
    expect((await run('check', 'base')).code).toBe(2);
    expect((await run('check', 'base', '--invariants', path.join(dir, 'none.json'))).code).toBe(2);
    const sub = await run('verify', '--invariants', f);
    expect(sub.code).toBe(2);
    expect(sub.err).toContain('unknown subcommand "verify"');
  });

  it('an invariant that speaks of nobody is a usage error naming the invariant, the field and why', async () => {
    const inv = (extra: object) => ({ id: 'no-ci-registry', reason: 'r', who: 'ci', paths: ['secret/data/registry/*'], capabilities: ['read'], ...extra });
    const cases: Array<[object, RegExp]> = [
      [{ who: { kind: 'ci', name: 'registry-ci' } }, /invariant "no-ci-registry"\.who = \{"kind":"ci","name":"registry-ci"\}: selects none of the \d+ declared identities: names are "<auth mount>\/<role>", e\.g\. "jwt\/registry-ci"/],
      [{ who: { kind: 'ci', name: 'jwt/Registry-CI' } }, /\.who = .*: selects none of the \d+ declared identities: names are compared exactly, case included \("jwt\/registry-ci"\)/],
      [{ except: [{ kind: 'any' }] }, /invariant "no-ci-registry"\.except = \[\{"kind":"any"\}\]: takes away every identity "who" selects/],
      [{ except: [{ kind: 'any', name: '*' }] }, /\.except = .*takes away every identity "who" selects/],
      [{ except: [{ kind: 'ci', name: 'jwt/nobody' }] }, /\.except\[0\] = .*takes away none of the \d+ identities "who" selects/],
    ];
    for (const [extra, message] of cases) {
      const r = await run('check', 'base', '--invariants', file('sel.json', JSON.stringify([inv(extra)])));
      expect([r.code, r.err]).toEqual([2, expect.stringMatching(message)]);
    }
  });

  it('usage --invariants and access-diff --invariants refuse an invariant that speaks of nobody as invariants check does', async () => {
    const nobody = file('nobody.json', JSON.stringify([{ id: 'no-ci-registry', reason: 'r', who: { kind: 'ci', name: 'registry-ci' }, paths: ['secret/data/registry/*'], capabilities: ['read'] }]));
    const log = file('empty-audit.log', '');
    const message = /invariant "no-ci-registry"\.who = \{"kind":"ci","name":"registry-ci"\}: selects none of the \d+ declared identities/;
    for (const argv of [
      ['usage', 'base', '--log', log, '--invariants', nobody],
      ['access-diff', 'base', 'head-nothing-changed', '--invariants', nobody],
    ]) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, { env: {}, cwd: ACCESS_FIXTURES, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
      expect([argv[0], code, err.join('\n')]).toEqual([argv[0], 2, expect.stringMatching(message)]);
    }
  });

  it('a name pattern that would backtrack is matched in linear time', async () => {
    const f = file('stars.json', JSON.stringify([{ id: 'stars', reason: 'r', who: { kind: 'any', name: `${'*'.repeat(40)}x` }, paths: ['secret/*'], capabilities: ['read'] }]));
    const r = await run('check', 'base', '--invariants', f);
    // No identity of the fixture ends in x: the invariant speaks of nobody, said at once.
    expect([r.code, r.err]).toEqual([2, expect.stringContaining('selects none of the')]);
  });

  it('unreadable, oversized, non-regular or repeated --invariants: one sentence, no errno, no abort', async () => {
    const big = file('big.yaml', `# ${'x'.repeat(1024 * 1024)}\n`);
    const cases: Array<[string[], string]> = [
      [['--invariants', path.join(dir, 'none.json')], `cannot read the invariants file ${path.join(dir, 'none.json')}: there is no such file`],
      [['--invariants', dir], `the invariants file ${dir} is a directory`],
      [['--invariants', ''], 'the invariants file name is empty'],
      [['--invariants', '/dev/zero'], 'the invariants file /dev/zero is not a regular file'],
      [['--invariants', big], `the invariants file ${big} is larger than 1048576 bytes (1 MiB)`],
      [['--invariants', path.join(big, 'x')], 'a part of its path is not a directory'],
      [['--invariants', big, '--invariants', big], '--invariants is given 2 times'],
    ];
    for (const [args, message] of cases) {
      const r = await run('check', 'base', ...args);
      expect([r.code, r.err]).toEqual([2, expect.stringContaining(message)]);
      expect(r.err).not.toMatch(/E[A-Z]{3,}|bad_alloc/);
    }
  });
});
