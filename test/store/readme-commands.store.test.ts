/**
 * Every command of README.md is run by a test (issue 18).
 *
 * The commands are found by the rule of test/support/readme-commands.ts (every line of a ```sh
 * block; inline code starting with npm, npx, bash, ...). Each one must be an entry of COMMANDS
 * below, in one of two forms:
 * - run here, as written: in a fresh clone of this repository (a temporary git repository holding
 *   the working tree's files, cloned, so `origin/main` exists), by bash, one shell session for the
 *   whole README (an `export` holds for the commands after it), against a real dev store of the
 *   store under test (test/support/store/store-server.ts), then checked for what the README says
 *   it does;
 * - run elsewhere: the test or CI step that runs it, with the text that file must hold (checked
 *   here, so that the mapping cannot rot).
 * A README command with no entry fails its own test, as does an entry no README command uses.
 *
 * Only the README's placeholders are replaced (PLACEHOLDERS, visible in each test's title); the
 * tokens reach the session as variables (`ADMIN_TOKEN`, `READER_TOKEN`), never in a command line,
 * and no output may contain one.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readStoreConfiguration } from '../../lib/access/store-configuration';
import { readerPolicy } from '../../lib/reconcile/live-store-reader';
import { generateSigningKey } from '../support/store/jwt-signer';
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeCli } from '../support/store/store-facts';
import { cacheDir, storeKind } from '../support/store/toolchain-env';
import { fencedBlocks, pageCommands } from '../support/readme-commands';
import { REPO_ROOT } from '../support/paths';

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** The shell session the README's commands run in, and what the steps before left for the next. */
interface Session {
  readonly store: RunningStore;
  /** The PostgreSQL the shipped stacks/main.ts keeps the state in (postgresState()). */
  readonly pg: RunningPostgres;
  /** The clone: every command's starting directory. */
  readonly clone: string;
  /** The session's environment, as the last command left it. */
  env: NodeJS.ProcessEnv;
  /** Its working directory, as the last command left it. */
  cwd: string;
  /** Every token the session holds, by the name printed instead of it. */
  readonly tokens: Map<string, string>;
}

/** What one command printed, tokens replaced by their names, colours removed. */
interface CommandRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A command run here: an optional preparation a reader would have done, then checks of its effect. */
interface RunHere {
  readonly before?: (s: Session) => Promise<void> | void;
  readonly check: (run: CommandRun, s: Session) => Promise<void> | void;
}

/** A command run by another test or by CI: which, and the text each named file must hold. */
interface RunElsewhere {
  readonly ranBy: string;
  readonly evidence: ReadonlyArray<{ readonly file: string; readonly contains: string }>;
}

/** README placeholders and what the session runs instead. */
const PLACEHOLDERS: ReadonlyArray<{ readonly readme: string; readonly runAs: (s: Session) => string; readonly why: string }> = [
  { readme: 'https://secrets.example:8200', runAs: (s) => s.store.addr, why: "the test's dev store" },
  { readme: 'VAULT_TOKEN=...', runAs: () => 'VAULT_TOKEN=$ADMIN_TOKEN', why: "the dev store's root token, from the session's ADMIN_TOKEN" },
  { readme: 'PG_CONN_STR=postgres://...', runAs: () => 'PG_CONN_STR=$STATE_PG', why: "a throwaway PostgreSQL's connection string, from the session's STATE_PG" },
];

/** The chain from .ci/run to the unit and store suites (`npm test`, `npm run test:store`). */
const CI_RUNS_ALL_TESTS = [
  { file: '.ci/run', contains: 'exec bash scripts/setup.sh --test' },
  { file: 'scripts/setup.sh', contains: 'npm run test:all' },
  { file: 'package.json', contains: '"test:all": "bash scripts/test-all.sh"' },
  { file: 'scripts/test-all.sh', contains: "suite 'unit tests (npm test)' npm test" },
  { file: 'scripts/test-all.sh', contains: "suite 'store suites (npm run test:store)' npm run test:store" },
];

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=readme test', '-c', 'user.email=readme@test.invalid', ...args], { cwd, encoding: 'utf8' });

/** The ciKeySource and `accounts` a reader writes into stacks/platform.config.ts (and commits). */
function configure(s: Session): void {
  const file = path.join(s.clone, 'stacks', 'platform.config.ts');
  let text = fs.readFileSync(file, 'utf8');
  const edit = (anchor: string, replacement: string): void => {
    if (!text.includes(anchor)) throw new Error(`stacks/platform.config.ts no longer has "${anchor}": update configure() in this test`);
    text = text.replace(anchor, replacement);
  };
  // The README's "Add a service account" in the configuration: the example's `accounts` map.
  const example = fs.readFileSync(path.join(s.clone, 'examples', 'registry-account-in-config.ts'), 'utf8');
  const accounts = /\n {2}accounts: (\{\n[\s\S]*?\n {2}\}),\n\};/.exec(example)?.[1];
  if (accounts === undefined) throw new Error('examples/registry-account-in-config.ts has no `accounts: {...}` to copy');
  // A CI key source needs only a public key: the store contacts no CI server.
  const pem = generateSigningKey().publicKeyPem;
  edit("import { Duration, PlatformConfig } from 'secretstore-iac';", "import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';");
  edit(
    'export const platformConfig: PlatformConfig = {\n',
    `export const platformConfig: PlatformConfig = {\n  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(pem)}]),\n  accounts: ${accounts},\n`,
  );
  if (storeKind() === 'vault') {
    // The README's own sentence for Vault, as written.
    const setting = /`settings\.store: (\{ kind: 'vault'[^`]*\})`/.exec(README)?.[1];
    if (setting === undefined) throw new Error("README.md no longer says `settings.store: { kind: 'vault', ... }`");
    edit('  settings: {\n', `  settings: {\n    store: ${setting},\n`);
  }
  fs.writeFileSync(file, text);
  git(s.clone, 'commit', '-q', '-am', 'configure the platform: test CI key, the mirror account');
}

/** An AppRole mount and one declared role made by hand, as on a store run before the library. */
async function handMadeAppRole(s: Session): Promise<void> {
  for (const [apiPath, body] of [
    ['sys/auth/approle', { type: 'approle' }],
    ['auth/approle/role/orchestrator-dev', { token_ttl: '2h', token_policies: ['orchestrator-dev'] }],
  ] as const) {
    expect([apiPath, (await storeRequest(s.store, 'POST', apiPath, body)).status]).toEqual([apiPath, 204]);
  }
}

/**
 * READER_TOKEN: a token with exactly the reader policy (docs/adoption.md) written for the store the
 * clone's synthesized output targets (the README's Vault setting names its version), no `default`.
 */
async function readerToken(s: Session): Promise<void> {
  const policy = readerPolicy(readStoreConfiguration(path.join(s.clone, 'cdktf.out')).store);
  expect((await storeRequest(s.store, 'PUT', 'sys/policies/acl/secretstore-iac-reader', { policy })).status).toBe(204);
  const created = await storeRequest(s.store, 'POST', 'auth/token/create', { policies: ['secretstore-iac-reader'], no_default_policy: true, ttl: '1h' });
  const token: string = created.body.auth.client_token;
  s.tokens.set('READER_TOKEN', token);
  s.env = { ...s.env, READER_TOKEN: token };
}

const stackFile = (s: Session, ...parts: string[]): string => path.join(s.clone, 'cdktf.out', 'stacks', ...parts);

/**
 * Every README command, as written (after `#` comments are cut off), and how a test runs it.
 * Add a README command here: run it in the session, or name the test or CI step that runs it.
 */
const COMMANDS: Readonly<Record<string, RunHere | RunElsewhere>> = {
  'bash scripts/setup.sh --synth': {
    check: (run, s) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('synthesized cdktf.out/stacks/{app-roles,ci-access}/cdk.tf.json');
      // npm ci installed the clone's own packages.
      expect(fs.lstatSync(path.join(s.clone, 'node_modules')).isDirectory()).toBe(true);
      expect(fs.existsSync(stackFile(s, 'ci-access', 'cdk.tf.json'))).toBe(true);
    },
  },
  'bash scripts/setup.sh --test': { ranBy: '.ci/run, the CI job', evidence: [CI_RUNS_ALL_TESTS[0]] },
  'npm run demo': { ranBy: 'test/store/demo.store.test.ts', evidence: [{ file: 'test/store/demo.store.test.ts', contains: "spawn('npm', ['run', 'demo']" }] },
  'npm run bench:store': {
    ranBy: 'test/store/store-bench.store.test.ts, at 24 applications (the README\'s sizes take minutes; the figures come from a full run)',
    evidence: [{ file: 'test/store/store-bench.store.test.ts', contains: "['run', 'bench:store', '--'" }],
  },
  'npm test': { ranBy: '.ci/run through npm run test:all', evidence: CI_RUNS_ALL_TESTS },
  'npm run test:store': { ranBy: '.ci/run through npm run test:all', evidence: CI_RUNS_ALL_TESTS },
  'npm run synth': {
    before: configure,
    check: (run, s) => {
      expect(run.code).toBe(0);
      const ciAccess = JSON.parse(fs.readFileSync(stackFile(s, 'ci-access', 'cdk.tf.json'), 'utf8'));
      const jwt = Object.values<any>(ciAccess.resource.vault_jwt_auth_backend)[0];
      expect(jwt.jwt_validation_pubkeys).toHaveLength(1);
      const policies = Object.values<any>(ciAccess.resource.vault_policy).map((p) => p.policy).join('\n');
      expect(policies).toContain('path "secret/data/registry/svc-mirror"');
      // OpenBao by default; on Vault, the README's settings.store makes the agents run Vault's agent.
      const entrypoint = fs.readFileSync(path.join(s.clone, 'cdktf.out', 'agents', 'orchestrator-dev', 'entrypoint.sh'), 'utf8');
      expect(entrypoint).toContain(`overrides the agent binary (default: ${storeCli()}).`);
    },
  },
  'export SECRETSTORE_ADDR=https://secrets.example:8200 VAULT_TOKEN=... PG_CONN_STR=postgres://...': {
    check: (run, s) => {
      expect(run.code).toBe(0);
      expect(s.env.SECRETSTORE_ADDR).toBe(s.store.addr);
      expect(s.env.VAULT_TOKEN === s.store.rootToken).toBe(true);
      // stacks/main.ts keeps the state in PostgreSQL: the README's later tf commands use this one.
      expect(s.env.PG_CONN_STR).toBe(s.pg.connStr);
    },
  },
  'npx secretstore-iac tf ci-access -- init': {
    check: (run, s) => {
      expect(run.code).toBe(0);
      // No engine named: the toolchain's OpenTofu, with its provider mirror, and it says so.
      expect(run.stderr).toContain(`secretstore-iac tf: engine ${cacheDir()}/bin/tofu (OpenTofu v`);
      expect(run.stderr).toContain(`the OpenTofu npm run toolchain built; providers from the mirror ${cacheDir()}/provider-mirror; configuration: 1 file laid fresh, sha256:`);
      expect(run.stdout).toContain('OpenTofu has been successfully initialized!');
      expect(fs.existsSync(stackFile(s, 'ci-access', '.terraform.lock.hcl'))).toBe(true);
      // Kept beside cdktf.json, where a configuration repository commits it (docs/configuration-repository.md).
      expect(run.stderr).toContain('copied to locks/ci-access/.terraform.lock.hcl; commit it');
    },
  },
  'npx secretstore-iac tf ci-access --refuse-replace -- plan -out=ci.tfplan': {
    check: (run, s) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/Plan: [1-9]\d* to add, 0 to change, 0 to destroy\./);
      expect(fs.existsSync(stackFile(s, 'ci-access', 'ci.tfplan'))).toBe(true);
    },
  },
  'npx secretstore-iac tf ci-access --refuse-replace -- apply ci.tfplan': {
    check: async (run, s) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/Apply complete! Resources: [1-9]\d* added, 0 changed, 0 destroyed\./);
      const role = await storeRequest(s.store, 'GET', 'auth/jwt/role/registry-ci');
      expect(role.body.data.token_policies).toEqual(['registry-ci']);
      const policy = await storeRequest(s.store, 'GET', 'sys/policies/acl/registry-ci');
      expect(policy.body.data.policy).toContain('path "secret/data/registry/svc-mirror"');
    },
  },
  'npx secretstore-iac tf ci-access -- init && npx secretstore-iac tf app-roles -- init': {
    check: (run, s) => {
      expect(run.code).toBe(0);
      expect(fs.existsSync(stackFile(s, 'app-roles', '.terraform.lock.hcl'))).toBe(true);
    },
  },
  'VAULT_TOKEN=$READER_TOKEN npx secretstore-iac adopt': {
    before: async (s) => {
      await handMadeAppRole(s);
      await readerToken(s);
    },
    check: (run, s) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/\n {2}vault_approle_auth_backend_role\.orchestrator-dev_role_\w+ {2}<- {2}auth\/approle\/role\/orchestrator-dev\n/);
      expect(run.stdout).toMatch(/\n {2}vault_auth_backend\.approle_backend_\w+ {2}<- {2}approle\n/);
      expect(run.stdout).toContain('Wrote cdktf.out/stacks/app-roles/adopt-imports.tf.json.');
      expect(run.stdout).toContain('Plan check: applying the imports destroys and replaces nothing (app-roles).');
      const imports = JSON.parse(fs.readFileSync(stackFile(s, 'app-roles', 'adopt-imports.tf.json'), 'utf8')).import;
      expect(imports.map((i: { id: string }) => i.id).sort()).toEqual(['approle', 'auth/approle/role/orchestrator-dev']);
    },
  },
  'VAULT_TOKEN=$READER_TOKEN npx secretstore-iac drift cdktf.out': {
    check: (run) => {
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('- `auth/approle/role/orchestrator-dev`: role approle/orchestrator-dev differs');
      expect(run.stdout).toContain('  - token_ttl: declared 12h, store 2h');
      expect(run.stdout).toContain('- `sys/policies/acl/orchestrator-dev`: policy orchestrator-dev is declared but missing on the store');
    },
  },
  'npx secretstore-iac drift --print-reader-policy': {
    check: async (run, s) => {
      expect(run.code).toBe(0);
      // What it prints is the policy READER_TOKEN was made with, and that token just read the store.
      const onStore = await storeRequest(s.store, 'GET', 'sys/policies/acl/secretstore-iac-reader');
      expect(run.stdout.trimEnd()).toBe(onStore.body.data.policy.trimEnd());
    },
  },
  'npx secretstore-iac access-diff origin/main HEAD': {
    check: (run) => {
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('### Changed: `jwt/registry-ci`');
      expect(run.stdout).toContain('| `secret/data/registry/svc-mirror` (new) | read |  | read |');
    },
  },
  'npx secretstore-iac who-can read secret/data/registry/svc-orchestrator cdktf.out': {
    check: (run) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        'read on secret/data/registry/svc-orchestrator:\n  jwt/registry-ci  via "secret/data/registry/svc-orchestrator" (policies: registry-ci)\n',
      );
    },
  },
  'npx secretstore-iac access live --identity jwt/registry-ci': {
    check: (run, s) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`1 identity in 1 stack (store \`${s.store.addr}\`).`);
      expect(run.stdout).toContain('| `secret/data/registry/svc-mirror` | read | registry-ci |');
    },
  },
};

/** The command as the session runs it: the README's placeholders replaced. */
function substituted(command: string, s: Session): string {
  return PLACEHOLDERS.reduce((text, p) => text.split(p.readme).join(p.runAs(s)), command);
}

/** Runs one command line in the session with bash, and keeps the environment and directory it leaves. */
async function runInSession(command: string, s: Session): Promise<CommandRun & { leaked: string[] }> {
  const envFile = path.join(path.dirname(s.clone), 'session.env');
  const script = `${command}\n__code=$?\nenv -0 > "$1"\nexit $__code`;
  const raw = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', ['-c', script, 'readme-session', envFile], { cwd: s.cwd, env: s.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  if (fs.existsSync(envFile)) {
    const entries = fs
      .readFileSync(envFile, 'utf8')
      .split('\0')
      .filter((e) => e.includes('='))
      .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]);
    const { PWD, SHLVL, _, OLDPWD, ...env } = Object.fromEntries(entries);
    s.env = env;
    s.cwd = PWD ?? s.cwd;
    fs.rmSync(envFile);
  }
  const leaked = [...s.tokens].filter(([, value]) => raw.stdout.includes(value) || raw.stderr.includes(value)).map(([name]) => name);
  const clean = (text: string): string =>
    [...s.tokens].reduce((t, [name, value]) => t.split(value).join(`<${name}>`), text).replace(/\u001b\[[0-9;]*m/g, '');
  return { code: raw.code, stdout: clean(raw.stdout), stderr: clean(raw.stderr), leaked };
}

/** PATH without node_modules/.bin directories (jest's runner may add them): a reader's shell has none. */
function readersPath(): string {
  return (process.env.PATH ?? '/usr/bin:/bin')
    .split(path.delimiter)
    .filter((dir) => !dir.split(path.sep).includes('node_modules'))
    .join(path.delimiter);
}

/** A temporary repository holding the working tree's files (tracked, or new and not ignored). */
function seedRepository(dir: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of new Set(files)) {
    const from = path.join(REPO_ROOT, file);
    // Only regular files: a deleted file, or the node_modules link of a worktree, is not part of a clone.
    if (!fs.existsSync(from) || !fs.lstatSync(from).isFile()) continue;
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(from, path.join(dir, file));
    fs.chmodSync(path.join(dir, file), fs.statSync(from).mode & 0o777);
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'the repository as cloned');
}

describe('every command in README.md is run by a test', () => {
  const commands = pageCommands(README);
  let tmp: string;
  let s: Session;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-readme-'));
    fs.chmodSync(tmp, 0o700);
    seedRepository(path.join(tmp, 'origin'));
    execFileSync('git', ['clone', '-q', path.join(tmp, 'origin'), path.join(tmp, 'clone')]);
    const store = await startStore();
    const pg = await startPostgres();
    s = {
      store,
      pg,
      clone: path.join(tmp, 'clone'),
      cwd: path.join(tmp, 'clone'),
      tokens: new Map([['ADMIN_TOKEN', store.rootToken]]),
      env: {
        PATH: readersPath(),
        HOME: process.env.HOME,
        ...(process.env.SECRETSTORE_IAC_CACHE ? { SECRETSTORE_IAC_CACHE: process.env.SECRETSTORE_IAC_CACHE } : {}),
        ADMIN_TOKEN: store.rootToken,
        STATE_PG: pg.connStr,
      },
    };
  });

  afterAll(async () => {
    await s?.store.stop();
    await s?.pg.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('README.md has commands, and every entry of the table is one of them (no entry outlives its command)', () => {
    expect(commands.length).toBeGreaterThan(0);
    const inReadme = new Set(commands.map((c) => c.command));
    expect(Object.keys(COMMANDS).filter((c) => !inReadme.has(c))).toEqual([]);
  });

  it.each(PLACEHOLDERS.map((p) => [p.readme, p.why]))('the placeholder %s (run as %s) is in a README command', (readme) => {
    expect(commands.some((c) => c.command.includes(readme))).toBe(true);
  });

  it.each(fencedBlocks(README).filter((b) => b.language === 'ts').map((b) => [b.line, b.text]))(
    'the ```ts block at README.md:%i is an examples/ file, compiled and run by test/unit/examples/readme-examples.test.ts',
    (_line, text) => {
      const example = fs.readdirSync(path.join(REPO_ROOT, 'examples')).find((f) => fs.readFileSync(path.join(REPO_ROOT, 'examples', f), 'utf8').trim() === text.trim());
      expect(example).toBeDefined();
      const unit = fs.readFileSync(path.join(REPO_ROOT, 'test', 'unit', 'examples', 'readme-examples.test.ts'), 'utf8');
      expect(unit).toContain(`from '../../../examples/${example!.replace(/\.ts$/, '')}'`);
    },
  );

  for (const { command, line, form } of commands) {
    const how = COMMANDS[command];
    const where = `README.md:${line} (${form})`;
    if (how === undefined) {
      it(`${where} \`${command}\` is run by a test`, () => {
        throw new Error(
          `\`${command}\` is in README.md but no test runs it: add it to COMMANDS in test/store/readme-commands.store.test.ts, ` +
            'run in the session with a check of what the README says it does, or with the test or CI step that runs it',
        );
      });
    } else if ('ranBy' in how) {
      it(`${where} \`${command}\` is run by ${how.ranBy}`, () => {
        for (const { file, contains } of how.evidence) {
          expect({ file, holds: fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').includes(contains) }).toEqual({ file, holds: true });
        }
      });
    } else {
      const run = substituted(command, { store: { addr: '<store>' } } as Session);
      it(`${where} \`${command}\` runs as written${run === command ? '' : ` (as \`${run}\`)`}`, async () => {
        await how.before?.(s);
        const result = await runInSession(substituted(command, s), s);
        expect({ command, leaked: result.leaked }).toEqual({ command, leaked: [] });
        try {
          await how.check(result, s);
        } catch (error) {
          // What the command printed, tokens replaced by their names.
          (error as Error).message += `\n\nexit ${result.code}\n--- stdout (tail)\n${result.stdout.slice(-3000)}\n--- stderr (tail)\n${result.stderr.slice(-3000)}`;
          throw error;
        }
      });
    }
  }
});
