/**
 * Issue 10: an apply killed part-way (a cancelled CI job) leaves objects on the store that the
 * state does not record; `secretstore-iac adopt` + apply converges with no manual step.
 * Issue 27: the store itself killed mid-apply (SIGKILL to a one-node server with integrated storage,
 * then started again on its data) also leaves objects the state records as tainted (created, then
 * not read back); `adopt` untaints the ones the store has and forgets the others, and one apply
 * converges with every existing Role ID kept. The engine talks to the store through a pass-through
 * proxy that kills the store right after the store answered a role's write, before the answer
 * reaches the provider: the moment that leaves a tainted object (a kill at a random moment mostly
 * hits a write, whose object is then only on the store).
 */
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as path from 'path';
import { AppRoleApplication } from '../../lib';
import { runCli } from '../../lib/cli/run-cli';
import { killProcessesWorkingIn, runEngine } from '../support/store/engine';
import { taintedInState } from '../../lib/engine/engine-state';
import { runStoreCli } from '../support/store/store-cli';
import { appRoleLogin, mountKv } from '../support/store/platform-fixture';
import { RaftCluster, startRaftCluster } from '../support/store/raft-cluster';
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

describe('recovering from a store killed mid-apply (tainted objects, issue 27)', () => {
  /** Generated applications of the interrupted apply. */
  const APPS = 120;
  /** The store is killed once the engine has reported this many generated roles created. */
  const KILL_AFTER_ROLES = 30;
  let cluster: RaftCluster;
  let target: RunningStore;
  let fixture: PlatformFixture;
  let enginePid: number | undefined;
  const key = generateSigningKey();
  const figure = (text: string) => process.stdout.write(`[interrupted-apply] ${text}\n`);
  const cli = (args: string[]) => runStoreCli(args, { cwd: fixture.dir, addr: target.addr, token: cluster.rootToken });
  const roleIdOf = async (role: string) => (await storeRequest(target, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id as string;

  beforeAll(async () => {
    // One server with integrated storage: what it committed survives a SIGKILL and a restart.
    cluster = await startRaftCluster({ size: 1 });
    target = { ...cluster.endpoint(cluster.nodes[0]) };
    await mountKv(target, 'secret', 2);
    fixture = PlatformFixture.create(target, 'store-killed');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    await fixture.apply();
  });

  afterAll(async () => {
    if (enginePid !== undefined) {
      try {
        process.kill(enginePid, 'SIGKILL');
      } catch {
        /* ended */
      }
    }
    if (fixture) killProcessesWorkingIn(fixture.dir);
    fixture?.cleanup();
    await cluster?.stop();
  });

  it('store SIGKILLed mid-apply, started again: adopt untaints (store has it) or forgets (it does not) every tainted object; one apply converges; Role IDs and Secret IDs kept', async () => {
    // A pair issued before anything happens.
    const roleIdBefore = await roleIdOf('orchestrator-dev');
    const secretIdBefore = (await storeRequest(target, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).body.data.secret_id;
    const generated: AppRoleApplication[] = [];
    const platform = fixture.synthPlatform(testPlatformConfig(key.publicKeyPem), (p) => {
      for (let i = 0; i < APPS; i++) generated.push(new AppRoleApplication(p.appRoles, `gen-${i}`, { auth: p.appRoles.appRoleAuth, name: `gen${i}`, environment: 'load' }));
    });
    const declaredRoles = [...platform.appRoles.applications, ...generated].map((a) => a.roleName);
    expect(declaredRoles).toHaveLength(APPS + 4);

    let pending = '';
    const createdRoles: string[] = [];
    let reached!: () => void;
    const threshold = new Promise<void>((r) => (reached = r));
    // The proxy: every request passed on; once KILL_AFTER_ROLES roles are created, the store is
    // SIGKILLed as soon as it has answered the next role write after that, and that answer is still delivered.
    let killedAt: string | undefined;
    // Armed once the test has read what it keeps of a role created before the kill.
    let armed = false;
    const proxy = http.createServer((req, res) => {
      const upstream = http.request(new URL(req.url ?? '/', target.addr), { method: req.method, headers: req.headers, agent: false }, (answer) => {
        const role = /^\/v1\/auth\/approle\/role\/(gen\d+-load)$/.exec(req.url ?? '')?.[1];
        if (armed && killedAt === undefined && role && (req.method === 'POST' || req.method === 'PUT') && answer.statusCode! < 300) {
          killedAt = role;
          process.kill(cluster.nodes[0].pid, 'SIGKILL');
        }
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => {
        res.destroy();
      });
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyAddr = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const applying = runEngine(fixture.stackDir('app-roles'), ['apply', '-auto-approve'], {
      store: { ...target, addr: proxyAddr },
      allowCodes: [0, 1],
      timeoutMs: 600_000,
      onSpawn: (pid) => (enginePid = pid),
      onOutput: (text, stream) => {
        if (stream !== 'stdout') return;
        const lines = (pending + text).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          const role = /: Creation complete after .*\[id=auth\/approle\/role\/(gen\d+-load)\]/.exec(line)?.[1];
          if (role) createdRoles.push(role);
          if (createdRoles.length === KILL_AFTER_ROLES) reached();
        }
      },
    });
    await Promise.race([threshold, applying]);
    expect(createdRoles.length).toBeGreaterThanOrEqual(KILL_AFTER_ROLES);
    const midRole = createdRoles[0];
    const midRoleId = await roleIdOf(midRole);
    const midSecretId = (await storeRequest(target, 'POST', `auth/approle/role/${midRole}/secret-id`, {})).body.data.secret_id;
    armed = true;

    const interrupted = await applying;
    proxy.closeAllConnections();
    proxy.close();
    expect(killedAt).toBeDefined();
    await cluster.kill(cluster.nodes[0], 'SIGKILL');
    enginePid = undefined;
    expect(interrupted.code).toBe(1);
    const restarted = await cluster.restart(cluster.nodes[0]);
    target.pid = restarted.pid;

    const state = await fixture.engine('app-roles', ['state', 'pull']);
    const tainted = taintedInState(state.stdout);
    figure(`store killed right after writing ${killedAt}, ${createdRoles.length} generated roles created; ${tainted.length} tainted in state: ${tainted.slice(0, 5).join(', ')}${tainted.length > 5 ? ', ...' : ''}`);
    expect(tainted.length).toBeGreaterThan(0);
    // Without the recovery the plan replaces each tainted object (a new Role ID for a role).
    const before = await fixture.planChanges('app-roles');
    const replaced = before.raw.resource_changes.filter((rc: any) => rc.action_reason === 'replace_because_tainted').map((rc: any) => rc.address).sort();
    figure(`a plan without the recovery replaces ${replaced.length} of them (replace_because_tainted)`);
    expect(replaced.length).toBeGreaterThan(0);
    expect(replaced.filter((a: string) => !tainted.includes(a))).toEqual([]);

    // Every Role ID on the store before the recovery (tainted roles' included) must survive it.
    const onStore = (await storeRequest(target, 'LIST', 'auth/approle/role')).body.data.keys as string[];
    const roleIds = new Map<string, string>();
    for (const role of onStore) roleIds.set(role, await roleIdOf(role));

    // The one documented command, then one apply.
    const adopt = await cli(['adopt', 'app-roles', '--outdir', path.join(fixture.dir, 'cdktf.out')]);
    expect(adopt.stderr).toBe('');
    expect(adopt.code).toBe(0);
    const summary = /(\d+) tainted in state \(left by an interrupted apply\): (\d+) to untaint; (\d+) to forget\./.exec(adopt.stdout);
    expect(summary).not.toBeNull();
    expect(Number(summary![2]) + Number(summary![3])).toBe(tainted.length);
    figure(`adopt: ${summary![0]} ${/; (\d+) to import/.exec(adopt.stdout)?.[0] ?? ''}`);
    expect(adopt.stdout).toContain('Plan check: applying the imports destroys and replaces nothing (app-roles).');
    const applied = await cli(['tf', 'app-roles', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.stderr).not.toMatch(/^Error/m);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/ 0 destroyed\./);

    // Converged in one run: the next plan is empty, every declared role exists, Role IDs kept.
    expect((await fixture.plan('app-roles')).code).toBe(0);
    const roles = (await storeRequest(target, 'LIST', 'auth/approle/role')).body.data.keys as string[];
    expect([...roles].sort()).toEqual([...declaredRoles].sort());
    const changed: string[] = [];
    for (const [role, id] of roleIds) if ((await roleIdOf(role)) !== id) changed.push(role);
    expect(changed).toEqual([]);
    figure(`${roleIds.size} Role IDs on the store before the recovery, all kept`);
    expect(await roleIdOf('orchestrator-dev')).toBe(roleIdBefore);
    expect(await roleIdOf(midRole)).toBe(midRoleId);
    expect((await appRoleLogin(target, roleIdBefore, secretIdBefore)).status).toBe(200);
    expect((await appRoleLogin(target, midRoleId, midSecretId)).status).toBe(200);
    const again = await cli(['adopt', 'app-roles', '--outdir', path.join(fixture.dir, 'cdktf.out'), '--dry-run']);
    expect(again.stdout).toContain('0 to import; 0 to create.');
    expect(again.stdout).not.toContain('tainted in state');
  });
});
