import * as fs from 'fs';
import * as path from 'path';
import type { ConfigurationPipelineYamlOptions, PipelineInputVariable } from '../render/configuration-pipeline-yaml';

/**
 * Where synthesis writes the {@link PipelineDescription}, relative to the output directory
 * (`cdktf.out/ci/secretstore-iac.pipeline.json`, beside the pipeline file): the synth job's
 * `cdktf.out/` artifact carries it to every job, and the `secretstore-iac pipeline` subcommands
 * read it there (a laptop reads the same file from the job's artifacts).
 */
export const PIPELINE_DESCRIPTION_PATH = 'ci/secretstore-iac.pipeline.json';

/** A group of shard stacks whose plans and applies `jobs` jobs share (the pipeline file's shard jobs). */
export interface PipelineShardGroup {
  /** The group's part of its job names (`app-roles-shards`). */
  readonly name: string;
  /** Its stacks, sorted. */
  readonly stacks: readonly string[];
  /** How many jobs of each kind share them: the number of the pipeline file's jobs, at most one per stack. */
  readonly jobs: number;
}

/**
 * What the pipeline's jobs need to know about the platform at run time, written by synthesis from
 * the options the pipeline file is rendered from (one fact, one place): the stacks, their
 * dependencies, the shard job groups, each stack's input variables, the label and the token variable
 * of the merge request's note.
 */
export interface PipelineDescription {
  /** The synthesized stacks, sorted. */
  readonly stacks: readonly string[];
  /** The stack applied before every other one, when there is one. */
  readonly firstStack?: string;
  /** Stacks each stack depends on (only stacks that depend on another are listed). */
  readonly dependencies: Readonly<Record<string, readonly string[]>>;
  /** The shard job groups, sorted by name. */
  readonly shardGroups: readonly PipelineShardGroup[];
  /** Each stack's input variables (only stacks that declare some). */
  readonly inputs: Readonly<Record<string, readonly PipelineInputVariable[]>>;
  /** Merge-request label that acknowledges risk flags. */
  readonly acknowledgeLabel: string;
  /** CI/CD variable holding the token that posts the note. */
  readonly noteTokenVariable: string;
  /**
   * The pipeline roles' names (also their policies' names), whose grant of a stack is named by
   * `pipelineGrantPolicyName`: each stack's engine run carries only the grants it needs (lib/pipeline/stack-token.ts).
   */
  readonly roles: { readonly apply: string; readonly plan: string };
}

/** The description of the pipeline rendered from `options` (deterministic: sorted). */
export function describePipeline(options: ConfigurationPipelineYamlOptions): PipelineDescription {
  const sorted = (xs: readonly string[]) => [...xs].sort();
  return {
    stacks: sorted(options.stacks),
    ...(options.firstStack !== undefined ? { firstStack: options.firstStack } : {}),
    dependencies: Object.fromEntries(
      Object.entries(options.dependencies ?? {})
        .filter(([, ds]) => ds.length > 0)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([s, ds]) => [s, sorted(ds)]),
    ),
    shardGroups: [...(options.shardGroups ?? [])]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((g) => ({ name: g.name, stacks: sorted(g.stacks), jobs: Math.min(g.jobs, g.stacks.length) })),
    inputs: Object.fromEntries(
      Object.entries(options.inputs ?? {})
        .filter(([, vs]) => vs.length > 0)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([s, vs]) => [s, vs.map((v) => ({ name: v.name, required: v.required }))]),
    ),
    acknowledgeLabel: options.acknowledgeLabel,
    noteTokenVariable: options.noteTokenVariable,
    roles: { apply: options.applyRoleName, plan: options.planRoleName },
  };
}

/**
 * Reads the description synthesis wrote into `outdir`.
 * @throws Error naming the file when it is missing or not a description
 */
export function readPipelineDescription(outdir: string): PipelineDescription {
  const file = path.join(outdir, PIPELINE_DESCRIPTION_PATH);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: it is written by synthesis (the synth job's cdktf.out/ artifact); run \`npm run synth\`, or pass --outdir`);
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: not JSON (${(e as Error).message})`);
  }
  const d = value as PipelineDescription;
  const strings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === 'string');
  const problems: string[] = [];
  if (!strings(d?.stacks)) problems.push('stacks: must be a list of stack names');
  if (typeof d?.dependencies !== 'object' || d.dependencies === null || !Object.values(d.dependencies).every(strings)) problems.push('dependencies: must map stacks to lists of stacks');
  if (!Array.isArray(d?.shardGroups) || !d.shardGroups.every((g) => typeof g?.name === 'string' && strings(g.stacks) && Number.isInteger(g.jobs) && g.jobs >= 1)) problems.push('shardGroups: must be a list of {name, stacks, jobs}');
  if (typeof d?.inputs !== 'object' || d.inputs === null || !Object.values(d.inputs).every((vs) => Array.isArray(vs) && vs.every((v) => typeof v?.name === 'string' && typeof v.required === 'boolean'))) problems.push('inputs: must map stacks to lists of {name, required}');
  if (typeof d?.acknowledgeLabel !== 'string') problems.push('acknowledgeLabel: must be a string');
  if (typeof d?.noteTokenVariable !== 'string') problems.push('noteTokenVariable: must be a string');
  if (typeof d?.roles?.apply !== 'string' || typeof d.roles.plan !== 'string') problems.push('roles: must be {apply, plan}, the pipeline roles\' names');
  if (problems.length > 0) throw new Error(`${file}: not a pipeline description written by this version: ${problems.join('; ')}`);
  return d;
}
