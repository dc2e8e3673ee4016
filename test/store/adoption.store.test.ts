/**
 * Issue 10: adopting a store whose platform was made by hand, keeping it reconciled (drift), with
 * a reader token that has only the documented read/list policy.
 */
import * as fs from 'fs';
import * as path from 'path';
import { READER_POLICY } from '../../lib/reconcile/live-store-reader';
import { IMPORT_FILE } from '../../lib/reconcile/import-blocks';
import { defaultPolicyText } from '../../lib/acl/default-policy';
import { storeKind } from '../support/store/store-facts';

/** The selected store's built-in `default` as it ships (Vault's has a sys/control-group/request rule OpenBao's lacks). */
const DEFAULT_POLICY_TEXT = defaultPolicyText(storeKind());
import { runStoreCli } from '../support/store/store-cli';
import { createHandMadePlatform, HandMadePlatform, HAND_MADE_TTL } from '../support/store/hand-made-platform';
import { generateSigningKey } from '../support/store/jwt-signer';
import { appRoleLogin, clientToken, firstError, PlatformFixture, testPlatformConfig } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

/** Keeps a command's output for the README when SECRETSTORE_IAC_KEEP_OUTPUT names a directory. */
function keep(name: string, text: string): void {
  const dir = process.env.SECRETSTORE_IAC_KEEP_OUTPUT;
  if (dir) fs.writeFileSync(path.join(dir, name), `${text}\n`);
}

/** The reader's own policy is on the store and no stack declares it: reported like any other. */
const READER_POLICY_FINDING = expect.stringMatching(
  /^- `sys\/policies\/acl\/secretstore-iac-reader`: policy secretstore-iac-reader is on the store but no stack declares it; it grants wildcard on auth\/\+\/config/,
);

/**
 * The hand-made `jwt/` has no description, and the apply does not give it the declared one: the vault
 * provider (5.9.0) writes a JWT mount's description only when it creates the mount. Reported until
 * set by hand (`bao auth tune -description`), as the finding says.
 */
const JWT_DESCRIPTION_FINDING = expect.stringMatching(/^- `sys\/auth\/jwt`: auth method jwt\/ settings differ \(identities: `jwt\/registry-ci`\)/);

/** Finding lines of a drift report (before its access-diff part). */
function findingLines(report: string): string[] {
  return report.split('\n### Access changes')[0].split('\n').filter((l) => l.startsWith('- `'));
}

/** A token whose only policy is `policy` (root token creates it). */
async function tokenWith(store: RunningStore, name: string, policy: string): Promise<string> {
  expect((await storeRequest(store, 'PUT', `sys/policies/acl/${name}`, { policy })).status).toBe(204);
  const res = await storeRequest(store, 'POST', 'auth/token/create', { policies: [name], no_default_policy: true, ttl: '1h' });
  return res.body.auth.client_token;
}

describe('adopting a hand-made store', () => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let hand: HandMadePlatform;
  let readerToken: string;
  const outdir = () => path.join(fixture.dir, 'cdktf.out');

  const cli = (args: string[], token = readerToken) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token });

  /** Resource changes of a saved plan, by address: actions and whether it is an import. */
  async function plannedActions(stack: string): Promise<Record<string, string>> {
    const plan = await fixture.planChanges(stack);
    return Object.fromEntries(
      plan.raw.resource_changes.map((rc: any) => [rc.address, `${rc.change.importing ? 'import+' : ''}${rc.change.actions.join(',')}`]),
    );
  }

  beforeAll(async () => {
    store = await startStore();
    const key = generateSigningKey();
    fixture = PlatformFixture.create(store, 'adopt');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    hand = await createHandMadePlatform(store, outdir());
    readerToken = await tokenWith(store, 'secretstore-iac-reader', READER_POLICY);
    for (const stack of fixture.stacks) await fixture.init(stack);
  });

  afterAll(async () => {
    fixture?.cleanup();
    await store?.stop();
  });

  it('without adopt, the first plan would create over the hand-made objects', async () => {
    const actions = await plannedActions('ci-access');
    expect(Object.values(actions).every((a) => a === 'create')).toBe(true);
  });

  it('the reader token (read/list only) reads everything; without `list` on sys/policies/acl drift fails with exit 3 and the path', async () => {
    const narrow = await tokenWith(store, 'reader-without-policy-list', READER_POLICY.replace('path "sys/policies/acl" {\n  capabilities = ["list"]\n}\n', ''));
    const r = await cli(['drift', 'cdktf.out'], narrow);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`secretstore-iac drift: cannot read the live store at ${store.addr}: permission denied: LIST /v1/sys/policies/acl (HTTP 403): the token may not list sys/policies/acl.`);
    expect((await storeRequest(store, 'DELETE', 'sys/policies/acl/reader-without-policy-list')).status).toBe(204);
    // The reader token cannot write: the store refuses a policy write with it.
    expect((await storeRequest(store, 'PUT', 'sys/policies/acl/x', { policy: '' }, readerToken)).status).toBe(403);
  });

  it('adopt --dry-run --format json: one JSON object with the imports of each stack, no token or Secret ID in it, nothing written', async () => {
    const r = await cli(['adopt', '--outdir', 'cdktf.out', '--dry-run', '--format', 'json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ command: 'adopt', dryRun: true, leftovers: [], planChecked: [] });
    expect(json.stacks.map((s: any) => s.stack).sort()).toEqual([...fixture.stacks].sort());
    for (const s of json.stacks) {
      const ids = s.imports.map((b: any) => b.id).sort();
      if (s.stack === 'ci-access') expect(ids).toEqual(['auth/jwt/role/registry-ci', 'jwt', 'registry-ci']);
      else expect(ids).toEqual(['approle', ...hand.appRoles.map((n) => `auth/approle/role/${n}`), ...hand.appRoles].sort());
      expect({ stack: s.stack, refused: s.refused, files: s.files }).toEqual({ stack: s.stack, refused: [], files: [] });
    }
    expect(json.stacks.find((s: any) => s.stack === 'ci-access').access.changed.map((c: any) => c.name)).toEqual(['jwt/registry-ci']);
    for (const secret of [readerToken, store.rootToken, hand.orchestratorSecretId]) expect(r.stdout).not.toContain(secret);
    for (const stack of fixture.stacks) expect(fs.existsSync(path.join(fixture.stackDir(stack), IMPORT_FILE))).toBe(false);
  });

  it('adopt writes import blocks for every hand-made object and reports exactly the hand-made differences', async () => {
    const r = await cli(['adopt', '--outdir', 'cdktf.out']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    keep('adopt-report.md', r.stdout);
    for (const stack of fixture.stacks) {
      const file = JSON.parse(fs.readFileSync(path.join(fixture.stackDir(stack), IMPORT_FILE), 'utf8'));
      const ids = file.import.map((b: any) => b.id).sort();
      if (stack === 'ci-access') expect(ids).toEqual(['auth/jwt/role/registry-ci', 'jwt', 'registry-ci']);
      else expect(ids).toEqual(['approle', ...hand.appRoles.map((n) => `auth/approle/role/${n}`), ...hand.appRoles].sort());
    }
    // The adoption report, store as it is → declarations: registry-ci loses the extra path and the
    // extra namespace; the AppRole roles get the declared TTLs; nothing else changes.
    expect(r.stdout).toContain('## Access changes: `store ' + store.addr + ' as it is` → `declarations (ci-access)`');
    expect(r.stdout).toContain('**Access changed:** 0 added, 0 removed, 1 changed, 0 unchanged.');
    expect(r.stdout).toContain('**Access changed:** 0 added, 0 removed, 4 changed, 0 unchanged.');
    expect(r.stdout).toContain(`| \`${hand.extraCiPath}\` (gone) |  | read |  |`);
    expect(r.stdout).toMatch(/\| bound_claims \| .*legacy-group\/\*.* \| /);
    const changedLines = r.stdout.split('\n').filter((l) => l.startsWith('### Changed: '));
    expect(changedLines.sort()).toEqual(
      ['jwt/registry-ci', ...hand.appRoles.map((n) => `approle/${n}`)].map((n) => `### Changed: \`${n}\``).sort(),
    );
    const bindingRows = r.stdout.split('\n').filter((l) => /^\| (token_ttl|token_max_ttl|bound_claims|token_policies|bound_audiences) \|/.test(l));
    expect(bindingRows.filter((l) => l.startsWith('| token_ttl |'))).toHaveLength(4);
    expect(bindingRows.filter((l) => l.startsWith('| token_max_ttl |'))).toHaveLength(4);
    expect(bindingRows.filter((l) => l.startsWith('| bound_claims |'))).toHaveLength(1);
    expect(bindingRows).toHaveLength(9);
    expect(r.stdout).not.toContain('legacy-admin');
  });

  it('the plan imports and updates in place: nothing created, nothing replaced', async () => {
    for (const stack of fixture.stacks) {
      const actions = await plannedActions(stack);
      for (const [address, action] of Object.entries(actions)) {
        expect(`${address}: ${action}`).toMatch(/: import\+(update|no-op)$/);
      }
    }
  });

  it('apply succeeds; Role IDs are unchanged; the Secret ID issued before adoption still logs in; the second plan is empty', async () => {
    await fixture.apply();
    for (const role of hand.appRoles) {
      const res = await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`);
      expect(res.body.data.role_id).toBe(hand.roleIds[role]);
    }
    const login = await appRoleLogin(store, hand.roleIds['orchestrator-dev'], hand.orchestratorSecretId);
    expect(clientToken(login)).toBeTruthy();
    const role = (await storeRequest(store, 'GET', 'auth/approle/role/orchestrator-dev')).body.data;
    expect(role.token_ttl).not.toBe(HAND_MADE_TTL.token_ttl);
    for (const stack of fixture.stacks) expect((await fixture.plan(stack)).code).toBe(0);
    // The imports are done: adopt now has nothing to import and removes its file.
    const again = await cli(['adopt', '--outdir', 'cdktf.out']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 to import; 0 to create.');
    for (const stack of fixture.stacks) expect(fs.existsSync(path.join(fixture.stackDir(stack), IMPORT_FILE))).toBe(false);
  });

  it('drift: only the unmanaged role and policy remain, with the access they give (exit 1)', async () => {
    const r = await cli(['drift', 'cdktf.out']);
    keep('drift-after-adopt.md', r.stdout);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const findings = findingLines(r.stdout);
    expect(findings).toEqual([
      JWT_DESCRIPTION_FINDING,
      expect.stringMatching(/^- `auth\/approle\/role\/legacy-admin`: role approle\/legacy-admin is on the store but no stack declares it; its tokens get default, legacy-admin/),
      expect.stringMatching(/^- `sys\/policies\/acl\/legacy-admin`: policy legacy-admin is on the store but no stack declares it; it grants sudo on `\*` \(identities: `approle\/legacy-admin`\)/),
      READER_POLICY_FINDING,
    ]);
    expect(r.stdout).toContain('  - description: declared "CI job tokens (managed by secretstore-iac)", store "": the apply does not change it');
    const stackOnly = await cli(['drift', 'cdktf.out', '--stack', 'app-roles']);
    expect(stackOnly.code).toBe(0);
    expect(stackOnly.stdout).toContain('**In sync.**');
  });

  it('access and who-can read the live store too (the unmanaged sudo role shows)', async () => {
    const who = await cli(['who-can', 'sudo', 'sys/auth/jwt', 'live']);
    expect(who.stderr).toBe('');
    expect(who.stdout).toBe('sudo on sys/auth/jwt:\n  approle/legacy-admin  via "*" (policies: legacy-admin)');
    const access = await cli(['access', 'live', '--identity', 'jwt/registry-ci']);
    expect(access.code).toBe(0);
    expect(access.stdout).toContain('`secret/data/registry/svc-orchestrator`');
    expect(access.stdout).not.toContain(hand.extraCiPath);
  });

  it('drift reports each of five hand changes with its identity and path (exit 1); after apply only the unmanaged objects remain', async () => {
    const root = (method: string, p: string, body?: unknown) => storeRequest(store, method, p, body);
    // (1) a rule added to a policy by hand
    const orchestrator = (await root('GET', 'sys/policies/acl/orchestrator-dev')).body.data.policy;
    await root('PUT', 'sys/policies/acl/orchestrator-dev', { policy: `${orchestrator}\npath "secret/data/other/*" {\n  capabilities = ["read"]\n}\n` });
    // (2) a TTL raised
    expect((await root('POST', 'auth/approle/role/authentik-role', { token_ttl: 72000 })).status).toBe(204);
    // (3) a bound claim added
    const ci = (await root('GET', 'auth/jwt/role/registry-ci')).body.data;
    const claimAdded = await root('POST', 'auth/jwt/role/registry-ci', { role_type: 'jwt', bound_claims: { ...ci.bound_claims, ref: ['main'] } });
    expect([claimAdded.status, firstError(claimAdded)]).toEqual([204, '']);
    // (4) a policy deleted
    expect((await root('DELETE', 'sys/policies/acl/registry')).status).toBe(204);
    // (5) the JWT configuration changed
    const config = (await root('GET', 'auth/jwt/config')).body.data;
    expect((await root('POST', 'auth/jwt/config', { bound_issuer: 'https://other.example', jwt_validation_pubkeys: config.jwt_validation_pubkeys })).status).toBe(204);

    const r = await cli(['drift', 'cdktf.out']);
    keep('drift-five-changes.md', r.stdout);
    expect(r.code).toBe(1);
    const findings = findingLines(r.stdout);
    expect(findings).toEqual([
      expect.stringMatching(/^- `sys\/policies\/acl\/registry`: policy registry is declared but missing on the store: it grants nothing until its stack is applied \(identities: `approle\/registry`\) \[app-roles: `vault_policy\./),
      expect.stringMatching(/^- `auth\/approle\/role\/authentik-role`: role approle\/authentik-role differs \(identities: `approle\/authentik-role`\)/),
      expect.stringMatching(/^- `auth\/jwt\/config`: JWT method configuration differs \(identities: `jwt\/registry-ci`\)/),
      expect.stringMatching(/^- `auth\/jwt\/role\/registry-ci`: role jwt\/registry-ci differs \(identities: `jwt\/registry-ci`\)/),
      JWT_DESCRIPTION_FINDING,
      expect.stringMatching(/^- `sys\/policies\/acl\/orchestrator-dev`: policy orchestrator-dev grants different access than declared \(identities: `approle\/orchestrator-dev`\)/),
      expect.stringMatching(/^- `auth\/approle\/role\/legacy-admin`: /),
      expect.stringMatching(/^- `sys\/policies\/acl\/legacy-admin`: /),
      READER_POLICY_FINDING,
    ]);
    expect(r.stdout).toContain('  - token_ttl: declared 12h, store 20h');
    // Values that could be Markdown (a URL is autolinked) are inline code in the note.
    expect(r.stdout).toContain('  - bound_issuer: declared `"https://gitlab.test.example", store "https://other.example"`');
    expect(r.stdout).toContain('  - `secret/data/other/*:` declared none, store read');
    expect(r.stdout).toMatch(/  - bound_claims: declared .*, store .*ref/);

    await fixture.apply();
    const after = await cli(['drift', 'cdktf.out']);
    expect(after.code).toBe(1);
    expect(findingLines(after.stdout)).toEqual([
      JWT_DESCRIPTION_FINDING,
      expect.stringMatching(/^- `auth\/approle\/role\/legacy-admin`: /),
      expect.stringMatching(/^- `sys\/policies\/acl\/legacy-admin`: /),
      READER_POLICY_FINDING,
    ]);
    // Removed by hand (and the reader's own policy too, read with the root token), the JWT mount's
    // description set by hand as the finding says, the store is in sync: exit 0.
    expect((await root('POST', 'sys/auth/jwt/tune', { description: 'CI job tokens (managed by secretstore-iac)' })).status).toBe(204);
    await root('DELETE', 'auth/approle/role/legacy-admin');
    await root('DELETE', 'sys/policies/acl/legacy-admin');
    const readerOnly = await cli(['drift', 'cdktf.out']);
    expect(findingLines(readerOnly.stdout)).toEqual([
      expect.stringMatching(/^- `sys\/policies\/acl\/secretstore-iac-reader`: policy secretstore-iac-reader is on the store but no stack declares it; it grants wildcard on auth\/\+\/config/),
    ]);
    // A change to the built-in default policy is reported; restoring its shipped text clears it.
    expect((await root('PUT', 'sys/policies/acl/default', { policy: `${DEFAULT_POLICY_TEXT}\npath "secret/*" {\n  capabilities = ["read"]\n}\n` })).status).toBe(204);
    const defaultChanged = await cli(['drift', 'cdktf.out'], store.rootToken);
    expect(defaultChanged.code).toBe(1);
    expect(findingLines(defaultChanged.stdout)).toContainEqual(
      expect.stringMatching(/^- `sys\/policies\/acl\/default`: the built-in default policy was changed on the store .*\(identities: `approle\/authentik-role`, /),
    );
    expect(defaultChanged.stdout).toContain('  - `secret/*:` declared none, store read');
    expect((await root('PUT', 'sys/policies/acl/default', { policy: DEFAULT_POLICY_TEXT })).status).toBe(204);
    const clean = await cli(['drift', 'cdktf.out'], store.rootToken);
    await root('DELETE', 'sys/policies/acl/secretstore-iac-reader');
    const cleanAfter = await cli(['drift', 'cdktf.out'], store.rootToken);
    expect(clean.code).toBe(1);
    expect(cleanAfter.stdout).toContain('**In sync.**');
    expect(cleanAfter.code).toBe(0);
  });

  it('access-diff accepts the live store as one side (no access change once applied)', async () => {
    const r = await cli(['access-diff', 'live', 'cdktf.out'], store.rootToken);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`## Access changes: \`live store ${store.addr} (root namespace)\` → \`cdktf.out\``);
    expect(r.code).toBe(0);
  });
});
