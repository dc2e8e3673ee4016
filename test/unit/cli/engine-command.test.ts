import { createHash } from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { packageHashV1 } from '../../../lib/engine/provider-package-hash';

// `secretstore-iac tf`: what it refuses before any engine runs. Running it against a real store is
// proven in test/store/engine-command.store.test.ts.

async function tf(args: string[], env: NodeJS.ProcessEnv, cwd = os.tmpdir()) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['tf', ...args], { env, cwd, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** The digest of a stack directory holding `cdk.tf.json` = `{}` (lib/sources/stack-digest.ts), as the engine line names what it laid. */
const EMPTY_STACK_DIGEST = `sha256:${createHash('sha256').update('cdk.tf.json\0' + '2\0').update('{}').digest('hex')}`;

describe('secretstore-iac tf', () => {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tf-'));
  fs.mkdirSync(path.join(outdir, 'stacks', 'ci-access'), { recursive: true });
  fs.writeFileSync(path.join(outdir, 'stacks', 'ci-access', 'cdk.tf.json'), '{}');
  // A fake engine that would prove it ran by printing its address.
  const engine = path.join(outdir, 'fake-engine');
  fs.writeFileSync(engine, '#!/bin/sh\necho "engine ran in $(pwd) with VAULT_ADDR=$VAULT_ADDR args=$*"\nexit 2\n', { mode: 0o755 });

  it('fails fast with the spec\'s message when neither SECRETSTORE_ADDR nor VAULT_ADDR is set', async () => {
    const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan'], { PATH: process.env.PATH });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('SECRETSTORE_ADDR (or VAULT_ADDR / BAO_ADDR) is unset or empty');
    expect(r.stdout).not.toContain('engine ran');
  });

  it('refuses -chdir (exit 4), guarded or not, before the engine runs: the engine runs only in the stack\'s own fresh directory', async () => {
    for (const own of [[], ['--refuse-replace']]) {
      const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, ...own, '--', '-chdir=..', 'plan'], { PATH: process.env.PATH, VAULT_ADDR: 'http://127.0.0.1:1' });
      expect({ own, code: r.code, ran: r.stdout.includes('engine ran') }).toEqual({ own, code: 4, ran: false });
      expect(r.stderr).toContain("ci-access: nothing run: `-chdir=..` would run the engine in another directory than ci-access's own");
    }
  });

  // A local server answering sys/health as an unsealed store (200) or a sealed one (503).
  async function healthServer(status: number, body = JSON.stringify({ initialized: true, sealed: status === 503, version: '2.4.0' })): Promise<{ address: string; close: () => Promise<void> }> {
    const server = http.createServer((_req, res) => {
      res.writeHead(status, { 'Content-Type': status === 200 && !body.startsWith('{') ? 'text/html' : 'application/json' });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { address, close: () => new Promise((r) => server.close(() => r())) };
  }

  it('passes SECRETSTORE_ADDR to the engine as VAULT_ADDR, in a directory laid fresh from the stack directory, with the engine\'s exit code', async () => {
    const store = await healthServer(200);
    try {
      const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan', '-detailed-exitcode'], {
        PATH: process.env.PATH,
        SECRETSTORE_ADDR: store.address,
      });
      // Issue 45: beside stacks/, at a stack directory's depth (lib/engine/engine-working-directory.ts), and gone after the run.
      const runs = path.join(fs.realpathSync(outdir), '.secretstore-iac-engine-runs');
      expect(r.stdout).toMatch(new RegExp(`^engine ran in ${runs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${process.pid}-ci-access-\\w{6} with VAULT_ADDR=${store.address} args=plan -detailed-exitcode$`));
      expect(fs.existsSync(runs)).toBe(false);
      expect(r.code).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('stops before the engine runs when the address answers 200 with a page that is not the store\'s health JSON', async () => {
    const page = await healthServer(200, '<html><title>Login</title></html>');
    try {
      const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan'], { PATH: process.env.PATH, SECRETSTORE_ADDR: page.address });
      expect(r.code).toBe(3);
      expect(r.stderr).toBe(
        `secretstore-iac tf: ${page.address} does not answer GET /v1/sys/health like a secrets store (HTTP 200, "<html><title>Login</title></html>"; ` +
          'the store answers JSON with boolean "initialized" and "sealed"): check SECRETSTORE_ADDR / VAULT_ADDR',
      );
      expect(r.stdout).not.toContain('engine ran');
    } finally {
      await page.close();
    }
  });

  it('warns on every run with VAULT_SKIP_VERIFY, and gives the provider BAO_CACERT as VAULT_CACERT', async () => {
    const store = await healthServer(200);
    const printing = path.join(outdir, 'printing-engine');
    fs.writeFileSync(printing, '#!/bin/sh\necho "VAULT_CACERT=$VAULT_CACERT"\n', { mode: 0o755 });
    const ca = path.join(outdir, 'ca.pem');
    fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    try {
      const env = { PATH: process.env.PATH, SECRETSTORE_ADDR: store.address, VAULT_SKIP_VERIFY: 'true', BAO_CACERT: ca };
      const r = await tf(['ci-access', '--outdir', outdir, '--engine', printing, '--', 'plan'], env);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/^warning: VAULT_SKIP_VERIFY is set: the store's TLS certificate is not verified/);
      expect(r.stdout).toBe(`VAULT_CACERT=${ca}`);
    } finally {
      await store.close();
    }
  });

  it('stops before the engine runs when the store is sealed or unreachable, naming the address', async () => {
    const sealed = await healthServer(503);
    const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'apply'], { PATH: process.env.PATH, SECRETSTORE_ADDR: sealed.address });
    await sealed.close();
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`secretstore-iac tf: the secrets store at ${sealed.address} is sealed (GET /v1/sys/health: HTTP 503): unseal it (bao operator unseal) before planning or applying`);
    expect(r.stdout).not.toContain('engine ran');
    const closed = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan'], { PATH: process.env.PATH, SECRETSTORE_ADDR: sealed.address });
    expect(closed.code).toBe(3);
    expect(closed.stderr).toContain(`cannot reach the secrets store at ${sealed.address} (ECONNREFUSED)`);
    expect(closed.stdout).not.toContain('engine ran');
  });

  it('through a standby: one line on standard error naming the leader, then the engine runs with the standby\'s address', async () => {
    // As an OpenBao raft standby answers: sys/health 200 with "standby": true (standbyok), sys/leader the active node.
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify(
          req.url?.startsWith('/v1/sys/leader')
            ? { ha_enabled: true, is_self: false, leader_address: 'https://bao-1.internal:8200' }
            : { initialized: true, sealed: false, standby: true, performance_standby: false },
        ),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan'], { PATH: process.env.PATH, SECRETSTORE_ADDR: address });
      expect(r.stderr).toBe(
        `secretstore-iac tf: the secrets store at ${address} is a standby node (GET /v1/sys/health: HTTP 200, "standby": true): ` +
          'it forwards requests to the active node; the leader is https://bao-1.internal:8200 (GET /v1/sys/leader)\n' +
          `secretstore-iac tf: engine ${engine} (version unknown; --engine; providers from the registry (no provider mirror: SECRETSTORE_IAC_PROVIDER_MIRROR); configuration: 1 file laid fresh, ${EMPTY_STACK_DIGEST})`,
      );
      expect(r.stdout).toContain(`engine ran in `);
      expect(r.stdout).toContain(`with VAULT_ADDR=${address} args=plan`);
      expect(r.code).toBe(2);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('runs offline subcommands (init) without asking the store', async () => {
    const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'init'], { PATH: process.env.PATH, SECRETSTORE_ADDR: 'http://127.0.0.1:1' });
    expect(r.stdout).toContain('engine ran');
    expect(r.stdout).toContain('args=init');
  });

  it('refuses a stack that was not synthesized', async () => {
    const r = await tf(['nope', '--outdir', outdir, '--engine', engine, '--', 'plan'], { SECRETSTORE_ADDR: 'https://s.example' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no synthesized stack at');
  });

  it('is a usage error without engine arguments', async () => {
    const r = await tf(['ci-access', '--outdir', outdir], { SECRETSTORE_ADDR: 'https://s.example' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('give the engine\'s arguments after "--"');
  });

  it('uses the engine SECRETSTORE_IAC_TOFU names before any engine on PATH', async () => {
    const pathDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tf-path-'));
    fs.writeFileSync(path.join(pathDir, 'tofu'), '#!/bin/sh\necho "PATH tofu ran"\n', { mode: 0o755 });
    const r = await tf(['ci-access', '--outdir', outdir, '--', 'version'], {
      PATH: `${pathDir}:${process.env.PATH}`,
      SECRETSTORE_ADDR: 'https://s.example',
      SECRETSTORE_IAC_TOFU: engine,
    });
    expect(r.stdout).toContain('engine ran');
    expect(r.stdout).not.toContain('PATH tofu ran');
    const withoutIt = await tf(['ci-access', '--outdir', outdir, '--', 'version'], { PATH: `${pathDir}:${process.env.PATH}`, SECRETSTORE_ADDR: 'https://s.example' });
    expect(withoutIt.stdout).toBe('PATH tofu ran');
  });

  it('streams the engine\'s output while it runs instead of collecting it', async () => {
    // The engine waits, after its first line, until the test has seen that line: collected output
    // would never arrive and the engine would wait forever (the test times out). `output` is a
    // subcommand without the store health check.
    const marker = path.join(outdir, 'seen');
    const waiting = path.join(outdir, 'waiting-engine');
    fs.writeFileSync(
      waiting,
      `#!/bin/sh\n[ "$1" = version ] && { echo 'Waiting v1.0.0'; exit 0; }\necho first\nwhile [ ! -e ${marker} ]; do sleep 0.05; done\necho second >&2\n`,
      { mode: 0o755 },
    );
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['tf', 'ci-access', '--outdir', outdir, '--engine', waiting, '--', 'output'], {
      env: { PATH: process.env.PATH, SECRETSTORE_ADDR: 'https://s.example' },
      cwd: os.tmpdir(),
      isTerminal: false,
      stdout: (l) => {
        out.push(l);
        if (l === 'first') fs.writeFileSync(marker, '');
      },
      stderr: (l) => err.push(l),
    });
    expect(code).toBe(0);
    expect(out).toEqual(['first']);
    // First the engine, its version and why it was chosen; then the engine's own output.
    expect(err).toEqual([`secretstore-iac tf: engine ${waiting} (Waiting v1.0.0; --engine; providers from the registry (no provider mirror: SECRETSTORE_IAC_PROVIDER_MIRROR); configuration: 1 file laid fresh, ${EMPTY_STACK_DIGEST})`, 'second']);
  });
});

describe('secretstore-iac tf: the guards on every engine command that can change the store', () => {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tf-guards-'));
  const stackDir = path.join(outdir, 'stacks', 'app-roles');
  fs.mkdirSync(stackDir, { recursive: true });
  fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), JSON.stringify({ resource: { vault_policy: { p: { name: 'team-b' } } } }));
  const calls = path.join(outdir, 'calls.txt');
  const planJson = path.join(outdir, 'plan.json');
  // A fake engine: records each call; `plan -out=F` writes F, `show -json` prints plan.json, `state list` two addresses.
  const engine = path.join(outdir, 'fake-engine');
  fs.writeFileSync(
    engine,
    [
      '#!/bin/sh',
      '[ "$1" = version ] && { echo "Fake v1.0.0"; exit 0; }',
      `echo "$*" >> ${calls}`,
      'case "$1" in',
      '  plan) for a in "$@"; do case "$a" in -out=*) echo plan > "${a#-out=}";; esac; done; exit 0;;',
      `  show) cat ${planJson}; exit 0;;`,
      '  state) printf "vault_auth_backend.approle\\nvault_policy.p\\n"; exit 0;;',
      '  *) echo "engine ran $*"; exit 0;;',
      'esac',
    ].join('\n'),
    { mode: 0o755 },
  );
  const deletesMount = { resource_changes: [{ address: 'vault_auth_backend.approle', type: 'vault_auth_backend', change: { actions: ['delete'], before: { path: 'approle', type: 'approle' }, after: null } }] };
  const updatesPolicy = { resource_changes: [{ address: 'vault_policy.p', type: 'vault_policy', change: { actions: ['update'], before: { name: 'team-b' }, after: { name: 'team-b' } } }] };
  const createsPolicy = { resource_changes: [{ address: 'vault_policy.p', type: 'vault_policy', change: { actions: ['create'], before: null, after: { name: 'team-b' } } }] };

  // A store: healthy; team-b's policy answers `policy` (403 both ways, or 404).
  let policy: 403 | 404 = 404;
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    const [status, body] = url.startsWith('/v1/sys/health')
      ? [200, { initialized: true, sealed: false }]
      : url.startsWith('/v1/sys/policies/acl')
        ? [policy, { errors: [policy === 403 ? 'permission denied' : ''] }]
        : [404, { errors: [] }];
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  let address = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  async function run(plan: unknown, ...args: string[]) {
    fs.writeFileSync(planJson, JSON.stringify(plan));
    fs.rmSync(calls, { force: true });
    const r = await tf(['app-roles', '--outdir', outdir, '--engine', engine, ...args], { PATH: process.env.PATH, SECRETSTORE_ADDR: address, VAULT_TOKEN: 'test-token' });
    const ran = fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').trim().split('\n') : [];
    // The guard's temporary plan file, as one word.
    return { ...r, ran: ran.map((l) => l.replace(/\/\S*secretstore-iac-guard-[^/ ]+\/guard\.tfplan/g, 'GUARDPLAN')) };
  }

  it('apply -destroy -auto-approve: the guard plans WITH -destroy, sees the mount destroyed, refuses (exit 4); no apply runs', async () => {
    const r = await run(deletesMount, '--refuse-replace', '--', 'apply', '-destroy', '-auto-approve', '-input=false');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('secretstore-iac tf: app-roles: nothing applied: the plan would destroy or replace 1 object, refused:\n  vault_auth_backend.approle would be destroyed. Fix:');
    expect(r.ran).toEqual(['plan -destroy -input=false -lock=false -out=GUARDPLAN', 'show -json GUARDPLAN']);
  });

  it('destroy and apply -replace= are planned with their arguments and refused the same way', async () => {
    const destroy = await run(deletesMount, '--refuse-replace', '--', 'destroy', '-auto-approve');
    expect([destroy.code, destroy.ran[0]]).toEqual([4, 'plan -destroy -input=false -lock=false -out=GUARDPLAN']);
    const replace = await run(deletesMount, '--refuse-replace', '--', 'apply', '-replace=vault_auth_backend.approle');
    expect([replace.code, replace.ran[0]]).toEqual([4, 'plan -replace=vault_auth_backend.approle -input=false -lock=false -out=GUARDPLAN']);
  });

  it('a plan that passes: -auto-approve applies the reviewed plan file itself, without the plan-shaping arguments', async () => {
    const r = await run(updatesPolicy, '--refuse-replace', '--', 'apply', '-auto-approve', '-target=vault_policy.p', '-lock-timeout=10m');
    expect(r.code).toBe(0);
    expect(r.ran).toEqual([
      'plan -target=vault_policy.p -lock-timeout=10m -input=false -lock=false -out=GUARDPLAN',
      'show -json GUARDPLAN',
      'apply -auto-approve -lock-timeout=10m GUARDPLAN',
    ]);
    expect(r.stderr).toContain('secretstore-iac tf: reviewed `plan -target=vault_policy.p -lock-timeout=10m -input=false -lock=false`: nothing destroyed, replaced or taken over');
    // The temporary plan is gone.
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('secretstore-iac-guard-') && fs.existsSync(path.join(os.tmpdir(), f, 'guard.tfplan')))).toEqual([]);
  });

  it('without -auto-approve, after the review the command runs as given (the engine shows its plan and asks)', async () => {
    const r = await run(updatesPolicy, '--refuse-replace', '--', 'apply', '-target=vault_policy.p');
    expect([r.code, r.ran[2]]).toEqual([0, 'apply -target=vault_policy.p']);
  });

  it('import, taint and state rm are refused before any engine runs', async () => {
    for (const args of [['import', 'vault_policy.p', 'team-b'], ['taint', 'vault_policy.p'], ['state', 'rm', 'vault_policy.p']]) {
      const r = await run(updatesPolicy, '--refuse-replace', '--', ...args);
      expect([r.code, r.ran]).toEqual([4, []]);
      expect(r.stderr).toMatch(/^secretstore-iac tf: app-roles: nothing run: `(import|taint|state rm)` .* Fix: /);
    }
  });

  it('a created object the token may not read (403 on GET and LIST): the apply is refused, naming the rule; on plan -out it is a note', async () => {
    policy = 403;
    try {
      const applied = await run(createsPolicy, '--refuse-replace', '--', 'apply', '-auto-approve');
      expect(applied.code).toBe(4);
      expect(applied.stderr).toContain(
        '  vault_policy.p (sys/policies/acl/team-b): path "sys/policies/acl/team-b" { capabilities = ["read"] } (or path "sys/policies/acl" { capabilities = ["list"] }, and path "sys/policies/acl/" { capabilities = ["list"] } from OpenBao 2.6.0 / Vault 2.0.3)',
      );
      expect(applied.ran).toHaveLength(2);
      const planned = await run(createsPolicy, '--refuse-replace', '--', 'plan', '-out=saved.tfplan');
      expect(planned.code).toBe(0);
      expect(planned.stderr).toContain('secretstore-iac tf: note: cannot check whether the store already has 1 object the plan creates');
      expect(fs.existsSync(path.join(stackDir, 'saved.tfplan'))).toBe(true);
    } finally {
      policy = 404;
    }
    const created = await run(createsPolicy, '--refuse-replace', '--', 'apply', '-auto-approve');
    expect([created.code, created.ran[2]]).toEqual([0, 'apply -auto-approve GUARDPLAN']);
  });

  it('a refused plan -out=FILE is removed, so that no apply without the guard picks it up', async () => {
    const r = await run(deletesMount, '--refuse-replace', '--', 'plan', '-destroy', '-out=refused.tfplan');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('app-roles: the saved plan refused.tfplan was removed: the plan would destroy');
    expect(fs.existsSync(path.join(stackDir, 'refused.tfplan'))).toBe(false);
  });

  it('without --refuse-replace, destroy and apply -destroy are refused (exit 4) listing the state, unless --allow-destroy', async () => {
    const r = await run(deletesMount, '--', 'destroy', '-auto-approve');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(
      'secretstore-iac tf: app-roles: nothing destroyed: `destroy -auto-approve` destroys every object in the stack\'s state (2: vault_auth_backend.approle, vault_policy.p)',
    );
    expect(r.ran).toEqual(['state list']);
    const applyDestroy = await run(deletesMount, '--', 'apply', '-destroy');
    expect([applyDestroy.code, applyDestroy.ran]).toEqual([4, ['state list']]);
    const allowed = await run(deletesMount, '--allow-destroy', '--', 'destroy', '-auto-approve');
    expect([allowed.code, allowed.ran, allowed.stdout]).toEqual([0, ['destroy -auto-approve'], 'engine ran destroy -auto-approve']);
    // A preview is not a destroy.
    const preview = await run(deletesMount, '--', 'plan', '-destroy');
    expect([preview.code, preview.ran]).toEqual([0, ['plan -destroy']]);
  });

  it('--allow-destroy with --refuse-replace, or with a command that destroys nothing, is a usage error', async () => {
    expect((await run(deletesMount, '--allow-destroy', '--refuse-replace', '--', 'destroy')).code).toBe(2);
    const r = await run(deletesMount, '--allow-destroy', '--', 'apply');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--allow-destroy is only for `destroy`, `apply -destroy` and `plan -destroy -out=FILE`');
  });
});

describe('secretstore-iac tf: the providers the engine starts are the builds the tool installed (issue 45)', () => {
  // A toolchain cache with a provider mirror (SECRETSTORE_IAC_CACHE), a stack initialized from it,
  // and a fake engine that records every call (the swapped provider "running" is the engine running
  // at all: nothing starts a provider but the engine). `init` installs what TF_VAR_fake_install names (input variables reach the engine, issue 45).
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tf-providers-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  const ADDRESS = 'registry.opentofu.org/hashicorp/vault';
  const layPackage = (base: string, binary: string): string => {
    const dir = path.join(base, ADDRESS, '5.9.0', 'linux_amd64');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'terraform-provider-vault_v5.9.0'), binary, { mode: 0o755 });
    return dir;
  };
  const cache = path.join(root, 'cache');
  const mirrored = layPackage(path.join(cache, 'provider-mirror'), 'the toolchain build');
  const swapped = layPackage(path.join(root, 'evil'), 'a swapped build');
  const lockText = (hash: string) => `provider "${ADDRESS}" {\n  version     = "5.9.0"\n  constraints = ">= 5.6.0, < 6.0.0"\n  hashes = [\n    "${hash}",\n  ]\n}\n`;
  const outdir = path.join(root, 'cdktf.out');
  const stackDir = path.join(outdir, 'stacks', 'app-roles');
  fs.mkdirSync(stackDir, { recursive: true });
  fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{}');
  const calls = path.join(root, 'calls.txt');
  const engine = path.join(root, 'fake-engine');
  fs.writeFileSync(
    engine,
    [
      '#!/bin/sh',
      '[ "$1" = version ] && { echo "Fake v1.0.0"; exit 0; }',
      `echo "$*" >> ${calls}`,
      'if [ "$1" = init ] && [ -n "$TF_VAR_fake_install" ]; then',
      `  rm -rf .terraform/providers; mkdir -p .terraform/providers/${ADDRESS}/5.9.0; cp -r "$TF_VAR_fake_install" .terraform/providers/${ADDRESS}/5.9.0/linux_amd64`,
      '  printf "%s" "$TF_VAR_fake_lock" > .terraform.lock.hcl',
      'fi',
      'exit 0',
    ].join('\n'),
    { mode: 0o755 },
  );
  let address = '';
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ initialized: true, sealed: false }));
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  async function run(env: NodeJS.ProcessEnv, ...args: string[]) {
    fs.rmSync(calls, { force: true });
    const r = await tf(['app-roles', '--outdir', outdir, '--engine', engine, ...args], { PATH: process.env.PATH, SECRETSTORE_ADDR: address, SECRETSTORE_IAC_CACHE: cache, ...env });
    return { ...r, ran: fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').trim().split('\n') : [] };
  }
  const install = (from: string) => ({ TF_VAR_fake_install: from, TF_VAR_fake_lock: lockText(packageHashV1(from)) });

  it('init from the mirror, then a guarded plan: run as given', async () => {
    const init = await run(install(mirrored), '--', 'init', '-input=false');
    expect([init.code, init.ran]).toEqual([0, ['init -input=false']]);
    const plan = await run({}, '--refuse-replace', '--', 'plan', '-input=false');
    expect([plan.code, plan.ran]).toEqual([0, ['plan -input=false']]);
  });

  it('an init that installs a swapped build (init -plugin-dir, run without the guard): refused after it (exit 4), its lock not kept; every later run refused before the engine starts', async () => {
    const before = fs.readFileSync(path.join(stackDir, '.terraform.lock.hcl'), 'utf8');
    const init = await run(install(swapped), '--', 'init', '-input=false', `-plugin-dir=${path.dirname(path.dirname(path.dirname(path.dirname(swapped))))}`);
    expect(init.code).toBe(4);
    expect(init.stderr).toContain('app-roles: the lock it wrote is not kept: the providers are not the builds the tool installed');
    expect(init.stderr).toContain(`hashes to ${packageHashV1(swapped)}; expected ${packageHashV1(mirrored)}`);
    expect(fs.readFileSync(path.join(stackDir, '.terraform.lock.hcl'), 'utf8')).toBe(before);
    for (const args of [['--', 'plan'], ['--refuse-replace', '--', 'apply', '-auto-approve'], ['--', 'state', 'list']]) {
      const r = await run({}, ...args);
      expect({ args, code: r.code, ran: r.ran }).toEqual({ args, code: 4, ran: [] });
      expect(r.stderr).toContain(`${ADDRESS} 5.9.0 (linux_amd64): installed .terraform/providers/${ADDRESS}/5.9.0/linux_amd64 hashes to ${packageHashV1(swapped)}`);
    }
    // The fix, as named: init again from the mirror.
    fs.rmSync(path.join(stackDir, '.terraform'), { recursive: true });
    expect((await run(install(mirrored), '--', 'init')).code).toBe(0);
    expect((await run({}, '--', 'plan')).ran).toEqual(['plan']);
  });

  it('under --refuse-replace, providers lock and init -plugin-dir are refused before the engine runs; -lock=false on an apply is refused with or without the guard', async () => {
    for (const args of [['--refuse-replace', '--', 'providers', 'lock', `-fs-mirror=${root}/evil`], ['--refuse-replace', '--', 'init', `-plugin-dir=${root}/evil`], ['--refuse-replace', '--', 'init', '-upgrade'], ['--', 'apply', '-lock=false', '-auto-approve'], ['--refuse-replace', '--', 'apply', '-lock=false', '-auto-approve']]) {
      const r = await run({}, ...args);
      expect({ args, code: r.code, ran: r.ran }).toEqual({ args, code: 4, ran: [] });
    }
  });

  it('a lock file edited to add a swapped build\'s hash is refused before the engine starts (exit 4), naming the hash', async () => {
    const lockFile = path.join(stackDir, '.terraform.lock.hcl');
    const good = fs.readFileSync(lockFile, 'utf8');
    fs.writeFileSync(lockFile, good.replace('  ]', `    "${packageHashV1(swapped)}",\n  ]`));
    try {
      const r = await run({}, '--', 'plan');
      expect([r.code, r.ran]).toEqual([4, []]);
      expect(r.stderr).toContain(`.terraform.lock.hcl lists ${packageHashV1(swapped)}; expected only ${packageHashV1(mirrored)}`);
    } finally {
      fs.writeFileSync(lockFile, good);
    }
  });
});
