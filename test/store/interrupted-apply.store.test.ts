/**
 * Issue 10: an apply killed part-way (a cancelled CI job) leaves objects on the store that the
 * state does not record; `secretstore-iac adopt` + apply converges with no manual step.
 */
import * as fs from 'fs';
import * as path from 'path';
import { AppRoleApplication } from '../../lib';
import { runCli } from '../../lib/cli/run-cli';
import { killProcessesWorkingIn, runEngine } from '../support/store/engine';
import { generateSigningKey } from '../support/store/jwt-signer';
import { PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { toolchain } from '../support/store/toolchain-env';

/** Generated applications on top of the platform's four. */
const GENERATED = 200;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function roleCount(store: RunningStore): Promise<number> {
  const res = await storeRequest(store, 'LIST', 'auth/approle/role');
  return res.status === 200 ? res.body.data.keys.length : 0;
}

describe('recovering from an interrupted apply', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'interrupted');
    fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem), (platform) => {
      for (let i = 0; i < GENERATED; i++) {
        new AppRoleApplication(platform.appRoles, `gen-${i}`, { auth: platform.appRoles.appRoleAuth, name: `gen${i}`, environment: 'load' });
      }
    });
    await fixture.init('app-roles');
  });

  afterAll(async () => {
    // The killed engine's provider plugin outlives it.
    if (fixture) killProcessesWorkingIn(fixture.dir);
    fixture?.cleanup();
    await store?.stop();
  });

  it('apply killed by pid part-way; the next apply fails; adopt + apply converge; the second plan is empty', async () => {
    let pid: number | undefined;
    const applying = runEngine(fixture.stackDir('app-roles'), ['apply', '-auto-approve'], {
      store,
      allowCodes: [0, 1, 128, 137],
      onSpawn: (p) => (pid = p),
    });
    // Kill (SIGKILL, no chance to save state) once the first roles are on the store.
    const deadline = Date.now() + 300_000;
    while ((await roleCount(store)) < 10 && Date.now() < deadline) await sleep(50);
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    const killed = await applying;
    expect(killed.code).not.toBe(0);
    const onStore = await roleCount(store);
    expect(onStore).toBeGreaterThanOrEqual(10);
    expect(onStore).toBeLessThan(GENERATED + 4);
    // Give the orphaned provider plugin a moment to notice its engine is gone.
    await sleep(500);

    // Without adopt the plan wants to create what is already there (the apply would then fail).
    const before = await fixture.planChanges('app-roles');
    const creates = before.changes.filter((c) => c.actions.includes('create') && c.type === 'vault_approle_auth_backend_role').length;
    expect(creates).toBe(GENERATED + 4);
    // ... and the apply fails on what the killed apply had created (the symptoms: the mount,
    // when the state did not record it, or else every recorded-less role).
    const retried = await fixture.engine('app-roles', ['apply', '-auto-approve'], [1]);
    expect(retried.stderr).toMatch(/path is already in use at approle\/|local_secret_ids can only be modified during role creation/);

    const tools = toolchain();
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['adopt', 'app-roles', '--outdir', path.join(fixture.dir, 'cdktf.out'), '--engine', tools.tofu], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: store.rootToken },
      cwd: fixture.dir,
      isTerminal: false,
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
    });
    expect(err.join('\n')).toBe('');
    expect(code).toBe(0);
    if (process.env.SECRETSTORE_IAC_KEEP_OUTPUT) {
      fs.writeFileSync(path.join(process.env.SECRETSTORE_IAC_KEEP_OUTPUT, 'adopt-interrupted.txt'), `${killed.stderr}\n----\n${retried.stderr}\n----\n${out.join('\n')}\n`);
    }
    const summary = out.join('\n').split('\n').find((l) => /resources in state; \d+ to import/.test(l))!;
    const imported = Number(/; (\d+) to import/.exec(summary)![1]);
    // At least every role on the store (and its policy, and the mount) is imported.
    expect(imported).toBeGreaterThanOrEqual(onStore);

    const plan = await fixture.planChanges('app-roles');
    for (const rc of plan.raw.resource_changes) {
      const actions = rc.change.actions.join(',');
      if (rc.change.importing) expect(`${rc.address} ${actions}`).toMatch(/ (no-op|update)$/);
      else expect(`${rc.address} ${actions}`).toMatch(/ (create|no-op)$/);
    }
    await fixture.apply(['app-roles']);
    expect((await fixture.plan('app-roles')).code).toBe(0);
    expect(await roleCount(store)).toBe(GENERATED + 4);
  });
});
