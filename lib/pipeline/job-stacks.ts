import { PipelineDescription, PipelineShardGroup } from './pipeline-description';
import { PipelineSelection } from './pipeline-selection';

/** Which job of the pipeline file is running: a stack's own, a shard job, or the retired stacks' job. */
export type PipelineJobTarget =
  | { readonly kind: 'stack'; readonly stack: string }
  | { readonly kind: 'shard'; readonly group: string; readonly job: number }
  | { readonly kind: 'retired' };

/** The stacks a job takes, in order, and the one line that says why. */
export interface JobStacks {
  readonly stacks: readonly string[];
  readonly reason: string;
}

const ordinal = (n: number) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;

/**
 * The share of shard job `job` of `group`: the n-th of the group's stacks the selection holds (in the
 * selection's dependency order) is job `((n - 1) mod jobs) + 1`'s. The plan job and the apply job of
 * a number compute the same share from the same selection.
 */
export function shardShare(group: PipelineShardGroup, job: number, selected: readonly string[]): { readonly stacks: string[]; readonly positions: number[]; readonly ofGroup: number } {
  const members = new Set(group.stacks);
  const ofGroup = selected.filter((s) => members.has(s));
  const positions = ofGroup.map((_, i) => i + 1).filter((n) => (n - 1) % group.jobs === job - 1);
  return { stacks: positions.map((n) => ofGroup[n - 1]), positions, ofGroup: ofGroup.length };
}

/**
 * The stacks a plan or apply job takes from the synth job's selection, with the reason in one line:
 * - a stack's own job: the stack when selected, else none (unchanged: same digest as the base, and no
 *   stack it depends on changed);
 * - shard job `n` of a group: its {@link shardShare};
 * - the retired stacks' job: every retired stack, in the listed order.
 * @throws Error for a stack or group the pipeline does not have, or a job number out of range
 */
export function jobStacks(target: PipelineJobTarget, description: PipelineDescription, selection: PipelineSelection, what: 'plan' | 'apply'): JobStacks {
  const verb = what === 'plan' ? 'plans' : 'applies';
  if (target.kind === 'stack') {
    if (!description.stacks.includes(target.stack)) throw new Error(`stack ${JSON.stringify(target.stack)} is not one of the pipeline's stacks (${description.stacks.join(', ')})`);
    const group = description.shardGroups.find((g) => g.stacks.includes(target.stack));
    if (group !== undefined) throw new Error(`stack ${target.stack} is planned and applied by the shard jobs of ${group.name} (--group ${group.name} --job N), not by a job of its own`);
    return description.stacks.includes(target.stack) && selection.selected.includes(target.stack)
      ? { stacks: [target.stack], reason: `stack ${target.stack} is selected (its content digest differs from the base's, or a stack it depends on changed): it ${verb} it` }
      : { stacks: [], reason: `stack ${target.stack} is unchanged (same content digest as the base, and no stack it depends on changed): nothing to ${what}` };
  }
  if (target.kind === 'shard') {
    const group = description.shardGroups.find((g) => g.name === target.group);
    if (group === undefined) throw new Error(`shard job group ${JSON.stringify(target.group)} is not one of the pipeline's (${description.shardGroups.map((g) => g.name).join(', ') || 'none'})`);
    if (!Number.isInteger(target.job) || target.job < 1 || target.job > group.jobs) throw new Error(`job ${target.job} of ${group.name}: must be from 1 to ${group.jobs}`);
    const share = shardShare(group, target.job, selection.selected);
    const rule = `the n-th selected stack of the group is job ((n - 1) mod ${group.jobs}) + 1's`;
    if (share.stacks.length === 0) {
      return { stacks: [], reason: `none of the ${share.ofGroup} selected stacks of ${group.name} is job ${target.job}'s (of ${group.jobs}; ${group.stacks.length} stacks in the group, the others unchanged; ${rule}): nothing to ${what}` };
    }
    return {
      stacks: share.stacks,
      reason: `job ${target.job} of ${group.jobs} of ${group.name} ${verb}, in this order: ${share.stacks.join(', ')} (the ${share.positions.map(ordinal).join(', ')} of its ${share.ofGroup} selected stacks; ${rule})`,
    };
  }
  if (selection.retired.length === 0) return { stacks: [], reason: `no retired stack (one the base had and this commit no longer has): nothing to ${what}` };
  return {
    stacks: [...selection.retired],
    reason: `retired stacks (the base had them, this commit no longer has them: their state forgets what moved; removals only by the manual job), after every other stack, in this order: ${selection.retired.join(', ')}`,
  };
}
