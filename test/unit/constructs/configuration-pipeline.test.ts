/**
 * The configuration repository's pipeline: its two JWT roles (bound to the project, least privilege)
 * and the generated pipeline file, checked by gitlab-ci-local's GitLab CI schema validation.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { SecretStoreStack } from '../../../lib';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { policyRules, resources, synthesizePlatform } from '../../support/synthesized-platform';
import { REPO_ROOT } from '../../support/paths';

const platform = synthesizePlatform({ ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } });
const ci = platform.stacks['ci-access'];
const role = (name: string) => resources(ci, 'vault_jwt_auth_backend_role').find((r: any) => r.role_name === name);
const policy = (name: string) => resources(ci, 'vault_policy').find((p: any) => p.name === name).policy as string;
const pipelineText = fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8');
const pipeline = yaml.load(pipelineText) as Record<string, any>;

describe('the configuration project\'s JWT roles', () => {
  it('apply: only the project\'s protected branches, compared exactly', () => {
    const apply = role('secretstore-iac-pipeline');
    expect(apply.bound_claims).toEqual({ project_id: '4242', ref_protected: 'true', ref_type: 'branch' });
    expect(apply.bound_claims_type).toBe('string');
    expect(apply.bound_audiences).toEqual(['https://gitlab.acme.example']);
    // Its own policy, then its grant in app-roles (docs/pipelines.md §9).
    expect(apply.token_policies).toHaveLength(2);
    expect(apply.token_policies[0]).toMatch(/^\$\{vault_policy\.pipeline-apply_policy_[0-9A-F]{8}\.name\}$/);
    expect(apply.token_policies[1]).toBe('secretstore-iac-pipeline-app-roles');
  });

  /** The rules of a role's own policy and of its grant in app-roles (the stacks' only other one). */
  const granted = (name: string) => [...policyRules(policy(name)), ...policyRules(resources(platform.stacks['app-roles'], 'vault_policy').find((p: any) => p.name === `${name}-app-roles`).policy)];

  it('plan: any ref of the project, read only', () => {
    expect(role('secretstore-iac-plan').bound_claims).toEqual({ project_id: '4242' });
    const rules = granted('secretstore-iac-plan');
    // Read, and list only on the listings that name roles and policies (names, no secret: the takeover guard's lookup).
    const listings = ['auth/approle/role', 'auth/approle/role/', 'auth/jwt/role', 'auth/jwt/role/', 'sys/policies/acl', 'sys/policies/acl/'];
    expect(rules.filter(([p, caps]) => p !== 'auth/token/create' && JSON.stringify(caps) !== '["read"]' && !(listings.includes(p) && JSON.stringify(caps) === '["list"]'))).toEqual([]);
    expect(rules.filter(([, caps]) => caps.includes('list')).map(([p]) => p).sort()).toEqual(listings);
  });

  it('apply policy: exactly what the stacks declare, no secret, sudo only to enable auth methods', () => {
    const rules = granted('secretstore-iac-pipeline');
    const paths = rules.map(([p]) => p);
    expect(paths.filter((p) => p.startsWith('secret/'))).toEqual([]);
    expect(paths.filter((p) => p.includes('*') || p.includes('+'))).toEqual([]);
    expect(rules.filter(([, caps]) => caps.includes('sudo')).map(([p]) => p).sort()).toEqual(['sys/auth/approle', 'sys/auth/jwt']);
    // Every policy and role of the stacks, and nothing else.
    const policies = Object.values(platform.stacks).flatMap((s: any) => resources(s, 'vault_policy').map((p: any) => `sys/policies/acl/${p.name}`));
    expect(paths.filter((p) => /^sys\/policies\/acl\/[^/]+$/.test(p)).sort()).toEqual(policies.sort());
    const approles = resources(platform.stacks['app-roles'], 'vault_approle_auth_backend_role').map((r: any) => `auth/approle/role/${r.role_name}`);
    const jwtRoles = resources(ci, 'vault_jwt_auth_backend_role').map((r: any) => `auth/jwt/role/${r.role_name}`);
    expect(paths.filter((p) => /^auth\/(approle|jwt)\/role\/[^/]+$/.test(p)).sort()).toEqual([...approles, ...jwtRoles].sort());
    expect(paths).toContain('auth/token/create');
  });

  it('a project ID that is not numeric is refused, naming construct and field', () => {
    expect(() => synthesizePlatform({ ...platformConfig, configurationProject: { projectId: 'acme/config', localStateReason: TEST_LOCAL_STATE_REASON } })).toThrow(
      /\[ci-access\/pipeline-(apply|plan)\] projectId = "acme\/config": must be the numeric project ID/,
    );
  });
});

describe('cdktf.out/ci/secretstore-iac.gitlab-ci.yml', () => {
  const stacks = Object.keys(platform.stacks).sort();

  it('MR: synth, one saved plan per stack (read-only role), the access diff', () => {
    const mr = '$CI_PIPELINE_SOURCE == "merge_request_event"';
    const onMr = Object.keys(pipeline).filter((j) => pipeline[j].rules?.some((r: any) => r.if === mr)).sort();
    expect(onMr).toEqual(['secretstore-iac-access-diff', ...stacks.map((s) => `secretstore-iac-plan-${s}`), 'secretstore-iac-plan-retired', 'secretstore-iac-synth']);
    for (const s of stacks) {
      const job = pipeline[`secretstore-iac-plan-${s}`];
      expect(job.extends).toBe('.secretstore-iac-plan-login');
      expect(job.artifacts.paths).toEqual([`secretstore-iac-plans/${s}.*`]);
      // What the plan does (guarded, removals listed beside the saved plan): test/unit/pipeline/.
      expect(job.script).toEqual([`"$SECRETSTORE_IAC_BIN" pipeline plan --stack ${s} --merge-request`]);
    }
    // The note is computed from the saved plans of this pipeline's plan jobs (their artifacts).
    expect(pipeline['secretstore-iac-access-diff'].dependencies).toEqual(['secretstore-iac-synth', ...stacks.map((s) => `secretstore-iac-plan-${s}`), 'secretstore-iac-plan-retired']);
    // The note, its posting and the acknowledgement label: test/unit/pipeline/pipeline-review-job.test.ts.
    expect(pipeline['secretstore-iac-access-diff'].script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline review --merge-request']);
    // The label the review job reads comes from the description synthesized beside the pipeline.
    const description = JSON.parse(fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-iac.pipeline.json'), 'utf8'));
    expect(description.acknowledgeLabel).toBe('access-risk-acknowledged');
    expect(description.noteTokenVariable).toBe('SECRETSTORE_IAC_NOTE_TOKEN');
    // The roles whose grants a stack's engine run narrows its token to (lib/pipeline/stack-token.ts).
    expect(description.roles).toEqual({ apply: 'secretstore-iac-pipeline', plan: 'secretstore-iac-plan' });
    expect(description.stacks).toEqual(stacks);
  });

  it('default branch: apply of the saved plan per stack, one at a time per stack; schedule: drift', () => {
    for (const s of stacks) {
      const apply = pipeline[`secretstore-iac-apply-${s}`];
      expect(apply.resource_group).toBe(`secretstore-iac-${s}`);
      expect(apply.extends).toBe('.secretstore-iac-apply-login');
      // The pipeline roles' stack applies first: a change adding an application widens their policy.
      // And after the review of this pipeline's saved plans, whose record (reviewed-plans.json) it applies against.
      expect(apply.needs).toEqual(['secretstore-iac-synth', `secretstore-iac-plan-${s}-default-branch`, 'secretstore-iac-access-diff-default-branch', ...(s === 'ci-access' ? [] : ['secretstore-iac-apply-ci-access'])]);
      expect(apply.script).toEqual([`"$SECRETSTORE_IAC_BIN" pipeline apply --stack ${s}`]);
      expect(pipeline[`secretstore-iac-drift-${s}`].rules).toEqual([{ if: '$CI_PIPELINE_SOURCE == "schedule"' }]);
      expect(pipeline[`secretstore-iac-drift-${s}`].script).toEqual([`"$SECRETSTORE_IAC_BIN" pipeline drift --stack ${s}`]);
    }
  });

  it('retired stacks (docs/sharding.md): planned with the others, applied in the last stage after every apply, forgets only', () => {
    const mr = pipeline['secretstore-iac-plan-retired'];
    const planned = pipeline['secretstore-iac-plan-retired-default-branch'];
    const applied = pipeline['secretstore-iac-apply-retired'];
    expect(mr.extends).toBe('.secretstore-iac-plan-login');
    expect(planned.extends).toBe('.secretstore-iac-apply-login');
    expect(applied.extends).toBe('.secretstore-iac-apply-login');
    for (const job of [mr, planned]) {
      expect(job.needs).toEqual(['secretstore-iac-synth']);
      expect(job.script).toEqual([`"$SECRETSTORE_IAC_BIN" pipeline plan --retired${job === mr ? ' --merge-request' : ''}`]);
    }
    // After every apply stage, without needs: it waits for every apply job, however many shards there are.
    expect(pipeline.stages.slice(-2)).toEqual(['retire', 'remove']);
    expect(applied.stage).toBe('retire');
    expect(applied.needs).toBeUndefined();
    expect(applied.dependencies).toEqual(['secretstore-iac-synth', 'secretstore-iac-plan-retired-default-branch', 'secretstore-iac-access-diff-default-branch']);
    expect(applied.resource_group).toBe('secretstore-iac-retired');
    expect(applied.script).toEqual(['"$SECRETSTORE_IAC_BIN" pipeline apply --retired']);
    expect(pipeline['secretstore-iac-synth'].artifacts.paths).toContain('retired-stacks.txt');
  });

  it('a stack that depends on another (addDependency) applies after it: the apply job needs the other\'s', () => {
    const sharded = synthesizePlatform({ ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } }, (p, app) => {
      new SecretStoreStack(app, 'app-roles-a', { settings: p.appRoles.settings }).addDependency(p.appRoles);
    });
    const jobs = yaml.load(fs.readFileSync(path.join(sharded.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8')) as Record<string, any>;
    expect(jobs['secretstore-iac-apply-app-roles-a'].needs).toEqual([
      'secretstore-iac-synth', 'secretstore-iac-plan-app-roles-a-default-branch', 'secretstore-iac-access-diff-default-branch', 'secretstore-iac-apply-ci-access', 'secretstore-iac-apply-app-roles',
    ]);
    expect(jobs['secretstore-iac-apply-app-roles'].needs).not.toContain('secretstore-iac-apply-app-roles-a');
  });

  it('the store token comes from a JWT login with the job\'s ID token, never from a variable', () => {
    // One login, in one hidden job; the plan and apply logins name their role in a variable.
    const login = pipeline['.secretstore-iac-login'];
    expect(login.id_tokens).toEqual({ SECRETSTORE_ID_TOKEN: { aud: 'https://gitlab.acme.example' } });
    // The jobs' command logs in (lib/pipeline/pipeline-login.ts): the mount and audience the platform declares, no shell login.
    expect(login.variables).toEqual({ SECRETSTORE_IAC_LOGIN_MOUNT: 'jwt', SECRETSTORE_IAC_LOGIN_AUDIENCE: 'https://gitlab.acme.example' });
    expect(login.before_script).toBeUndefined();
    expect(pipelineText).not.toContain('_ss_role=');
    for (const [hidden, roleName] of [['.secretstore-iac-plan-login', 'secretstore-iac-plan'], ['.secretstore-iac-apply-login', 'secretstore-iac-pipeline']]) {
      expect(pipeline[hidden]).toEqual({ extends: '.secretstore-iac-login', variables: { SECRETSTORE_IAC_LOGIN_ROLE: roleName } });
    }
    // No job keeps the token in a shell variable: the consumers' templates forget it after reading their secrets.
    expect(pipelineText).not.toContain('export VAULT_TOKEN');
    expect(fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-ci.gitlab-ci.yml'), 'utf8')).not.toContain('export VAULT_TOKEN');
    expect(Object.keys(pipeline.variables).sort()).toEqual(['SECRETSTORE_IAC_BIN', 'SECRETSTORE_IAC_INSTALL', 'SECRETSTORE_IAC_PIPELINE_COPY', 'TF_INPUT', 'TF_IN_AUTOMATION']);
  });

  it('passes gitlab-ci-local\'s GitLab CI schema validation; a broken file does not', () => {
    const validate = (text: string) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glci-schema-'));
      const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...a], { cwd: dir, stdio: 'pipe' });
      git('init', '-q', '-b', 'main');
      fs.writeFileSync(path.join(dir, '.gitlab-ci.yml'), text);
      git('add', '.');
      git('commit', '-q', '-m', 'pipeline');
      const r = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'gitlab-ci-local'), ['--list-all', '--json-schema-validation'], { cwd: dir, encoding: 'utf8' });
      fs.rmSync(dir, { recursive: true, force: true });
      return r;
    };
    const ok = validate(pipelineText);
    expect(ok.stdout + ok.stderr).toContain('json schema validated');
    expect(ok.status).toBe(0);
    expect(pipelineText).toContain('  resource_group: secretstore-iac-app-roles\n');
    const broken = validate(pipelineText.replace('  resource_group: secretstore-iac-app-roles\n', '  resource_group: [secretstore-iac-app-roles]\n'));
    expect(broken.status).not.toBe(0);
    expect(broken.stdout + broken.stderr).toMatch(/resource_group/);
  });
});
