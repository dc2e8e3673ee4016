/**
 * `secretstore-iac tf` stops in seconds, before the engine runs, when the real store is sealed or
 * stopped (issue 10: a plan against a stopped store used to print nothing for minutes).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../lib/cli/run-cli';
import { checkStoreHealth } from '../../lib/store/store-health';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';

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
    await expect(checkStoreHealth(store.addr)).resolves.toBeUndefined();
  });

  it('stops with "sealed" once the store is sealed (bao operator seal)', async () => {
    const sealed = await storeRequest(store, 'PUT', 'sys/seal');
    expect(sealed.status).toBe(204);
    const r = await tf('plan');
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `secretstore-iac tf: the secrets store at ${store.addr} is sealed (GET /v1/sys/health: HTTP 503): unseal it (bao operator unseal) before planning or applying`,
    );
    expect(r.stdout).toBe('');
    expect(r.ms).toBeLessThan(5000);
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
