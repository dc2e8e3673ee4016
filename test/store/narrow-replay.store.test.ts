/**
 * `secretstore-iac narrow --write` on a real store, the workload replayed after the narrowing (issue 47,
 * "least privilege"). The configuration is the source of the narrowing's unit tests
 * (`NARROWING_SOURCE`: two registry accounts read by CI, `mirror` and `helm`, and a people group `ops`
 * with three reads) on the test installation (`narrowingSourceOn`), written as
 * `stacks/platform.config.ts` beside `cdktf.out`. It is synthesized and applied with the real engine to
 * a store with a file audit device and a real OpenID provider. The workload logs in for real (CI job
 * tokens signed with the test's own key, an application's AppRole login, a person through OIDC) and
 * reads what it needs (`svc-helm`, the spec's `svc-orchestrator`, the application's own secret,
 * `team/b`), each identity also refused once. Then the operator's loop: `narrow cdktf.out --log
 * audit.log --markdown mr.md --write` (the CLI, as an operator runs it), synthesize the edited source
 * again, plan, apply.
 *
 * Proven on the store: each grant narrow removed (`svc-mirror` for `registry-ci`, `team/a` and the
 * `team/c` subtree for `ops`) answers 200 to a fresh login of its identity while the narrowing is only
 * synthesized (so the check can fail), and 403 once applied; the workload replayed with fresh logins
 * gets the status it got before for every request (0 new denials), which the audit log of the replay
 * confirms; the store's auth mounts, JWT configurations, roles and every policy rule narrow did not
 * remove are as they were; the plan updates policies only; narrow over the replay removes nothing
 * more (a fixed point). Nothing narrow prints or writes holds a token, a Secret ID, a Role ID, a JWT,
 * a secret value or an HMAC of the log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { OIDC_CLI_REDIRECT_URI } from '../../lib';
import { readLibraryPolicy } from '../../lib/acl/library-policy-reader';
import { LiveStore, readLiveStore } from '../../lib/reconcile/live-store-reader';
import { StoreClient } from '../../lib/store/store-client';
import { leakedValues } from '../support/ci-login-harness';
import { evaluateConfigSource, narrowingSourceOn } from '../support/narrowing-config';
import { startAuditedStore } from '../support/store/audit-device';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { RunningOidcProvider, ssoLogin, startOidcProvider } from '../support/store/oidc-provider';
import { appRoleLogin, clientToken, jwtLogin, PlannedChange, PlatformFixture, SPEC_CI_SECRETS, TEST_JOB_TIMEOUT, TEST_SETTINGS, testSecretValues, writeKv2 } from '../support/store/platform-fixture';
import { CliRun, runStoreCli } from '../support/store/store-cli';
import { STORE_TOKEN_PATTERN, storeKind } from '../support/store/store-facts';
import { RunningStore, storeRequest } from '../support/store/store-server';

const CLIENT_ID = 'secretstore';
/** The person of the workload, in the provider's group `ops` (the people group's `groups`). */
const PERSON = 'alice';

/** One request of the workload: who (a fresh login of that identity), what, and the status the store answers. */
interface Step {
  readonly identity: string;
  readonly path: string;
  readonly status: number;
}
/**
 * The workload, every read a GET: what each identity uses, and one request each that its role lacks
 * (403 before and after: the replay must not turn a 200 into a 403, nor a 403 into a 200).
 */
const WORKLOAD: readonly Step[] = [
  { identity: 'jwt/registry-ci', path: 'secret/data/registry/svc-helm', status: 200 },
  { identity: 'jwt/registry-ci', path: 'secret/data/registry/svc-orchestrator', status: 200 },
  { identity: 'jwt/registry-ci', path: 'secret/data/registry/svc-deployer', status: 403 },
  { identity: 'approle/orchestrator-dev', path: 'secret/data/acme/dev/orchestrator/database', status: 200 },
  { identity: 'approle/orchestrator-dev', path: 'secret/data/acme/shared/identity/config', status: 403 },
  { identity: 'oidc/ops', path: 'secret/data/team/b', status: 200 },
  { identity: 'oidc/ops', path: 'secret/data/acme/dev/orchestrator/database', status: 403 },
];
/** Secrets seeded (below `secret/data/`): every path the workload and the probes read, so a 403 is the ACL's and a 200 is a read. */
const SEEDED = [
  ...Object.keys(SPEC_CI_SECRETS),
  'registry/svc-helm',
  'registry/svc-mirror',
  'registry/svc-deployer',
  'acme/dev/orchestrator/database',
  'acme/shared/identity/config',
  'team/a',
  'team/b',
  'team/c/x',
];
/**
 * The ground truth of the narrowing: the grants of PlatformConfig fields the workload never used,
 * per field, as `identity rule (capabilities)`. `accounts.helm` and `people.groups.ops.reads[1]`
 * (`team/b`) were used; the spec's own declarations have no field.
 */
const EXPECTED_REMOVED = [
  ['accounts.mirror.readByCi: true -> false (accounts.mirror.consumers dropped, if any: SSI-R8)', 'ci-access/svc-mirror', ['jwt/registry-ci secret/data/registry/svc-mirror (read)']],
  ['people.groups.ops.reads[0] removed', 'people/group-ops/reads[0]', ['oidc/ops secret/data/team/a (read)']],
  ['people.groups.ops.reads[2] removed', 'people/group-ops/reads[2]', ['oidc/ops secret/data/team/c/* (read)', 'oidc/ops secret/metadata/team/c/* (list)']],
];

/** A grant narrow removed: the identity holding it, the rule, one capability. */
interface RemovedGrant {
  readonly identity: string;
  readonly rule: string;
  readonly capability: string;
}
/** One item of narrow's `remove (written to ...)` section: its change line, declaration and grants. */
interface RemovedItem {
  readonly change: string;
  declaredBy: string;
  readonly grants: RemovedGrant[];
}

/** The items of narrow's `remove (written to FILE) (N):` section, read from its text output; undefined when it has none. */
function removedItems(stdout: string): { header: string; items: RemovedItem[] } | undefined {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => /^remove \(written to .+\) \(\d+\):$/.test(l));
  if (start < 0) return undefined;
  const items: RemovedItem[] = [];
  for (let i = start + 1; i < lines.length && lines[i] !== ''; i++) {
    const line = lines[i];
    if (/^ {2}\S/.test(line)) items.push({ change: line.trim(), declaredBy: '', grants: [] });
    else if (line.startsWith('    declared by ')) items[items.length - 1].declaredBy = line.slice('    declared by '.length);
    else {
      const evidence = /^ {4}(\S+): (.*) never used in the window; /.exec(line);
      if (!evidence) throw new Error(`narrow's remove section has a line this test does not read: ${JSON.stringify(line)}`);
      for (const m of evidence[2].matchAll(/(\S+) \(([^)]*)\)(?:, |$)/g)) {
        for (const capability of m[2].split(', ')) items[items.length - 1].grants.push({ identity: evidence[1], rule: m[1], capability });
      }
    }
  }
  return { header: lines[start], items };
}

/** The request that exercises one capability of a rule: a read of a secret below it, or the list of its folder. */
function probeRequest(g: RemovedGrant): { method: string; path: string } {
  if (g.capability === 'read') return { method: 'GET', path: g.rule.replace(/\/\*$/, '/x') };
  if (g.capability === 'list') return { method: 'GET', path: `${g.rule.replace(/\*$/, '')}?list=true` };
  throw new Error(`no probe for capability ${g.capability} of ${g.rule}`);
}

/** Each policy's rules as `path [capabilities]` (the library's form), or its text for one that is not the library's. */
function policyRules(live: LiveStore): Record<string, string[]> {
  return Object.fromEntries(
    [...live.policies].map(([name, text]) => [name, readLibraryPolicy(text)?.map((r) => `${r.path} [${r.capabilities.join(', ')}]`) ?? [`text ${text}`]]),
  );
}

describe(`narrow --write on ${storeKind()}: the narrowing applied, the workload replayed`, () => {
  let store: RunningStore;
  let provider: RunningOidcProvider;
  let fixture: PlatformFixture;
  let key: JwtSigningKey;
  let work: string;
  let log: string;
  let configFile: string;
  let markdownFile: string;
  const clientSecret = `oidc-client-${randomBytes(16).toString('hex')}`;
  /** Every secret the test handled (tokens, JWTs, Role IDs, Secret IDs, seeded values): none may be printed. */
  const secrets: string[] = [clientSecret];

  let sourceBefore: string;
  let sourceAfter: string;
  let narrowRun: CliRun;
  let markdown: string;
  let removed: RemovedGrant[] = [];
  let original: Step[];
  let replay: Step[];
  let unapplied: string[];
  let applied: string[];
  let planned: { stack: string; change: PlannedChange }[];
  let liveBefore: LiveStore;
  let liveAfter: LiveStore;
  let fixedPoint: CliRun;
  let replayUsage: CliRun;

  /** A fresh login of `identity` (`mount/role`) as the workload makes it: its store token. */
  async function login(identity: string): Promise<string> {
    const [mount, role] = identity.split('/');
    let token: string;
    if (mount === 'jwt') {
      const jwt = signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
      secrets.push(jwt);
      token = clientToken(await jwtLogin(store, role, jwt));
    } else if (mount === 'approle') {
      // Provisioned as deployment automation does: Role ID and a new Secret ID, with the root token.
      const roleId = (await storeRequest(store, 'GET', `auth/approle/role/${role}/role-id`)).body.data.role_id;
      const secretId = (await storeRequest(store, 'POST', `auth/approle/role/${role}/secret-id`, {})).body.data.secret_id;
      secrets.push(roleId, secretId);
      token = clientToken(await appRoleLogin(store, roleId, secretId));
    } else if (mount === 'oidc') {
      token = clientToken((await ssoLogin(store, { mount, role, login: PERSON, redirectUri: OIDC_CLI_REDIRECT_URI })).callback);
    } else {
      throw new Error(`no login for ${identity}`);
    }
    secrets.push(token);
    return token;
  }

  /** The workload: one fresh login per identity, then each request; what the store answered. */
  async function runWorkload(): Promise<Step[]> {
    const tokens = new Map<string, string>();
    const answered: Step[] = [];
    for (const step of WORKLOAD) {
      if (!tokens.has(step.identity)) tokens.set(step.identity, await login(step.identity));
      const res = await storeRequest(store, 'GET', step.path, undefined, tokens.get(step.identity)!);
      answered.push({ ...step, status: res.status });
    }
    return answered;
  }

  /** Each removed grant exercised with a fresh login of its identity: `identity capability path: status`. */
  async function probe(): Promise<string[]> {
    const tokens = new Map<string, string>();
    const answers: string[] = [];
    for (const g of removed) {
      if (!tokens.has(g.identity)) tokens.set(g.identity, await login(g.identity));
      const { method, path: apiPath } = probeRequest(g);
      answers.push(`${g.identity} ${g.capability} ${apiPath}: ${(await storeRequest(store, method, apiPath, undefined, tokens.get(g.identity)!)).status}`);
    }
    return answers;
  }

  /** Synthesizes the configuration source as it is now (evaluated as `npm run synth` would). */
  const synthFromSource = () => fixture.synthPlatform(evaluateConfigSource(fs.readFileSync(configFile, 'utf8')));
  const live = () => readLiveStore(new StoreClient({ address: store.addr, token: store.rootToken }));

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-narrow-replay-'));
    fs.chmodSync(work, 0o700);
    log = path.join(work, 'audit.log');
    markdownFile = path.join(work, 'mr.md');
    key = generateSigningKey();
    store = await startAuditedStore(log, { readyTimeoutMs: 180_000 });
    secrets.push(store.rootToken);
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret, redirectUris: [OIDC_CLI_REDIRECT_URI], accounts: { [PERSON]: ['ops'] } });
    fixture = PlatformFixture.create(store, 'narrow-replay');
    fixture.engineEnv = { TF_VAR_oidc_client_secret: clientSecret };

    // The configuration repository's layout: stacks/platform.config.ts beside cdktf.out (narrow's defaults).
    configFile = path.join(fixture.dir, 'stacks', 'platform.config.ts');
    fs.mkdirSync(path.dirname(configFile), { recursive: true });
    sourceBefore = narrowingSourceOn({
      settings: { ...TEST_SETTINGS, store: { kind: storeKind() } },
      publicKeyPem: key.publicKeyPem,
      jobTimeoutMinutes: TEST_JOB_TIMEOUT.toSeconds() / 60,
      discoveryUrl: provider.issuer,
      storeUrl: store.addr,
    });
    fs.writeFileSync(configFile, sourceBefore);
    synthFromSource();
    await fixture.apply();
    for (const logical of SEEDED) {
      const values = testSecretValues(['value']);
      secrets.push(...Object.values(values));
      await writeKv2(store, 'secret', logical, values);
    }
    liveBefore = await live();

    // The workload, in the audit log; then the operator's narrowing of that log.
    original = await runWorkload();
    narrowRun = await runStoreCli(['narrow', 'cdktf.out', '--log', log, '--markdown', markdownFile, '--write'], { cwd: fixture.dir, addr: store.addr });
    sourceAfter = fs.readFileSync(configFile, 'utf8');
    markdown = fs.existsSync(markdownFile) ? fs.readFileSync(markdownFile, 'utf8') : '';
    removed = (removedItems(narrowRun.stdout)?.items ?? []).flatMap((i) => i.grants);

    // Synthesized again from the edited source: planned, and probed before the apply (still granted).
    synthFromSource();
    planned = [];
    for (const stack of fixture.stacks) {
      for (const change of (await fixture.planChanges(stack)).changes) if (change.actions.join() !== 'no-op') planned.push({ stack, change });
    }
    unapplied = await probe();
    await fixture.apply();
    applied = await probe();
    liveAfter = await live();

    // The replay, after every request above: its window starts once the clock has passed the last of them.
    const last = Date.now();
    while (Date.now() <= last) await new Promise((resolve) => setImmediate(resolve));
    const replayStart = new Date(last + 1).toISOString();
    replay = await runWorkload();
    fixedPoint = await runStoreCli(['narrow', 'cdktf.out', '--log', log, '--since', replayStart], { cwd: fixture.dir, addr: store.addr });
    replayUsage = await runStoreCli(['usage', 'cdktf.out', '--log', log, '--since', replayStart, '--format', 'json'], { cwd: fixture.dir, addr: store.addr });
  });

  afterAll(async () => {
    await provider?.stop();
    await store?.stop();
    fixture?.cleanup();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('the workload got what it was expected to: its reads allowed, its one refusal per identity refused', () => {
    expect(original).toEqual(WORKLOAD);
  });

  it('narrow removes exactly the grants of configuration fields the workload never used, and writes the edit; the rest of the source as it was', () => {
    expect([narrowRun.code, narrowRun.stderr]).toEqual([0, '']);
    const section = removedItems(narrowRun.stdout);
    expect(section?.header).toBe(`remove (written to ${path.join('stacks', 'platform.config.ts')}) (3):`);
    expect(section!.items.map((i) => [i.change, i.declaredBy, [...new Set(i.grants.map((g) => g.rule))].map((rule) => `${i.grants[0].identity} ${rule} (${i.grants.filter((g) => g.rule === rule).map((g) => g.capability).join(', ')})`)])).toEqual(
      EXPECTED_REMOVED,
    );
    expect(narrowRun.stdout).toContain("change by hand: the source's form does not allow the edit (0):");
    const expected = sourceBefore
      .replace(
        "    mirror: {\n      permissions: ['raw:read'],\n      usedBy: 'the mirror job',\n      consumers: ['mirror-sync'],\n    },",
        "    mirror: {\n      readByCi: false,\n      permissions: ['raw:read'],\n      usedBy: 'the mirror job',\n    },",
      )
      .replace("reads: [{ path: 'team/a' }, { path: 'team/b' }, { path: 'team/c', subtree: true }],", "reads: [{ path: 'team/b' }],");
    expect(expected).not.toBe(sourceBefore);
    expect(sourceAfter).toBe(expected);
    expect(markdown).toContain('### Removed in `stacks/platform.config.ts` (3)');
  });

  it('synthesized again but not applied: every removed grant still answers 200 to a fresh login (the check below can fail); the plan updates policies only', () => {
    expect(removed.length).toBe(4);
    expect(unapplied).toEqual(removed.map((g) => `${g.identity} ${g.capability} ${probeRequest(g).path}: 200`));
    const roleOf = (identity: string) => liveBefore.roles.find((r) => `${r.mount}/${r.role}` === identity)!;
    const policiesOf = (identity: string) => [...((roleOf(identity).fields.token_policies as string[] | undefined) ?? [])].sort();
    const narrowed = [...new Set(removed.flatMap((g) => policiesOf(g.identity).filter((p) => p !== 'default')))].sort();
    expect(narrowed.length).toBeGreaterThan(0);
    // One in-place update per policy that loses a rule; nothing created, destroyed or replaced.
    expect(planned.map(({ change }) => [change.type, change.actions.join(), change.after?.name]).sort()).toEqual(narrowed.map((name) => ['vault_policy', 'update', name]));
  });

  it('applied: every removed grant answers 403 to a fresh login of its identity', () => {
    expect(applied).toEqual(removed.map((g) => `${g.identity} ${g.capability} ${probeRequest(g).path}: 403`));
  });

  it('the workload replayed with fresh logins: every request gets the status it got before (0 new denials), as the audit log of the replay shows', () => {
    expect(replay).toEqual(original);
    expect(replay.filter((s, i) => s.status === 403 && original[i].status !== 403)).toEqual([]);
    expect([replayUsage.code, replayUsage.stderr]).toEqual([1, '']);
    const report = JSON.parse(replayUsage.stdout);
    const denied = report.identities.flatMap((u: any) => u.denied.map((d: any) => `${u.identity} ${d.operation} ${d.path} x${d.count}`)).sort();
    expect(denied).toEqual(WORKLOAD.filter((s) => s.status === 403).map((s) => `${s.identity} read ${s.path} x1`).sort());
    const logins = report.identities.filter((u: any) => u.logins > 0).map((u: any) => `${u.identity} x${u.logins}`).sort();
    expect(logins).toEqual([...new Set(WORKLOAD.map((s) => s.identity))].map((i) => `${i} x1`).sort());
  });

  it('what narrow did not remove is unchanged on the store: auth mounts, JWT configurations, roles, every other policy rule', () => {
    expect(liveAfter.mounts).toEqual(liveBefore.mounts);
    expect(liveAfter.jwtConfigs).toEqual(liveBefore.jwtConfigs);
    expect(liveAfter.roles).toEqual(liveBefore.roles);
    const before = policyRules(liveBefore);
    const after = policyRules(liveAfter);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    // Per policy, the rules gone; each must be a rule narrow removed, of a policy of its identity.
    const gone = Object.entries(before).flatMap(([name, rules]) => rules.filter((r) => !after[name].includes(r)).map((r) => `${name} ${r}`));
    const added = Object.entries(after).flatMap(([name, rules]) => rules.filter((r) => !before[name].includes(r)).map((r) => `${name} ${r}`));
    const policyOf = (identity: string) => {
      const role = liveBefore.roles.find((r) => `${r.mount}/${r.role}` === identity)!;
      return ((role.fields.token_policies as string[]) ?? []).filter((p) => p !== 'default');
    };
    const rulesRemoved = [...new Set(removed.map((g) => `${g.identity} ${g.rule}`))].map((k) => {
      const [identity, rule] = k.split(' ');
      const caps = removed.filter((g) => g.identity === identity && g.rule === rule).map((g) => g.capability);
      return policyOf(identity).map((p) => `${p} ${rule} [${caps.join(', ')}]`);
    });
    expect(rulesRemoved.every((r) => r.length === 1)).toBe(true);
    expect(gone.sort()).toEqual(rulesRemoved.flat().sort());
    expect(added).toEqual([]);
  });

  it('narrow over the replay removes nothing more: the narrowing is a fixed point, the source untouched', () => {
    expect([fixedPoint.code, fixedPoint.stderr]).toEqual([0, '']);
    expect(fixedPoint.stdout).toContain(`remove (would change ${path.join('stacks', 'platform.config.ts')}) (0):`);
    expect(fs.readFileSync(configFile, 'utf8')).toBe(sourceAfter);
  });

  it('nothing narrow prints or writes holds a token, a Role ID, a Secret ID, a JWT, a secret value or an HMAC of the log', () => {
    expect(secrets.length).toBeGreaterThan(SEEDED.length + 10);
    for (const [what, text] of [
      ['stdout', narrowRun.stdout],
      ['stderr', narrowRun.stderr],
      ['--markdown', markdown],
      ['--config', sourceAfter],
      ['fixed point', fixedPoint.stdout],
    ]) {
      expect([what, leakedValues(text, secrets), STORE_TOKEN_PATTERN.exec(text)?.[0], /hmac-sha256:/.test(text)]).toEqual([what, [], undefined, false]);
    }
  });
});
