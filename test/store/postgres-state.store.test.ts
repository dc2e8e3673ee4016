/**
 * State in a real PostgreSQL (`postgresState()`): shared between two checkouts and locked while an
 * apply holds it. The connection string comes from PG_CONN_STR and never enters the output.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { postgresState, RegistryServiceAccount } from '../../lib';
import { definePlatform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';

describe('Remote state in PostgreSQL: shared and locked', () => {
  let store: RunningStore;
  let pg: RunningPostgres;
  let config: PlatformConfig;
  const fixtures: PlatformFixture[] = [];

  /** A checkout of its own (own directory, no local state) using the shared PostgreSQL state. */
  function checkout(label: string, extend?: (p: ReturnType<typeof definePlatform>) => void): PlatformFixture {
    const fx = PlatformFixture.create(store, label);
    fx.engineEnv = { PG_CONN_STR: pg.connStr };
    fx.synth((app) => {
      const platform = definePlatform(app, config, postgresState());
      extend?.(platform);
      return platform;
    });
    fixtures.push(fx);
    return fx;
  }

  beforeAll(async () => {
    store = await startStore();
    pg = await startPostgres();
    config = testPlatformConfig(generateSigningKey().publicKeyPem);
    await checkout('pg-first').apply();
  });

  afterAll(async () => {
    fixtures.forEach((f) => f.cleanup());
    await pg?.stop();
    await store?.stop();
  });

  it('the synthesized backend names a schema per stack and holds no connection string', () => {
    const fx = fixtures[0];
    expect(fx.stackJson('ci-access').terraform.backend).toEqual({ pg: { schema_name: 'secretstore_iac_ci_access' } });
    expect(fx.stackJson('app-roles').terraform.backend).toEqual({ pg: { schema_name: 'secretstore_iac_app_roles' } });
    expect(JSON.stringify(fx.stackJson('ci-access'))).not.toContain('127.0.0.1');
  });

  it('a second checkout sees the applied state: its plan has no changes, and no local state file exists', async () => {
    const second = checkout('pg-second');
    for (const stack of ['ci-access', 'app-roles']) {
      expect((await second.plan(stack)).code).toBe(0);
    }
    expect(fs.readdirSync(second.dir).filter((f) => f.endsWith('.tfstate'))).toEqual([]);
  });

  it('while one apply waits for approval, another plan cannot take the lock; afterwards it can', async () => {
    const holder = checkout('pg-holder', (p) => {
      new RegistryServiceAccount(p.ciAccess, 'svc-locktest', {
        name: 'locktest',
        permissions: ['pypi:read'],
        usedBy: 'lock test',
        readers: [p.ciAccess.registryCi],
      });
    });
    await holder.init('ci-access');
    const other = checkout('pg-other');
    await other.init('ci-access');

    const tools = toolchain();
    const apply = spawn(tools.tofu, ['apply', '-no-color'], {
      cwd: holder.stackDir('ci-access'),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TF_CLI_CONFIG_FILE: tools.cliConfig,
        // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
        SECRETSTORE_IAC_CACHE: tools.cacheDir,
        TF_PLUGIN_CACHE_DIR: tools.pluginCacheDir,
        VAULT_ADDR: store.addr,
        VAULT_TOKEN: store.rootToken,
        PG_CONN_STR: pg.connStr,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    apply.stdout.on('data', (d) => (output += d));
    apply.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number>((resolve) => apply.on('exit', (code) => resolve(code ?? -1)));
    try {
      // The apply holds the state lock while it waits for "yes".
      for (let i = 0; i < 600 && !output.includes('Enter a value:'); i++) await new Promise((r) => setTimeout(r, 100));
      expect(output).toContain('Enter a value:');

      const blocked = await other.engine('ci-access', ['plan', '-lock-timeout=0'], [0, 1, 2]);
      expect(blocked.code).toBe(1);
      expect(blocked.stderr).toMatch(/Error acquiring the state lock/);
    } finally {
      apply.stdin.end('no\n');
    }
    expect(await exited).toBe(1); // cancelled
    expect(output).toMatch(/Apply cancelled/);

    // The lock is released, and the cancelled apply changed nothing.
    expect((await other.plan('ci-access')).code).toBe(0);
  });
});
