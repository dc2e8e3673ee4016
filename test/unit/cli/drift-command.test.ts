import * as http from 'http';
import { AddressInfo } from 'net';
import { READER_POLICY, readerPolicy } from '../../../lib/reconcile/live-store-reader';
import { StoreTarget } from '../../../lib/model/store-target';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform, tempOutdir } from '../../support/synthesized-platform';
import { runCli } from '../../../lib/cli/run-cli';
import { ACCESS_FIXTURES } from '../../support/paths';
import * as path from 'path';

// `drift` and `adopt`: what they refuse and their exit codes without a store; their results on a
// real store are proven in test/store/adoption.store.test.ts.

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { env, cwd: process.cwd(), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const BASE = path.join(ACCESS_FIXTURES, 'base');

describe('secretstore-iac drift', () => {
  it('prints the least-privilege reader policy', async () => {
    const r = await cli(['drift', '--print-reader-policy'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(READER_POLICY.trimEnd());
  });

  it('prints the policy for the store the synthesized SOURCE targets (settings.store)', async () => {
    const outdir = tempOutdir();
    synthesizePlatform({ ...platformConfig, settings: { ...platformConfig.settings, store: { kind: 'vault', version: '2.0.3' } } }, undefined, outdir);
    const r = await cli(['drift', '--print-reader-policy', outdir], {});
    expect([r.code, r.stdout]).toEqual([0, readerPolicy(new StoreTarget('vault', '2.0.3')).trimEnd()]);
    expect(r.stdout).toContain('path "auth/+/role/" {');
    // A SOURCE that records no store: the text for either version.
    expect((await cli(['drift', '--print-reader-policy', BASE], {})).stdout).toBe(READER_POLICY.trimEnd());
  });

  it('exit 2 for a usage error', async () => {
    const r = await cli(['drift', BASE, '--bogus'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown option '--bogus'");
  });

  it('exit 2 for an unknown --stack, before reading the store', async () => {
    const r = await cli(['drift', BASE, '--stack', 'nope'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('secretstore-iac drift: --stack nope: no such stack with store objects; there are app-roles, ci-access (see secretstore-iac drift --help)');
  });

  it('exit 3 when the store cannot be read, naming the address', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise((r) => server.close(r));
    const r = await cli(['drift', BASE], { SECRETSTORE_ADDR: address, VAULT_TOKEN: 't' });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `secretstore-iac drift: cannot read the live store at ${address}: cannot reach the secrets store at ${address} (ECONNREFUSED): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here`,
    );
  });

  it('exit 3 without a token, before any request', async () => {
    const r = await cli(['drift', BASE], { SECRETSTORE_ADDR: 'http://127.0.0.1:9' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no store token: set VAULT_TOKEN');
  });

  it('without a token, every command reading the live store says what a reader token needs, not what provision needs (issue 37)', async () => {
    for (const args of [['drift', BASE], ['who-can', 'read', 'secret/data/x', 'live'], ['access-diff', BASE, 'live']]) {
      const r = await cli(args, { SECRETSTORE_ADDR: 'http://127.0.0.1:9' });
      expect({ args, code: r.code }).toEqual({ args, code: 3 });
      expect(r.stderr).toContain(
        "no store token: set VAULT_TOKEN (or BAO_TOKEN / SECRETSTORE_TOKEN) to a token allowed to read and list the store's auth methods, roles and policies",
      );
      expect(r.stderr).not.toContain('AppRole');
    }
    const provision = await cli(['provision', 'orchestrator-dev', '--env-file', '/nonexistent/a.env'], { SECRETSTORE_ADDR: 'http://127.0.0.1:9' });
    expect(provision.stderr).toContain('to a token allowed to manage the AppRole');
  });
});

describe('secretstore-iac adopt', () => {
  it('names an unknown stack', async () => {
    const r = await cli(['adopt', 'nope', '--outdir', BASE], { SECRETSTORE_ADDR: 'http://127.0.0.1:9', VAULT_TOKEN: 't' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`secretstore-iac adopt: no stack "nope" in ${BASE}: it has app-roles, ci-access (see secretstore-iac adopt --help)`);
  });
});
