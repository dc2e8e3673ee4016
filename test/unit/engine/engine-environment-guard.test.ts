/**
 * Issue 36: the engine's environment is part of the invocation. Every engine run of the tool refuses
 * the variables that change what the engine plans or applies, or where the state lives (one table,
 * lib/engine/engine-environment-guard.ts), all named at once with effect and fix, values never
 * printed. On a real store and both engines: test/store/engine-tampering.store.test.ts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { engineEnvironment } from '../../../lib/engine/engine-binary';
import {
  cliConfigFiles,
  ENGINE_ENVIRONMENT,
  EngineEnvironmentRefused,
  engineEnvironmentProblems,
  engineVariable,
  refuseEngineEnvironment,
} from '../../../lib/engine/engine-environment-guard';
import { GuardRefusal } from '../../../lib/engine/guard-refusal';
import { REPO_ROOT } from '../../support/paths';

const SECRET = 'value-never-printed-7f3a';
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-engine-env-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('the table of engine environment variables', () => {
  it('refuses what changes the plan, the apply or the state: TF_CLI_ARGS, every TF_CLI_ARGS_*, TF_WORKSPACE, TF_DATA_DIR, TF_REATTACH_PROVIDERS, the lock-file bypass, TF_ENCRYPTION', () => {
    for (const name of ['TF_CLI_ARGS', 'TF_CLI_ARGS_apply', 'TF_CLI_ARGS_plan', 'TF_CLI_ARGS_destroy', 'TF_CLI_ARGS_import', 'TF_WORKSPACE', 'TF_DATA_DIR', 'TF_REATTACH_PROVIDERS', 'TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE', 'TF_ENCRYPTION']) {
      expect({ name, verdict: engineVariable(name)?.verdict }).toEqual({ name, verdict: 'refused' });
    }
  });

  it('allows what only changes output, prompts, caches and retries; input variables and registry tokens unprinted', () => {
    for (const name of ['TF_IN_AUTOMATION', 'TF_INPUT', 'TF_LOG', 'TF_LOG_PATH', 'TF_LOG_CORE', 'TF_LOG_PROVIDER', 'TF_PLUGIN_CACHE_DIR', 'TF_REGISTRY_CLIENT_TIMEOUT']) {
      expect({ name, verdict: engineVariable(name)?.verdict }).toEqual({ name, verdict: 'allowed' });
    }
    expect(engineVariable('TF_VAR_region')?.verdict).toBe('allowed-unprinted');
    expect(engineVariable('TF_TOKEN_app_terraform_io')?.verdict).toBe('allowed-unprinted');
    expect(engineVariable('TF_CLI_CONFIG_FILE')?.verdict).toBe('checked');
    // An exact name wins over a prefix (TF_CLI_ARGS is not a TF_CLI_ARGS_ command).
    expect(engineVariable('TF_CLI_ARGS')?.prefix).toBeUndefined();
  });

  it('every refused row says its effect and the fix; names are unique', () => {
    for (const row of ENGINE_ENVIRONMENT.filter((r) => r.verdict === 'refused')) expect({ name: row.name, fix: (row.fix ?? '').length > 10, effect: row.effect.length > 10 }).toEqual({ name: row.name, fix: true, effect: true });
    expect(new Set(ENGINE_ENVIRONMENT.map((r) => r.name)).size).toBe(ENGINE_ENVIRONMENT.length);
  });

  it('docs/reference.md lists exactly the table\'s variables, each with its verdict', () => {
    const docs = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'reference.md'), 'utf8');
    const rows = [...docs.matchAll(/^\| `((?:TF|PG)_[A-Z_]+?)(\*)?` \| [^|]+ \| (refused|allowed, never printed|allowed|checked)[^|]*\|/gm)].map((m) => `${m[1]}${m[2] ?? ''} ${m[3]}`);
    const verdict = { refused: 'refused', allowed: 'allowed', 'allowed-unprinted': 'allowed, never printed', checked: 'checked' };
    expect(rows.sort()).toEqual(ENGINE_ENVIRONMENT.map((r) => `${r.name}${r.prefix ? '*' : ''} ${verdict[r.verdict]}`).sort());
  });
});

describe('engineEnvironmentProblems', () => {
  it('names every refused variable at once, with its effect and fix, never its value', () => {
    const problems = engineEnvironmentProblems({ TF_CLI_ARGS_apply: `-destroy -auto-approve ${SECRET}`, TF_CLI_ARGS: '-destroy', TF_WORKSPACE: 'other', TF_DATA_DIR: 'elsewhere', TF_ENCRYPTION: SECRET });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['TF_CLI_ARGS', 'TF_CLI_ARGS_apply', 'TF_DATA_DIR', 'TF_ENCRYPTION', 'TF_WORKSPACE']);
    expect(problems[1]).toContain('adds arguments to one engine command (`TF_CLI_ARGS_apply=-destroy`) that the guards never see. Fix: unset it and give the arguments after `--`');
    expect(problems.join('\n')).not.toContain(SECRET);
  });

  it('a value that changes nothing passes: TF_WORKSPACE=default, TF_DATA_DIR=.terraform, an empty value', () => {
    expect(engineEnvironmentProblems({ TF_WORKSPACE: 'default', TF_DATA_DIR: '.terraform', TF_CLI_ARGS: '', TF_CLI_ARGS_apply: '' })).toEqual([]);
  });

  it('allows the harmless ones and input variables; refuses a TF_ or TOFU_ variable the table does not know', () => {
    expect(engineEnvironmentProblems({ TF_VAR_region: SECRET, TF_TOKEN_example_com: SECRET, TF_LOG: 'trace', TF_IN_AUTOMATION: '1', TF_INPUT: '0', TF_PLUGIN_CACHE_DIR: '/tmp/c', PATH: '/bin', VAULT_TOKEN: SECRET })).toEqual([]);
    const problems = engineEnvironmentProblems({ TF_NEW_THING: SECRET, TOFU_OTHER: SECRET });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^TF_NEW_THING: an engine variable secretstore-iac does not know/);
    expect(problems.join('\n')).not.toContain(SECRET);
  });

  it('state backends: the pg connection and backend credentials pass unprinted; a variable that moves the state is refused by name, never as unknown', () => {
    expect(engineEnvironmentProblems({ PG_CONN_STR: `postgres://u:${SECRET}@db/tf`, PG_SKIP_SCHEMA_CREATION: '1', TF_HTTP_USERNAME: 'gitlab-ci-token', TF_HTTP_PASSWORD: SECRET, PG_TABLE_NAME: 'states' })).toEqual([]);
    const problems = engineEnvironmentProblems({ PG_SCHEMA_NAME: 'other', PG_TABLE_NAME: 'other', TF_HTTP_ADDRESS: `https://gitlab.example/api/v4/projects/1/terraform/state/x?t=${SECRET}`, TF_HTTP_LOCK_ADDRESS: 'https://x' });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['PG_SCHEMA_NAME', 'PG_TABLE_NAME', 'TF_HTTP_ADDRESS', 'TF_HTTP_LOCK_ADDRESS']);
    expect(problems.join('\n')).not.toContain('does not know');
    expect(problems.join('\n')).not.toContain(SECRET);
    expect(problems[2]).toContain('Fix: unset it: the stack\'s backend is synthesized (postgresState(); the http backend is not offered yet)');
  });

  describe('the CLI configuration', () => {
    const write = (name: string, text: string) => {
      const file = path.join(home, name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      return file;
    };

    it('a mirror passes; dev_overrides (another provider binary) and the lock-file bypass are refused, naming the file', () => {
      const mirror = write('mirror.tfrc', 'provider_installation {\n  filesystem_mirror { path = "/m" }\n  direct { exclude = ["*/*"] }\n}\n');
      expect(engineEnvironmentProblems({ TF_CLI_CONFIG_FILE: mirror })).toEqual([]);
      const dev = write('dev.tfrc', 'provider_installation {\n  dev_overrides {\n    "hashicorp/vault" = "/home/x/bin"\n  }\n  direct {}\n}\n');
      expect(engineEnvironmentProblems({ TF_CLI_CONFIG_FILE: dev })).toEqual([
        `${dev} (CLI configuration) has \`dev_overrides\`: runs a provider binary from a local directory instead of the installed, locked provider. Fix: remove it, or point TF_CLI_CONFIG_FILE at a CLI configuration without it`,
      ]);
      const breaking = write('break.tfrc', 'plugin_cache_may_break_dependency_lock_file = true\n');
      expect(engineEnvironmentProblems({ TF_CLI_CONFIG_FILE: breaking })[0]).toContain('has `plugin_cache_may_break_dependency_lock_file`');
    });

    it('without TF_CLI_CONFIG_FILE, ~/.terraformrc and ~/.tofurc are read; ~/.terraform.d/*.tfrc always', () => {
      const h = fs.mkdtempSync(path.join(home, 'h-'));
      expect(cliConfigFiles({ HOME: h })).toEqual([]);
      fs.writeFileSync(path.join(h, '.tofurc'), 'provider_installation { dev_overrides { "hashicorp/vault" = "/x" } }\n');
      expect(engineEnvironmentProblems({ HOME: h })[0]).toContain(`${path.join(h, '.tofurc')} (CLI configuration) has \`dev_overrides\``);
      fs.mkdirSync(path.join(h, '.terraform.d'));
      fs.writeFileSync(path.join(h, '.terraform.d', 'extra.tfrc'), 'dev_overrides {}\n');
      const mirror = write('ok.tfrc', '');
      // TF_CLI_CONFIG_FILE replaces the home files, not the directory's.
      expect(cliConfigFiles({ HOME: h, TF_CLI_CONFIG_FILE: mirror })).toEqual([mirror, path.join(h, '.terraform.d', 'extra.tfrc')]);
    });
  });
});

describe('refusal: every engine run', () => {
  it('refuseEngineEnvironment throws a GuardRefusal (exit 4) naming every problem', () => {
    expect(() => refuseEngineEnvironment({ TF_CLI_ARGS: '-destroy', TF_WORKSPACE: 'x' })).toThrow(EngineEnvironmentRefused);
    try {
      refuseEngineEnvironment({ TF_CLI_ARGS: '-destroy', TF_WORKSPACE: 'x' });
    } catch (e) {
      expect(e).toBeInstanceOf(GuardRefusal);
      expect((e as Error).message).toMatch(/^nothing run: the engine's environment changes what it would plan or apply, or where the state lives, out of the guards' sight \(2 problems\):\n {2}TF_CLI_ARGS: .*\n {2}TF_WORKSPACE: /);
    }
    expect(() => refuseEngineEnvironment({ PATH: '/bin' })).not.toThrow();
  });

  it('engineEnvironment, the one builder of the engine\'s environment, refuses it', () => {
    expect(() => engineEnvironment({ PATH: '/bin', TF_CLI_ARGS_apply: '-destroy' }, 'https://s.example')).toThrow(EngineEnvironmentRefused);
    expect(engineEnvironment({ PATH: '/bin', TF_VAR_x: 'y' }, 'https://s.example').TF_VAR_x).toBe('y');
  });

  it('tf exits 4 before any engine runs or the store is asked (guarded or not)', async () => {
    const outdir = fs.mkdtempSync(path.join(home, 'out-'));
    fs.mkdirSync(path.join(outdir, 'stacks', 'app-roles'), { recursive: true });
    fs.writeFileSync(path.join(outdir, 'stacks', 'app-roles', 'cdk.tf.json'), '{}');
    const engine = path.join(outdir, 'fake-engine');
    fs.writeFileSync(engine, '#!/bin/sh\necho "engine ran"\n', { mode: 0o755 });
    for (const [own, env] of [
      [['--refuse-replace'], { TF_CLI_ARGS_apply: '-destroy -auto-approve' }],
      [[], { TF_CLI_ARGS: '-destroy' }],
      [[], { TF_WORKSPACE: 'other' }],
    ] as const) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(['tf', 'app-roles', '--outdir', outdir, '--engine', engine, ...own, '--', 'apply'], {
        // An address nothing listens on: the refusal comes before the health check.
        env: { PATH: process.env.PATH, SECRETSTORE_ADDR: 'http://127.0.0.1:9', ...env },
        cwd: outdir,
        isTerminal: false,
        stdout: (l) => out.push(l),
        stderr: (l) => err.push(l),
      });
      expect({ env, code, ran: out.join('\n').includes('engine ran') }).toEqual({ env, code: 4, ran: false });
      expect(err.join('\n')).toContain(`${Object.keys(env)[0]}: `);
    }
  });
});
