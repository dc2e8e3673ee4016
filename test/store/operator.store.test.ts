/**
 * The operator commands against a real store (spec §4.1 flow 3, §5.3, §5.4): the platform's app-roles
 * stack is applied with the real engine, then `provision`, `rotate-secret-id` and `check-approle` run
 * in-process with a captured stdout/stderr and an environment of their own. Every test asserts that
 * no Secret ID and no token appears in the output.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../lib/cli/run-cli';
import { writeCredentials } from '../../lib/cli/secret-id-issuance';
import { AppRoleCredentials, AppRoleCredentialsFile, FileOwner } from '../../lib/store/approle-credentials-file';
import { AppRoleOperator } from '../../lib/store/approle-operator';
import { StoreClient } from '../../lib/store/store-client';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, firstError, PlatformFixture, roleIdsFromOutputs, testPlatformConfig } from '../support/store/platform-fixture';
import { freePort, RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { REPO_ROOT } from '../support/paths';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('operator commands against a real store', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let dir: string;
  let roleIds: Record<string, string>;
  /** A token with exactly the policy docs/operators.md gives operators. */
  let operatorToken: string;
  /** Every secret value seen by the tests: none may appear in any output. */
  const secrets = new Set<string>();

  const run = async (command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli([command, ...args], { env, cwd: dir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    const result = { code, stdout: out.join('\n'), stderr: err.join('\n') };
    for (const s of secrets) {
      expect(result.stdout).not.toContain(s);
      expect(result.stderr).not.toContain(s);
    }
    return result;
  };
  const privileged = (token = operatorToken): NodeJS.ProcessEnv => ({ SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: token });
  const envFile = (name: string): string => path.join(dir, name);
  const readEnv = (file: string): Record<string, string> =>
    Object.fromEntries(
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  const secretIdIn = (file: string): string => {
    const id = readEnv(file).SECRETSTORE_SECRET_ID;
    secrets.add(id);
    return id;
  };
  const accessors = async (role: string): Promise<string[]> => {
    const res = await storeRequest(store, 'LIST', `auth/approle/role/${role}/secret-id`);
    return res.status === 404 ? [] : res.body.data.keys;
  };

  beforeAll(async () => {
    store = await startStore();
    secrets.add(store.rootToken);
    fixture = PlatformFixture.create(store, 'operator');
    const platform = fixture.synthPlatform(testPlatformConfig(generateSigningKey().publicKeyPem));
    await fixture.apply(['app-roles']);
    roleIds = await roleIdsFromOutputs(fixture, platform);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-operator-'));
    const policy = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'operators.md'), 'utf8').match(/```hcl\n([\s\S]*?)```/)![1];
    expect((await storeRequest(store, 'PUT', 'sys/policies/acl/approle-operator', { policy })).status).toBe(204);
    const created = await storeRequest(store, 'POST', 'auth/token/create', { policies: ['approle-operator'], ttl: '1h' });
    operatorToken = created.body.auth.client_token;
    secrets.add(operatorToken);
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('provision APP --env-file PATH (spec §4.1 flow 3)', () => {
    it('writes the Role ID and a new Secret ID, mode 0600, and the pair logs in as the application', async () => {
      const file = envFile('orchestrator.env');
      const r = await run('provision', ['orchestrator-dev', '--env-file', file], privileged());
      expect(r.code).toBe(0);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const vars = readEnv(file);
      expect(Object.keys(vars)).toEqual(['SECRETSTORE_ROLE_ID', 'SECRETSTORE_SECRET_ID']);
      expect(vars.SECRETSTORE_ROLE_ID).toBe(roleIds['orchestrator-dev']);
      const secretId = secretIdIn(file);
      expect(secretId).toMatch(/^[0-9a-f-]{36}$/);
      const login = await appRoleLogin(store, vars.SECRETSTORE_ROLE_ID, secretId);
      secrets.add(clientToken(login));
      expect(login.body.auth.token_policies).toEqual(['default', 'orchestrator-dev']);
      expect(login.body.auth.lease_duration).toBe(12 * 3600);
      expect(r.stdout).toContain(`wrote SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID to ${file} (mode 0600, owner 0:0)`);
      expect(r.stdout).toMatch(new RegExp(`provisioned orchestrator-dev: Role ID ${roleIds['orchestrator-dev']}, new Secret ID accessor [0-9a-f-]{36}`));
      // The Secret ID's metadata names the tool in the store's lookups.
      const lookup = await storeRequest(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id/lookup', { secret_id: secretId });
      expect(lookup.body.data.metadata).toEqual({ issued_by: 'secretstore-iac provision' });
    });

    it('keeps the other lines of an existing file, gives it the requested owner, and notes the old Secret ID', async () => {
      const file = envFile('registry.env');
      fs.writeFileSync(file, '# host settings\nAPP_PORT=8080\nSECRETSTORE_SECRET_ID=stale-value\n', { mode: 0o644 });
      secrets.add('stale-value');
      const r = await run('provision', ['registry', '--env-file', file, '--owner', 'nobody'], privileged());
      expect(r.code).toBe(0);
      const st = fs.statSync(file);
      expect([st.mode & 0o777, st.uid, st.gid]).toEqual([0o600, 65534, 65534]);
      const text = fs.readFileSync(file, 'utf8');
      expect(text).toMatch(/^# host settings\nAPP_PORT=8080\nSECRETSTORE_ROLE_ID=[0-9a-f-]{36}\nSECRETSTORE_SECRET_ID=[0-9a-f-]{36}\n$/);
      secretIdIn(file);
      expect(r.stderr).toContain(`note: ${file} held a Secret ID, which stays valid in the store`);
      expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    });
  });

  describe('--format json: one JSON object each, the Secret ID never in it (issue 28)', () => {
    it('provision, rotate-secret-id and check-approle print fields a script can read, under --credentials-file', async () => {
      const file = envFile('json.env');
      const provisioned = await run('provision', ['orchestrator-dev', '--credentials-file', file, '--format', 'json'], privileged());
      expect(provisioned.code).toBe(0);
      const first = JSON.parse(provisioned.stdout);
      const firstSecretId = secretIdIn(file);
      const firstAccessor = (await storeRequest(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id/lookup', { secret_id: firstSecretId })).body.data.secret_id_accessor;
      expect(first).toEqual({ command: 'provision', role: 'orchestrator-dev', roleId: roleIds['orchestrator-dev'], secretIdAccessor: firstAccessor, file, previousSecretIdKept: false });

      const rotated = await run('rotate-secret-id', ['orchestrator-dev', '--credentials-file', file, '--format', 'json'], privileged());
      expect(rotated.code).toBe(0);
      const second = JSON.parse(rotated.stdout);
      const secondSecretId = secretIdIn(file);
      expect(second).toEqual({
        command: 'rotate-secret-id',
        role: 'orchestrator-dev',
        roleId: roleIds['orchestrator-dev'],
        file,
        secretIdAccessor: (await storeRequest(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id/lookup', { secret_id: secondSecretId })).body.data.secret_id_accessor,
        verified: true,
        previous: 'destroyed',
        previousSecretIdAccessor: firstAccessor,
      });

      const valid = await run('check-approle', ['--credentials-file', file, '--format', 'json'], { SECRETSTORE_ADDR: store.addr });
      expect(valid.code).toBe(0);
      expect(JSON.parse(valid.stdout)).toEqual({ command: 'check-approle', valid: true, source: file, role: 'orchestrator-dev', policies: ['default', 'orchestrator-dev'], ttlSeconds: 12 * 3600, renewable: true });
      const invalid = await run('check-approle', ['--format', 'json'], { SECRETSTORE_ADDR: store.addr, SECRETSTORE_ROLE_ID: roleIds['orchestrator-dev'], SECRETSTORE_SECRET_ID: firstSecretId });
      expect(invalid.code).toBe(1);
      const refused = JSON.parse(invalid.stdout);
      expect([refused.command, refused.valid, refused.source, typeof refused.status]).toEqual(['check-approle', false, 'the environment', 'number']);
      for (const out of [provisioned, rotated, valid, invalid]) expect(out.stdout).not.toContain(secondSecretId);
    });
  });

  describe('rotate-secret-id APP (spec §5.3)', () => {
    it('writes a verified new Secret ID, destroys the previous one by its accessor, and prints the next steps', async () => {
      const file = envFile('rotate.env');
      expect((await run('provision', ['orchestrator-dev', '--env-file', file], privileged())).code).toBe(0);
      const before = secretIdIn(file);
      const oldAccessor = (await storeRequest(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id/lookup', { secret_id: before }))
        .body.data.secret_id_accessor;

      const r = await run('rotate-secret-id', ['orchestrator-dev', '--env-file', file], privileged());
      expect(r.code).toBe(0);
      const after = secretIdIn(file);
      expect(after).not.toBe(before);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(readEnv(file).SECRETSTORE_ROLE_ID).toBe(roleIds['orchestrator-dev']);

      const oldLogin = await appRoleLogin(store, roleIds['orchestrator-dev'], before);
      expect([oldLogin.status, firstError(oldLogin)]).toEqual([400, 'invalid role or secret ID']);
      const newLogin = await appRoleLogin(store, roleIds['orchestrator-dev'], after);
      secrets.add(clientToken(newLogin));
      expect(await accessors('orchestrator-dev')).not.toContain(oldAccessor);

      expect(r.stdout).toMatch(/new Secret ID \(accessor [0-9a-f-]{36}\) verified by a login as orchestrator-dev/);
      expect(r.stdout).toContain(`destroyed the previous Secret ID (accessor ${oldAccessor})`);
      expect(r.stdout).toContain('Next steps (spec §5.3):');
      expect(r.stdout).toContain("1. Re-run the deployment so that the host's env file carries the new Secret ID");
      expect(r.stdout).toContain('2. Restart the agent container of orchestrator-dev');
    });

    it('--keep-previous leaves the previous Secret ID valid', async () => {
      const file = envFile('keep.env');
      await run('provision', ['gitlab-role', '--env-file', file], privileged());
      const before = secretIdIn(file);
      const r = await run('rotate-secret-id', ['gitlab-role', '--env-file', file, '--keep-previous'], privileged());
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/kept the previous Secret ID \(accessor [0-9a-f-]{36}\) as asked/);
      secrets.add(clientToken(await appRoleLogin(store, roleIds['gitlab-role'], before)));
      secrets.add(clientToken(await appRoleLogin(store, roleIds['gitlab-role'], secretIdIn(file))));
    });

    it('says so when the file held no Secret ID or one the store does not know', async () => {
      const fresh = envFile('fresh.env');
      const r = await run('rotate-secret-id', ['authentik-role', '--env-file', fresh], privileged());
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`${fresh} held no Secret ID before: nothing to destroy`);
      secretIdIn(fresh);

      const unknown = envFile('unknown.env');
      fs.writeFileSync(unknown, `SECRETSTORE_ROLE_ID=${roleIds['authentik-role']}\nSECRETSTORE_SECRET_ID=00000000-0000-0000-0000-000000000000\n`);
      const s = await run('rotate-secret-id', ['authentik-role', '--env-file', unknown], privileged());
      expect(s.code).toBe(0);
      expect(s.stdout).toContain('is unknown to the store (expired, destroyed, or of another role): nothing to destroy');
      secretIdIn(unknown);
    });
  });

  describe('check-approle (spec §5.4)', () => {
    let file: string;
    beforeAll(async () => {
      file = envFile('check.env');
      await run('provision', ['orchestrator-dev', '--env-file', file], privileged());
      secretIdIn(file);
    });

    it('reports a valid pair from a file, with its role and policies, exit 0, and leaves no token behind', async () => {
      const tokens = async (): Promise<number> => (await storeRequest(store, 'LIST', 'auth/token/accessors')).body.data.keys.length;
      const before = await tokens();
      const r = await run('check-approle', ['--env-file', file], { SECRETSTORE_ADDR: store.addr });
      expect(r.code).toBe(0);
      expect(await tokens()).toBe(before);
      expect(r.stdout).toBe(
        `valid: the store accepted the Role ID / Secret ID pair from ${file} (role orchestrator-dev, policies default, orchestrator-dev, ` +
          "token TTL 12h, renewable); the check's token was revoked",
      );
    });

    it('reads the pair from the environment when no file is given (VAULT_ADDR works too)', async () => {
      const vars = readEnv(file);
      const r = await run('check-approle', [], { VAULT_ADDR: store.addr, ...vars });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^valid: the store accepted the Role ID \/ Secret ID pair from the environment/);
    });

    it('reports an invalid pair with the spec fix, exit 1', async () => {
      const bad = envFile('bad.env');
      fs.writeFileSync(bad, `SECRETSTORE_ROLE_ID=${roleIds['orchestrator-dev']}\nSECRETSTORE_SECRET_ID=11111111-2222-3333-4444-555555555555\n`);
      secrets.add('11111111-2222-3333-4444-555555555555');
      const r = await run('check-approle', ['--env-file', bad], { SECRETSTORE_ADDR: store.addr });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe(
        `invalid: the store rejected the Role ID / Secret ID pair from ${bad} (HTTP 400: invalid role or secret ID). ` +
          'Fix (spec §7): reprovision: secretstore-iac rotate-secret-id APP --credentials-file PATH (or provision), re-run the deployment, then restart the agent container',
      );
    });

    it('never takes the pair from arguments, and does not echo them', async () => {
      const value = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
      secrets.add(value);
      const positional = await run('check-approle', [value], { SECRETSTORE_ADDR: store.addr });
      expect([positional.code, positional.stderr]).toEqual([
        2,
        'secretstore-iac check-approle: expects no arguments (the pair comes from --credentials-file or the environment), got 1 arguments (see secretstore-iac check-approle --help)',
      ]);
      const option = await run('check-approle', [`--secret-id=${value}`], { SECRETSTORE_ADDR: store.addr });
      expect(option.code).toBe(2);
      expect(option.stderr).toMatch(/^secretstore-iac check-approle: Unknown option '--secret-id'\./);
    });

    it('without a pair, says where to put it, exit 2', async () => {
      const r = await run('check-approle', [], { SECRETSTORE_ADDR: store.addr });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('no pair to check: give --credentials-file PATH, or set SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID');
    });
  });

  it('the CLI lists the three commands and prints their usage', async () => {
    const help = await run('--help', [], {});
    expect(help.stdout).toMatch(/\n  provision +write an application's Role ID and a new Secret ID to its env file/);
    expect(help.stdout).toMatch(/\n  rotate-secret-id +replace an application's Secret ID/);
    expect(help.stdout).toMatch(/\n  check-approle +check a Role ID \/ Secret ID pair/);
    const usage = await run('rotate-secret-id', ['--help'], {});
    expect(usage.stdout).toMatch(/^Usage: secretstore-iac rotate-secret-id APP --credentials-file PATH/);
  });

  describe('clear errors', () => {
    it('unknown application: names the roles the mount has', async () => {
      const r = await run('provision', ['nosuch-dev', '--env-file', envFile('x.env')], privileged());
      expect(r.code).toBe(3);
      expect(r.stderr).toBe(
        'secretstore-iac provision: unknown application "nosuch-dev": the store has no AppRole role "nosuch-dev" on the mount "approle" in the root namespace ' +
          '(roles on "approle": authentik-role, gitlab-role, orchestrator-dev, registry). Fix: name the application by its role name as declared ' +
          '(e.g. orchestrator-dev), pass --mount if the AppRole method is mounted elsewhere, and apply the app-roles stack first',
      );
      expect(fs.existsSync(envFile('x.env'))).toBe(false);
    });

    it('unknown mount (root token: 404 no handler)', async () => {
      const r = await run('rotate-secret-id', ['orchestrator-dev', '--env-file', envFile('x.env'), '--mount', 'apps'], privileged(store.rootToken));
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('unknown application "orchestrator-dev": the store has no AppRole role "orchestrator-dev" on the mount "apps" in the root namespace (the mount has no roles in the root namespace, or is not mounted there)');
      expect(r.stderr).toContain("set BAO_NAMESPACE (or VAULT_NAMESPACE) to the namespace the platform's stacks apply in (settings.namespace) if it is not the root namespace");
    });

    it('missing permissions: names the path and the capability to grant', async () => {
      const created = await storeRequest(store, 'POST', 'auth/token/create', { policies: ['default'], ttl: '10m' });
      const weak = created.body.auth.client_token;
      secrets.add(weak);
      const r = await run('provision', ['orchestrator-dev', '--env-file', envFile('x.env')], privileged(weak));
      expect(r.code).toBe(3);
      expect(r.stderr).toBe(
        'secretstore-iac provision: permission denied: GET /v1/auth/approle/role/orchestrator-dev/role-id (HTTP 403, permission denied): ' +
          'the token may not read auth/approle/role/orchestrator-dev/role-id. ' +
          'Fix: use a token whose policy grants capabilities = ["read"] on "auth/approle/role/orchestrator-dev/role-id"',
      );
    });

    it('a token the store does not accept', async () => {
      const bogus = 's.bogus-token-value-0000';
      secrets.add(bogus);
      const r = await run('rotate-secret-id', ['orchestrator-dev', '--env-file', envFile('x.env')], privileged(bogus));
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('the store does not accept the token itself (expired, revoked or mistyped');
    });

    it('no token, no address, unreachable store', async () => {
      const noToken = await run('provision', ['orchestrator-dev', '--env-file', envFile('x.env')], { SECRETSTORE_ADDR: store.addr });
      expect(noToken.stderr).toContain('no store token: set VAULT_TOKEN (or BAO_TOKEN / SECRETSTORE_TOKEN)');
      const noAddr = await run('provision', ['orchestrator-dev', '--env-file', envFile('x.env')], { VAULT_TOKEN: operatorToken });
      expect(noAddr.stderr).toContain('The secrets store address is not set: SECRETSTORE_ADDR (or VAULT_ADDR / BAO_ADDR) is unset or empty');
      const port = await freePort();
      const down = await run('check-approle', ['--env-file', envFile('orchestrator.env')], { SECRETSTORE_ADDR: `http://127.0.0.1:${port}` });
      expect(down.code).toBe(3);
      expect(down.stderr).toBe(
        `secretstore-iac check-approle: cannot reach the secrets store at http://127.0.0.1:${port} (ECONNREFUSED): ` +
          'check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here',
      );
      expect(fs.existsSync(envFile('x.env'))).toBe(false);
    });
  });

  describe('operator files never widen access (issue 11)', () => {
    const accessorOf = async (role: string, secretId: string): Promise<string> =>
      (await storeRequest(store, 'POST', `auth/approle/role/${role}/secret-id/lookup`, { secret_id: secretId })).body.data.secret_id_accessor;

    it('a symlinked --env-file is refused before a Secret ID is issued; the link target is not read or changed', async () => {
      const target = envFile('root-only.conf');
      fs.writeFileSync(target, 'ROOT_ONLY=do-not-copy\n', { mode: 0o600 });
      const link = envFile('linked.env');
      fs.symlinkSync(target, link);
      const before = await accessors('registry');
      for (const command of ['provision', 'rotate-secret-id']) {
        const r = await run(command, ['registry', '--env-file', link, '--owner', 'nobody'], privileged());
        expect([r.code, r.stderr]).toEqual([
          2,
          `secretstore-iac ${command}: refusing ${link}: it is a symbolic link; give the path of the env file itself (a link could make the command read or write another file)` +
            ` (see secretstore-iac ${command} --help)`,
        ]);
      }
      expect(await accessors('registry')).toEqual(before);
      expect(fs.readFileSync(target, 'utf8')).toBe('ROOT_ONLY=do-not-copy\n');
      expect(fs.statSync(target).uid).toBe(0);
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    });

    it('a directory as --env-file says to give the file inside it, and issues nothing', async () => {
      const d = envFile('a-directory');
      fs.mkdirSync(d);
      const before = await accessors('registry');
      const r = await run('provision', ['registry', '--env-file', d], privileged());
      expect([r.code, r.stderr]).toEqual([
        2,
        `secretstore-iac provision: ${d} is a directory: --env-file takes the path of the env file inside it, e.g. ${d}/orchestrator.env` +
          ' (see secretstore-iac provision --help)',
      ]);
      expect(await accessors('registry')).toEqual(before);
    });

    it('when the write fails after the Secret ID was issued, that Secret ID is destroyed', async () => {
      const operator = new AppRoleOperator(StoreClient.fromEnvironment(privileged()), 'approle');
      const before = await accessors('registry');
      const issued = await operator.issueSecretId('registry', { issued_by: 'test' });
      secrets.add(issued.secretId);
      expect(await accessors('registry')).toContain(issued.accessor);
      class FailingFile extends AppRoleCredentialsFile {
        write(_c: AppRoleCredentials, _o?: FileOwner): FileOwner {
          throw new Error('disk full');
        }
      }
      const file = new FailingFile(envFile('failing.env'));
      const io = { env: {}, cwd: dir, isTerminal: false, stdout: () => undefined, stderr: () => undefined, hide: () => undefined };
      await expect(
        writeCredentials(file, { roleId: roleIds.registry, secretId: issued.secretId }, undefined, io, { operator, role: 'registry', secretId: issued }),
      ).rejects.toThrow(`disk full; the Secret ID just issued (accessor ${issued.accessor}) was destroyed, and ${file.path} is unchanged`);
      expect(await accessors('registry')).toEqual(before);
      const login = await appRoleLogin(store, roleIds.registry, issued.secretId);
      expect([login.status, firstError(login)]).toEqual([400, 'invalid role or secret ID']);
    });

    it('two concurrent rotations of one file leave exactly one valid Secret ID: the one in the file', async () => {
      const file = envFile('concurrent.env');
      expect((await run('provision', ['authentik-role', '--env-file', file], privileged())).code).toBe(0);
      const first = await accessorOf('authentik-role', secretIdIn(file));
      const others = (await accessors('authentik-role')).filter((a) => a !== first);
      const [a, b] = await Promise.all([
        run('rotate-secret-id', ['authentik-role', '--env-file', file], privileged()),
        run('rotate-secret-id', ['authentik-role', '--env-file', file], privileged()),
      ]);
      expect([a.code, b.code]).toEqual([0, 0]);
      expect([a.stdout, b.stdout].filter((o) => o.includes('destroyed the previous Secret ID'))).toHaveLength(2);
      const current = await accessorOf('authentik-role', secretIdIn(file));
      expect((await accessors('authentik-role')).sort()).toEqual([...others, current].sort());
      expect(fs.existsSync(`${file}.lock`)).toBe(false);
    });

    it('check-approle with a wrong --mount says the mount is wrong, not "reprovision"', async () => {
      const file = envFile('mount-check.env');
      expect((await run('provision', ['gitlab-role', '--env-file', file], privileged())).code).toBe(0);
      secretIdIn(file);
      const r = await run('check-approle', ['--env-file', file, '--mount', 'apps'], { SECRETSTORE_ADDR: store.addr });
      expect([r.code, r.stdout]).toEqual([3, '']);
      expect(r.stderr).toBe(
        'secretstore-iac check-approle: the mount "apps" is not an AppRole method on this store: a login there without credentials is refused (HTTP 403) ' +
          `instead of answered by AppRole, so the pair from ${file} was not checked. Fix: pass --mount with the path the AppRole ` +
          'method is mounted at (default approle; `bao auth list` or `vault auth list` shows it)',
      );
    });

    it('malformed --mount, --owner and APP are usage errors: exit 2, nothing issued', async () => {
      const before = await accessors('registry');
      const cases: [string[], string][] = [
        [['registry', '--env-file', envFile('u.env'), '--mount', 'a b'], '--mount "a b" is not a mount path such as approle'],
        [['registry', '--env-file', envFile('u.env'), '--owner', 'a:b:c'], '--owner "a:b:c" is not USER[:GROUP]'],
        [['registry', '--env-file', envFile('u.env'), '--owner', 'no-such-user-x'], '--owner: no user "no-such-user-x" in /etc/passwd'],
        [['bad name', '--env-file', envFile('u.env')], '"bad name" is not a role name'],
      ];
      for (const [args, message] of cases) {
        const r = await run('provision', args, privileged());
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(message);
      }
      expect(await accessors('registry')).toEqual(before);
      expect(fs.existsSync(envFile('u.env'))).toBe(false);
    });
  });

  describe('the compiled secretstore-iac binary, as a process', () => {
    let bin: string;
    let build: string;
    beforeAll(() => {
      build = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-build-'));
      const root = REPO_ROOT;
      execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json'), '--outDir', build], {
        stdio: 'pipe',
      });
      // As `npm run build` does: the renderers' shell and awk files next to the compiled modules.
      execFileSync(process.execPath, [path.join(root, 'scripts', 'copy-assets.js'), build], { stdio: 'pipe' });
      // Beside the build only the runtime dependencies synthesis does not need (not cdktf, @cdktf/*,
      // constructs): the operator commands must run without them (test/unit/cli/cli-dependencies.test.ts
      // checks the import graph).
      const runtime = Object.keys(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).dependencies);
      for (const name of runtime.filter((d) => d !== 'cdktf' && d !== 'constructs' && !d.startsWith('@cdktf/'))) {
        fs.mkdirSync(path.dirname(path.join(build, 'node_modules', name)), { recursive: true });
        fs.symlinkSync(path.join(root, 'node_modules', name), path.join(build, 'node_modules', name), 'dir');
      }
      bin = path.join(build, 'bin', 'secretstore-iac.js');
    });
    afterAll(() => fs.rmSync(build, { recursive: true, force: true }));

    // Runs the compiled bin through its own shebang (`#!/usr/bin/env -S node --`): without the `--`
    // Node 20 takes the script's `--env-file PATH` as its own option and exits 9 ("node: PATH: not
    // found") when PATH does not exist yet (nodejs/node#54232), i.e. on a first provision.
    const exec = (args: string[], env: NodeJS.ProcessEnv): Run => {
      fs.chmodSync(bin, 0o755);
      const r = spawnSync(bin, args, { env: { PATH: process.env.PATH, ...env }, cwd: dir, encoding: 'utf8' });
      for (const s of secrets) {
        expect(r.stdout).not.toContain(s);
        expect(r.stderr).not.toContain(s);
      }
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    };

    it('provision, check-approle and rotate-secret-id: exit codes, and no Secret ID or token on stdout/stderr', () => {
      const file = envFile('process.env');
      const p = exec(['provision', 'registry', '--env-file', file], privileged());
      expect([p.code, p.stderr]).toEqual([0, '']);
      const first = secretIdIn(file);
      expect(exec(['check-approle', '--env-file', file], { VAULT_ADDR: store.addr }).code).toBe(0);
      const rotated = exec(['rotate-secret-id', 'registry', '--env-file', file], privileged());
      expect(rotated.code).toBe(0);
      expect(rotated.stdout).toContain('destroyed the previous Secret ID');
      secretIdIn(file);
      fs.writeFileSync(envFile('old.env'), `SECRETSTORE_ROLE_ID=${roleIds.registry}\nSECRETSTORE_SECRET_ID=${first}\n`);
      const old = exec(['check-approle', '--env-file', envFile('old.env')], { VAULT_ADDR: store.addr });
      expect(old.code).toBe(1);
      expect(old.stdout).toContain('invalid: the store rejected the Role ID / Secret ID pair');
      const unknown = exec(['rotate-secret-id', 'nosuch', '--env-file', file], privileged());
      expect([unknown.code, unknown.stderr]).toEqual([3, expect.stringContaining('unknown application "nosuch"')]);
    });
  });
});
