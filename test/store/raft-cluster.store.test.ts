/**
 * Issue 20: a store the size production runs. Three real OpenBao servers with integrated storage
 * (raft) on 127.0.0.1 (test/support/store/raft-cluster.ts). The platform is applied and the live
 * commands run through a STANDBY node; then the ACTIVE node is killed by pid in the middle of an
 * apply of 300 generated applications, the cluster elects a new leader, and the documented recovery
 * (`adopt`, then one apply) through a surviving node converges with nothing lost (issue 27: tainted
 * objects untainted, every Role ID kept). The tests run in order on one cluster, as an
 * operator's session does: each starts from what the one before it applied.
 */
import * as fs from 'fs';
import * as path from 'path';
import { AppRoleApplication } from '../../lib';
import { runStoreCli } from '../support/store/store-cli';
import { checkStoreHealth } from '../../lib/store/store-health';
import { StoreTransport, StoreTransportError } from '../../lib/store/store-transport';
import { killProcessesWorkingIn, runEngine } from '../support/store/engine';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, mountKv, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { ClusterNode, RaftCluster, startRaftCluster } from '../support/store/raft-cluster';
import { RunningStore, storeRequest } from '../support/store/store-server';

/** Generated applications on top of the platform's four (each one role and one policy). */
const GENERATED = 300;
/**
 * The active node is killed once the engine has reported this many AppRole roles created (each role
 * needs its policy first, so by then most policies are created too: the middle of the apply).
 */
const KILL_AFTER_ROLES = 100;

/** Prints a measured figure (kept out of assertions: the machine is shared). */
function figure(text: string): void {
  process.stdout.write(`[raft-cluster] ${text}\n`);
}

async function listKeys(store: RunningStore, apiPath: string): Promise<string[]> {
  const res = await storeRequest(store, 'LIST', apiPath);
  if (res.status === 404) return [];
  if (res.status !== 200) throw new Error(`LIST ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors ?? '')}`);
  return res.body.data.keys;
}

describe('a 3-node OpenBao cluster with integrated storage (raft)', () => {
  let cluster: RaftCluster;
  let fixture: PlatformFixture;
  /** The node the operator points at: the fixture's engine runs and the commands use its address. */
  let target: RunningStore;
  let firstLeader: ClusterNode;
  let standby: ClusterNode;
  const outdir = () => path.join(fixture.dir, 'cdktf.out');
  /** Every credential seen: none may appear in any output. */
  const secrets = new Set<string>();
  /** The CI key of every synthesis here (one key, so ci-access plans nothing after a re-synthesis). */
  const key = generateSigningKey();

  async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
    const r = await runStoreCli(args, { cwd: fixture.dir, addr: target.addr, token: cluster.rootToken, env });
    for (const s of secrets) expect(`${r.stdout}\n${r.stderr}`).not.toContain(s);
    return r;
  }

  beforeAll(async () => {
    const started = Date.now();
    cluster = await startRaftCluster();
    secrets.add(cluster.rootToken);
    firstLeader = await cluster.leader();
    standby = cluster.nodes.find((n) => n !== firstLeader)!;
    figure(`cluster of ${cluster.nodes.length} started, initialised, unsealed, joined and stable in ${Date.now() - started} ms; leader ${firstLeader.name}, commands through ${standby.name}`);
    // A view whose address can move to a surviving node after the leader is killed.
    target = { ...cluster.endpoint(standby) };
    fixture = PlatformFixture.create(target, 'raft');
    // A real server has no `secret/` mount (the dev server does); the stacks rely on it, as KV v2.
    await mountKv(target, 'secret', 2);
  });

  /** The pid of an engine run a failed test may leave running. */
  let enginePid: number | undefined;

  afterAll(async () => {
    if (enginePid !== undefined) {
      try {
        process.kill(enginePid, 'SIGKILL');
      } catch {
        /* already ended */
      }
    }
    // The killed engine's provider plugin outlives it.
    if (fixture) killProcessesWorkingIn(fixture.dir);
    fixture?.cleanup();
    await cluster?.stop();
  });

  describe('through a standby node (OpenBao forwards its requests to the active node)', () => {
    it('the standby is a standby: sys/health says so, sys/leader names the other node', async () => {
      const health = await storeRequest(target, 'GET', 'sys/health', undefined, null);
      expect([health.status, health.body.standby, health.body.performance_standby]).toEqual([429, true, false]);
      const leader = await storeRequest(target, 'GET', 'sys/leader', undefined, null);
      expect(leader.body).toMatchObject({ ha_enabled: true, is_self: false, leader_address: firstLeader.addr });
    });

    it('the health check counts it as up and names the leader', async () => {
      const report = await checkStoreHealth(standby.addr);
      expect(report).toEqual({
        address: standby.addr,
        status: 200,
        role: 'standby',
        leaderAddress: firstLeader.addr,
        notice: `the secrets store at ${standby.addr} is a standby node (GET /v1/sys/health: HTTP 200, "standby": true): it forwards requests to the active node; the leader is ${firstLeader.addr} (GET /v1/sys/leader)`,
      });
    });

    it('the platform stacks apply through the standby (tf prints the one standby line); the plan after is empty', async () => {
      const started = Date.now();
      fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
      for (const stack of fixture.stacks) await fixture.init(stack);
      for (const stack of fixture.stacks) {
        const r = await cli(['tf', stack, '--outdir', outdir(), '--', 'apply', '-auto-approve']);
        // The standby line, then the line naming the engine.
        expect(r.stderr.split('\n')).toEqual([
          `secretstore-iac tf: the secrets store at ${standby.addr} is a standby node (GET /v1/sys/health: HTTP 200, "standby": true): ` +
            `it forwards requests to the active node; the leader is ${firstLeader.addr} (GET /v1/sys/leader)`,
          expect.stringMatching(/^secretstore-iac tf: engine \S+ \(OpenTofu v\d+\.\d+\.\d+; [^)]+\)$/),
        ]);
        expect(r.stdout).toMatch(/Apply complete! Resources: \d+ added, 0 changed, 0 destroyed\./);
        expect(r.code).toBe(0);
      }
      figure(`platform (${fixture.stacks.join(', ')}) applied through the standby in ${Date.now() - started} ms`);
      for (const stack of fixture.stacks) expect((await fixture.plan(stack)).code).toBe(0);
      // Written through the standby, readable on the leader itself.
      expect((await storeRequest(cluster.endpoint(firstLeader), 'GET', 'auth/approle/role/orchestrator-dev')).status).toBe(200);
    });

    it('drift is in sync, access reads the live store, adopt --dry-run finds nothing to import', async () => {
      const drift = await cli(['drift', 'cdktf.out']);
      expect(drift.stderr).toBe('');
      expect(drift.stdout).toContain('**In sync.**');
      expect(drift.code).toBe(0);
      const access = await cli(['access', 'live', '--identity', 'jwt/registry-ci']);
      expect(access.stderr).toBe('');
      expect(access.stdout).toContain('`secret/data/registry/svc-orchestrator`');
      expect(access.code).toBe(0);
      const adopt = await cli(['adopt', '--outdir', 'cdktf.out', '--dry-run']);
      expect(adopt.stderr).toBe('');
      expect(adopt.stdout).toContain('0 to import; 0 to create.');
      expect(adopt.code).toBe(0);
    });

    it('provision writes a pair and check-approle logs in with it through the standby', async () => {
      const file = path.join(fixture.dir, 'orchestrator-dev.env');
      const p = await cli(['provision', 'orchestrator-dev', '--env-file', file]);
      expect(p.code).toBe(0);
      const secretId = /^SECRETSTORE_SECRET_ID=(.+)$/m.exec(fs.readFileSync(file, 'utf8'))![1];
      secrets.add(secretId);
      const check = await cli(['check-approle', '--env-file', file], { VAULT_TOKEN: undefined });
      expect(check.stdout).toMatch(/^valid: the store accepted the Role ID \/ Secret ID pair from .* \(role orchestrator-dev, policies default, orchestrator-dev, /);
      expect(check.code).toBe(0);
    });

    it('asked not to forward (X-Vault-No-Request-Forwarding), the standby answers 307 to the leader: the transport does not follow it unless the leader is listed', async () => {
      const url = `${standby.addr}/v1/auth/approle/role/orchestrator-dev`;
      const raw = await fetch(url, { headers: { 'X-Vault-Token': cluster.rootToken, 'X-Vault-No-Request-Forwarding': '1' }, redirect: 'manual' });
      expect([raw.status, raw.headers.get('location')]).toEqual([307, `${firstLeader.addr}/v1/auth/approle/role/orchestrator-dev`]);
      const request = { method: 'GET', url, headers: { 'X-Vault-Token': cluster.rootToken, 'X-Vault-No-Request-Forwarding': '1' } };
      const refused = await new StoreTransport().request(request).catch((e) => e);
      expect(refused).toBeInstanceOf(StoreTransportError);
      expect(refused.kind).toBe('redirect');
      expect(refused.message).toContain(`to another origin, "${firstLeader.addr}/v1/auth/approle/role/orchestrator-dev"; not followed`);
      const listed = await new StoreTransport({ redirectHosts: [new URL(firstLeader.addr).host] }).request(request);
      expect(listed.status).toBe(200);
    });
  });

  describe('the active node killed by pid in the middle of an apply of 300 applications', () => {
    it('a new leader is elected; adopt + one apply through a survivor converge; nothing is lost (every Role ID kept)', async () => {
      // A pair issued before anything happens: must still log in at the end.
      const roleIdBefore = (await storeRequest(target, 'GET', 'auth/approle/role/authentik-role/role-id')).body.data.role_id;
      const secretIdBefore = (await storeRequest(target, 'POST', 'auth/approle/role/authentik-role/secret-id', {})).body.data.secret_id;
      secrets.add(secretIdBefore);

      const generated: AppRoleApplication[] = [];
      const platform = fixture.synthPlatform(testPlatformConfig(key.publicKeyPem), (p) => {
        for (let i = 0; i < GENERATED; i++) {
          generated.push(new AppRoleApplication(p.appRoles, `gen-${i}`, { auth: p.appRoles.appRoleAuth, name: `gen${i}`, environment: 'load' }));
        }
      });
      const declaredRoles = [...platform.appRoles.applications, ...generated].map((a) => a.roleName).sort();
      expect(declaredRoles).toHaveLength(GENERATED + 4);

      // The apply through the standby; its output is watched for "Creation complete".
      let created = 0;
      let pending = '';
      const createdRoles: string[] = [];
      let reached!: () => void;
      const threshold = new Promise<void>((r) => (reached = r));
      const applyStarted = Date.now();
      const applying = runEngine(fixture.stackDir('app-roles'), ['apply', '-auto-approve'], {
        store: target,
        allowCodes: [0, 1],
        timeoutMs: 600_000,
        onSpawn: (pid) => (enginePid = pid),
        onOutput: (text, stream) => {
          if (stream !== 'stdout') return;
          const lines = (pending + text).split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) {
            if (!/: Creation complete after /.test(line)) continue;
            created++;
            const role = /\[id=auth\/approle\/role\/(gen\d+-load)\]/.exec(line)?.[1];
            if (role) createdRoles.push(role);
            if (createdRoles.length === KILL_AFTER_ROLES) reached();
          }
        },
      });
      let finished = false;
      void applying.then(
        () => (finished = true),
        () => (finished = true),
      );
      await Promise.race([threshold, applying]);
      expect(createdRoles.length).toBeGreaterThanOrEqual(KILL_AFTER_ROLES);

      // A Secret ID of a role the interrupted apply created, issued before the kill.
      const midRole = createdRoles[0];
      const midRoleId = (await storeRequest(target, 'GET', `auth/approle/role/${midRole}/role-id`)).body.data.role_id;
      const midSecretId = (await storeRequest(target, 'POST', `auth/approle/role/${midRole}/secret-id`, {})).body.data.secret_id;
      secrets.add(midSecretId);

      const leader = await cluster.leader();
      expect(leader).toBe(firstLeader);
      expect(finished).toBe(false);
      const killedAt = Date.now();
      await cluster.kill(leader, 'SIGKILL');
      figure(`killed the active node ${leader.name} (pid ${leader.pid}) ${killedAt - applyStarted} ms into the apply, after ${created} resources created (${createdRoles.length} roles)`);
      const elected = await cluster.waitForLeader(60_000);
      figure(`new leader ${elected.node.name} after ${Date.now() - killedAt} ms (every living node names it)`);
      expect(elected.node).not.toBe(leader);

      const interrupted = await applying;
      enginePid = undefined;
      const applyMs = Date.now() - applyStarted;
      const errors = interrupted.stderr.split('\n').filter((l) => /^Error: /.test(l));
      figure(`interrupted apply ended with exit ${interrupted.code} after ${applyMs} ms: ${created} created, ${errors.length} errors`);
      // The kinds of error (names generalised; the killed leader's address named as such).
      const general = (l: string) => l.split(leader.addr).join('<killed leader>').replace(/127\.0\.0\.1:\d+/g, '<node>').replace(/gen\d+-load/g, 'genN-load');
      for (const kind of new Set(errors.map(general))) figure(`  ${kind}`);

      // Re-apply through a surviving node that is now a standby (it forwards to the new leader).
      const survivor = cluster.nodes.find((n) => n.alive() && n !== elected.node)!;
      target.addr = survivor.addr;
      target.pid = survivor.pid;
      // Every Role ID on the store before the recovery must survive it (a tainted role's included).
      const onStore = await listKeys(target, 'auth/approle/role');
      const roleIds = new Map<string, string>();
      for (const role of onStore) roleIds.set(role, (await storeRequest(target, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id);
      const reapplyStarted = Date.now();
      // The documented recovery (docs/operators.md): adopt (imports what the state does not record,
      // untaints what it records as tainted), then one apply.
      const adopt = await cli(['adopt', 'app-roles', '--outdir', outdir()]);
      expect(adopt.stderr).toBe('');
      expect(adopt.code).toBe(0);
      const imported = /; (\d+) to import/.exec(adopt.stdout)?.[1];
      const tainted = /(\d+) tainted in state \(left by an interrupted apply\): (\d+) to untaint; (\d+) to forget\./.exec(adopt.stdout);
      figure(`adopt: ${imported} imported${tainted ? `, ${tainted[1]} tainted (${tainted[2]} untainted, ${tainted[3]} forgotten)` : ', none tainted'}`);
      const reapply = await fixture.engine('app-roles', ['apply', '-auto-approve'], [0]);
      expect(reapply.stdout).toMatch(/ 0 destroyed\./);
      const recovery = 'adopt + one apply';
      figure(`converged by ${recovery} through ${survivor.name} in ${Date.now() - reapplyStarted} ms`);

      // Converged: the next plan is empty (ci-access too), every declared role and policy exists.
      expect((await fixture.plan('app-roles')).code).toBe(0);
      expect((await fixture.plan('ci-access')).code).toBe(0);
      const roles = await listKeys(target, 'auth/approle/role');
      expect(roles.sort()).toEqual(declaredRoles);
      const policies = await listKeys(target, 'sys/policies/acl');
      expect(declaredRoles.filter((r) => !policies.includes(r))).toEqual([]);
      expect(policies).toContain('registry-ci');
      expect((await storeRequest(target, 'GET', 'auth/jwt/role/registry-ci')).status).toBe(200);

      const changed = [...roleIds].filter(([role]) => !roles.includes(role));
      for (const [role, id] of roleIds) if ((await storeRequest(target, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id !== id) changed.push([role, id]);
      expect(changed).toEqual([]);
      // Nothing lost: the pairs issued before the kill log in (Role IDs unchanged).
      expect((await storeRequest(target, 'GET', 'auth/approle/role/authentik-role/role-id')).body.data.role_id).toBe(roleIdBefore);
      expect((await storeRequest(target, 'GET', `auth/approle/role/${midRole}/role-id`)).body.data.role_id).toBe(midRoleId);
      const before = await appRoleLogin(target, roleIdBefore, secretIdBefore);
      expect([...before.body.auth.policies].sort()).toEqual(['authentik-role', 'default']);
      secrets.add(clientToken(before));
      const mid = await appRoleLogin(target, midRoleId, midSecretId);
      expect([...mid.body.auth.policies].sort()).toEqual(['default', midRole].sort());
      secrets.add(clientToken(mid));
    });
  });
});
