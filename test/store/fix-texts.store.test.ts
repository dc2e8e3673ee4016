/**
 * Issue 27 on a real store: the fix texts that no other store test followed yet, each followed to
 * convergence (what the text says is done, then the next adopt, apply and drift are clean, Role IDs
 * and Secret IDs kept), one store per scenario; docs/adoption.md has the table of every fix text and
 * its test:
 * - an auth method of another type at a declared path, both directions: the people's `oidc/` made
 *   as a JWT method (adopt, drift, and `tf --refuse-replace` on a state that imported it: the text
 *   says the store's is a jwt method, not "an OIDC method is mounted"), and CI's `jwt/` made as an
 *   OIDC method; followed: the store's method disabled by hand;
 * - mount settings that differ: an AppRole description and an undeclared tune setting (followed:
 *   declared as the text writes them), a declared tune setting changed by hand (followed: the
 *   store's value declared), a JWT mount's description (followed: set by hand as the text writes);
 * - a declared tune setting that is not a TTL (listing visibility) changed by hand: the apply
 *   changes it back in place, as the text says (same mount accessor, Role ID and Secret ID kept);
 * - a `tf --refuse-replace` killed (SIGKILL) during its guard: the next `tf` removes the guard
 *   directory it left and works; `adopt` removes such a directory too;
 * - a JWT method mounted, holding a role, but never configured: its configuration written by hand as
 *   the text says, then adopt imports it, one apply, drift clean, the role unchanged, a CI login;
 * - a forcing attribute other than local/type/role_type, with the real provider: the AppRole mount's
 *   declared path changed after its roles were applied (the role's `backend` forces the replacement),
 *   and an application's role name changed (`role_name`, the policy's `name`): refused, the store's
 *   value declared again as the text says, the plan empty, Role ID and Secret ID kept.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationStacks, Duration, OIDC_CLI_REDIRECT_URI, PlatformSettings } from '../../lib';
import { GUARD_DIRECTORY_PREFIX, GUARD_OWNER_FILE } from '../../lib/engine/guard-directory';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { readDeclaredObjects } from '../../lib/reconcile/declared-object';
import { spawnStoreCli } from '../support/store/cli-process';
import { killProcessesWorkingIn } from '../support/store/engine';
import { generateSigningKey, gitlabJobClaims, signJwt } from '../support/store/jwt-signer';
import { RunningOidcProvider, startOidcProvider } from '../support/store/oidc-provider';
import { appRoleLogin, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { storeCli } from '../support/store/store-facts';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind, toolchain } from '../support/store/toolchain-env';

const key = generateSigningKey();
const CLIENT_ID = 'secretstore';
const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A fresh store and fixture for one scenario; `tmp` is the CLI's temporary directory (TMPDIR). */
function scenario(label: string) {
  const s = { store: undefined as unknown as RunningStore, fixture: undefined as unknown as PlatformFixture, tmp: '' };
  beforeAll(async () => {
    s.store = await startStore();
    s.fixture = PlatformFixture.create(s.store, label);
    s.fixture.engineEnv = { TF_VAR_oidc_client_secret: clientSecret };
    s.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `ssi-fix-${label}-`));
  });
  afterAll(async () => {
    if (s.fixture) killProcessesWorkingIn(s.fixture.dir);
    await s.store?.stop();
    s.fixture?.cleanup();
    if (s.tmp) fs.rmSync(s.tmp, { recursive: true, force: true });
  });
  const env = () => ({ TF_VAR_oidc_client_secret: clientSecret, TMPDIR: s.tmp });
  const cli = (args: string[]) => runStoreCli(args, { cwd: s.fixture.dir, addr: s.store.addr, token: s.store.rootToken, env: env() });
  return { s, cli, env };
}

/** The whole output of a run, for messages that go to either stream. */
const said = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

describe('fix: an auth method of another type at a declared mount path (both directions)', () => {
  const { s, cli } = scenario('fix-mount-type');
  let provider: RunningOidcProvider;
  let config: PlatformConfig;
  const cliName = () => storeCli();

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret, redirectUris: [OIDC_CLI_REDIRECT_URI], accounts: { alice: ['platform-admins'] } });
    config = testPlatformConfig(key.publicKeyPem, {
      people: { discoveryUrl: provider.issuer, clientId: CLIENT_ID, storeUrl: s.store.addr, groups: { 'platform-admins': { groups: ['platform-admins'] } } },
    });
    s.fixture.synthPlatform(config);
    // By hand: a JWT method (configured, so that the engine can import it) where the people's OIDC
    // method is declared, and an OIDC method where CI's JWT method is declared.
    await ok(s.store, 'POST', 'sys/auth/oidc', { type: 'jwt' });
    await ok(s.store, 'POST', 'auth/oidc/config', { jwt_validation_pubkeys: [key.publicKeyPem] });
    await ok(s.store, 'POST', 'sys/auth/jwt', { type: 'oidc' });
    for (const stack of s.fixture.stacks) await s.fixture.init(stack);
  });
  afterAll(async () => {
    await provider?.stop();
  });

  it('adopt (exit 3, nothing written) and drift say what the store has and what to declare, in the direction the store has it', async () => {
    const people = await cli(['adopt', 'people', '--outdir', 'cdktf.out']);
    expect(people.code).toBe(3);
    expect(people.stderr).toContain(
      "oidc/ is a jwt method on the store where the people's OIDC method (type oidc, single sign-on) is declared; an import cannot change a mount's type, and applying would disable it with every role under it. " +
        `Fix: declare the people's OIDC method at another path (\`people.path\` (OidcAuth \`path\`)), or, if no CI job logs in with the store's jwt method, disable it by hand (\`${cliName()} auth disable oidc\`) and run adopt again`,
    );
    const ci = await cli(['adopt', 'ci-access', '--outdir', 'cdktf.out']);
    expect(ci.code).toBe(3);
    expect(ci.stderr).toContain(
      "jwt/ is a oidc method on the store where CI's JWT method (type jwt) is declared; an import cannot change a mount's type, and applying would disable it with every role under it. " +
        `Fix: declare CI's JWT method at another path (CiJwtAuth \`path\`), or, if no person logs in with the store's oidc method, disable it by hand (\`${cliName()} auth disable jwt\`) and run adopt again`,
    );
    for (const stack of ['people', 'ci-access']) expect(fs.existsSync(path.join(s.fixture.stackDir(stack), 'adopt-imports.tf.json'))).toBe(false);
    const drift = await cli(['drift', 'cdktf.out']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain('auth method oidc/ is of type jwt, declared oidc');
    expect(drift.stdout).toContain(`if no CI job logs in with the store's jwt method, disable it by hand (\`${cliName()} auth disable oidc\`)`);
    expect(drift.stdout).toContain(`if no person logs in with the store's oidc method, disable it by hand (\`${cliName()} auth disable jwt\`)`);
  });

  it('a state that imported the store\'s JWT method (a plain `tf import`): `tf --refuse-replace` refuses the replacement (exit 4) with the fix in the store\'s direction', async () => {
    const mount = readDeclaredObjects(path.join(s.fixture.dir, 'cdktf.out'), 'people').find((o) => o.kind === 'jwt-auth-mount')!;
    const imported = await cli(['tf', 'people', '--', 'import', '-input=false', mount.address, 'oidc']);
    if (imported.code !== 0) throw new Error(`tf people -- import failed (${imported.code}):\n${imported.stderr}`);
    const planned = await cli(['tf', 'people', '--refuse-replace', '--', 'plan', '-input=false', '-out=people.tfplan']);
    expect(planned.code).toBe(4);
    expect(planned.stderr).toContain(`${mount.address} declared at `);
    expect(planned.stderr).toContain(
      `forced by type ("jwt" → "oidc"). Fix: the store's method at oidc/ is of type jwt, the declared one of type oidc: declare the people's OIDC method at another path (\`people.path\` (OidcAuth \`path\`)), ` +
        "or, if no CI job logs in with the store's jwt method, disable it by hand (`bao auth disable oidc`, or `vault auth disable oidc` on Vault) and run adopt again",
    );
    expect(planned.stderr).not.toContain('an OIDC method (type oidc) is mounted');
    expect(fs.existsSync(path.join(s.fixture.stackDir('people'), 'people.tfplan'))).toBe(false);
    expect((await ok(s.store, 'GET', 'sys/auth')).data['oidc/'].type).toBe('jwt');
  });

  it('followed (both store methods disabled by hand): adopt passes, the applies make the declared methods; the plans are empty, adopt and drift clean', async () => {
    await ok(s.store, 'DELETE', 'sys/auth/oidc');
    await ok(s.store, 'DELETE', 'sys/auth/jwt');
    for (const stack of ['ci-access', 'people']) {
      const r = await cli(['adopt', stack, '--outdir', 'cdktf.out']);
      expect([stack, r.code, r.stderr]).toEqual([stack, 0, '']);
      const applied = await cli(['tf', stack, '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
      expect([stack, applied.code]).toEqual([stack, 0]);
      expect((await s.fixture.plan(stack)).code).toBe(0);
    }
    const auth = (await ok(s.store, 'GET', 'sys/auth')).data;
    expect([auth['jwt/'].type, auth['oidc/'].type]).toEqual(['jwt', 'oidc']);
    const again = await cli(['adopt', 'ci-access', 'people', '--outdir', 'cdktf.out', '--dry-run']);
    expect(again.stdout.match(/0 to import; 0 to create\./g)).toHaveLength(2);
    for (const stack of ['ci-access', 'people']) {
      const drift = await cli(['drift', 'cdktf.out', '--stack', stack]);
      expect([stack, drift.code, drift.stderr]).toEqual([stack, 0, '']);
    }
  });
});

describe('fix: mount settings that differ (description, tune), and a tf killed during its guard', () => {
  const { s, cli, env } = scenario('fix-mount-settings');
  const base = () => testPlatformConfig(key.publicKeyPem);
  let roleId: string;
  let secretId: string;
  /** The hand command drift names for CI's JWT description, run as written in the next test. */
  let jwtDescriptionFix: string | undefined;

  async function roleKept(): Promise<void> {
    expect((await ok(s.store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id).toBe(roleId);
    expect((await appRoleLogin(s.store, roleId, secretId)).status).toBe(200);
  }

  beforeAll(async () => {
    s.fixture.synthPlatform(base());
    // By hand: the AppRole mount with its own description and listing visibility, one role with a Secret ID in use.
    await ok(s.store, 'POST', 'sys/auth/approle', { type: 'approle', description: 'hand-made', config: { listing_visibility: 'unauth' } });
    const declared = readDeclaredObjects(path.join(s.fixture.dir, 'cdktf.out'), 'app-roles').find((o) => o.kind === 'approle-role' && o.name === 'orchestrator-dev')!;
    await ok(s.store, 'POST', 'auth/approle/role/orchestrator-dev', { token_policies: declared.fields.token_policies });
    roleId = (await ok(s.store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id;
    secretId = (await ok(s.store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
    for (const stack of ['ci-access', 'app-roles']) await s.fixture.init(stack);
    // CI's JWT method applied as declared, then its description changed by hand.
    expect((await cli(['tf', 'ci-access', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'])).code).toBe(0);
    await ok(s.store, 'POST', 'sys/auth/jwt/tune', { description: 'hand CI' });
  });

  it('drift and adopt name each difference with its fix', async () => {
    const drift = await cli(['drift', 'cdktf.out']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toMatch(/description: declared "[^"]+", store "hand-made": the apply changes it in place \(no replacement\); declare `authMounts\.approle\.description: "hand-made"` to keep the store's/);
    expect(drift.stdout).toContain('tune.listing_visibility: declared hidden, not declared, store unauth: not declared, so the apply keeps the store\'s value; declare `authMounts.approle.tune.listingVisibility: "unauth"` to manage it');
    expect(drift.stdout).toMatch(new RegExp(`description: declared "[^"]+", store "hand CI": the apply does not change it: .*set it back by hand \\(\`${storeCli()} auth tune -description='[^']+' jwt/\`\\), or declare \`authMounts\\.jwt\\.description: "hand CI"\``));
    jwtDescriptionFix = /store "hand CI": .*set it back by hand \(`([^`]+)`\)/.exec(drift.stdout)?.[1];
    const adopt = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out', '--dry-run']);
    expect(adopt.code).toBe(0);
    expect(adopt.stdout).toContain('Mount settings, store → declarations (no replacement):');
    expect(adopt.stdout).toContain('declare `authMounts.approle.description: "hand-made"` to keep the store\'s');
  });

  it('followed (the AppRole description and tune declared as written, the JWT description set by hand): adopt, one apply, empty plans, drift in sync; Role ID and Secret ID kept', async () => {
    s.fixture.synthPlatform({ ...base(), authMounts: { approle: { description: 'hand-made', tune: { listingVisibility: 'unauth' } } } });
    const declaredJwt = readDeclaredObjects(path.join(s.fixture.dir, 'cdktf.out'), 'ci-access').find((o) => o.kind === 'jwt-auth-mount')!;
    // The JWT description set back with the command drift named, run as written in a shell.
    expect(jwtDescriptionFix).toBe(`${storeCli()} auth tune -description='${declaredJwt.fields.description}' jwt/`);
    const ran = spawnSync('sh', ['-c', jwtDescriptionFix!], {
      env: { PATH: `${path.dirname(toolchain().bao)}${path.delimiter}${process.env.PATH}`, HOME: s.fixture.dir, VAULT_ADDR: s.store.addr, BAO_ADDR: s.store.addr, VAULT_TOKEN: s.store.rootToken },
      encoding: 'utf8',
    });
    expect({ status: ran.status, stderr: ran.stderr }).toEqual({ status: 0, stderr: '' });
    const adopt = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out']);
    expect([adopt.code, adopt.stderr]).toEqual([0, '']);
    expect(adopt.stdout).not.toContain('Mount settings');
    const applied = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    for (const stack of ['ci-access', 'app-roles']) expect((await s.fixture.plan(stack)).code).toBe(0);
    const drift = await cli(['drift', 'cdktf.out']);
    expect([drift.code, drift.stderr]).toEqual([0, '']);
    const approle = (await ok(s.store, 'GET', 'sys/auth')).data['approle/'];
    expect([approle.description, approle.config.listing_visibility]).toEqual(['hand-made', 'unauth']);
    await roleKept();
  });

  it('a declared TTL changed by hand: the engine never sees it (the provider keeps what it wrote); the fix declares the store\'s value; followed, one apply, then an empty plan and drift in sync', async () => {
    const declared = { ...base(), authMounts: { approle: { description: 'hand-made', tune: { listingVisibility: 'unauth' as const, maxLeaseTtl: Duration.parse('2h') } } } };
    s.fixture.synthPlatform(declared);
    expect((await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'])).code).toBe(0);
    expect((await s.fixture.plan('app-roles')).code).toBe(0);
    await ok(s.store, 'POST', 'sys/auth/approle/tune', { max_lease_ttl: '3h' });
    // What the text says first: the apply does not change it (the plan does not even show it).
    expect((await s.fixture.plan('app-roles')).code).toBe(0);
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(
      'tune.max_lease_ttl: declared 2h, store 3h: the apply does not change it: the vault provider (5.9.0) keeps the TTL it wrote in its state and never reads it back from the store; ' +
        `set it back by hand (\`${storeCli()} auth tune -max-lease-ttl=2h approle/\`), or declare \`authMounts.approle.tune.maxLeaseTtl: Duration.parse('3h')\` to keep the store's (the next apply writes that same value once)`,
    );
    s.fixture.synthPlatform({ ...declared, authMounts: { approle: { ...declared.authMounts.approle, tune: { ...declared.authMounts.approle.tune, maxLeaseTtl: Duration.parse('3h') } } } });
    const again = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect((await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'])).code).toBe(0);
    expect((await s.fixture.plan('app-roles')).code).toBe(0);
    expect((await ok(s.store, 'GET', 'sys/auth')).data['approle/'].config.max_lease_ttl).toBe(10800);
    await roleKept();
  });

  it('a declared tune setting that is not a TTL (listing visibility) changed by hand: the text says the apply changes it in place; followed (applied): the store\'s value is the declared one again, same mount (accessor), Role ID and Secret ID kept, drift in sync', async () => {
    const before = (await ok(s.store, 'GET', 'sys/auth')).data['approle/'];
    expect(before.config.listing_visibility).toBe('unauth');
    await ok(s.store, 'POST', 'sys/auth/approle/tune', { listing_visibility: 'hidden' });
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(
      'tune.listing_visibility: declared unauth, store hidden: the apply changes it in place (tune, no replacement); declare `authMounts.approle.tune.listingVisibility: "hidden"` to keep the store\'s',
    );
    // What the text says: the plan changes the mount in place (an update, no replacement).
    const planned = await s.fixture.planChanges('app-roles');
    const mountChange = planned.changes.find((c) => c.type === 'vault_auth_backend')!;
    expect(mountChange.actions).toEqual(['update']);
    expect(planned.changes.filter((c) => c.actions.includes('delete'))).toEqual([]);
    expect((await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'])).code).toBe(0);
    const after = (await ok(s.store, 'GET', 'sys/auth')).data['approle/'];
    expect([after.config.listing_visibility, after.accessor]).toEqual(['unauth', before.accessor]);
    expect((await s.fixture.plan('app-roles')).code).toBe(0);
    const again = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect([again.code, again.stderr]).toEqual([0, '']);
    await roleKept();
  });

  it('a `tf --refuse-replace -- apply` killed (SIGKILL) during its guard: the next tf removes the guard directory it left, says so, and works; adopt removes one too', async () => {
    const run = spawnStoreCli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'], {
      cwd: s.fixture.dir,
      addr: s.store.addr,
      token: s.store.rootToken,
      env: env(),
    });
    const pid = run.child.pid!;
    let ended = false;
    void run.done.then(() => (ended = true));
    let guardDir: string | undefined;
    const deadline = Date.now() + 300_000;
    while (!ended && guardDir === undefined && Date.now() < deadline) {
      guardDir = fs.readdirSync(s.tmp).find((n) => n.startsWith(`${GUARD_DIRECTORY_PREFIX}${pid}-`));
      if (guardDir === undefined) await sleep(20);
    }
    expect(guardDir).toBeDefined();
    // The whole run (the CLI and its engine), as a cancelled CI job's runner does.
    process.kill(-pid, 'SIGKILL');
    expect((await run.done).signal).toBe('SIGKILL');
    const left = path.join(s.tmp, guardDir!);
    expect(fs.existsSync(left)).toBe(true);

    const next = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'plan', '-input=false', '-detailed-exitcode']);
    expect(next.stderr).toContain(`secretstore-iac tf: removed ${left}: a run killed during its guard left it (its process no longer runs)`);
    expect(next.code).toBe(0);
    expect(fs.existsSync(left)).toBe(false);
    expect(fs.readdirSync(s.tmp).filter((n) => n.startsWith(GUARD_DIRECTORY_PREFIX))).toEqual([]);

    // One left by a process that no longer runs (the highest pid a Linux kernel hands out, plus one): adopt removes it.
    const dead = path.join(s.tmp, `${GUARD_DIRECTORY_PREFIX}4194305-AbCdEf`);
    fs.mkdirSync(dead);
    fs.writeFileSync(path.join(dead, GUARD_OWNER_FILE), '4194305\n');
    const adopt = await cli(['adopt', '--outdir', 'cdktf.out']);
    expect(adopt.code).toBe(0);
    expect(adopt.stdout.split('\n').slice(0, 2)).toEqual(['Removed what killed runs left (their process no longer runs; no engine run of a stack reads them):', `  ${dead}`]);
    expect(fs.existsSync(dead)).toBe(false);
    await roleKept();
    expect(said(next)).not.toContain(secretId);
  });
});

describe('fix: a JWT method mounted and holding a role, but never configured (its configuration written by hand, then adopt)', () => {
  const { s, cli } = scenario('fix-unconfigured-jwt');
  let roleBefore: Record<string, unknown>;
  const declared = (kind: string) => readDeclaredObjects(path.join(s.fixture.dir, 'cdktf.out'), 'ci-access').filter((o) => o.kind === kind);
  const fix = () => `It holds 1 role(s): write its configuration by hand (${storeCli()} write auth/jwt/config ...), then run adopt again`;

  beforeAll(async () => {
    s.fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    // What a first apply that failed after mounting leaves (mounted with the declared description),
    // and CI's role written under it by hand since, as the provider writes the declaration: a bound
    // claim's comma-separated values as a list (written as one string, the store keeps one glob
    // `acme,acme/*`: the provider's plan does not see that, drift does, as a loosened binding).
    await ok(s.store, 'POST', 'sys/auth/jwt', { type: 'jwt', description: declared('jwt-auth-mount')[0].fields.description });
    const role = declared('jwt-role').find((o) => o.name === 'registry-ci')!;
    const body = Object.fromEntries(Object.entries(role.fields).filter(([k]) => !['//', 'backend', 'role_name', 'depends_on', 'token_policies'].includes(k)));
    const claims = Object.fromEntries(Object.entries(role.fields.bound_claims as Record<string, string>).map(([k, v]) => [k, v.split(',')]));
    await ok(s.store, 'POST', 'auth/jwt/role/registry-ci', { ...body, bound_claims: claims, token_policies: ['registry-ci'] });
    roleBefore = (await ok(s.store, 'GET', 'auth/jwt/role/registry-ci')).data;
    await s.fixture.init('ci-access');
  });

  it('adopt (exit 3, nothing written) and drift name it, with the fix: write its configuration by hand, then run adopt again', async () => {
    expect((await storeRequest(s.store, 'GET', 'auth/jwt/config')).status).toBe(404);
    const adopted = await cli(['adopt', 'ci-access', '--outdir', 'cdktf.out']);
    expect(adopted.code).toBe(3);
    expect(adopted.stderr).toContain('jwt/ is mounted but was never configured (GET auth/jwt/config: 404;');
    expect(adopted.stderr).toContain(fix());
    expect(fs.existsSync(path.join(s.fixture.stackDir('ci-access'), 'adopt-imports.tf.json'))).toBe(false);
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'ci-access']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(fix());
  });

  it('followed (a configuration written by hand: the CI key only): adopt imports the method and its role, one apply writes the declared configuration; the plan empty, adopt and drift clean, the role unchanged, a CI job logs in', async () => {
    await ok(s.store, 'POST', 'auth/jwt/config', { jwt_validation_pubkeys: [key.publicKeyPem] });
    const adopted = await cli(['adopt', 'ci-access', '--outdir', 'cdktf.out']);
    expect([adopted.code, adopted.stderr]).toEqual([0, '']);
    expect(adopted.stdout).toContain('Plan check: applying the imports destroys and replaces nothing (ci-access).');
    const applied = await cli(['tf', 'ci-access', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false']);
    expect(applied.code).toBe(0);
    expect(applied.stderr).toContain('nothing destroyed, replaced or taken over');
    expect((await s.fixture.plan('ci-access')).code).toBe(0);
    const again = await cli(['adopt', 'ci-access', '--outdir', 'cdktf.out', '--dry-run']);
    expect(again.stdout).toContain('0 to import; 0 to create.');
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'ci-access']);
    // The findings, when there are any, in the failure message.
    expect({ code: drift.code, stderr: drift.stderr, findings: drift.code === 0 ? '' : drift.stdout }).toEqual({ code: 0, stderr: '', findings: '' });
    expect((await ok(s.store, 'GET', 'auth/jwt/config')).data.bound_issuer).toBe(TEST_SETTINGS.ciUrl);
    expect((await ok(s.store, 'GET', 'auth/jwt/role/registry-ci')).data).toEqual(roleBefore);
    const jwt = signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
    expect((await jwtLogin(s.store, 'registry-ci', jwt)).status).toBe(200);
  });
});

describe('fix: a forcing attribute other than local, type and role_type: the AppRole mount\'s declared path, and a role name, changed after the roles were applied', () => {
  const { s, cli } = scenario('fix-role-backend');
  let roleId: string;
  let secretId: string;
  /** A library user's declaration (ApplicationStacks: the platform configuration has no mount path). */
  const synth = (mountPath: string, roleName?: string) =>
    s.fixture.synth((app) => {
      const apps = new ApplicationStacks(app, 'app-roles', { settings: new PlatformSettings({ ...TEST_SETTINGS, store: { kind: storeKind() } }), auth: { path: mountPath } });
      apps.addApplication('orchestrator-dev', { name: 'orchestrator', environment: 'dev', ...(roleName !== undefined ? { roleName } : {}) });
    });
  const refusedPlan = () => cli(['tf', 'app-roles', '--refuse-replace', '--', 'plan', '-input=false', '-out=app-roles.tfplan']);
  const kept = async () => {
    expect((await ok(s.store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id).toBe(roleId);
    expect((await appRoleLogin(s.store, roleId, secretId)).status).toBe(200);
  };

  beforeAll(async () => {
    synth('approle');
    await s.fixture.init('app-roles');
    expect((await cli(['tf', 'app-roles', '--refuse-replace', '--', 'apply', '-auto-approve', '-input=false'])).code).toBe(0);
    roleId = (await ok(s.store, 'GET', 'auth/approle/role/orchestrator-dev/role-id')).data.role_id;
    secretId = (await ok(s.store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
  });

  it('the mount\'s path declared apps after the roles were applied under approle/: the provider remounts the mount in place but replaces the role (replace_paths: backend); refused (exit 4) naming the store\'s path and where to declare it', async () => {
    synth('apps');
    const plan = await s.fixture.planChanges('app-roles');
    const changes = (plan.raw.resource_changes as any[]).map((rc) => [rc.type, rc.change.actions.join(','), rc.change.replace_paths ?? []]);
    expect(changes).toEqual(
      expect.arrayContaining([
        ['vault_auth_backend', 'update', []],
        ['vault_approle_auth_backend_role', 'delete,create', [['backend']]],
      ]),
    );
    const refused = await refusedPlan();
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(
      /vault_approle_auth_backend_role\.\S+ declared at app-roles\/orchestrator-dev\/role would be replaced \(destroyed, then created again\); forced by backend \("approle" → "apps"\)\. /,
    );
    expect(refused.stderr).toContain(
      "Fix: the role is under the mount approle/ on the store, declared under apps/ (the mount's declared path changed after it was applied): " +
        'declare the store\'s path again (ApplicationStacks `auth: { path: "approle" }`, AppRoleAuth `path`) and synthesize; applying would delete the role and create another under apps/ (a new Role ID, every Secret ID issued for it refused)',
    );
    expect(refused.stderr).not.toContain('declare what the store has');
    expect(fs.existsSync(path.join(s.fixture.stackDir('app-roles'), 'app-roles.tfplan'))).toBe(false);
    expect(Object.keys((await ok(s.store, 'GET', 'sys/auth')).data)).not.toContain('apps/');
    await kept();
  });

  it('an application\'s role name changed (roleName): the role (role_name) and its policy (name) would be replaced; refused naming the store\'s name', async () => {
    synth('approle', 'orchestrator-renamed');
    const refused = await refusedPlan();
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(
      'forced by role_name ("orchestrator-dev" → "orchestrator-renamed"). Fix: the role is named orchestrator-dev on the store, declared orchestrator-renamed: declare the store\'s name again (the application\'s `roleName`)',
    );
    expect(refused.stderr).toContain('Fix: the policy is named orchestrator-dev on the store, declared orchestrator-renamed: declare the store\'s name again');
    await kept();
  });

  it('followed (the store\'s path and name declared again): the plan is empty, drift and adopt clean, the Role ID and the Secret ID kept', async () => {
    synth('approle');
    const planned = await cli(['tf', 'app-roles', '--refuse-replace', '--', 'plan', '-input=false', '-detailed-exitcode']);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain('No changes.');
    const drift = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect([drift.code, drift.stderr]).toEqual([0, '']);
    const adopt = await cli(['adopt', 'app-roles', '--outdir', 'cdktf.out', '--dry-run']);
    expect(adopt.stdout).toContain('0 to import; 0 to create.');
    await kept();
  });
});
