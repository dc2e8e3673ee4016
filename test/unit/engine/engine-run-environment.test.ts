/**
 * Issue 45, "a hermetic engine run": every engine start of the tool gets an environment built from an
 * allowlist (lib/engine/engine-run-environment.ts), with a CLI configuration the tool writes and HOME,
 * TF_CLI_CONFIG_FILE, TERRAFORM_CONFIG and the XDG directories inside the run's own directory; what
 * was dropped is named in one line; the stack directory holds only what the synthesis, the tool and
 * the engine write. These are the tests that the builder leaves nothing out; on a real store and
 * both engines: test/store/engine-tampering.store.test.ts ("issue 45: a hermetic engine run").
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { engineVersion } from '../../../lib/engine/engine-binary';
import { runEngineCollected } from '../../../lib/engine/engine-output';
import { runEngine } from '../../../lib/engine/engine-process';
import {
  buildEngineRunEnvironment,
  droppedVariablesLine,
  engineCliConfiguration,
  engineProcessEnvironment,
  passesToEngine,
  providerMirror,
  SET_VARIABLES,
} from '../../../lib/engine/engine-run-environment';
import { stackDirectoryProblems } from '../../../lib/engine/stack-directory-guard';
import { stackDigest } from '../../../lib/sources/stack-digest';
import { SeededRandom } from '../../support/seeded-random';

const SECRET = 'value-never-printed-5c1e';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-hermetic-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/**
 * The allowlist as the spec states it (docs/operators.md, "The engine's environment"; reference.md's
 * table): the oracle of the property tests, written out so that widening the list is a test change.
 */
const ALLOWED_EXACT = new Set([
  // the vault provider
  'VAULT_ADDR', 'VAULT_TOKEN', 'VAULT_NAMESPACE', 'VAULT_CACERT', 'VAULT_CAPATH', 'VAULT_CLIENT_CERT', 'VAULT_CLIENT_KEY', 'VAULT_TLS_SERVER_NAME', 'VAULT_SKIP_VERIFY',
  'VAULT_TOKEN_NAME', 'TERRAFORM_VAULT_SKIP_CHILD_TOKEN', 'TERRAFORM_VAULT_MAX_TTL', 'VAULT_MAX_RETRIES', 'VAULT_MAX_RETRIES_CCC', 'VAULT_CLIENT_TIMEOUT',
  // the pg and http backends
  'PG_CONN_STR', 'PG_INDEX_NAME', 'PG_SKIP_SCHEMA_CREATION', 'PG_SKIP_TABLE_CREATION', 'PG_SKIP_INDEX_CREATION',
  'PGPASSWORD', 'PGUSER', 'PGSSLMODE', 'PGSSLCERT', 'PGSSLKEY', 'PGSSLROOTCERT', 'PGCONNECT_TIMEOUT',
  'TF_HTTP_USERNAME', 'TF_HTTP_PASSWORD', 'TF_HTTP_CLIENT_CA_CERTIFICATE_PEM', 'TF_HTTP_CLIENT_CERTIFICATE_PEM', 'TF_HTTP_CLIENT_PRIVATE_KEY_PEM',
  'TF_HTTP_RETRY_MAX', 'TF_HTTP_RETRY_WAIT_MIN', 'TF_HTTP_RETRY_WAIT_MAX',
  // the engines: output, prompts, retries
  'TF_IN_AUTOMATION', 'TF_INPUT', 'TF_LOG', 'TF_LOG_PATH', 'TF_LOG_CORE', 'TF_LOG_PROVIDER', 'TF_REGISTRY_DISCOVERY_RETRY', 'TF_REGISTRY_CLIENT_TIMEOUT',
  'TF_PROVIDER_DOWNLOAD_RETRY', 'TF_STATE_PERSIST_INTERVAL', 'TF_IGNORE', 'TF_APPEND_USER_AGENT', 'TF_ACC',
  // the process
  'PATH', 'TMPDIR', 'LANG', 'TERM', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy',
]);
const ALLOWED_PREFIXES = ['TF_VAR_', 'TF_TOKEN_', 'TF_LOG_PROVIDER_', 'LC_'];
const allowed = (name: string): boolean => ALLOWED_EXACT.has(name) || ALLOWED_PREFIXES.some((p) => name.startsWith(p) && name.length > p.length && /^[A-Za-z0-9_-]+$/.test(name.slice(p.length)));

/** Names an attacker or a careless shell may set: the engines' namespaces, look-alikes, other cases, unicode. */
function randomName(random: SeededRandom): string {
  const stems = ['TF_', 'TOFU_', 'TERRAFORM_', 'OPENTOFU_', 'VAULT_', 'BAO_', 'PG', 'PG_', 'TF_CLI_ARGS', 'TF_VAR_', 'TF_TOKEN_', 'TF_LOG_PROVIDER_', 'LC_', 'XDG_', 'GO', 'HOME', 'PATH', 'tf_', 'Tf_', 'tf_var_', 'vault_', 'ＴＦ_', 'TF\u200b_', 'TF_\u0130', ''];
  const tails = ['CLI_CONFIG_FILE', 'CONFIG', 'CLI_ARGS', 'CLI_ARGS_apply', 'WORKSPACE', 'DATA_DIR', 'PLUGIN_CACHE_DIR', 'REATTACH_PROVIDERS', 'ENCRYPTION', 'AGENT_ADDR', 'CONFIG_PATH', 'DEBUG', 'region', 'x-y', 'é', '\u00e9t\u00e9', 'ADDR', 'TOKEN', 'IN_AUTOMATION', 'LOG', 'ALL', 'SCHEMA_NAME', 'CONN_STR', 'DATA_HOME', ''];
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.ü';
  let name = random.pick(stems) + random.pick(tails);
  for (let i = random.int(4); i > 0; i--) name += letters[random.int(letters.length)];
  return name === '' ? 'X' : name;
}

describe('the environment is built from an allowlist, never the caller\'s minus a list', () => {
  it('property: a random name (TF_*, TOFU_*, TERRAFORM_CONFIG, lower case, unicode) reaches the engine only when the allowlist names it', () => {
    const random = SeededRandom.fromEnvironment('engine-run-environment');
    const caller: NodeJS.ProcessEnv = { TMPDIR: work };
    for (let i = 0; i < 3000; i++) caller[randomName(random)] = `${SECRET}-${i}`;
    for (const name of ['TERRAFORM_CONFIG', 'TF_CLI_CONFIG_FILE', 'TF_CLI_ARGS', 'TF_CLI_ARGS_apply', 'TF_PLUGIN_CACHE_DIR', 'TF_DATA_DIR', 'TOFU_CLI_CONFIG_FILE', 'tf_cli_args', 'VAULT_AGENT_ADDR', 'GODEBUG', 'XDG_CONFIG_HOME', 'HOME']) caller[name] = SECRET;
    const run = buildEngineRunEnvironment(caller, { cwd: process.cwd(), address: 'https://s.example' });
    try {
      const wrong: string[] = [];
      for (const name of Object.keys(caller)) {
        // VAULT_ADDR is the address the tool resolved: present, whatever the caller's said.
        const reached = name === 'VAULT_ADDR' ? run.env.VAULT_ADDR === 'https://s.example' : run.env[name] === caller[name];
        if (reached !== allowed(name)) wrong.push(`${JSON.stringify(name)}: ${reached ? 'passed' : 'dropped'}`);
        if (passesToEngine(name) !== allowed(name)) wrong.push(`${JSON.stringify(name)}: passesToEngine ${passesToEngine(name)}`);
      }
      expect(wrong).toEqual([]);
      // Nothing reaches the engine that is neither allowlisted nor set by the tool.
      expect(Object.keys(run.env).filter((n) => !allowed(n) && !(SET_VARIABLES as readonly string[]).includes(n))).toEqual([]);
      // Every caller variable that did not pass is listed as dropped (names only).
      expect([...run.dropped].sort()).toEqual(Object.keys(caller).filter((n) => !allowed(n) && !/^(SECRETSTORE_|BAO_)/.test(n)).sort());
      // The spawn-time check drops again what was added after the build.
      const later = engineProcessEnvironment({ ...run.env, TF_CLI_ARGS_plan: '-destroy', TERRAFORM_CONFIG: '/elsewhere', HOME: run.env.HOME });
      expect(later.TF_CLI_ARGS_plan).toBeUndefined();
      expect(later.TERRAFORM_CONFIG).toBe(run.cliConfig);
    } finally {
      run.dispose();
    }
  });

  it('HOME, TF_CLI_CONFIG_FILE, TERRAFORM_CONFIG and the XDG directories point into the run\'s own directory; the store\'s address, token and namespace are the tool\'s', () => {
    const home = fs.mkdtempSync(path.join(work, 'home-'));
    fs.writeFileSync(path.join(home, '.vault-token'), 'from-token-file\n');
    const run = buildEngineRunEnvironment({ TMPDIR: work, HOME: home, VAULT_ADDR: 'https://old.example', BAO_CACERT: '/ca.pem', XDG_CONFIG_HOME: home }, { cwd: process.cwd(), address: 'https://s.example', namespace: 'team' });
    try {
      for (const name of ['HOME', 'TF_CLI_CONFIG_FILE', 'TERRAFORM_CONFIG', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME']) {
        expect({ name, inside: run.env[name]!.startsWith(`${run.directory}${path.sep}`) }).toEqual({ name, inside: true });
      }
      expect(path.dirname(run.directory)).toBe(work);
      expect(run.env.TF_CLI_CONFIG_FILE).toBe(run.cliConfig);
      expect(run.env.TERRAFORM_CONFIG).toBe(run.cliConfig);
      expect(run.env).toMatchObject({ VAULT_ADDR: 'https://s.example', VAULT_NAMESPACE: 'team', VAULT_TOKEN: 'from-token-file', VAULT_CACERT: '/ca.pem', CHECKPOINT_DISABLE: '1' });
      // The run's home is empty but for what the tool put there: no ~/.terraformrc, ~/.tofurc, ~/.terraform.d.
      expect(fs.readdirSync(run.env.HOME!)).toEqual([]);
    } finally {
      run.dispose();
    }
    expect(fs.existsSync(run.directory)).toBe(false);
    expect(() => engineProcessEnvironment(run.env)).toThrow('an engine start without an environment built by buildEngineRunEnvironment');
  });

  it('a passed variable naming a file is taken from the caller\'s working directory when relative (the engine runs in a directory of its own); others untouched', () => {
    const caller = fs.mkdtempSync(path.join(work, 'caller-'));
    const fileVariables = ['TF_LOG_PATH', 'VAULT_CACERT', 'VAULT_CAPATH', 'VAULT_CLIENT_CERT', 'VAULT_CLIENT_KEY', 'PGSSLCERT', 'PGSSLKEY', 'PGSSLROOTCERT', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];
    const env: NodeJS.ProcessEnv = { TMPDIR: work, TF_LOG: 'debug', VAULT_TLS_SERVER_NAME: 'store.internal', TF_VAR_path: 'relative/value', PGSSLMODE: 'require' };
    for (const name of fileVariables) env[name] = `sub/${name.toLowerCase()}`;
    const run = buildEngineRunEnvironment({ ...env, BAO_CLIENT_KEY: 'ignored-when-vault-set' }, { cwd: caller, address: 'https://s.example' });
    const viaBao = buildEngineRunEnvironment({ TMPDIR: work, BAO_CACERT: 'bao-ca.pem', VAULT_CLIENT_CERT: '/abs/cert.pem', TF_LOG_PATH: '' }, { cwd: caller, address: 'https://s.example' });
    run.dispose();
    viaBao.dispose();
    for (const name of fileVariables) expect({ name, value: run.env[name] }).toEqual({ name, value: path.join(caller, 'sub', name.toLowerCase()) });
    // Not a file: left as given (an input variable's value is the configuration's business).
    expect(run.env).toMatchObject({ TF_LOG: 'debug', VAULT_TLS_SERVER_NAME: 'store.internal', TF_VAR_path: 'relative/value', PGSSLMODE: 'require' });
    // A BAO_* setting copied to its VAULT_* name is resolved too; an absolute path and an empty value stay.
    expect(viaBao.env).toMatchObject({ VAULT_CACERT: path.join(caller, 'bao-ca.pem'), VAULT_CLIENT_CERT: '/abs/cert.pem', TF_LOG_PATH: '' });
  });

  it('VAULT_TOKEN wins, then SECRETSTORE_TOKEN, then BAO_TOKEN (the provider reads only VAULT_TOKEN)', () => {
    const token = (env: NodeJS.ProcessEnv) => {
      const run = buildEngineRunEnvironment({ TMPDIR: work, ...env }, { cwd: process.cwd(), address: 'https://s.example' });
      run.dispose();
      return run.env.VAULT_TOKEN;
    };
    expect(token({ VAULT_TOKEN: 'v', SECRETSTORE_TOKEN: 's', BAO_TOKEN: 'b' })).toBe('v');
    expect(token({ SECRETSTORE_TOKEN: 's', BAO_TOKEN: 'b' })).toBe('s');
    expect(token({ BAO_TOKEN: 'b' })).toBe('b');
    expect(token({})).toBeUndefined();
  });

  it('an environment no builder made, or one whose run ended, starts no engine', async () => {
    const engine = path.join(work, 'never-started.sh');
    fs.writeFileSync(engine, `#!/bin/sh\ntouch ${path.join(work, 'started')}\n`, { mode: 0o755 });
    expect(() => runEngineCollected(engine, ['version'], work, { PATH: process.env.PATH })).toThrow('nothing started');
    await expect(runEngine(engine, ['version'], work, { PATH: process.env.PATH, HOME: os.homedir() }, { stdout: () => undefined, stderr: () => undefined })).rejects.toThrow('nothing started');
    expect(() => engineVersion(engine, { PATH: process.env.PATH })).toThrow('nothing started');
    expect(fs.existsSync(path.join(work, 'started'))).toBe(false);
  });
});

describe('the CLI configuration is the one the tool writes', () => {
  it('property: for any mirror path, only a filesystem_mirror block with that path; no override under any spelling, no plugin cache, no credentials', () => {
    const random = new SeededRandom(45);
    const chars = 'abcXYZ019_-./ émoji€ü';
    for (let i = 0; i < 300; i++) {
      let mirror = '/';
      for (let n = 1 + random.int(30); n > 0; n--) mirror += chars[random.int(chars.length)];
      const text = engineCliConfiguration(mirror);
      expect(text).toBe(`# Written by secretstore-iac for one engine run: where providers are installed from, nothing else.\nprovider_installation {\n  filesystem_mirror {\n    path = "${mirror}"\n  }\n}\n`);
      const body = text.split('\n').slice(1).join('\n').replace(mirror, '');
      // No escape can spell a key: the path holds no backslash, and nothing else is written.
      expect(body).not.toMatch(/\\|dev|override|plugin|cache|credentials|host|\$/i);
    }
    expect(engineCliConfiguration(undefined)).toBe('# Written by secretstore-iac for one engine run: where providers are installed from, nothing else.\nprovider_installation {\n  direct {}\n}\n');
  });

  it('the mirror: SECRETSTORE_IAC_PROVIDER_MIRROR, else the toolchain\'s, else none (the registry); a path the configuration cannot quote is an error', () => {
    const cache = fs.mkdtempSync(path.join(work, 'cache-'));
    expect(providerMirror({ SECRETSTORE_IAC_CACHE: cache })).toBeUndefined();
    fs.mkdirSync(path.join(cache, 'provider-mirror'));
    expect(providerMirror({ SECRETSTORE_IAC_CACHE: cache })).toBe(path.join(cache, 'provider-mirror'));
    const home = fs.mkdtempSync(path.join(work, 'h-'));
    fs.mkdirSync(path.join(home, '.cache', 'secretstore-iac', 'provider-mirror'), { recursive: true });
    expect(providerMirror({ HOME: home })).toBe(path.join(home, '.cache', 'secretstore-iac', 'provider-mirror'));
    const own = fs.mkdtempSync(path.join(work, 'own-'));
    expect(providerMirror({ SECRETSTORE_IAC_CACHE: cache, SECRETSTORE_IAC_PROVIDER_MIRROR: own })).toBe(own);
    expect(() => providerMirror({ SECRETSTORE_IAC_PROVIDER_MIRROR: path.join(own, 'none') })).toThrow(`SECRETSTORE_IAC_PROVIDER_MIRROR=${path.join(own, 'none')} is not a directory`);
    const quoted = path.join(work, 'a"b\\${x}');
    fs.mkdirSync(quoted);
    expect(() => providerMirror({ SECRETSTORE_IAC_PROVIDER_MIRROR: quoted })).toThrow('holds a quote, backslash');
    // The caller's TF_CLI_CONFIG_FILE is never the mirror: it is dropped.
    const run = buildEngineRunEnvironment({ TMPDIR: work, SECRETSTORE_IAC_PROVIDER_MIRROR: own, TF_CLI_CONFIG_FILE: '/etc/evil.tfrc' }, { cwd: process.cwd(), address: 'https://s.example' });
    try {
      expect(fs.readFileSync(run.cliConfig, 'utf8')).toBe(engineCliConfiguration(own));
      expect(run.dropped).toEqual(['TF_CLI_CONFIG_FILE']);
    } finally {
      run.dispose();
    }
    // The toolchain's own tofurc (beside the mirror the run names) is superseded: not passed, not named as dropped.
    const toolchain = buildEngineRunEnvironment({ TMPDIR: work, SECRETSTORE_IAC_CACHE: cache, TF_CLI_CONFIG_FILE: path.join(cache, 'tofurc') }, { cwd: process.cwd(), address: 'https://s.example' });
    try {
      expect(toolchain.env.TF_CLI_CONFIG_FILE).toBe(toolchain.cliConfig);
      expect(toolchain.dropped).toEqual([]);
    } finally {
      toolchain.dispose();
    }
  });
});

describe('what was dropped is named in one line, names only', () => {
  it('names what an engine, provider or backend could read; counts the rest; never a value', () => {
    const line = droppedVariablesLine('tf', ['EDITOR', 'GODEBUG', 'TERRAFORM_CONFIG', 'TF_CLI_ARGS_apply', 'VAULT_AGENT_ADDR', 'tf_cli_args', 'CI_JOB_ID']);
    expect(line).toBe(
      'secretstore-iac tf: not passed to the engine (its environment is built from an allowlist: docs/operators.md, "The engine\'s environment"): GODEBUG, TERRAFORM_CONFIG, TF_CLI_ARGS_apply, VAULT_AGENT_ADDR, tf_cli_args (and 2 other variables of no engine, provider or backend)',
    );
    expect(line!.split('\n')).toHaveLength(1);
    expect(droppedVariablesLine('tf', ['EDITOR', 'HOME'])).toBeUndefined();
  });
});

describe('the engine sees only what the run gives it', () => {
  /** A synthesized-looking stack directory and an engine that prints its environment and working directory. */
  function fakeStack(): { outdir: string; stackDir: string; engine: string; seen: string } {
    const outdir = fs.mkdtempSync(path.join(work, 'out-'));
    const stackDir = path.join(outdir, 'stacks', 'app-roles');
    fs.mkdirSync(stackDir, { recursive: true });
    fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{}');
    const seen = path.join(outdir, 'seen');
    const engine = path.join(outdir, 'fake-engine');
    fs.writeFileSync(engine, `#!/bin/sh\nif [ "$1" = version ]; then echo "Fake v0.0.1"; exit 0; fi\nenv > ${seen}.env\ncat "$TF_CLI_CONFIG_FILE" > ${seen}.tfrc\nls -a > ${seen}.ls\necho "engine ran"\n`, { mode: 0o755 });
    return { outdir, stackDir, engine, seen };
  }

  it('tf: the engine gets only allowlisted names and the tool\'s CLI configuration; the dropped line and the engine line are printed', async () => {
    const { outdir, engine, seen } = fakeStack();
    const mirror = fs.mkdtempSync(path.join(work, 'mirror-'));
    const userHome = fs.mkdtempSync(path.join(work, 'user-'));
    fs.writeFileSync(path.join(userHome, '.terraformrc'), 'provider_installation { "dev\\u005foverrides" { "hashicorp/vault" = "/evil" } }\n');
    const evil = path.join(userHome, 'evil.tfrc.json');
    fs.writeFileSync(evil, '{"provider_installation": [{"dev\\u005foverrides": [{"hashicorp/vault": "/evil"}]}]}');
    const out: string[] = [];
    const err: string[] = [];
    const env = {
      PATH: process.env.PATH,
      HOME: userHome,
      TMPDIR: work,
      SECRETSTORE_ADDR: 'http://127.0.0.1:9',
      SECRETSTORE_IAC_PROVIDER_MIRROR: mirror,
      TF_CLI_CONFIG_FILE: evil,
      TERRAFORM_CONFIG: evil,
      TF_CLI_ARGS_init: `-plugin-dir=/evil ${SECRET}`,
      TF_VAR_region: 'eu',
      tf_cli_args: SECRET,
    };
    const code = await runCli(['tf', 'app-roles', '--outdir', path.join(outdir), '--engine', engine, '--', 'init'], { env, cwd: outdir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    expect({ code, ran: out.join('\n').includes('engine ran') }).toEqual({ code: 0, ran: true });
    const seenEnv = Object.fromEntries(fs.readFileSync(`${seen}.env`, 'utf8').trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    // What the shell itself adds (PWD, SHLVL, _) is the fake engine's own.
    const names = Object.keys(seenEnv).filter((n) => !['PWD', 'OLDPWD', 'SHLVL', '_'].includes(n));
    expect(names.filter((n) => !allowed(n) && !(SET_VARIABLES as readonly string[]).includes(n))).toEqual([]);
    expect(seenEnv).toMatchObject({ TF_VAR_region: 'eu', VAULT_ADDR: 'http://127.0.0.1:9' });
    expect(seenEnv.HOME).not.toBe(userHome);
    expect(fs.readFileSync(`${seen}.tfrc`, 'utf8')).toBe(engineCliConfiguration(mirror));
    const said = err.join('\n');
    expect(said).not.toContain(SECRET);
    expect(err.filter((l) => l.includes('not passed to the engine'))).toEqual([
      'secretstore-iac tf: not passed to the engine (its environment is built from an allowlist: docs/operators.md, "The engine\'s environment"): TERRAFORM_CONFIG, TF_CLI_ARGS_init, TF_CLI_CONFIG_FILE, tf_cli_args',
    ]);
    expect(said).toContain(`secretstore-iac tf: engine ${engine} (Fake v0.0.1; --engine; providers from the mirror ${mirror}; configuration: 1 file laid fresh, ${stackDigest(path.join(outdir, 'stacks', 'app-roles')).digest})`);
    // The run's directory is gone with the run.
    expect(fs.readdirSync(work).filter((n) => n.startsWith(`secretstore-iac-run-${process.pid}-`))).toEqual([]);
  });

  it('tf with a relative TF_LOG_PATH: the engine writes the log where the caller asked, not into the directory laid for the run', async () => {
    const { outdir, stackDir } = fakeStack();
    const engine = path.join(outdir, 'logging-engine');
    fs.writeFileSync(engine, '#!/bin/sh\nif [ "$1" = version ]; then echo "Fake v0.0.1"; exit 0; fi\necho "engine log line" >> "$TF_LOG_PATH"\necho "engine ran"\n', { mode: 0o755 });
    const out: string[] = [];
    const err: string[] = [];
    fs.mkdirSync(path.join(outdir, 'logs'), { recursive: true });
    const code = await runCli(['tf', 'app-roles', '--outdir', outdir, '--engine', engine, '--', 'validate'], { env: { PATH: process.env.PATH, TMPDIR: work, SECRETSTORE_ADDR: 'http://127.0.0.1:9', TF_LOG_PATH: 'logs/tf.log' }, cwd: outdir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    expect({ code, ran: out.join('\n').includes('engine ran'), err: err.filter((l) => !l.includes('engine ') && !l.includes('not passed')) }).toEqual({ code: 0, ran: true, err: [] });
    expect(fs.readFileSync(path.join(outdir, 'logs', 'tf.log'), 'utf8')).toBe('engine log line\n');
    expect(fs.existsSync(path.join(stackDir, 'logs'))).toBe(false);
  });

  it.each(['#team_override.tf.json', '#x_override.tf.json', 'x#', 'x_override.tf', 'a.auto.tfvars', 'README.md', 'tests', '.hidden.tf.json', 'cdk.tf.json~', 'plan.tfplan.json'])(
    'a stack directory holding %j: refused (exit 4), the engine never starts',
    async (name) => {
      const { outdir, stackDir, engine } = fakeStack();
      if (name === 'tests') fs.mkdirSync(path.join(stackDir, name));
      else fs.writeFileSync(path.join(stackDir, name), JSON.stringify({ resource: { vault_policy: { x: { name: 'registry-ci', policy: '' } } } }));
      expect(stackDirectoryProblems(stackDir)).toEqual([expect.stringMatching(new RegExp(`^${JSON.stringify(name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: neither the synthesis, secretstore-iac nor the engine wrote it`))]);
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(['tf', 'app-roles', '--outdir', outdir, '--engine', engine, '--', 'plan'], { env: { PATH: process.env.PATH, TMPDIR: work, SECRETSTORE_ADDR: 'http://127.0.0.1:9' }, cwd: outdir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
      expect({ code, ran: out.join('\n').includes('engine ran') }).toEqual({ code: 4, ran: false });
      expect(err.join('\n')).toContain(`${JSON.stringify(name)}: neither the synthesis, secretstore-iac nor the engine wrote it`);
    },
  );
});
