import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';

// `secretstore-iac tf`: what it refuses before any engine runs. Running it against a real store is
// proven in test/store/engine-command.store.test.ts.

async function tf(args: string[], env: NodeJS.ProcessEnv, cwd = os.tmpdir()) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['tf', ...args], { env, cwd, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

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

  it('passes SECRETSTORE_ADDR to the engine as VAULT_ADDR, in the stack directory, with the engine\'s exit code', async () => {
    const store = await healthServer(200);
    try {
      const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan', '-detailed-exitcode'], {
        PATH: process.env.PATH,
        SECRETSTORE_ADDR: store.address,
      });
      expect(r.stdout).toBe(
        `engine ran in ${fs.realpathSync(path.join(outdir, 'stacks', 'ci-access'))} with VAULT_ADDR=${store.address} args=plan -detailed-exitcode`,
      );
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
          `secretstore-iac tf: engine ${engine} (version unknown; --engine)`,
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
    expect(err).toEqual([`secretstore-iac tf: engine ${waiting} (Waiting v1.0.0; --engine)`, 'second']);
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
