/**
 * Issue 27 on a real store: an `adopt` killed during its plan check (SIGKILL to it; Ctrl-C, SIGINT to
 * its process group) leaves no import file in the stack directory, so nothing the next run could
 * take for a state to put back, and a plain `tf app-roles -- apply` (the HA recovery's form) cannot
 * import, then destroy, a hand-made `-local` AppRole mount. The next `adopt` removes what the killed
 * runs left and says so; with the store's `local` declared, adopt and apply converge with the Role
 * ID and the Secret ID issued before intact.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readDeclaredObjects } from '../../lib/reconcile/declared-object';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { writingName } from '../../lib/private/atomic-file';
import { checkDirectoryOf } from '../../lib/cli/adopt-check-directory';
import { ENGINE_RUNS_DIR } from '../../lib/engine/engine-working-directory';
import { CliProcess, spawnStoreCli } from '../support/store/cli-process';
import { killProcessesWorkingIn } from '../support/store/engine';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { pidsWhere } from '../support/store/process-table';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Pids of the processes working in `dir` (its engine and provider): in it, or in the working directory
 * the engine run lays fresh from it (lib/engine/engine-working-directory.ts: beside the output's
 * `stacks/`, `<outdir>/.secretstore-iac-engine-runs/<pid>-<basename of dir>-XXXXXX`).
 */
function workingIn(dir: string): number[] {
  const runs = path.join(path.dirname(path.dirname(dir)), ENGINE_RUNS_DIR);
  const laid = `${path.basename(dir)}-`;
  return pidsWhere((pid) => {
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    if (cwd === dir || cwd.startsWith(dir + path.sep)) return true;
    const run = path.relative(runs, cwd).split(path.sep)[0];
    return !run.startsWith('..') && run !== '' && run.replace(/^\d+-/, '').startsWith(laid);
  });
}

/** A pid no process has (above the highest a Linux kernel hands out). */
const DEAD_PID = 4194305;

describe('an adopt killed during its plan check (issue 27)', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  const key = generateSigningKey();
  const config = testPlatformConfig(key.publicKeyPem);
  let roleId: string;
  let secretId: string;
  const stackDir = () => fixture.stackDir('app-roles');
  const importFile = () => path.join(stackDir(), IMPORT_FILE);
  const cli = (args: string[]) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken });

  /** Starts adopt in its own process; resolves once its engine plans in the check directory. */
  async function adoptUntilPlanCheck(): Promise<{ run: CliProcess; checkDir: string }> {
    const run = spawnStoreCli(['adopt', 'app-roles', '--outdir', 'cdktf.out'], { cwd: fixture.dir, addr: store.addr, token: store.rootToken });
    const checkDir = checkDirectoryOf(fs.realpathSync(stackDir()), run.child.pid!);
    let ended = false;
    void run.done.then(() => (ended = true));
    const deadline = Date.now() + 300_000;
    while (!ended && Date.now() < deadline) {
      if (fs.existsSync(checkDir) && workingIn(checkDir).length > 0) return { run, checkDir };
      await sleep(50);
    }
    const r = await Promise.race([run.done, sleep(1).then(() => undefined)]);
    throw new Error(`adopt never reached its plan check: ${JSON.stringify(r)}`);
  }

  /** What a killed run's engine still does in the check directory ends before the next run (or is ended). */
  async function settle(checkDir: string): Promise<void> {
    const deadline = Date.now() + 120_000;
    while (workingIn(checkDir).length > 0 && Date.now() < deadline) await sleep(200);
    for (const pid of workingIn(checkDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already ended
      }
    }
  }

  async function storeUntouched(): Promise<void> {
    const auth = await ok(store, 'GET', 'sys/auth');
    expect((auth.data ?? auth)['approle/'].local).toBe(true);
    expect((await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id).toBe(roleId);
    expect((await appRoleLogin(store, roleId, secretId)).status).toBe(200);
  }

  beforeAll(async () => {
    store = await startStore();
    fixture = PlatformFixture.create(store, 'adopt-killed');
    fixture.synthPlatform(config);
    // By hand: the AppRole mount made with -local, one application role with a Secret ID in use.
    await ok(store, 'POST', 'sys/auth/approle', { type: 'approle', local: true });
    const declared = readDeclaredObjects(path.join(fixture.dir, 'cdktf.out'), 'app-roles').find((o) => o.kind === 'approle-role' && o.name === 'orchestrator-dev')!;
    await ok(store, 'POST', 'auth/approle/role/orchestrator-dev', { token_policies: declared.fields.token_policies });
    roleId = (await ok(store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id;
    secretId = (await ok(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
    await fixture.init('app-roles');
  });

  afterAll(async () => {
    if (fixture) killProcessesWorkingIn(fixture.dir);
    await store?.stop();
    fixture?.cleanup();
  });

  let killedCheckDir: string;

  it('SIGKILL during the plan check: no import file in the stack directory; only the check directory is left', async () => {
    const { run, checkDir } = await adoptUntilPlanCheck();
    process.kill(run.child.pid!, 'SIGKILL');
    const r = await run.done;
    expect(r.signal).toBe('SIGKILL');
    expect(fs.existsSync(importFile())).toBe(false);
    expect(fs.readFileSync(path.join(checkDir, IMPORT_FILE), 'utf8')).toContain('"id": "approle"');
    await settle(checkDir);
    killedCheckDir = checkDir;
  });

  it('a plain `tf app-roles -- apply` then cannot import (or destroy) the mount: the Role ID and the Secret ID still work', async () => {
    const applied = await cli(['tf', 'app-roles', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).not.toBe(0);
    expect(`${applied.stdout}\n${applied.stderr}`).not.toMatch(/Destroying|Destruction complete/);
    await storeUntouched();
  });

  it('the next adopt removes what the killed runs left, names each, and refuses the local mount with the fix that keeps it (exit 4); still no import file', async () => {
    // A half-written file of a run killed between its write and its rename.
    const half = writingName(importFile(), DEAD_PID);
    fs.writeFileSync(half, '{"import": [');
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect(r.code).toBe(4);
    const said = r.stdout.split('\n');
    expect(said[0]).toBe('Removed what killed runs left (their process no longer runs; no engine run of a stack reads them):');
    expect(said).toContain(`  ${path.relative(fixture.dir, killedCheckDir)}`);
    expect(said).toContain(`  ${path.relative(fixture.dir, half)}`);
    expect(fs.existsSync(killedCheckDir)).toBe(false);
    expect(fs.existsSync(half)).toBe(false);
    expect(r.stderr).toMatch(/nothing written \(no import file written\): the plan would destroy or replace 1 object, refused:\n  vault_auth_backend\.\S+ declared at app-roles\/approle\/backend would be replaced .*forced by local \(true → (null|false)\)\. Fix: the mount is local \(not replicated\) on the store: declare `local: true` on the AppRoleAuth construct/);
    expect(fs.existsSync(importFile())).toBe(false);
    expect(fs.readdirSync(path.dirname(stackDir())).filter((n) => n.startsWith('.adopt-check-'))).toEqual([]);
    await storeUntouched();
  });

  it('Ctrl-C (SIGINT to the process group) during the plan check, with the fix declared: no import file in the stack directory', async () => {
    fixture.synthPlatform({ ...config, authMounts: { approle: { local: true } } });
    const { run, checkDir } = await adoptUntilPlanCheck();
    process.kill(-run.child.pid!, 'SIGINT');
    const r = await run.done;
    expect(r.code === 0).toBe(false);
    expect(fs.existsSync(importFile())).toBe(false);
    await settle(checkDir);
  });

  it('the next adopt passes its check and writes the imports; the apply converges; Role ID and the Secret ID issued before intact; nothing left behind', async () => {
    const r = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('Plan check: applying the imports destroys and replaces nothing (app-roles).');
    expect(fs.existsSync(importFile())).toBe(true);
    const applied = await cli(['tf', 'app-roles', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/Apply complete! Resources: \d+ imported, \d+ added, \d+ changed, 0 destroyed\./);
    await storeUntouched();
    expect((await fixture.plan('app-roles')).code).toBe(0);
    const again = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out', '--dry-run']);
    expect(again.stdout).toContain('0 to import; 0 to create.');
    expect(again.stdout).not.toContain('killed runs left');
    expect(fs.readdirSync(stackDir()).filter((n) => /\.writing-\d+$/.test(n))).toEqual([]);
    expect(fs.readdirSync(path.dirname(stackDir())).filter((n) => n.startsWith('.adopt-check-'))).toEqual([]);
  });
});
