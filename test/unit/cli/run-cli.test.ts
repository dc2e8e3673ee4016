import * as fs from 'fs';
import * as path from 'path';
import { CommandContext } from '../../../lib/cli/command';
import { ExitCode } from '../../../lib/cli/exit-code';
import { runCli } from '../../../lib/cli/run-cli';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

const FIXTURES = ACCESS_FIXTURES;

/** Runs the CLI in-process and captures what it prints. */
async function cli(argv: string[], options: { isTerminal?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const context: CommandContext = {
    env: options.env ?? {},
    cwd: FIXTURES,
    isTerminal: options.isTerminal ?? false,
    stdout: (line) => stdout.push(line),
    stderr: (line) => stderr.push(line),
  };
  const code = await runCli(argv, context);
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

describe('dispatch, help and exit codes', () => {
  it('--help lists the commands and the exit codes', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(ExitCode.ok);
    expect(stdout).toMatch(/^Usage: secretstore-iac COMMAND/);
    for (const name of ['access', 'access-diff', 'who-can']) expect(stdout).toContain(`  ${name} `);
    expect(stdout).toMatch(/2 usage error,\s+3 runtime error/);
  });

  it('--version prints the version of package.json', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      expect(await cli([flag])).toEqual({ code: ExitCode.ok, stdout: `secretstore-iac ${pkg.version}`, stderr: '' });
    }
  });

  it('each command has its own --help', async () => {
    for (const name of ['access', 'access-diff', 'who-can']) {
      const { code, stdout } = await cli([name, '--help']);
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: secretstore-iac ${name}`);
      expect(stdout).toContain('Exit codes:');
    }
  });

  it('the SOURCE help names the synthesis command cdktf.json declares', async () => {
    const app: string = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'cdktf.json'), 'utf8')).app;
    for (const name of ['access', 'access-diff', 'who-can']) {
      expect((await cli([name, '--help'])).stdout).toContain(`Here that command is \`${app}\`.`);
    }
  });

  it('no command, an unknown command or option, a missing argument: usage error (2)', async () => {
    expect((await cli([])).code).toBe(ExitCode.usage);
    const unknown = await cli(['acces']);
    expect(unknown.code).toBe(ExitCode.usage);
    expect(unknown.stderr).toContain('unknown command "acces"');
    const option = await cli(['access', 'base', '--colour']);
    expect(option.code).toBe(ExitCode.usage);
    expect(option.stderr).toMatch(/secretstore-iac access: Unknown option '--colour'.*see secretstore-iac access --help/);
    expect((await cli(['access-diff', 'base'])).code).toBe(ExitCode.usage);
    expect((await cli(['access', 'base', '--format', 'html'])).stderr).toContain('--format must be one of md, json');
    expect((await cli(['who-can', 'deny', 'x', 'base'])).code).toBe(ExitCode.usage);
  });

  it('a SOURCE that is neither an output directory nor a git ref is a usage error', async () => {
    const { code, stderr } = await cli(['access', 'no-such-thing']);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toContain('no-such-thing is neither a synthesized output directory nor a git ref');
  });

  it('a broken configuration is a runtime error (3) with the reason', async () => {
    const { code, stderr } = await cli(['access', path.join(FIXTURES, 'base', 'stacks')]);
    expect(code).toBe(ExitCode.usage); // a directory, but not an output
    expect(stderr).toContain('not a synthesized output');
    const broken = await cli(['access', path.join(ACCESS_FIXTURES, '..', 'access-broken')]);
    expect(broken.code).toBe(ExitCode.runtime);
    expect(broken.stderr).toContain('policy "typo": path "secret/data/x": invalid capability "raed"');
  });
});

describe('access', () => {
  it('Markdown by default, JSON on request', async () => {
    const md = await cli(['access', 'base', '--identity', 'jwt/registry-ci']);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('## `jwt/registry-ci`');
    const json = await cli(['access', 'base', '--format', 'json']);
    const report = JSON.parse(json.stdout);
    expect(report.identities.map((i: { name: string }) => i.name)).toContain('approle/orchestrator-dev');
  });

  it('plain output when not a terminal; styled on a terminal unless NO_COLOR', async () => {
    const plain = await cli(['access', 'base']);
    expect(plain.stdout).not.toContain('\u001b[');
    const styled = await cli(['access', 'base'], { isTerminal: true });
    expect(styled.stdout).toContain('\u001b[1m## `jwt/registry-ci`\u001b[0m');
    const noColor = await cli(['access', 'base'], { isTerminal: true, env: { NO_COLOR: '1' } });
    expect(noColor.stdout).toBe(plain.stdout);
  });
});

describe('access-diff', () => {
  it('exit 0 for no access change, 1 for a change', async () => {
    expect((await cli(['access-diff', 'base', 'head-nothing-changed'])).code).toBe(ExitCode.ok);
    const changed = await cli(['access-diff', 'base', 'head-ttl-raised']);
    expect(changed.code).toBe(ExitCode.accessChanged);
    expect(changed.stdout).toContain('- **TTL raised**, `jwt/registry-ci`: `token_explicit_max_ttl`, `token_max_ttl`, `token_ttl` 1h → 2h');
  });

  it('JSON carries the same diff', async () => {
    const { code, stdout } = await cli(['access-diff', 'base', 'head-app-added', '--format', 'json']);
    expect(code).toBe(ExitCode.accessChanged);
    expect(JSON.parse(stdout).added[0].name).toBe('approle/billing-dev');
  });
});

describe('who-can', () => {
  it('lists identities and rules; says nobody when nobody can', async () => {
    const yes = await cli(['who-can', 'read', 'secret/data/registry/svc-executor', 'base']);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toBe(
      'read on secret/data/registry/svc-executor:\n  jwt/registry-ci  via "secret/data/registry/svc-executor" (policies: registry-ci)',
    );
    const no = await cli(['who-can', 'delete', 'secret/data/registry/svc-executor', 'base']);
    expect(no.stdout).toBe('delete on secret/data/registry/svc-executor:\n  nobody');
  });

  it('prints a note for each way the path evaluated differs from the one typed: LIST without "/", the KV v1 form on the declared v2 mount', async () => {
    const list = await cli(['who-can', 'list', 'secret/metadata/acme/dev', 'base']);
    expect(list.stdout).toBe(
      'list on secret/metadata/acme/dev:\n' +
        '  note: the store adds a trailing "/" to every LIST request: answered for secret/metadata/acme/dev/\n' +
        '  approle/audit-agent  via "secret/metadata/acme/*" (policies: ops-audit)',
    );
    const platform = synthesizePlatform();
    const older = await cli(['who-can', 'read', 'secret/registry/svc-executor', platform.outdir, '--format', 'json']);
    expect(older.code).toBe(ExitCode.ok);
    const answer = JSON.parse(older.stdout);
    expect(answer.evaluatedPath).toBe('secret/data/registry/svc-executor');
    expect(answer.notes[0]).toMatch(/^secret\/ is KV version 2 \(settings\.kvMount of stacks? [a-z, -]+\): it serves no secret at secret\/registry\/svc-executor/);
    expect(answer.allowed.map((e: { identity: string }) => e.identity)).toContain('jwt/registry-ci');
  });

  it("refuses a word of neither store at once, and a word the source's store does not know, saying where the store came from (exit 2)", async () => {
    const neither = await cli(['who-can', 'frobnicate', 'secret/data/x', 'base']);
    expect(neither.code).toBe(ExitCode.usage);
    expect(neither.stderr).toContain(
      '"frobnicate" is not a capability: use create, read, update, patch, delete, list, scan, sudo (OpenBao), or create, read, update, patch, delete, list, sudo, subscribe, recover (HashiCorp Vault)',
    );
    const assumed = await cli(['who-can', 'subscribe', 'secret/data/x', 'base']);
    expect(assumed.code).toBe(ExitCode.usage);
    expect(assumed.stderr).toContain('"subscribe" is a capability of HashiCorp Vault, not of OpenBao');
    expect(assumed.stderr).toMatch(/\(.*base.* names no settings\.store, so OpenBao is assumed\)/);
    const vault = synthesizePlatform({ ...platformConfig, settings: { ...platformConfig.settings, store: { kind: 'vault' } } });
    const scan = await cli(['who-can', 'scan', 'secret/metadata/acme/', vault.outdir]);
    expect(scan.code).toBe(ExitCode.usage);
    expect(scan.stderr).toContain('"scan" is a capability of OpenBao, not of HashiCorp Vault: HashiCorp Vault refuses every policy naming it (invalid capability "scan")');
    expect(scan.stderr).toMatch(/targets vault \(settings\.store\)\)/);
    const subscribe = await cli(['who-can', 'subscribe', 'secret/data/acme/dev/orchestrator/database', vault.outdir]);
    expect(subscribe).toEqual({ code: ExitCode.ok, stdout: 'subscribe on secret/data/acme/dev/orchestrator/database:\n  nobody', stderr: '' });
  });
});
