/**
 * After the retired stacks' removal the pipeline applies, without moves' override, each stack whose
 * roles kept their grants (issue 37: drift stayed red until an unrelated change). That plan is no plan
 * a review read: `tf --released-grants` lets it through only when all it does is take the kept grants
 * away, in place. Plans here are `show -json` documents; the pipeline runs them under gitlab-ci-local
 * in test/store/pipeline-removals.store.test.ts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { sealBookkeeping } from '../../../lib/engine/bookkeeping-seal';
import { buildEngineRunEnvironment } from '../../../lib/engine/engine-run-environment';
import { checkReleasedGrants, ReleasedGrantsRefused, releasedGrantsProblems, renderReleasedAccess } from '../../../lib/engine/released-grants-check';
import { RETIRED_GRANTS_FILE } from '../../../lib/model/retired-grants-file';

const OWN = 'path "sys/policies/acl/secretstore-iac-pipeline-ci-access" {\n  capabilities = ["read"]\n}';
const KEPT_BLOCK = '\n# Kept by secretstore-iac moves until the removal of people\npath "sys/policies/acl/secretstore-iac-pipeline-people" {\n  capabilities = ["delete"]\n}\n';
/** What moves' override set: the role's policies with the people grant, the policy with its rule. */
const KEPT = {
  resource: {
    // The role's own policy by reference, as the stack declares it (resolved with the plan's values).
    vault_jwt_auth_backend_role: { 'pipeline-apply_role_1': { token_policies: ['${vault_policy.pipeline-apply_policy_2.name}', 'secretstore-iac-pipeline-app-roles', 'secretstore-iac-pipeline-people'] } },
    vault_policy: { 'pipeline-apply_policy_2': { policy: `${OWN}${KEPT_BLOCK}` } },
  },
};

/** A resource change as `show -json` writes it. */
const change = (type: string, name: string, actions: string[], before: Record<string, unknown>, after: Record<string, unknown>) => ({ address: `${type}.${name}`, type, name, change: { actions, before, after } });
const ROLE = { role_name: 'secretstore-iac-pipeline', bound_audiences: ['https://gitlab.test.example'] };
const roleUpdate = (before: string[], after: string[], extra: Record<string, unknown> = {}) =>
  change('vault_jwt_auth_backend_role', 'pipeline-apply_role_1', ['update'], { ...ROLE, token_policies: before }, { ...ROLE, ...extra, token_policies: after });
const RELEASE = [
  // The provider keeps token policies as a set: its own order.
  roleUpdate(['secretstore-iac-pipeline', 'secretstore-iac-pipeline-people', 'secretstore-iac-pipeline-app-roles'], ['secretstore-iac-pipeline-app-roles', 'secretstore-iac-pipeline']),
  change('vault_policy', 'pipeline-apply_policy_2', ['update'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${KEPT_BLOCK}` }, { name: 'secretstore-iac-pipeline', policy: OWN }),
  change('vault_policy', 'registry-ci_policy_3', ['no-op'], { name: 'registry-ci' }, { name: 'registry-ci' }),
];

/** The stack as its synthesis declares it: the role's own policies, the policy's own text. */
const DECLARED = {
  vault_jwt_auth_backend_role: { 'pipeline-apply_role_1': { ...ROLE, token_policies: ['${vault_policy.pipeline-apply_policy_2.name}', 'secretstore-iac-pipeline-app-roles'] } },
  vault_policy: { 'pipeline-apply_policy_2': { name: 'secretstore-iac-pipeline', policy: OWN }, 'registry-ci_policy_3': { name: 'registry-ci', policy: 'a' } },
};
/** The retired stack `people`'s grant is the only name a release takes away. */
const BASIS = { declared: DECLARED, isRetiredGrant: (name: string) => name === 'secretstore-iac-pipeline-people' };
/** The role's own policy, unchanged: the plan's value its name is resolved from. */
const POLICY_UNCHANGED = change('vault_policy', 'pipeline-apply_policy_2', ['no-op'], { name: 'secretstore-iac-pipeline' }, { name: 'secretstore-iac-pipeline' });
const problemsOf = (changes: object[], kept: object = KEPT, basis = BASIS) => releasedGrantsProblems({ resource_changes: [...changes, POLICY_UNCHANGED] }, kept, basis).problems;

describe('releasedGrantsProblems: the plan ends at exactly the declared values', () => {
  it('passes a plan that takes exactly the kept grants away, in place, and says what each role and policy loses', () => {
    expect(releasedGrantsProblems({ resource_changes: RELEASE }, KEPT, BASIS)).toEqual({
      problems: [],
      released: [
        { address: 'vault_jwt_auth_backend_role.pipeline-apply_role_1', name: 'secretstore-iac-pipeline', loses: 'policy', what: 'secretstore-iac-pipeline-people' },
        { address: 'vault_policy.pipeline-apply_policy_2', name: 'secretstore-iac-pipeline', loses: 'rule', what: 'sys/policies/acl/secretstore-iac-pipeline-people ["delete"]' },
      ],
    });
    expect(renderReleasedAccess('ci-access', releasedGrantsProblems({ resource_changes: RELEASE }, KEPT, BASIS).released)).toEqual([
      'ci-access: access change: role secretstore-iac-pipeline (vault_jwt_auth_backend_role.pipeline-apply_role_1) loses policy secretstore-iac-pipeline-people (a retired stack\'s grant)',
      'ci-access: access change: policy secretstore-iac-pipeline (vault_policy.pipeline-apply_policy_2) loses rule sys/policies/acl/secretstore-iac-pipeline-people ["delete"] (on a retired stack\'s grant)',
    ]);
  });

  const keptRole = ['secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles', 'secretstore-iac-pipeline-people'];
  const policyUpdate = (after: string) => change('vault_policy', 'pipeline-apply_policy_2', ['update'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${KEPT_BLOCK}` }, { name: 'secretstore-iac-pipeline', policy: after });

  it('refuses a prefix of the kept text that is not the declared text (a truncated policy)', () => {
    expect(problemsOf([policyUpdate(OWN.slice(0, 30))])).toEqual([
      `vault_policy.pipeline-apply_policy_2: policy becomes other than the stack declares (${JSON.stringify(OWN.slice(0, 30))}, declared a text of ${OWN.length} characters): a release ends at exactly the declared value`,
    ]);
    // Taking away only a part of the kept block is no release either.
    expect(problemsOf([policyUpdate(`${OWN}\n# Kept`)])).toHaveLength(1);
  });

  it('refuses a subset of the kept list that is not the declared list (a role losing its own policy)', () => {
    expect(problemsOf([roleUpdate(keptRole, ['secretstore-iac-pipeline-app-roles'])])).toEqual([
      'vault_jwt_auth_backend_role.pipeline-apply_role_1: token_policies becomes other than the stack declares (["secretstore-iac-pipeline-app-roles"], declared ["secretstore-iac-pipeline", "secretstore-iac-pipeline-app-roles"]): a release ends at exactly the declared value',
    ]);
  });

  it('refuses a removal of anything but a retired stack\'s grant, even when the plan ends at the declared value', () => {
    const keptMore = { resource: { ...KEPT.resource, vault_jwt_auth_backend_role: { 'pipeline-apply_role_1': { token_policies: [...KEPT.resource.vault_jwt_auth_backend_role['pipeline-apply_role_1'].token_policies, 'registry-ci'] } } } };
    expect(problemsOf([roleUpdate([...keptRole, 'registry-ci'], ['secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles'])], keptMore)).toEqual([
      'vault_jwt_auth_backend_role.pipeline-apply_role_1: token_policies loses "registry-ci": not a grant of a retired stack',
    ]);
    const otherRule = '\n# Kept by secretstore-iac moves\npath "secret/data/acme/*" {\n  capabilities = ["read"]\n}\n';
    const keptText = { resource: { vault_policy: { 'pipeline-apply_policy_2': { policy: `${OWN}${otherRule}` } } } };
    const textUpdate = change('vault_policy', 'pipeline-apply_policy_2', ['update'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${otherRule}` }, { name: 'secretstore-iac-pipeline', policy: OWN });
    expect(problemsOf([textUpdate], keptText)).toEqual([expect.stringMatching(/^vault_policy.pipeline-apply_policy_2: policy: the kept text holds more than the declared text and moves' blocks on retired stacks' grants/)]);
    const grantRule = '\n# Kept\npath "sys/policies/acl/secretstore-iac-pipeline-ci-access" {\n  capabilities = ["delete"]\n}\n';
    const keptGrant = { resource: { vault_policy: { 'pipeline-apply_policy_2': { policy: `${OWN}${grantRule}` } } } };
    const grantUpdate = change('vault_policy', 'pipeline-apply_policy_2', ['update'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${grantRule}` }, { name: 'secretstore-iac-pipeline', policy: OWN });
    expect(problemsOf([grantUpdate], keptGrant)).toEqual(['vault_policy.pipeline-apply_policy_2: policy: the kept rule on sys/policies/acl/secretstore-iac-pipeline-ci-access is not on a grant of a retired stack']);
  });

  it('refuses a declared value only the engine knows (a template in the synthesis)', () => {
    const basis = { ...BASIS, declared: { ...DECLARED, vault_policy: { ...DECLARED.vault_policy, 'pipeline-apply_policy_2': { name: 'secretstore-iac-pipeline', policy: `${OWN}\${var.extra}` } } } };
    expect(problemsOf([policyUpdate(OWN)], KEPT, basis)).toEqual([expect.stringContaining('declared a value only the engine knows')]);
  });

  it('refuses every other change, naming the object and what it does', () => {
    expect(
      problemsOf([
        roleUpdate(keptRole, ['secretstore-iac-pipeline', 'root']),
        roleUpdate(keptRole, ['secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles'], { bound_audiences: ['https://evil.example'] }),
        policyUpdate(`${OWN}\npath "secret/*" {\n  capabilities = ["read"]\n}`),
        change('vault_policy', 'pipeline-apply_policy_2', ['delete', 'create'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${KEPT_BLOCK}` }, { name: 'secretstore-iac-pipeline', policy: OWN }),
        change('vault_policy', 'registry-ci_policy_3', ['update'], { name: 'registry-ci', policy: 'a' }, { name: 'registry-ci', policy: 'b' }),
        change('vault_policy', 'new_policy_4', ['create'], {}, { name: 'new' }),
        roleUpdate(['secretstore-iac-pipeline'], ['secretstore-iac-pipeline']),
      ]),
    ).toEqual([
      expect.stringMatching(/^vault_jwt_auth_backend_role.pipeline-apply_role_1: token_policies becomes other than the stack declares/),
      'vault_jwt_auth_backend_role.pipeline-apply_role_1: changes bound_audiences, which moves did not keep',
      expect.stringMatching(/^vault_policy.pipeline-apply_policy_2: policy becomes other than the stack declares/),
      'vault_policy.pipeline-apply_policy_2: delete, create: a release only updates in place',
      'vault_policy.registry-ci_policy_3: update: not an object whose grants moves kept',
      'vault_policy.new_policy_4: create: not an object whose grants moves kept',
      'vault_jwt_auth_backend_role.pipeline-apply_role_1: token_policies on the store is not what moves kept',
    ]);
  });
});

describe('checkReleasedGrants: the override as moves sealed it, taken out of the stack', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  /** A stack directory whose seal records the override, and a fake engine whose `show -json` prints `plan`. */
  function stack(plan: object) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-release-'));
    dirs.push(root);
    // A synthesized output: ci-access declares the pipeline role, app-roles its grant there.
    const outdir = path.join(root, 'cdktf.out');
    const stackDir = path.join(outdir, 'stacks', 'ci-access');
    const meta = (p: string) => ({ '//': { metadata: { path: p } } });
    const role = { ...DECLARED.vault_jwt_auth_backend_role['pipeline-apply_role_1'], ...meta('ci-access/pipeline-apply/role') };
    const documents = {
      'ci-access': { resource: { ...DECLARED, vault_jwt_auth_backend_role: { 'pipeline-apply_role_1': role } } },
      'app-roles': { resource: { vault_policy: { 'secretstore-iac-grant-pipeline-apply': { name: 'secretstore-iac-pipeline-app-roles', policy: 'x', ...meta('app-roles/secretstore-iac-grant-pipeline-apply') } } } },
    };
    for (const [name, document] of Object.entries(documents)) {
      fs.mkdirSync(path.join(outdir, 'stacks', name), { recursive: true });
      fs.writeFileSync(path.join(outdir, 'stacks', name, 'cdk.tf.json'), JSON.stringify(document));
    }
    fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ stacks: Object.fromEntries(Object.keys(documents).map((n) => [n, { synthesizedStackPath: `stacks/${n}/cdk.tf.json` }])) }));
    const content = `${JSON.stringify(KEPT, null, 2)}\n`;
    sealBookkeeping(stackDir, { [RETIRED_GRANTS_FILE]: content }, true);
    const kept = path.join(root, 'released-grants.json');
    fs.writeFileSync(kept, content);
    const engine = path.join(root, 'engine');
    fs.writeFileSync(path.join(root, 'plan.json'), JSON.stringify(plan));
    fs.writeFileSync(engine, `#!/bin/sh\ncat ${JSON.stringify(path.join(root, 'plan.json'))}\n`, { mode: 0o755 });
    return { stackDir, kept, engine };
  }
  // Every engine start goes through an engine run's environment (issue 45).
  const run = buildEngineRunEnvironment({ PATH: process.env.PATH }, { cwd: process.cwd(), address: 'http://127.0.0.1:1' });
  afterAll(() => run.dispose());
  const check = (s: ReturnType<typeof stack>) => () => checkReleasedGrants('ci-access', s.stackDir, 'released.tfplan', s.kept, s.engine, run.env);

  it('a release passes, and says what it takes away', () => {
    expect(check(stack({ resource_changes: RELEASE }))()).toEqual([expect.objectContaining({ loses: 'policy', what: 'secretstore-iac-pipeline-people' }), expect.objectContaining({ loses: 'rule' })]);
  });

  it('takes the declared values from the stack\'s own cdk.tf.json: a plan ending at less is refused', () => {
    const truncated = stack({ resource_changes: [RELEASE[0], change('vault_policy', 'pipeline-apply_policy_2', ['update'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${KEPT_BLOCK}` }, { name: 'secretstore-iac-pipeline', policy: OWN.slice(0, 10) })] });
    expect(check(truncated)).toThrow(/vault_policy.pipeline-apply_policy_2: policy becomes other than the stack declares/);
    const lost = stack({ resource_changes: [roleUpdate(['secretstore-iac-pipeline', 'secretstore-iac-pipeline-people', 'secretstore-iac-pipeline-app-roles'], ['secretstore-iac-pipeline-app-roles']), RELEASE[1]] });
    expect(check(lost)).toThrow(/token_policies becomes other than the stack declares/);
  });

  it('refuses a file that is not the sealed override, an override still in the stack, and a plan that does more', () => {
    const edited = stack({ resource_changes: RELEASE });
    fs.writeFileSync(edited.kept, JSON.stringify({ resource: { vault_policy: { registry: { policy: 'x' } } } }));
    expect(check(edited)).toThrow(ReleasedGrantsRefused);
    expect(check(edited)).toThrow(`not the ${RETIRED_GRANTS_FILE} secretstore-iac moves sealed in`);
    const left = stack({ resource_changes: RELEASE });
    fs.copyFileSync(left.kept, path.join(left.stackDir, RETIRED_GRANTS_FILE));
    expect(check(left)).toThrow(`${RETIRED_GRANTS_FILE} is still in`);
    const more = stack({ resource_changes: [...RELEASE, change('vault_policy', 'x_5', ['delete'], { name: 'x' }, {})] });
    expect(check(more)).toThrow('ci-access: nothing applied: the plan is not only the end of the retired stacks\' grants its roles kept (1 problem):\n  vault_policy.x_5: delete: not an object whose grants moves kept');
  });
});
