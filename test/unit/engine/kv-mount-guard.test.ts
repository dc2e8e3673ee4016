import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { KvMount } from '../../../lib';
import { kvMountsOfStack, readDeclaredKvMounts } from '../../../lib/reconcile/declared-kv-mount';
import { runCli } from '../../../lib/cli/run-cli';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

// Issue 19 §3 / issue 15: `tf`, `drift` and `adopt` compare the declared KV mounts with the store
// before anything else. Here against a fake store answering sys/health and sys/mounts; on the real
// store in test/store/kv-version.store.test.ts.

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { env, cwd: os.tmpdir(), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A fake store: sys/health 200, sys/mounts with `secret/` of the given version (403 when `mounts` is 'denied'). */
async function fakeStore(mounts: 1 | 2 | 'denied'): Promise<{ address: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url} token=${req.headers['x-vault-token'] ? 'yes' : 'no'}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url?.startsWith('/v1/sys/health')) return json(200, { initialized: true, sealed: false });
    if (req.url === '/v1/auth/token/lookup-self') return json(200, { data: {} });
    if (req.url === '/v1/sys/mounts') {
      if (mounts === 'denied') return json(403, { errors: ['1 error occurred:\n\t* permission denied\n\n'] });
      return json(200, { data: { 'secret/': { type: 'kv', options: { version: String(mounts) } }, 'sys/': { type: 'system' } } });
    }
    return json(404, { errors: [] });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { address, requests, close: () => new Promise((r) => server.close(() => r())) };
}

const platform = synthesizePlatform();
const engine = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-kv-engine-')), 'fake-engine');
fs.writeFileSync(engine, '#!/bin/sh\necho "engine ran: $*"\n', { mode: 0o755 });

describe('the synthesis records the KV mounts each stack relies on', () => {
  it('both platform stacks record secret/ as KV v2 in //.metadata (Terraform ignores it)', () => {
    expect(readDeclaredKvMounts(platform.outdir)).toEqual([{ path: 'secret', version: 2, stacks: ['app-roles', 'ci-access'] }]);
    expect(platform.stacks['ci-access']['//'].metadata['secretstore-iac-kv-mounts']).toEqual({ secret: { version: 2 } });
  });

  it('a stack without the record (synthesized before it existed) declares no mount; a damaged record is an error naming the stack', () => {
    expect(kvMountsOfStack('old', { stackName: 'old' })).toEqual([]);
    expect(() => kvMountsOfStack('ci-access', { 'secretstore-iac-kv-mounts': { secret: { version: 3 } } })).toThrow(
      'stack ci-access: //.metadata["secretstore-iac-kv-mounts"] is not what the synthesis writes: synthesize again',
    );
    expect(() => kvMountsOfStack('ci-access', { 'secretstore-iac-kv-mounts': { '../x': { version: 2 } } })).toThrow(/not what the synthesis writes/);
  });

  it('a KV v1 declaration is recorded as v1', () => {
    const v1 = synthesizePlatform({ ...platformConfig, settings: { ...platformConfig.settings, kvMount: new KvMount('kv', 1) } });
    expect(readDeclaredKvMounts(v1.outdir, ['ci-access'])).toEqual([{ path: 'kv', version: 1, stacks: ['ci-access'] }]);
  });
});

describe('tf', () => {
  const tf = (address: string, sub: string, env: NodeJS.ProcessEnv = { VAULT_TOKEN: 't' }) =>
    cli(['tf', 'ci-access', '--outdir', platform.outdir, '--engine', engine, '--', sub], { PATH: process.env.PATH, SECRETSTORE_ADDR: address, HOME: os.tmpdir(), ...env });

  it('stops with exit 5 before the engine runs when secret/ is KV v1 on the store', async () => {
    const store = await fakeStore(1);
    try {
      const r = await tf(store.address, 'plan');
      expect(r.code).toBe(5);
      expect(r.stdout).not.toContain('engine ran');
      expect(r.stderr).toBe(
        `secretstore-iac tf: the declared KV mounts do not match the secrets store at ${store.address}; nothing was planned, applied or written:\n` +
          "  secret/ is KV v1 on the store, but stack ci-access declares it KV v2: the policies name secret/data/<p>, which a KV v1 mount serves as the secret \"data/<p>\", so no application or CI job reads its secrets, and the platform rules were checked for paths the store does not use. Fix: settings.kvMount = new KvMount('secret', 1) and synthesize again, or change the mount on the store",
      );
      // sys/seal-status only because of the mismatch: the fix names the store's CLI.
      expect(store.requests).toEqual(['GET /v1/sys/health?standbyok=true&perfstandbyok=true token=no', 'GET /v1/sys/mounts token=yes', 'GET /v1/sys/seal-status token=yes']);
    } finally {
      await store.close();
    }
  });

  it('runs the engine when the versions match', async () => {
    const store = await fakeStore(2);
    try {
      const r = await tf(store.address, 'apply');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('engine ran: apply');
    } finally {
      await store.close();
    }
  });

  it('does not ask for the mounts before subcommands that write no policy (init, destroy)', async () => {
    const store = await fakeStore(1);
    try {
      expect((await tf(store.address, 'init')).stdout).toBe('engine ran: init');
      // A destroy needs --allow-destroy (without --refuse-replace).
      const destroy = await cli(['tf', 'ci-access', '--outdir', platform.outdir, '--engine', engine, '--allow-destroy', '--', 'destroy'], {
        PATH: process.env.PATH,
        SECRETSTORE_ADDR: store.address,
        HOME: os.tmpdir(),
        VAULT_TOKEN: 't',
      });
      expect(destroy.stdout).toBe('engine ran: destroy');
      expect(store.requests.filter((r) => r.includes('sys/mounts'))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a token that may not read sys/mounts: exit 3 naming the path and the capability; the engine does not run', async () => {
    const store = await fakeStore('denied');
    try {
      const r = await tf(store.address, 'plan');
      expect(r.code).toBe(3);
      expect(r.stdout).not.toContain('engine ran');
      expect(r.stderr).toContain('GET /v1/sys/mounts was refused');
      expect(r.stderr).toContain('The check needs path "sys/mounts" { capabilities = ["read"] }');
    } finally {
      await store.close();
    }
  });

  it('without VAULT_TOKEN (nor ~/.vault-token): exit 3 before any mount request', async () => {
    const store = await fakeStore(2);
    try {
      const r = await tf(store.address, 'plan', { VAULT_TOKEN: '' });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('no store token: the vault provider reads VAULT_TOKEN (or ~/.vault-token)');
      expect(store.requests.filter((x) => x.includes('sys/mounts'))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('uses ~/.vault-token as the provider does when VAULT_TOKEN is unset', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-home-'));
    fs.writeFileSync(path.join(home, '.vault-token'), 'from-file\n', { mode: 0o600 });
    const store = await fakeStore(2);
    try {
      const r = await tf(store.address, 'plan', { VAULT_TOKEN: '', HOME: home });
      expect(r.stdout).toBe('engine ran: plan');
      expect(store.requests).toContain('GET /v1/sys/mounts token=yes');
    } finally {
      await store.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('drift and adopt', () => {
  it.each([
    ['drift', [platform.outdir]],
    ['adopt', ['--outdir', platform.outdir, '--engine', engine]],
  ])('%s stops with exit 5 before reading anything else when secret/ is KV v1 on the store', async (command, args) => {
    const store = await fakeStore(1);
    try {
      const r = await cli([command, ...args], { PATH: process.env.PATH, SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 't' });
      expect(r.code).toBe(5);
      expect(r.stderr).toContain(`secretstore-iac ${command}: the declared KV mounts do not match the secrets store at ${store.address}`);
      expect(r.stderr).toContain('secret/ is KV v1 on the store, but stacks app-roles, ci-access declare it KV v2');
      expect(r.stdout).toBe('');
      // sys/seal-status only because of the mismatch: the fix names the store's CLI.
      expect(store.requests.map((x) => x.split(' ')[1])).toEqual(['/v1/sys/mounts', '/v1/sys/seal-status']);
    } finally {
      await store.close();
    }
  });
});
