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
    const f = file('ok.json', JSON.stringify([{ id: 'no-person-sudo', reason: 'r', who: 'person', paths: ['*'], capabilities: ['sudo'] }]));
    const ok = await run('check', 'base', '--invariants', f, '--format', 'json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).violations).toEqual([]);
    expect((await run('check', 'base')).code).toBe(2);
    expect((await run('check', 'base', '--invariants', path.join(dir, 'none.json'))).code).toBe(2);
    const sub = await run('verify', '--invariants', f);
    expect(sub.code).toBe(2);
    expect(sub.err).toContain('unknown subcommand "verify"');
  });
});
