/**
 * Issue 10: `adopt` reads the state through the engine, so a stack whose state is in PostgreSQL
 * (`postgresState()`) is adopted the same way as one with a local state file.
 */
import * as fs from 'fs';
import * as path from 'path';
import { postgresState } from '../../lib';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { runStoreCli } from '../support/store/store-cli';
import { definePlatform } from '../../lib/platform/platform';
import { createHandMadePlatform } from '../support/store/hand-made-platform';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningPostgres, startPostgres } from '../support/store/postgres-server';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

describe('adopting with the state in PostgreSQL', () => {
  let store: RunningStore;
  let pg: RunningPostgres;
  const fixtures: PlatformFixture[] = [];
  const config = testPlatformConfig(generateSigningKey().publicKeyPem);

  function checkout(label: string): PlatformFixture {
    const fx = PlatformFixture.create(store, label);
    fx.engineEnv = { PG_CONN_STR: pg.connStr };
    fx.synth((app) => definePlatform(app, config, postgresState()));
    fixtures.push(fx);
    return fx;
  }

  const adopt = (fx: PlatformFixture) =>
    runStoreCli(['adopt', '--outdir', path.join(fx.dir, 'cdktf.out')], { cwd: fx.dir, addr: store.addr, token: store.rootToken, env: { PG_CONN_STR: pg.connStr } });

  beforeAll(async () => {
    store = await startStore();
    pg = await startPostgres();
  });

  afterAll(async () => {
    fixtures.forEach((f) => f.cleanup());
    await pg?.stop();
    await store?.stop();
  });

  it('imports the hand-made objects, applies without recreating, and a second checkout has nothing to adopt', async () => {
    const first = checkout('adopt-pg-first');
    const hand = await createHandMadePlatform(store, path.join(first.dir, 'cdktf.out'));
    for (const stack of first.stacks) await first.init(stack);
    const r = await adopt(first);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('0 resources in state; 9 to import; 0 to create.');
    expect(r.stdout).toContain('0 resources in state; 3 to import; 0 to create.');
    for (const stack of first.stacks) {
      const plan = await first.planChanges(stack);
      for (const rc of plan.raw.resource_changes) expect(`${rc.address} ${rc.change.importing ? 'import' : ''} ${rc.change.actions}`).toMatch(/ import (update|no-op)$/);
    }
    await first.apply();
    const roleId = (await storeRequest(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).body.data.role_id;
    expect(roleId).toBe(hand.roleIds['orchestrator-dev']);

    const second = checkout('adopt-pg-second');
    for (const stack of second.stacks) await second.init(stack);
    const again = await adopt(second);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('9 resources in state; 0 to import; 0 to create.');
    expect(again.stdout).toContain('3 resources in state; 0 to import; 0 to create.');
    for (const stack of second.stacks) {
      expect(fs.existsSync(path.join(second.stackDir(stack), IMPORT_FILE))).toBe(false);
      expect((await second.plan(stack)).code).toBe(0);
    }
  });
});
