/** Which stacks each plan and apply job takes from the synth job's selection (lib/pipeline/job-stacks.ts). */
import { jobStacks, shardShare } from '../../../lib/pipeline/job-stacks';
import { describePipeline } from '../../../lib/pipeline/pipeline-description';
import { FIXTURE_OPTIONS } from './pipeline-fixture';

const description = describePipeline(FIXTURE_OPTIONS);
const group = description.shardGroups[0];

describe('a stack\'s own job', () => {
  it('takes its stack when the synth job selected it (changed, or a stack it depends on changed: changed-stacks lists dependents)', () => {
    const r = jobStacks({ kind: 'stack', stack: 'ci-access' }, description, { selected: ['app-roles', 'ci-access'], retired: [] }, 'plan');
    expect(r.stacks).toEqual(['ci-access']);
    expect(r.reason).toBe('stack ci-access is selected (its content digest differs from the base\'s, or a stack it depends on changed): it plans it');
  });

  it('takes nothing when the stack is unchanged, saying why', () => {
    const r = jobStacks({ kind: 'stack', stack: 'people' }, description, { selected: ['ci-access'], retired: [] }, 'apply');
    expect(r).toEqual({ stacks: [], reason: 'stack people is unchanged (same content digest as the base, and no stack it depends on changed): nothing to apply' });
  });

  it('refuses a stack the pipeline does not have, and a shard of a group (its group\'s jobs take it)', () => {
    expect(() => jobStacks({ kind: 'stack', stack: 'nope' }, description, { selected: ['nope'], retired: [] }, 'plan')).toThrow('stack "nope" is not one of the pipeline\'s stacks');
    expect(() => jobStacks({ kind: 'stack', stack: 'app-roles-2' }, description, { selected: [], retired: [] }, 'plan')).toThrow('stack app-roles-2 is planned and applied by the shard jobs of app-roles-shards (--group app-roles-shards --job N)');
  });
});

describe('shard shares: the n-th selected stack of a group is job ((n - 1) mod jobs) + 1\'s', () => {
  const selected = ['app-roles', 'app-roles-6', 'app-roles-1', 'ci-access', 'app-roles-3', 'app-roles-5', 'app-roles-2'];

  it('every selected shard is taken by exactly one job, in the selection\'s order; other stacks by none', () => {
    const shares = [1, 2, 3, 4].map((job) => shardShare(group, job, selected).stacks);
    expect(shares).toEqual([['app-roles-6', 'app-roles-2'], ['app-roles-1'], ['app-roles-3'], ['app-roles-5']]);
    expect(shares.flat().sort()).toEqual(['app-roles-1', 'app-roles-2', 'app-roles-3', 'app-roles-5', 'app-roles-6']);
  });

  it('the plan job and the apply job of a number take the same share', () => {
    for (const job of [1, 2, 3, 4]) {
      const plan = jobStacks({ kind: 'shard', group: group.name, job }, description, { selected, retired: [] }, 'plan');
      const apply = jobStacks({ kind: 'shard', group: group.name, job }, description, { selected, retired: [] }, 'apply');
      expect(apply.stacks).toEqual(plan.stacks);
    }
  });

  it('100 shards, 4 jobs, every shard selected: 25 each, none twice', () => {
    const stacks = Array.from({ length: 100 }, (_, i) => `s-${String(i).padStart(3, '0')}`);
    const big = { name: 'g', stacks, jobs: 4 };
    const shares = [1, 2, 3, 4].map((job) => shardShare(big, job, stacks).stacks);
    expect(shares.map((s) => s.length)).toEqual([25, 25, 25, 25]);
    expect(new Set(shares.flat()).size).toBe(100);
    expect(shares[1].slice(0, 2)).toEqual(['s-001', 's-005']);
  });

  it('the log line names the share, its positions and the rule; an empty share ends the job saying so', () => {
    expect(jobStacks({ kind: 'shard', group: group.name, job: 1 }, description, { selected, retired: [] }, 'plan').reason).toBe(
      'job 1 of 4 of app-roles-shards plans, in this order: app-roles-6, app-roles-2 (the 1st, 5th of its 5 selected stacks; the n-th selected stack of the group is job ((n - 1) mod 4) + 1\'s)',
    );
    expect(jobStacks({ kind: 'shard', group: group.name, job: 3 }, description, { selected: ['app-roles-4', 'ci-access'], retired: [] }, 'apply')).toEqual({
      stacks: [],
      reason: 'none of the 1 selected stacks of app-roles-shards is job 3\'s (of 4; 6 stacks in the group, the others unchanged; the n-th selected stack of the group is job ((n - 1) mod 4) + 1\'s): nothing to apply',
    });
  });

  it('refuses a group the pipeline does not have and a job number out of range', () => {
    expect(() => jobStacks({ kind: 'shard', group: 'other', job: 1 }, description, { selected, retired: [] }, 'plan')).toThrow('shard job group "other" is not one of the pipeline\'s (app-roles-shards)');
    expect(() => jobStacks({ kind: 'shard', group: group.name, job: 5 }, description, { selected, retired: [] }, 'plan')).toThrow('job 5 of app-roles-shards: must be from 1 to 4');
  });

  it('a group of 3 shards given 4 jobs has 3 (the description records the jobs the pipeline file has)', () => {
    const d = describePipeline({ ...FIXTURE_OPTIONS, shardGroups: [{ name: 'g', stacks: ['app-roles-1', 'app-roles-2', 'app-roles-3'], jobs: 4 }] });
    expect(d.shardGroups[0].jobs).toBe(3);
  });
});

describe('the retired stacks\' job', () => {
  it('takes every retired stack in the listed order, after every other stack', () => {
    const r = jobStacks({ kind: 'retired' }, description, { selected: ['ci-access'], retired: ['app-roles-7', 'app-roles-8'] }, 'apply');
    expect(r.stacks).toEqual(['app-roles-7', 'app-roles-8']);
    expect(r.reason).toContain('retired stacks (the base had them, this commit no longer has them');
  });

  it('none retired: nothing to do, saying so', () => {
    expect(jobStacks({ kind: 'retired' }, description, { selected: ['ci-access'], retired: [] }, 'plan')).toEqual({ stacks: [], reason: 'no retired stack (one the base had and this commit no longer has): nothing to plan' });
  });
});
