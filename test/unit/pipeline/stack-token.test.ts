/**
 * Each stack's engine run carries a token narrowed to what the stack needs (lib/pipeline/stack-token.ts):
 * the choice of its policies (per role, moved objects, retired stacks, a laptop's token), and that the
 * plan, apply, removals and drift jobs give the engine that token, revoke it after, and never log it.
 * The store calls are a recording stand-in here; the store test (pipeline-stack-token.store.test.ts)
 * proves on the real store what the narrowed token can and cannot read.
 */
import { jobStacks } from '../../../lib/pipeline/job-stacks';
import { describePipeline } from '../../../lib/pipeline/pipeline-description';
import { runApplyJob } from '../../../lib/pipeline/pipeline-apply-job';
import { runDriftJob } from '../../../lib/pipeline/pipeline-drift-job';
import { runPlanJob } from '../../../lib/pipeline/pipeline-plan-job';
import { runRemovalsJob } from '../../../lib/pipeline/pipeline-removals-job';
import { PipelineStackTokens, stackGrantNeeds, stackTokenChoice } from '../../../lib/pipeline/stack-token';
import { FIXTURE_OPTIONS, jobDirectory, recordingContext } from './pipeline-fixture';

const description = describePipeline(FIXTURE_OPTIONS);
const APPLY = 'secretstore-iac-pipeline';
const PLAN = 'secretstore-iac-plan';
/** What a role's token carries: default, the role's own policy, its grant of every stack but ci-access. */
const carried = (role: string, stacks = description.stacks) => ['default', role, ...stacks.filter((s) => s !== 'ci-access').map((s) => `${role}-${s}`)];
const JOB_TOKEN = 'hvs.JOB-token-secret-1a2b';

describe('the policies of a stack\'s token', () => {
  it('apply and plan role: the role\'s own policy, default and the stack\'s grant; every other stack\'s grant dropped', () => {
    for (const role of [APPLY, PLAN]) {
      const choice = stackTokenChoice('app-roles-3', carried(role), description, description.stacks);
      expect(choice.policies).toEqual(['default', role, `${role}-app-roles-3`]);
      expect(choice.noDefaultPolicy).toBe(false);
      expect(choice.line).toBe(
        `app-roles-3: the engine runs with a token of its own carrying default, ${role}, ${role}-app-roles-3: role ${role}'s own policy and default, ${role}-app-roles-3 (its own grant); not the 7 other stacks' grants the job's token carries (the store builds a token's ACL from all its policies on every request)`,
      );
    }
  });

  it('the roles\' stack (ci-access has no grant: the role\'s own policy covers it): own policy and default only', () => {
    const choice = stackTokenChoice('ci-access', carried(APPLY), description, description.stacks);
    expect(choice.policies).toEqual(['default', APPLY]);
    expect(choice.line).toContain(`the job's token does not carry ${APPLY}-ci-access`);
  });

  it('a role whose tokens go without default (token_no_default_policy): the stack\'s token goes without it too', () => {
    const choice = stackTokenChoice('people', carried(APPLY).slice(1), description, description.stacks);
    expect(choice).toMatchObject({ policies: [APPLY, `${APPLY}-people`], noDefaultPolicy: true });
  });

  it('a retired stack (the roles keep its grant until its removal): its own grant, known from the synthesized output', () => {
    const stacks = [...description.stacks, 'app-roles-9'];
    const choice = stackTokenChoice('app-roles-9', carried(APPLY, stacks), description, stacks);
    expect(choice.policies).toEqual(['default', APPLY, `${APPLY}-app-roles-9`]);
  });

  it('objects moved into the stack: the grants of the stacks they moved out of are kept too, saying why', () => {
    const also = [{ stack: 'app-roles-1', why: 'objects moved out of it' }];
    const choice = stackTokenChoice('app-roles-2', carried(APPLY), description, description.stacks, also);
    expect(choice.policies).toEqual(['default', APPLY, `${APPLY}-app-roles-1`, `${APPLY}-app-roles-2`]);
    expect(choice.line).toContain(`${APPLY}-app-roles-1 (the grant of app-roles-1: objects moved out of it)`);
  });

  it('a new stack whose grant is not on the store yet: own policy and default, saying the grant is not carried', () => {
    const choice = stackTokenChoice('app-roles-6', carried(APPLY).filter((p) => p !== `${APPLY}-app-roles-6`), description, description.stacks);
    expect(choice.policies).toEqual(['default', APPLY]);
    expect(choice.line).toContain(`the job's token does not carry ${APPLY}-app-roles-6 (not on the store yet`);
  });

  it('a root token or a person\'s token on a laptop: used as it is, saying so', () => {
    for (const policies of [['root'], ['default', 'platform-admins']]) {
      const choice = stackTokenChoice('app-roles-1', policies, description, description.stacks);
      expect(choice.policies).toBeUndefined();
      expect(choice.line).toBe(`app-roles-1: the engine uses the job's token as it is: it carries neither pipeline role's policy (${APPLY}, ${PLAN}): a root token or a person's token (on a laptop), not narrowed`);
    }
  });

  it('a token that carries no other stack\'s grant: used as it is (nothing to narrow)', () => {
    const choice = stackTokenChoice('people', ['default', APPLY, `${APPLY}-people`], description, description.stacks);
    expect(choice.policies).toBeUndefined();
    expect(choice.line).toMatch(/^people: the engine uses the job's token as it is \(role secretstore-iac-pipeline\): it carries no other stack's grant/);
  });

  it('a policy of the token that is no grant of the pipeline is kept (only grants are dropped)', () => {
    const choice = stackTokenChoice('people', [...carried(APPLY), 'extra-audit'], description, description.stacks);
    expect(choice.policies).toEqual(['default', APPLY, `${APPLY}-people`, 'extra-audit']);
  });
});

describe('the other stacks\' grants a stack\'s run needs, from the synthesized output', () => {
  const moves = (blocks: Record<string, unknown>) => JSON.stringify(blocks);
  const dir = () =>
    jobDirectory({
      'cdktf.out/stacks/app-roles-2/cdk.tf.json': '{}',
      'cdktf.out/stacks/app-roles-2/moves.tf.json': moves({ import: [{ to: 'vault_approle_auth_backend_role.a', id: 'auth/approle/role/a' }] }),
      'cdktf.out/stacks/app-roles-1/cdk.tf.json': '{}',
      'cdktf.out/stacks/app-roles-1/moves.tf.json': moves({ removed: [{ from: 'vault_approle_auth_backend_role.a', lifecycle: [{ destroy: false }] }] }),
      'cdktf.out/stacks/app-roles-9/moves.tf.json': moves({ removed: [{ from: 'vault_approle_auth_backend_role.b', lifecycle: [{ destroy: false }] }] }),
      'cdktf.out/stacks/app-roles-3/cdk.tf.json': '{}',
    });

  it('a stack that imports moved objects needs the grants of the stacks they moved out of (a retired one too); the others need none', () => {
    const outdir = `${dir()}/cdktf.out`;
    const needs = stackGrantNeeds(outdir, description, 'app-roles-2');
    expect(needs.also.map((a) => a.stack)).toEqual(['app-roles-1', 'app-roles-9']);
    expect(needs.grantStacks).toEqual([...description.stacks, 'app-roles-9']);
    expect(stackGrantNeeds(outdir, description, 'app-roles-3').also).toEqual([]);
    expect(stackGrantNeeds(outdir, description, 'app-roles-1').also).toEqual([]);
  });
});

/** A recording stand-in for the store's token calls: the job token carries `policies`. */
function recordingTokens(policies: readonly string[] | undefined, fail: { create?: boolean; revoke?: boolean } = {}) {
  const created: { stack: string; policies: readonly string[]; noDefaultPolicy: boolean; token: string }[] = [];
  const revoked: string[] = [];
  const tokens: PipelineStackTokens = {
    jobPolicies: async () => policies,
    create: async (stack, p, noDefaultPolicy) => {
      if (fail.create) throw new Error('HTTP 403 on auth/token/create');
      const token = `hvs.STACK-${stack}-secret`;
      created.push({ stack, policies: p, noDefaultPolicy, token });
      return token;
    },
    revoke: async (token) => {
      if (fail.revoke) throw new Error('store unreachable');
      revoked.push(token);
    },
  };
  return { tokens, created, revoked };
}

describe('the jobs run each stack with its own token', () => {
  const env = { VAULT_TOKEN: JOB_TOKEN };
  const noToken = (lines: readonly string[]) => expect(lines.join('\n')).not.toMatch(/hvs\./);

  it('plan (a shard job): each stack\'s init and plan with its own token, revoked after; the log says which policies and why', async () => {
    const r = recordingContext(jobDirectory({}), env);
    const t = recordingTokens(carried(PLAN));
    const job = jobStacks({ kind: 'shard', group: 'app-roles-shards', job: 1 }, description, { selected: ['app-roles-1', 'app-roles-2', 'app-roles-3', 'app-roles-4', 'app-roles-5'], retired: [] }, 'plan');
    const result = await runPlanJob(job, true, { ...r.ctx, tokens: t.tokens });
    expect(result.stacks).toEqual(['app-roles-1', 'app-roles-5']);
    expect(t.created.map((c) => [c.stack, c.policies])).toEqual([
      ['app-roles-1', ['default', PLAN, `${PLAN}-app-roles-1`]],
      ['app-roles-5', ['default', PLAN, `${PLAN}-app-roles-5`]],
    ]);
    expect(r.calls.map((c) => [c.args[1], c.env.VAULT_TOKEN])).toEqual([
      ['app-roles-1', 'hvs.STACK-app-roles-1-secret'],
      ['app-roles-1', 'hvs.STACK-app-roles-1-secret'],
      ['app-roles-5', 'hvs.STACK-app-roles-5-secret'],
      ['app-roles-5', 'hvs.STACK-app-roles-5-secret'],
    ]);
    expect(t.revoked).toEqual(['hvs.STACK-app-roles-1-secret', 'hvs.STACK-app-roles-5-secret']);
    expect(r.lines.filter((l) => l.includes('a token of its own carrying'))).toHaveLength(2);
    noToken(r.lines);
  });

  it('apply, removals (a retired stack among them) and drift: each stack\'s own grant; a failed run still revokes its token', async () => {
    const stacks = [...description.stacks, 'app-roles-9'];
    const dir = jobDirectory({
      'cdktf.out/stacks/app-roles-9/moves.tf.json': '{"removed":[{"from":"vault_policy.x","lifecycle":[{"destroy":false}]}]}',
      'secretstore-iac-plans/people.tfplan': 'PK',
      'secretstore-iac-plans/people.removals': 'b (y)\n',
      'secretstore-iac-plans/app-roles-9.tfplan': 'PK',
      'secretstore-iac-plans/app-roles-9.removals': 'c (z)\n',
      'secretstore-iac-plans/app-roles.tfplan': 'PK',
    });
    const apply = recordingContext(dir, env);
    const ta = recordingTokens(carried(APPLY, stacks));
    await runApplyJob({ stacks: ['app-roles'], reason: 'r' }, { ...apply.ctx, tokens: ta.tokens });
    expect(ta.created.map((c) => c.policies)).toEqual([['default', APPLY, `${APPLY}-app-roles`]]);

    const removals = recordingContext(dir, { ...env, GITLAB_USER_LOGIN: 'alice', TF_VAR_oidc_client_secret: 'x' });
    const tr = recordingTokens(carried(APPLY, stacks));
    await runRemovalsJob({ selected: ['people'], retired: ['app-roles-9'] }, { ...removals.ctx, tokens: tr.tokens });
    expect(tr.created.map((c) => [c.stack, c.policies])).toEqual([
      ['people', ['default', APPLY, `${APPLY}-people`]],
      ['app-roles-9', ['default', APPLY, `${APPLY}-app-roles-9`]],
    ]);
    expect(tr.revoked).toHaveLength(2);

    const drift = recordingContext(dir, env, () => 1);
    const td = recordingTokens(carried(APPLY, stacks));
    const result = await runDriftJob('app-roles-4', { ...drift.ctx, tokens: td.tokens });
    expect(result.exitCode).toBe(1);
    expect(td.created.map((c) => c.policies)).toEqual([['default', APPLY, `${APPLY}-app-roles-4`]]);
    expect(td.revoked).toEqual(['hvs.STACK-app-roles-4-secret']);
    [apply, removals, drift].forEach((r) => noToken(r.lines));
  });

  it('a stack that imports moved objects: the plan job\'s token carries the grant of the stack they left', async () => {
    const dir = jobDirectory({
      'cdktf.out/stacks/app-roles-2/moves.tf.json': '{"import":[{"to":"vault_policy.a","id":"a"}]}',
      'cdktf.out/stacks/app-roles-1/moves.tf.json': '{"removed":[{"from":"vault_policy.a","lifecycle":[{"destroy":false}]}]}',
    });
    const r = recordingContext(dir, env);
    const t = recordingTokens(carried(APPLY));
    await runPlanJob({ stacks: ['app-roles-2'], reason: 'r' }, false, { ...r.ctx, tokens: t.tokens });
    expect(t.created.map((c) => c.policies)).toEqual([['default', APPLY, `${APPLY}-app-roles-1`, `${APPLY}-app-roles-2`]]);
    expect(r.lines.join('\n')).toContain('the grant of app-roles-1: objects moved out of it, and app-roles-2 imports objects that moved in');
  });

  it('on a laptop with a root token: the engine gets the job\'s token as it is, and the log says so', async () => {
    const r = recordingContext(jobDirectory({}), env);
    const t = recordingTokens(['root']);
    await runPlanJob({ stacks: ['app-roles-1'], reason: 'r' }, true, { ...r.ctx, tokens: t.tokens });
    expect(t.created).toEqual([]);
    expect(r.calls.every((c) => c.env.VAULT_TOKEN === undefined)).toBe(true);
    expect(r.lines.join('\n')).toContain('app-roles-1: the engine uses the job\'s token as it is: it carries neither pipeline role\'s policy');
  });

  it('a token that cannot be made, or revoked: the run goes on (the job\'s token; it ends with the job\'s), said without the token', async () => {
    const made = recordingContext(jobDirectory({}), env);
    const failing = recordingTokens(carried(APPLY), { create: true });
    expect((await runPlanJob({ stacks: ['people'], reason: 'r' }, false, { ...made.ctx, tokens: failing.tokens })).exitCode).toBe(0);
    expect(made.calls.every((c) => c.env.VAULT_TOKEN === undefined)).toBe(true);
    expect(made.lines.join('\n')).toContain('people: a token of its own could not be made (HTTP 403 on auth/token/create): the engine uses the job\'s token as it is, not narrowed');
    const kept = recordingContext(jobDirectory({}), env);
    const unrevoked = recordingTokens(carried(APPLY), { revoke: true });
    expect((await runPlanJob({ stacks: ['people'], reason: 'r' }, false, { ...kept.ctx, tokens: unrevoked.tokens })).exitCode).toBe(0);
    expect(kept.lines.join('\n')).toContain('people: its token could not be revoked (store unreachable): it ends with the job\'s token');
    [made, kept].forEach((r) => noToken(r.lines));
  });
});
