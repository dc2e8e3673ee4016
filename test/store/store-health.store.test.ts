/**
 * `secretstore-iac tf` stops in seconds, before the engine runs, when the real store is sealed or
 * stopped (issue 10: a plan against a stopped store used to print nothing for minutes).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../lib/cli/run-cli';
import { checkStoreHealth } from '../../lib/store/store-health';
import { freePort, RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';
import { storeCli } from '../support/store/store-facts';

describe('tf checks sys/health of the real store first', () => {
  let store: RunningStore;
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-health-'));
  fs.mkdirSync(path.join(outdir, 'stacks', 'ci-access'), { recursive: true });
  fs.writeFileSync(path.join(outdir, 'stacks', 'ci-access', 'cdk.tf.json'), '{}');

  beforeAll(async () => {
    store = await startStore();
  });

  afterAll(async () => {
    await store?.stop();
    fs.rmSync(outdir, { recursive: true, force: true });
  });

  async function tf(...args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const started = Date.now();
    const code = await runCli(['tf', 'ci-access', '--outdir', outdir, '--engine', toolchain().tofu, '--', ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: store.rootToken },
      cwd: outdir,
      isTerminal: false,
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
    });
    return { code, stdout: out.join('\n'), stderr: err.join('\n'), ms: Date.now() - started };
  }

  it('passes the unsealed dev server', async () => {
    await expect(checkStoreHealth(store.addr)).resolves.toEqual({ address: store.addr, status: 200, role: 'active' });
  });

  it(`stops with "sealed" once the store is sealed (${storeCli()} operator seal), naming that store's CLI`, async () => {
    const sealed = await storeRequest(store, 'PUT', 'sys/seal');
    expect(sealed.status).toBe(204);
    const r = await tf('plan');
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `secretstore-iac tf: the secrets store at ${store.addr} is sealed (GET /v1/sys/health: HTTP 503): unseal it (${storeCli()} operator unseal) before planning or applying`,
    );
    expect(r.stdout).toBe('');
    expect(r.ms).toBeLessThan(5000);
  });

  it('the live commands name the sealed store too (a 503 is followed by sys/health)', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const env = { PATH: process.env.PATH, SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: store.rootToken };
    const code = await runCli(['access', 'live'], { env, cwd: outdir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    expect(code).toBe(3);
    expect(err.join('\n')).toBe(
      `secretstore-iac access: cannot read the live store at ${store.addr}: the secrets store at ${store.addr} is sealed ` +
        `(GET /v1/sys/auth: HTTP 503 (Vault is sealed)): unseal it (${storeCli()} operator unseal) and run the command again`,
    );
  });

  it('stops with "connection refused" once the store is stopped', async () => {
    await store.stop();
    const r = await tf('apply', '-auto-approve');
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `secretstore-iac tf: cannot reach the secrets store at ${store.addr} (ECONNREFUSED): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`,
    );
    expect(r.ms).toBeLessThan(5000);
  });
});

describe('a real store that was never initialised is named so, not "sealed"', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-uninit-'));
  let addr: string;
  let child: ReturnType<typeof spawn>;

  beforeAll(async () => {
    const port = await freePort();
    addr = `http://127.0.0.1:${port}`;
    fs.writeFileSync(
      path.join(dir, 'server.hcl'),
      `storage "inmem" {}\nlistener "tcp" {\n  address = "127.0.0.1:${port}"\n  tls_disable = true\n}\ndisable_mlock = true\n`,
    );
    child = spawn(toolchain().bao, ['server', `-config=${path.join(dir, 'server.hcl')}`], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir },
      stdio: 'ignore',
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const res = await fetch(`${addr}/v1/sys/health`);
        await res.arrayBuffer();
        if (res.status === 501) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error('the uninitialised server did not answer sys/health with 501');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  afterAll(async () => {
    if (child?.pid !== undefined) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['drift', ['drift', path.join(__dirname, '..', 'fixtures', 'access', 'base')]],
    ['provision', ['provision', 'registry', '--env-file', 'registry.env']],
  ])('%s says "not initialized"', async (_name, args) => {
    const err: string[] = [];
    const code = await runCli(args, {
      env: { PATH: process.env.PATH, SECRETSTORE_ADDR: addr, VAULT_TOKEN: 'any-token' },
      cwd: dir,
      isTerminal: false,
      stdout: () => undefined,
      stderr: (l) => err.push(l),
    });
    expect(code).toBe(3);
    expect(err.join('\n')).toContain(`the secrets store at ${addr} is not initialized (`);
    expect(err.join('\n')).toContain(`initialize and unseal it first (${storeCli()} operator init)`);
    expect(fs.existsSync(path.join(dir, 'registry.env'))).toBe(false);
  });

  it('tf stops with "not initialized" before the engine runs', async () => {
    await expect(checkStoreHealth(addr)).rejects.toThrow(`the secrets store at ${addr} is not initialized (GET /v1/sys/health: HTTP 501): initialize and unseal it first (${storeCli()} operator init)`);
  });
});
