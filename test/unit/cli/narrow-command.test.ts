/** `secretstore-iac narrow` (issue 47): the narrowing printed, written, described; its input errors. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../lib/cli/run-cli';
import { evaluateConfigSource, NARROWING_RETIRE_SOURCE, NARROWING_SOURCE as SOURCE, NARROWING_USED as USED, reportWithUse, retireReport, synthesizedRules } from '../../support/narrowing-config';

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'narrow-cli-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('secretstore-iac narrow', () => {
  async function cli(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { env: {}, cwd: tmp, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('prints what it would change without --write; --write edits the file; --markdown writes the description with the evidence', async () => {
    const { outdir } = synthesizedRules(evaluateConfigSource(SOURCE));
    const usage = path.join(tmp, 'usage.json');
    fs.writeFileSync(usage, JSON.stringify(await reportWithUse(outdir, USED)));
    const config = path.join(tmp, 'platform.config.ts');
    fs.writeFileSync(config, SOURCE);
    const dry = await cli(['narrow', outdir, '--usage', usage, '--config', config, '--keep', 'people.groups.ops.reads[2]']);
    expect([dry.code, dry.stderr]).toEqual([0, '']);
    expect(dry.stdout).toContain('remove (would change platform.config.ts) (2):');
    expect(dry.stdout).toContain('  accounts.mirror.readByCi: true -> false (accounts.mirror.consumers dropped, if any: SSI-R8)\n    declared by ci-access/svc-mirror\n    jwt/registry-ci: secret/data/registry/svc-mirror (read) never used in the window; 1 login(s), 3 request(s), last seen 2026-11-28T04:07:02.000Z');
    expect(dry.stdout).toContain('  people.groups.ops.reads[2]: kept by --keep people.groups.ops.reads[2]');
    expect(fs.readFileSync(config, 'utf8')).toBe(SOURCE);
    const md = path.join(tmp, 'mr.md');
    const wet = await cli(['narrow', outdir, '--usage', usage, '--config', config, '--write', '--markdown', md]);
    expect(wet.code).toBe(0);
    expect(wet.stdout).toContain('remove (written to platform.config.ts) (3):');
    expect(fs.readFileSync(config, 'utf8')).toContain("reads: [{ path: 'team/b' }],");
    expect(fs.readFileSync(md, 'utf8')).toContain('| `accounts.mirror.readByCi: true -> false (accounts.mirror.consumers dropped, if any: SSI-R8)` | `ci-access/svc-mirror` |');
  });

  it('--patch writes the edits as a patch of --config that git applies (the file unchanged without --write), named as the working directory names it', async () => {
    const { outdir } = synthesizedRules(evaluateConfigSource(SOURCE));
    const repo = fs.mkdtempSync(path.join(tmp, 'repo-'));
    fs.mkdirSync(path.join(repo, 'stacks'));
    fs.writeFileSync(path.join(repo, 'stacks', 'platform.config.ts'), SOURCE);
    fs.writeFileSync(path.join(repo, 'usage.json'), JSON.stringify(await reportWithUse(outdir, USED)));
    const inRepo = async (args: string[]) => {
      const out: string[] = [];
      const code = await runCli(args, { env: {}, cwd: repo, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => out.push(l) });
      return { code, stdout: out.join('\n') };
    };
    expect((await inRepo(['narrow', outdir, '--usage', 'usage.json', '--patch', 'narrowing.patch'])).code).toBe(0);
    expect(fs.readFileSync(path.join(repo, 'stacks', 'platform.config.ts'), 'utf8')).toBe(SOURCE);
    const patch = fs.readFileSync(path.join(repo, 'narrowing.patch'), 'utf8');
    expect(patch).toMatch(/^diff --git a\/stacks\/platform\.config\.ts b\/stacks\/platform\.config\.ts\n--- a\/stacks\/platform\.config\.ts\n\+\+\+ b\/stacks\/platform\.config\.ts\n@@ /);
    // What --write would have written, from the same inputs.
    const written = fs.mkdtempSync(path.join(tmp, 'written-'));
    fs.copyFileSync(path.join(repo, 'stacks', 'platform.config.ts'), path.join(written, 'platform.config.ts'));
    expect((await inRepo(['narrow', outdir, '--usage', 'usage.json', '--config', path.join(written, 'platform.config.ts'), '--write'])).code).toBe(0);
    expect(spawnSync('git', ['init', '-q'], { cwd: repo }).status).toBe(0);
    const applied = spawnSync('git', ['apply', 'narrowing.patch'], { cwd: repo, encoding: 'utf8' });
    expect([applied.status, applied.stderr]).toEqual([0, '']);
    const result = fs.readFileSync(path.join(repo, 'stacks', 'platform.config.ts'), 'utf8');
    expect(result).not.toBe(SOURCE);
    expect(result).toBe(fs.readFileSync(path.join(written, 'platform.config.ts'), 'utf8'));
  });

  it('--retire-idle removes the applications and people groups whose role never logged in (listed only without it); --keep keeps one', async () => {
    const { outdir } = synthesizedRules(evaluateConfigSource(NARROWING_RETIRE_SOURCE));
    const usage = path.join(tmp, 'usage-retire.json');
    fs.writeFileSync(usage, JSON.stringify(await retireReport(outdir)));
    const config = path.join(tmp, 'retire.config.ts');
    fs.writeFileSync(config, NARROWING_RETIRE_SOURCE);
    const listed = await cli(['narrow', outdir, '--usage', usage, '--config', config]);
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    expect(listed.stdout).toContain('  role approle/search-dev (stack app-roles) never logged in in the window: retire it by removing applications.search-dev from the PlatformConfig (narrow --retire-idle does), or keep it (--keep approle/search-dev)');
    expect(listed.stdout).not.toContain('applications.search-dev removed');
    const md = path.join(tmp, 'retire.md');
    const retired = await cli(['narrow', outdir, '--usage', usage, '--config', config, '--retire-idle', '--keep', 'people.groups.audit', '--write', '--markdown', md]);
    expect([retired.code, retired.stderr]).toEqual([0, '']);
    expect(retired.stdout).toContain('  applications.search-dev removed (role approle/search-dev (stack app-roles) never logged in in the window)\n    declared by app-roles/search-dev/role');
    expect(retired.stdout).toContain('  oidc/audit: kept by --keep people.groups.audit');
    expect(retired.stdout).toContain('change by hand: the source\'s form does not allow the edit (0):');
    const written = fs.readFileSync(config, 'utf8');
    expect(written).not.toContain("'search-dev'");
    expect(written).toContain("'billing-dev': { name: 'billing', environment: 'dev' },");
    expect(written).toContain("audit: { groups: ['audit']");
    expect(fs.readFileSync(md, 'utf8')).toContain('| `applications.search-dev removed (role approle/search-dev (stack app-roles) never logged in in the window)` | `app-roles/search-dev/role` |');
    // Without a --keep: the group goes with its reads, ops keeps its used read only.
    fs.writeFileSync(config, NARROWING_RETIRE_SOURCE);
    const both = await cli(['narrow', outdir, '--usage', usage, '--config', config, '--retire-idle', '--write']);
    expect(both.code).toBe(0);
    expect(both.stdout).toContain('change by hand: the source\'s form does not allow the edit (0):');
    const groups = evaluateConfigSource(fs.readFileSync(config, 'utf8')).people!.groups;
    expect([Object.keys(groups), groups.ops.reads]).toEqual([['ops'], [{ path: 'team/b' }]]);
  });

  it('a field behind a variable is listed to change by hand and the file keeps it; a --keep naming nothing is a usage error', async () => {
    const { outdir } = synthesizedRules(evaluateConfigSource(SOURCE));
    const usage = path.join(tmp, 'usage-2.json');
    fs.writeFileSync(usage, JSON.stringify(await reportWithUse(outdir, USED)));
    const config = path.join(tmp, 'variable.config.ts');
    const source = SOURCE.replace('  accounts: {\n', '  accounts: {\n    ...sharedAccounts,\n');
    fs.writeFileSync(config, source);
    const run = await cli(['narrow', outdir, '--usage', usage, '--config', config, '--write']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('change by hand: the source\'s form does not allow the edit (1):\n  set accounts.mirror.readByCi to false and drop accounts.mirror.consumers: the spread ...sharedAccounts in accounts');
    expect(fs.readFileSync(config, 'utf8')).toBe(source.replace("{ path: 'team/a' }, { path: 'team/b' }, { path: 'team/c', subtree: true }", "{ path: 'team/b' }"));
    const typo = await cli(['narrow', outdir, '--usage', usage, '--config', config, '--keep', 'accounts.mirorr']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('--keep accounts.mirorr: names no grant the narrowing removes');
  });

  it('input errors are sentences, every one at once', async () => {
    const run = await cli(['narrow', tmp, '--config', path.join(tmp, 'absent.ts'), '--markdown', path.join(tmp, 'no-dir', 'mr.md'), '--keep', '']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--log FILE or --usage FILE is required');
    expect(run.stderr).toContain('--config');
    expect(run.stderr).toContain('absent.ts');
    expect(run.stderr).toContain('--markdown');
    expect(run.stderr).toContain('does not exist');
    expect(run.stderr).not.toMatch(/ENOENT|errno/);
  });
});
