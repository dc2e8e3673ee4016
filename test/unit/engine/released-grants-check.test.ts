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
import { checkReleasedGrants, ReleasedGrantsRefused, releasedGrantsProblems } from '../../../lib/engine/released-grants-check';
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

describe('releasedGrantsProblems', () => {
  it('passes a plan that only takes the kept grants away, in place', () => {
    expect(releasedGrantsProblems({ resource_changes: RELEASE }, KEPT)).toEqual([]);
  });

  it('refuses every other change, naming the object and what it does', () => {
    const problems = releasedGrantsProblems(
      {
        resource_changes: [
          roleUpdate(['secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles', 'secretstore-iac-pipeline-people'], ['secretstore-iac-pipeline', 'root']),
          roleUpdate(['secretstore-iac-pipeline', 'secretstore-iac-pipeline-app-roles', 'secretstore-iac-pipeline-people'], ['secretstore-iac-pipeline'], { bound_audiences: ['https://evil.example'] }),
          change('vault_policy', 'pipeline-apply_policy_2', ['update'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${KEPT_BLOCK}` }, { name: 'secretstore-iac-pipeline', policy: `${OWN}\npath "secret/*" {\n  capabilities = ["read"]\n}` }),
          change('vault_policy', 'pipeline-apply_policy_2', ['delete', 'create'], { name: 'secretstore-iac-pipeline', policy: `${OWN}${KEPT_BLOCK}` }, { name: 'secretstore-iac-pipeline', policy: OWN }),
          change('vault_policy', 'registry-ci_policy_3', ['update'], { name: 'registry-ci', policy: 'a' }, { name: 'registry-ci', policy: 'b' }),
          change('vault_policy', 'new_policy_4', ['create'], {}, { name: 'new' }),
          roleUpdate(['secretstore-iac-pipeline'], ['secretstore-iac-pipeline']),
        ],
      },
      KEPT,
    );
    expect(problems).toEqual([
      'vault_jwt_auth_backend_role.pipeline-apply_role_1: token_policies becomes more than the stack declares without the kept grants',
      'vault_jwt_auth_backend_role.pipeline-apply_role_1: changes bound_audiences, which moves did not keep',
      'vault_policy.pipeline-apply_policy_2: policy becomes more than the stack declares without the kept grants',
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
    const stackDir = path.join(root, 'cdktf.out', 'stacks', 'ci-access');
    fs.mkdirSync(stackDir, { recursive: true });
    fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{}');
    const content = `${JSON.stringify(KEPT, null, 2)}\n`;
    sealBookkeeping(stackDir, { [RETIRED_GRANTS_FILE]: content }, true);
    const kept = path.join(root, 'released-grants.json');
    fs.writeFileSync(kept, content);
    const engine = path.join(root, 'engine');
    fs.writeFileSync(path.join(root, 'plan.json'), JSON.stringify(plan));
    fs.writeFileSync(engine, `#!/bin/sh\ncat ${JSON.stringify(path.join(root, 'plan.json'))}\n`, { mode: 0o755 });
    return { stackDir, kept, engine };
  }
  const check = (s: ReturnType<typeof stack>) => () => checkReleasedGrants('ci-access', s.stackDir, 'released.tfplan', s.kept, s.engine, { PATH: process.env.PATH });

  it('a release passes', () => {
    expect(check(stack({ resource_changes: RELEASE }))).not.toThrow();
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
