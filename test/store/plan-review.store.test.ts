/**
 * Issue 36, "the review reads the plan", on a real store and every engine of this machine: the
 * platform applied, then each tampering the synthesized JSON does not show — (a) a
 * `*_override.tf.json` in ci-access adding an application's policy to the CI role `registry-ci`,
 * (b) a raw `vault_policy` whose name is the expression `${lower("REGISTRY-CI")}`, (c) an input
 * variable given as `TF_VAR_…` (the platform's stacks declare none: a file in the stack directory
 * declares it, an override uses it) — is first refused by `secretstore-iac tf STACK -- plan` (exit 4:
 * a file in the stack directory that neither the synthesis nor the tool wrote), then planned with the
 * engine run directly, as a job that bypasses the tool would (`plan -out=P`): `access-diff --plans DIR`
 * names exactly the identity and path that gain access, the plan file and its SHA-256, and exits 1,
 * while `access-diff` of the synthesized output says nothing changed. Either the tool refuses the
 * change or the review says exactly what it does (issue 36).
 * The plans of (a) and (b) are then applied (by the engine directly: `tf` refuses the directory), and a real login's token is asked (`sys/capabilities`)
 * on every path the review named: before the apply the store answers the review's "before", after
 * it the review's "now" (for (b) also with a token issued before the apply: policy texts are read
 * at each request).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sealReview } from '../../lib/engine/reviewed-plan-check';
import { runEngine } from '../support/store/engine';
import { forEachEngine } from '../support/store/engine-matrix';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { clientToken, jwtLogin, PlatformFixture, TEST_SETTINGS, testPlatformConfig } from '../support/store/platform-fixture';
import { runStoreCli } from '../support/store/store-cli';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

/** One rule change as `access-diff --format json` reports it. */
interface ReportedRule {
  path: string;
  before: string[];
  after: string[];
  gained: string[];
  lost: string[];
}

forEachEngine('access-diff --plans: the review reads the saved plan, and the store does what it says (issue 36)', (engine) => {
  let store: RunningStore;
  let fixture: PlatformFixture;
  let key: JwtSigningKey;
  const cli = (args: string[], env?: NodeJS.ProcessEnv) => runStoreCli(args, { cwd: fixture.dir, addr: store.addr, token: store.rootToken, env });
  const tf = (stack: string, args: string[], env?: NodeJS.ProcessEnv) => cli(['tf', stack, '--engine', engine.binary, '--', ...args], env);
  const resourceId = (stack: string, type: string, name: (block: any) => boolean) =>
    Object.entries(fixture.stackJson(stack).resource[type] as Record<string, any>).find(([, b]) => name(b))![0];
  /** A fresh token of the CI role `registry-ci`, from a real JWT login (its policies as the store has them now). */
  const ciToken = async () =>
    clientToken(await jwtLogin(store, 'registry-ci', signJwt(key.privateKey, gitlabJobClaims({}, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid })));
  /** What the store lets `token` do on `probe`, sorted. */
  const capabilities = async (token: string, probe: string): Promise<string[]> => {
    const res = await storeRequest(store, 'POST', 'sys/capabilities', { token, paths: [probe] });
    expect(res.status).toBe(200);
    return [...res.body[probe]].sort();
  };
  /** A concrete path a rule's pattern covers. */
  const probeOf = (pattern: string) => pattern.replace(/\*$/, 'probe').replace(/\+/g, 'probe');

  /** The engine run directly in a stack's directory (what a job bypassing `tf` runs), with the store's root token. */
  const direct = (stack: string, args: string[], env?: NodeJS.ProcessEnv) => runEngine(fixture.stackDir(stack), args, { store, binary: engine.binary, env, allowCodes: [0] });

  /**
   * `tf` refuses to plan `stack` (a file it did not write is in the directory: `tampered` names it);
   * the engine run directly plans it into a plans directory of its own; the plan is reviewed (JSON and Markdown).
   */
  async function planAndReview(label: string, stack: string, tampered: readonly string[], env?: NodeJS.ProcessEnv) {
    const dir = path.join(fixture.dir, `plans-${label}`);
    fs.mkdirSync(dir, { recursive: true });
    const planFile = path.join(dir, `${stack}.tfplan`);
    const refused = await tf(stack, ['plan', '-input=false', `-out=${planFile}`], env);
    expect({ code: refused.code, planned: fs.existsSync(planFile) }).toEqual({ code: 4, planned: false });
    for (const name of tampered) expect(refused.stderr).toContain(`  ${JSON.stringify(name)}: neither the synthesis, secretstore-iac nor the engine wrote it`);
    await direct(stack, ['plan', '-input=false', `-out=${planFile}`], env);
    const sha256 = createHash('sha256').update(fs.readFileSync(planFile)).digest('hex');
    const json = await cli(['access-diff', '--plans', `plans-${label}`, '--engine', engine.binary, '--format', 'json']);
    const markdown = await cli(['access-diff', '--plans', `plans-${label}`, '--engine', engine.binary]);
    expect([json.code, json.stderr, markdown.code, markdown.stderr]).toEqual([1, '', 1, '']);
    expect(markdown.stdout).toContain(`| \`${stack}\` | \`plans-${label}/${stack}.tfplan\` | \`${sha256}\` |`);
    return { planFile, sha256, review: JSON.parse(json.stdout), markdown: markdown.stdout };
  }

  /** The review changed exactly one identity, by exactly `rules` (path: gained), and added or removed none; complete. */
  function expectExactly(review: any, identity: string, gained: Record<string, string[]>): ReportedRule[] {
    expect(review.complete).toBe(true);
    expect([review.diff.added, review.diff.removed]).toEqual([[], []]);
    expect(review.diff.changed.map((c: any) => c.name)).toEqual([identity]);
    const rules: ReportedRule[] = review.diff.changed[0].rules;
    expect(Object.fromEntries(rules.map((r) => [r.path, r.gained]))).toEqual(gained);
    expect(rules.every((r) => r.lost.length === 0)).toBe(true);
    return rules;
  }

  /** The store's answer on a concrete path of every rule the review named, for `token`, now. */
  const answers = async (rules: readonly ReportedRule[], token: string) =>
    Promise.all(rules.map(async (r) => [probeOf(r.path), await capabilities(token, probeOf(r.path))] as const));
  /** The review's "before" (nothing: `deny`) or "now" of every rule, in the store's words. */
  const claimed = (rules: readonly ReportedRule[], side: 'before' | 'after') =>
    rules.map((r) => [probeOf(r.path), r[side].length === 0 ? ['deny'] : [...r[side]].sort()] as const);

  beforeAll(async () => {
    store = await startStore();
    key = generateSigningKey();
    fixture = PlatformFixture.create(store, 'plan-review');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem));
    for (const stack of fixture.stacks) {
      const init = await tf(stack, ['init', '-input=false']);
      if (init.code !== 0) throw new Error(`${engine.label} init ${stack}: ${init.stdout}\n${init.stderr}`);
      const applied = await tf(stack, ['apply', '-auto-approve', '-input=false']);
      if (applied.code !== 0) throw new Error(`${engine.label} apply ${stack}: ${applied.stdout}\n${applied.stderr}`);
    }
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it(engine.title('(a) an override file adds orchestrator-dev to registry-ci: the plan review names jwt/registry-ci and the orchestrator path (exit 1), the synthesis shows nothing; applied, a CI login gets exactly that'), async () => {
    const role = resourceId('ci-access', 'vault_jwt_auth_backend_role', (b) => b.role_name === 'registry-ci');
    const override = path.join(fixture.stackDir('ci-access'), 'tamper_override.tf.json');
    fs.writeFileSync(override, JSON.stringify({ resource: { vault_jwt_auth_backend_role: { [role]: { token_policies: ['registry-ci', 'orchestrator-dev'] } } } }));
    // The synthesized JSON does not have it.
    expect((await cli(['access-diff', 'cdktf.out', 'cdktf.out'])).code).toBe(0);
    const { planFile, review, markdown } = await planAndReview('a', 'ci-access', ['tamper_override.tf.json']);
    const rules = expectExactly(review, 'jwt/registry-ci', { 'secret/data/acme/dev/orchestrator/*': ['read'] });
    expect(review.diff.changed[0].bindings).toEqual([{ field: 'token_policies', before: ['registry-ci'], after: ['orchestrator-dev', 'registry-ci'] }]);
    expect(review.unplanned).toEqual(['app-roles']);
    expect(markdown).toContain('### Changed: `jwt/registry-ci`');
    expect(markdown).toContain('| `secret/data/acme/dev/orchestrator/*` (new) | read |  | read |');

    expect(await answers(rules, await ciToken())).toEqual(claimed(rules, 'before'));
    expect((await tf('ci-access', ['apply', '-input=false', planFile])).code).toBe(4);
    await direct('ci-access', ['apply', '-input=false', planFile]);
    expect(await answers(rules, await ciToken())).toEqual(claimed(rules, 'after'));
    // Put back: the next tamperings start from the platform as synthesized.
    fs.rmSync(override);
    expect((await tf('ci-access', ['apply', '-auto-approve', '-input=false'])).code).toBe(0);
    expect(await capabilities(await ciToken(), probeOf('secret/data/acme/dev/orchestrator/*'))).toEqual(['deny']);
  });

  it(engine.title('(c) an input variable (TF_VAR_extra_policies) an override puts into a role\'s token_policies: reviewed from the plan with its value (exit 1)'), async () => {
    const role = resourceId('app-roles', 'vault_approle_auth_backend_role', (b) => b.role_name === 'registry');
    const stackDir = fixture.stackDir('app-roles');
    const files = [path.join(stackDir, 'inputs.tf.json'), path.join(stackDir, 'inputs_override.tf.json')];
    fs.writeFileSync(files[0], JSON.stringify({ variable: { extra_policies: { type: 'list(string)', default: [] } } }));
    fs.writeFileSync(files[1], JSON.stringify({ resource: { vault_approle_auth_backend_role: { [role]: { token_policies: '${concat(["registry"], var.extra_policies)}' } } } }));
    try {
      const { review } = await planAndReview('c', 'app-roles', ['inputs.tf.json', 'inputs_override.tf.json'], { TF_VAR_extra_policies: '["gitlab-role"]' });
      expectExactly(review, 'approle/registry', { 'secret/data/acme/shared/sourcehost/*': ['read'] });
      expect(review.diff.changed[0].bindings).toEqual([{ field: 'token_policies', before: ['registry'], after: ['gitlab-role', 'registry'] }]);
    } finally {
      for (const f of files) fs.rmSync(f, { force: true });
    }
  });

  it(engine.title('(b) a raw vault_policy named ${lower("REGISTRY-CI")} in app-roles: reviewed as registry-ci, flagged as written over ci-access\'s (exit 1); applied, a CI login gets exactly that'), async () => {
    const ciPolicy = Object.values(fixture.stackJson('ci-access').resource.vault_policy as Record<string, any>).find((b) => b.name === 'registry-ci')!;
    expect(ciPolicy.policy).not.toContain('$');
    const extra = 'path "secret/data/acme/shared/registry/*" {\n  capabilities = ["read"]\n}\n';
    const raw = path.join(fixture.stackDir('app-roles'), 'user_raw.tf.json');
    fs.writeFileSync(raw, JSON.stringify({ resource: { vault_policy: { user_raw: { name: '${lower("REGISTRY-CI")}', policy: `${ciPolicy.policy}${extra}` } } } }));
    const { planFile, review, markdown } = await planAndReview('b', 'app-roles', ['user_raw.tf.json']);
    const rules = expectExactly(review, 'jwt/registry-ci', { 'secret/data/acme/shared/registry/*': ['read'] });
    expect(review.diff.flags.filter((f: any) => f.kind === 'plan-overrides').map((f: any) => f.identity)).toEqual(['registry-ci']);
    expect(markdown).toContain("**written over another stack's declaration**, `registry-ci`: the plan of stack `app-roles` writes the policy `registry-ci` that stack `ci-access` declares differently");

    const earlier = await ciToken();
    expect(await answers(rules, earlier)).toEqual(claimed(rules, 'before'));
    expect((await tf('app-roles', ['apply', '-input=false', planFile])).code).toBe(4);
    await direct('app-roles', ['apply', '-input=false', planFile]);
    expect(await answers(rules, await ciToken())).toEqual(claimed(rules, 'after'));
    // A policy's text is read at each request: a token issued before the apply gains it too.
    expect(await answers(rules, earlier)).toEqual(claimed(rules, 'after'));
  });

  it(engine.title('(d) the apply applies the reviewed plan: with --reviewed-plans, a plan made after the review from another configuration is refused (exit 4) naming both digests, nothing applied; the reviewed plan applies exactly its change'), async () => {
    // (b) left its raw policy in app-roles' state, written over registry-ci: forgotten there, and
    // registry-ci applied back by ci-access, so that app-roles' plan below only adds.
    fs.rmSync(path.join(fixture.stackDir('app-roles'), 'user_raw.tf.json'), { force: true });
    await direct('app-roles', ['state', 'rm', 'vault_policy.user_raw']);
    expect((await tf('ci-access', ['apply', '-auto-approve', '-input=false'])).code).toBe(0);
    const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    const withApplications = (...names: string[]) =>
      testPlatformConfig(key.publicKeyPem, { applications: Object.fromEntries(names.map((n) => [`${n}-dev`, { name: n, environment: 'dev' }])) });
    // Reviewed: the plan that adds billing-dev.
    fixture.synthPlatform(withApplications('billing'));
    fs.mkdirSync(path.join(fixture.dir, 'plans-d'), { recursive: true });
    const reviewed = path.join(fixture.dir, 'plans-d', 'app-roles.tfplan');
    expect((await tf('app-roles', ['plan', '-input=false', `-out=${reviewed}`])).code).toBe(0);
    const review = await cli(['access-diff', '--plans', 'plans-d', '--engine', engine.binary, '--format', 'json']);
    expect(review.code).toBe(1);
    fs.writeFileSync(path.join(fixture.dir, 'review-d.json'), review.stdout);
    // Not reviewed: a plan made afterwards from another configuration (payments-dev as well).
    fixture.synthPlatform(withApplications('billing', 'payments'));
    const other = path.join(fixture.dir, 'other-d.tfplan');
    expect((await tf('app-roles', ['plan', '-input=false', `-out=${other}`])).code).toBe(0);
    const applyWithReview = (plan: string) =>
      cli(['tf', 'app-roles', '--engine', engine.binary, '--refuse-replace', '--reviewed-plans', 'review-d.json', '--', 'apply', '-input=false', plan]);
    const refused = await applyWithReview(other);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(
      `app-roles: nothing applied: ${other} is not the plan the review read: its SHA-256 is ${sha256(other)}, the review review-d.json read plans-d/app-roles.tfplan with SHA-256 ${sha256(reviewed)}`,
    );
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(404);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/payments-dev')).status).toBe(404);
    // The reviewed plan, with the stack directory holding another synthesis: refused (issue 45, the
    // plan's own configuration snapshot must be the stack directory's).
    const elsewhere = await applyWithReview(reviewed);
    expect(elsewhere.code).toBe(4);
    expect(elsewhere.stderr).toContain('was not made from this stack\'s synthesis: its cdk.tf.json is not the stack directory\'s');
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(404);
    // The reviewed plan applies in the synthesis it was made from, and only what it planned.
    fixture.synthPlatform(withApplications('billing'));
    // Issue 45, seals that mean something: with the review secret set (as on protected pipelines), an
    // unsealed review and a sealed one edited to name the other plan's digest are both refused, nothing applied.
    const sealing = { SECRETSTORE_IAC_REVIEW_SECRET: `review-secret-${process.pid}`, CI_PIPELINE_ID: '4711', CI_COMMIT_SHA: 'c0ffee'.repeat(6) + 'c0ff' };
    fs.writeFileSync(path.join(fixture.dir, 'review-d-sealed.json'), sealReview(review.stdout, sealing));
    const edited = JSON.parse(fs.readFileSync(path.join(fixture.dir, 'review-d-sealed.json'), 'utf8'));
    // The edit adds a plan of another stack (what a forger would add to get a plan of theirs applied):
    // app-roles' own entry still matches, so only the seal can tell.
    edited.plans = [...edited.plans, { stack: 'ci-access', file: other, sha256: sha256(other) }];
    fs.writeFileSync(path.join(fixture.dir, 'review-d-edited.json'), JSON.stringify(edited, null, 2));
    const applyWith = (reviewFile: string, plan: string) =>
      cli(['tf', 'app-roles', '--engine', engine.binary, '--refuse-replace', '--reviewed-plans', reviewFile, '--', 'apply', '-input=false', plan], sealing);
    const unsealed = await applyWith('review-d.json', reviewed);
    expect({ code: unsealed.code, said: unsealed.stderr.includes('review-d.json carries no seal, and SECRETSTORE_IAC_REVIEW_SECRET is set') ? true : unsealed.stderr }).toEqual({ code: 4, said: true });
    const forged = await applyWith('review-d-edited.json', reviewed);
    expect({ code: forged.code, said: forged.stderr.includes('review-d-edited.json does not verify with SECRETSTORE_IAC_REVIEW_SECRET: the file was edited after the review') ? true : forged.stderr }).toEqual({ code: 4, said: true });
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(404);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/payments-dev')).status).toBe(404);
    const applied = await applyWith('review-d-sealed.json', reviewed);
    expect({ code: applied.code, stderr: applied.code === 0 ? '' : applied.stderr }).toEqual({ code: 0, stderr: '' });
    expect(applied.stderr).toContain(`${path.join(fixture.dir, 'review-d-sealed.json')}: its seal verifies (HMAC-SHA256 with SECRETSTORE_IAC_REVIEW_SECRET, pipeline 4711, commit c0ffeec0ffee)`);
    expect(applied.stderr).toContain('is the plan the review review-d-sealed.json read (SHA-256 matches)');
    expect((await storeRequest(store, 'GET', 'auth/approle/role/billing-dev')).status).toBe(200);
    expect((await storeRequest(store, 'GET', 'auth/approle/role/payments-dev')).status).toBe(404);
  });
});
