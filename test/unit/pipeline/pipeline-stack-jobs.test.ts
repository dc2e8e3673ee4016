/**
 * The plan, apply, removals and drift jobs (lib/pipeline/pipeline-*-job.ts): which guarded `tf`
 * commands they run, in which order, what they leave to the manual job, and that an input variable's
 * value is never printed. The engine is a recording runner; the real one runs in the pipeline store tests.
 */
import * as fs from 'fs';
import * as path from 'path';
import { jobStacks } from '../../../lib/pipeline/job-stacks';
import { describePipeline } from '../../../lib/pipeline/pipeline-description';
import { runApplyJob, runRetiredApplyJob } from '../../../lib/pipeline/pipeline-apply-job';
import { runDriftJob } from '../../../lib/pipeline/pipeline-drift-job';
import { runPlanJob } from '../../../lib/pipeline/pipeline-plan-job';
import { runRemovalsJob } from '../../../lib/pipeline/pipeline-removals-job';
import { INPUT_PLACEHOLDER } from '../../../lib/render/configuration-pipeline-yaml';
import { RETIRED_GRANTS_FILE } from '../../../lib/model/retired-grants-file';
import { FIXTURE_OPTIONS, jobDirectory, recordingContext } from './pipeline-fixture';

const description = describePipeline(FIXTURE_OPTIONS);
const SECRET = 'oidc-secret-VALUE-7f3e91';
const plan = (stack: string) => `tf ${stack} --refuse-replace --allow-removals --removals-file $DIR/secretstore-iac-plans/${stack}.removals -- plan -input=false -lock-timeout=10m -out=$DIR/secretstore-iac-plans/${stack}.tfplan`;
const init = (stack: string) => `tf ${stack} -- init -input=false`;
const apply = (stack: string, removals = false) =>
  `tf ${stack} --refuse-replace${removals ? ' --allow-removals' : ''} --reviewed-plans $DIR/reviewed-plans.json -- apply -input=false -lock-timeout=10m $DIR/secretstore-iac-plans/${stack}.tfplan`;

describe('plan', () => {
  it('plans each stack of the job one after the other, guarded, with removals listed beside the saved plan outside cdktf.out', async () => {
    const dir = jobDirectory({});
    const r = recordingContext(dir);
    const job = jobStacks({ kind: 'shard', group: 'app-roles-shards', job: 1 }, description, { selected: ['app-roles-1', 'app-roles-2', 'app-roles-3', 'app-roles-4', 'app-roles-5'], retired: [] }, 'plan');
    const result = await runPlanJob(job, false, r.ctx);
    expect(result).toEqual({ exitCode: 0, stacks: ['app-roles-1', 'app-roles-5'] });
    expect(r.callLines()).toEqual([init('app-roles-1'), plan('app-roles-1'), init('app-roles-5'), plan('app-roles-5')]);
    expect(fs.existsSync(path.join(dir, 'secretstore-iac-plans'))).toBe(true);
    expect(r.lines[0]).toMatch(/^secretstore-iac pipeline test: job 1 of 4 of app-roles-shards plans, in this order: app-roles-1, app-roles-5/);
  });

  it('an unchanged stack: no engine run, the job ends successfully saying why', async () => {
    const r = recordingContext(jobDirectory({}));
    const result = await runPlanJob(jobStacks({ kind: 'stack', stack: 'people' }, description, { selected: ['ci-access'], retired: [] }, 'plan'), true, r.ctx);
    expect(result.exitCode).toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.lines).toEqual(['secretstore-iac pipeline test: stack people is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan']);
  });

  it('the first failing engine run fails the job with its exit code; the stacks after it are not planned (a retired stack too)', async () => {
    const r = recordingContext(jobDirectory({}), {}, (args) => (args[1] === 'app-roles-7' && args.includes('plan') ? 4 : 0));
    const result = await runPlanJob(jobStacks({ kind: 'retired' }, description, { selected: [], retired: ['app-roles-7', 'app-roles-8'] }, 'plan'), false, r.ctx);
    expect(result).toEqual({ exitCode: 4, stacks: [] });
    expect(r.callLines()).toEqual([init('app-roles-7'), plan('app-roles-7')]);
    expect(r.lines.at(-1)).toBe('secretstore-iac pipeline test: plan of app-roles-7 ended with exit 4: the job fails, the stacks after it (app-roles-8) are not planned');
  });

  it('merge request without the input variable: the placeholder reaches the engine\'s environment, and the log says so', async () => {
    const r = recordingContext(jobDirectory({}), {});
    await runPlanJob(jobStacks({ kind: 'stack', stack: 'ci-access' }, description, { selected: ['ci-access'], retired: [] }, 'plan'), true, r.ctx);
    expect(r.calls.map((c) => c.env)).toEqual([{ TF_VAR_oidc_client_secret: INPUT_PLACEHOLDER }, { TF_VAR_oidc_client_secret: INPUT_PLACEHOLDER }]);
    expect(r.lines).toContain('secretstore-iac pipeline test: TF_VAR_oidc_client_secret is not set (merge-request pipelines get no protected variable): oidc_client_secret of stack ci-access is planned with a placeholder; it is ephemeral, so the plan records no value of it');
  });

  it('default branch without it: fails before any engine run, naming the variable and the stack', async () => {
    const r = recordingContext(jobDirectory({}), {});
    await expect(runPlanJob(jobStacks({ kind: 'stack', stack: 'ci-access' }, description, { selected: ['ci-access'], retired: [] }, 'plan'), false, r.ctx)).rejects.toThrow(
      'stack ci-access declares the input variable oidc_client_secret: set the CI/CD variable TF_VAR_oidc_client_secret (masked, protected; docs/pipelines.md)',
    );
    expect(r.calls).toEqual([]);
  });

  it('with the variable set: the value passes through the job\'s environment untouched and is printed nowhere', async () => {
    for (const mergeRequest of [true, false]) {
      const r = recordingContext(jobDirectory({}), { TF_VAR_oidc_client_secret: SECRET });
      await runPlanJob(jobStacks({ kind: 'stack', stack: 'ci-access' }, description, { selected: ['ci-access'], retired: [] }, 'plan'), mergeRequest, r.ctx);
      expect(r.calls.map((c) => c.env)).toEqual([{}, {}]);
      expect(JSON.stringify([r.lines, r.calls, r.ctx.log.decisions])).not.toContain(SECRET);
    }
  });
});

describe('apply', () => {
  const planned = (stacks: string[], removals: Record<string, string> = {}) =>
    Object.fromEntries([...stacks.map((s) => [`secretstore-iac-plans/${s}.tfplan`, 'PK']), ...Object.entries(removals).map(([s, t]) => [`secretstore-iac-plans/${s}.removals`, t])]);

  it('applies each stack\'s saved plan only against the review (--reviewed-plans), guarded', async () => {
    const dir = jobDirectory(planned(['ci-access']));
    const r = recordingContext(dir, { TF_VAR_oidc_client_secret: SECRET });
    const result = await runApplyJob(jobStacks({ kind: 'stack', stack: 'ci-access' }, description, { selected: ['ci-access'], retired: [] }, 'apply'), r.ctx);
    expect(result).toEqual({ exitCode: 0, stacks: ['ci-access'] });
    expect(r.callLines()).toEqual([init('ci-access'), apply('ci-access')]);
    expect(JSON.stringify(r.lines)).not.toContain(SECRET);
  });

  it('leaves a plan with removals to the manual job, naming what it destroys, and applies the others of its share', async () => {
    const dir = jobDirectory(planned(['app-roles-1', 'app-roles-5'], { 'app-roles-1': 'auth/approle/role/orchestrator (vault_approle_auth_backend_role.x)\n' }));
    const r = recordingContext(dir);
    const result = await runApplyJob(jobStacks({ kind: 'shard', group: 'app-roles-shards', job: 1 }, description, { selected: ['app-roles-1', 'app-roles-2', 'app-roles-3', 'app-roles-4', 'app-roles-5'], retired: [] }, 'apply'), r.ctx);
    expect(result).toEqual({ exitCode: 0, stacks: ['app-roles-5'] });
    expect(r.callLines()).toEqual([init('app-roles-5'), apply('app-roles-5')]);
    expect(r.lines).toContain(
      'secretstore-iac pipeline test: app-roles-1: not applied here: its plan destroys objects this configuration declares nowhere any more (a revocation): auth/approle/role/orchestrator (vault_approle_auth_backend_role.x); the manual job secretstore-iac-destroy-removed-objects applies it (with its other changes) once a person starts it',
    );
  });

  it('no apply job applies with --allow-removals', async () => {
    const dir = jobDirectory(planned(['app-roles-7', 'app-roles-8'], { 'app-roles-8': 'x\n' }));
    const r = recordingContext(dir);
    await runApplyJob(jobStacks({ kind: 'retired' }, description, { selected: [], retired: ['app-roles-7', 'app-roles-8'] }, 'apply'), r.ctx);
    expect(r.callLines()).toEqual([init('app-roles-7'), apply('app-roles-7')]);
    expect(r.callLines().join('\n')).not.toContain('--allow-removals');
  });

  it('a missing input variable fails the job before the first apply', async () => {
    const r = recordingContext(jobDirectory(planned(['ci-access'])), {});
    await expect(runApplyJob(jobStacks({ kind: 'stack', stack: 'ci-access' }, description, { selected: ['ci-access'], retired: [] }, 'apply'), r.ctx)).rejects.toThrow('nothing applied: stack ci-access declares the input variable oidc_client_secret');
    expect(r.calls).toEqual([]);
  });

  it('a refused apply fails the job with its exit code, the next stacks not applied', async () => {
    const r = recordingContext(jobDirectory(planned(['app-roles-7', 'app-roles-8'])), {}, (a) => (a.includes('apply') ? 4 : 0));
    const result = await runApplyJob(jobStacks({ kind: 'retired' }, description, { selected: [], retired: ['app-roles-7', 'app-roles-8'] }, 'apply'), r.ctx);
    expect(result.exitCode).toBe(4);
    expect(r.callLines()).toEqual([init('app-roles-7'), apply('app-roles-7')]);
  });
});

describe('removals: the manual job is the one path that applies a destroy', () => {
  it('applies only the plans with removals, in dependency order and retired stacks last, with --allow-removals against the review', async () => {
    const files = {
      'secretstore-iac-plans/app-roles.tfplan': 'PK',
      'secretstore-iac-plans/app-roles-2.tfplan': 'PK',
      'secretstore-iac-plans/app-roles-2.removals': 'a (x)\n',
      'secretstore-iac-plans/people.tfplan': 'PK',
      'secretstore-iac-plans/people.removals': 'b (y)\n',
      'secretstore-iac-plans/app-roles-9.tfplan': 'PK',
      'secretstore-iac-plans/app-roles-9.removals': 'c (z)\n',
    };
    const r = recordingContext(jobDirectory(files), { GITLAB_USER_LOGIN: 'alice' });
    const result = await runRemovalsJob({ selected: ['app-roles', 'people', 'app-roles-2'], retired: ['app-roles-9'] }, r.ctx);
    expect(result).toEqual({ exitCode: 0, stacks: ['people', 'app-roles-2', 'app-roles-9'] });
    expect(r.callLines()).toEqual([init('people'), apply('people', true), init('app-roles-2'), apply('app-roles-2', true), init('app-roles-9'), apply('app-roles-9', true)]);
    expect(r.lines.slice(0, 4)).toEqual([
      'secretstore-iac pipeline test: started by alice: destroying what the configuration declares nowhere any more, in dependency order, retired stacks last: people, app-roles-2, app-roles-9',
      'secretstore-iac pipeline test: people: destroys b (y)',
      'secretstore-iac pipeline test: app-roles-2: destroys a (x)',
      'secretstore-iac pipeline test: app-roles-9: destroys c (z)',
    ]);
  });

  it('without a plan with removals: nothing applied (nor released: the retired stacks\' apply job did), saying so', async () => {
    const r = recordingContext(jobDirectory({ 'secretstore-iac-plans/app-roles.tfplan': 'PK', [`cdktf.out/stacks/ci-access/${RETIRED_GRANTS_FILE}`]: '{}' }));
    expect(await runRemovalsJob({ selected: ['app-roles'], retired: [] }, r.ctx)).toEqual({ exitCode: 0, stacks: [] });
    expect(r.calls).toEqual([]);
    expect(r.lines[0]).toContain('no plan of this pipeline destroys a removed object');
  });

  it('checks the input variables of every stack it applies before the first apply', async () => {
    const files = { 'secretstore-iac-plans/people.removals': 'b\n', 'secretstore-iac-plans/ci-access.removals': 'c\n' };
    const r = recordingContext(jobDirectory(files), {});
    await expect(runRemovalsJob({ selected: ['people', 'ci-access'], retired: [] }, r.ctx)).rejects.toThrow('input variables missing, nothing destroyed: stack ci-access declares the input variable oidc_client_secret');
    expect(r.calls).toEqual([]);
  });
});

describe('release of the grants the roles kept of retired stacks: once every retired stack\'s removal is applied', () => {
  const KEPT = `cdktf.out/stacks/ci-access/${RETIRED_GRANTS_FILE}`;
  const release = (stack: string) => [
    init(stack),
    `tf ${stack} --refuse-replace -- plan -input=false -lock-timeout=10m -out=$DIR/secretstore-iac-plans/${stack}.released.tfplan`,
    `tf ${stack} --refuse-replace --released-grants $DIR/secretstore-iac-plans/${stack}.released-grants.json -- apply -input=false -lock-timeout=10m $DIR/secretstore-iac-plans/${stack}.released.tfplan`,
  ];

  it('the retired stacks\' apply job, having applied them all, plans the keeping stack without moves\' override and applies it with --released-grants', async () => {
    const dir = jobDirectory({ 'secretstore-iac-plans/app-roles-7.tfplan': 'PK', [KEPT]: '{"resource":{}}' });
    // Whether the override is in the stack when each engine run starts (the engine would merge it).
    const kept: boolean[] = [];
    const r = recordingContext(dir, { TF_VAR_oidc_client_secret: SECRET }, () => (kept.push(fs.existsSync(path.join(dir, KEPT))), 0));
    const result = await runRetiredApplyJob(jobStacks({ kind: 'retired' }, description, { selected: [], retired: ['app-roles-7'] }, 'apply'), r.ctx);
    expect(result).toEqual({ exitCode: 0, stacks: ['app-roles-7', 'ci-access'] });
    expect(r.callLines()).toEqual([init('app-roles-7'), apply('app-roles-7'), ...release('ci-access')]);
    expect(kept).toEqual([true, true, false, false, false]);
    // The override left the stack (the engine would merge it) for the file --released-grants checks.
    expect(fs.existsSync(path.join(dir, KEPT))).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'secretstore-iac-plans/ci-access.released-grants.json'), 'utf8')).toBe('{"resource":{}}');
    expect(JSON.stringify(r.lines)).not.toContain(SECRET);
  });

  it('a retired stack left to the manual job (removals): the roles keep the grants, nothing released', async () => {
    const dir = jobDirectory({ 'secretstore-iac-plans/people.tfplan': 'PK', 'secretstore-iac-plans/people.removals': 'sys/auth/oidc (x)\n', [KEPT]: '{}' });
    const r = recordingContext(dir, { TF_VAR_oidc_client_secret: SECRET });
    const result = await runRetiredApplyJob(jobStacks({ kind: 'retired' }, description, { selected: [], retired: ['people'] }, 'apply'), r.ctx);
    expect(result).toEqual({ exitCode: 0, stacks: [] });
    expect(r.calls).toEqual([]);
    expect(fs.existsSync(path.join(dir, KEPT))).toBe(true);
    expect(r.lines).toContain("secretstore-iac pipeline test: the roles keep the retired stacks' grants until secretstore-iac-destroy-removed-objects applies the removals of people");
  });

  it('the manual job releases them after its removals, with the keeping stack\'s input variables checked first', async () => {
    const files = { 'secretstore-iac-plans/people.tfplan': 'PK', 'secretstore-iac-plans/people.removals': 'b (y)\n', [KEPT]: '{}' };
    const r = recordingContext(jobDirectory(files), { TF_VAR_oidc_client_secret: SECRET });
    expect(await runRemovalsJob({ selected: [], retired: ['people'] }, r.ctx)).toEqual({ exitCode: 0, stacks: ['people', 'ci-access'] });
    expect(r.callLines()).toEqual([init('people'), apply('people', true), ...release('ci-access')]);
    const missing = recordingContext(jobDirectory(files), {});
    await expect(runRemovalsJob({ selected: [], retired: ['people'] }, { ...missing.ctx, env: {} })).rejects.toThrow('input variables missing, nothing destroyed: stack ci-access declares the input variable oidc_client_secret');
    expect(missing.calls).toEqual([]);
  });

  it('a refused release fails the job with the engine\'s exit code', async () => {
    const files = { 'secretstore-iac-plans/people.tfplan': 'PK', 'secretstore-iac-plans/people.removals': 'b (y)\n', [KEPT]: '{}' };
    const r = recordingContext(jobDirectory(files), { TF_VAR_oidc_client_secret: SECRET }, (a) => (a.includes('--released-grants') ? 4 : 0));
    const result = await runRemovalsJob({ selected: [], retired: ['people'] }, r.ctx);
    expect(result.exitCode).toBe(4);
    expect(r.callLines()).toEqual([init('people'), apply('people', true), ...release('ci-access')]);
  });
});

describe('drift', () => {
  const driftPlan = 'tf app-roles -- plan -input=false -lock-timeout=10m -detailed-exitcode -out=$DIR/secretstore-iac-plans/app-roles.tfplan';

  it('plan -detailed-exitcode of the stack, saved; the engine\'s 2 is a drift (the CLI\'s exit 1), 0 none', async () => {
    for (const [engine, expected, line] of [
      [2, { exitCode: 0, attention: 'drift' }, 'app-roles: drift: the store differs from the configuration (the plan above shows how); nothing is applied; the job fails'],
      [0, { exitCode: 0 }, 'app-roles: no drift'],
      [3, { exitCode: 3 }, 'plan of app-roles ended with exit 3: the job fails'],
    ] as const) {
      const r = recordingContext(jobDirectory({}), {}, (a) => (a.includes('-detailed-exitcode') ? engine : 0));
      const { stacks: _stacks, ...result } = await runDriftJob('app-roles', r.ctx);
      expect(result).toEqual(expected);
      expect(r.callLines()).toEqual([init('app-roles'), driftPlan]);
      expect(r.lines.at(-1)).toBe(`secretstore-iac pipeline test: ${line}`);
    }
  });

  describe('names the drift per identity and path, in the words of the default branch\'s comparison (docs/pipelines.md §13)', () => {
    const record = {
      format: 'secretstore-iac/access-change/1',
      identities: [
        { identity: 'approle/orchestrator-dev', method: 'approle', change: 'changed', rules: [{ path: 'secret/data/acme/dev/payments/*', kind: 'acl', before: ['read'], after: [], gained: [], lost: ['read'] }], bindings: [{ field: 'token_ttl', before: 7200, after: 3600 }] },
        { identity: 'jwt/registry-ci', method: 'jwt', change: 'changed', rules: [{ path: 'secret/data/registry/svc-mirror', kind: 'acl', before: [], after: ['read'], gained: ['read'], lost: [] }], bindings: [] },
      ],
      objects: [
        { stack: 'app-roles', address: 'vault_approle_auth_backend_role.orchestrator-dev', action: 'update' },
        { stack: 'app-roles', address: 'vault_policy.app-payments', action: 'create' },
        { stack: 'app-roles', address: 'vault_policy.orchestrator-dev', action: 'update', revertsDrift: true },
      ],
      plans: [{ stack: 'app-roles', sha256: 'a'.repeat(64) }],
      complete: true,
    };
    const drifted = (reviewExit: number, written: unknown) => {
      const dir = jobDirectory({});
      const r = recordingContext(dir, {}, (a) => {
        if (!a.includes('-detailed-exitcode')) return 0;
        // The engine saves the plan it was asked to.
        const out = a.find((x) => x.startsWith('-out='))!.slice('-out='.length);
        fs.writeFileSync(out, 'PK');
        return 2;
      });
      const reviews: string[][] = [];
      const review = async (args: readonly string[]) => {
        reviews.push([...args]);
        if (written !== undefined) fs.writeFileSync(path.join(dir, 'access-change.json'), JSON.stringify(written));
        return { exitCode: reviewExit, stdout: '{}' };
      };
      return { dir, r, reviews, run: () => runDriftJob('app-roles', r.ctx, review) };
    };

    it('each binding, object and rule one line, sorted as the comparison sorts them (bindings, objects, rules); applying reverts each; nothing is applied', async () => {
      const d = drifted(1, record);
      const result = await d.run();
      expect(result).toEqual({ exitCode: 0, attention: 'drift', stacks: ['app-roles'] });
      // Only this stack's plan: another plan lying in the directory is not reviewed as its drift.
      expect(d.reviews).toEqual([['--plan', `app-roles=${path.join(d.dir, 'secretstore-iac-plans', 'app-roles.tfplan')}`, '--format', 'json', '--access-change', 'access-change.json']]);
      expect(d.r.callLines()).toEqual([init('app-roles'), driftPlan]);
      expect(d.r.lines.slice(1).map((l) => l.replace('secretstore-iac pipeline test: ', ''))).toEqual([
        'app-roles: approle/orchestrator-dev binding token_ttl: drift: the store has 7200 where the configuration has 3600; applying reverts it',
        'app-roles: object app-roles: vault_approle_auth_backend_role.orchestrator-dev: drift: the store differs from the configuration; applying changes it back',
        'app-roles: object app-roles: vault_policy.app-payments: drift: the store does not have it; applying creates it',
        // The engine's refresh saw it changed since it was last applied: the comparison's words too (approval-comparison.test.ts).
        "app-roles: object app-roles: vault_policy.orchestrator-dev: drift: the store changed it since it was last applied (the engine's refresh); applying sets back what was applied",
        'app-roles: approle/orchestrator-dev secret/data/acme/dev/payments/*: drift: the store has read where the configuration has none; applying reverts it',
        'app-roles: jwt/registry-ci secret/data/registry/svc-mirror: drift: the store has none where the configuration has read; applying reverts it',
        'app-roles: drift: the store differs from the configuration (each difference above); nothing is applied; the job fails',
      ]);
    });

    it('the comparison\'s drift reads the same (one wording: lib/pipeline/access-change-rows.ts)', () => {
      const { compareWithApprovals } = require('../../../lib/pipeline/approval-comparison');
      const applied = { capabilities: () => [], binding: () => null };
      const c = compareWithApprovals(record, [], applied);
      const line = c.differences.find((x: { where: string }) => x.where === 'approle/orchestrator-dev secret/data/acme/dev/payments/*').message;
      expect(line).toContain('drift: the store has read where the configuration applied before has none');
    });

    it('a review that fails (exit above 1) or writes no record: the drift stands, the plan shows it', async () => {
      for (const [exit, written] of [[3, record], [1, undefined]] as const) {
        const d = drifted(exit, written);
        const result = await d.run();
        expect(result.attention).toBe('drift');
        expect(d.r.lines.at(-2)).toBe(`secretstore-iac pipeline test: app-roles: the review of the drift plan failed (exit ${exit}): the plan above shows the drift`);
        expect(d.r.lines.at(-1)).toBe('secretstore-iac pipeline test: app-roles: drift: the store differs from the configuration (the plan above shows how); nothing is applied; the job fails');
      }
    });

    it('an earlier run\'s access change is not read as this one\'s', async () => {
      const d = drifted(1, undefined);
      fs.writeFileSync(path.join(d.dir, 'access-change.json'), JSON.stringify(record));
      await d.run();
      expect(d.r.lines.join('\n')).not.toContain('orchestrator-dev');
    });
  });

  it('a schedule needs the input variables (no placeholder)', async () => {
    const r = recordingContext(jobDirectory({}), {});
    await expect(runDriftJob('ci-access', r.ctx)).rejects.toThrow('TF_VAR_oidc_client_secret');
    expect(r.calls).toEqual([]);
  });
});
