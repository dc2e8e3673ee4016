/**
 * The order GitLab runs a pipeline's jobs in, read from the pipeline's YAML: a job with `needs`
 * starts when the jobs it needs have ended; one without waits for every job of the stages before its
 * own. The critical path of a run is the longest chain of jobs through that order, each counted with
 * its own duration: on the default branch the applies are a chain (ci-access, then app-roles, then
 * the shards, then the retired), which a sum of each stage's slowest job counts as one.
 */
import { parse } from 'yaml';

/** One job of the pipeline: its stage and, when it has a `needs` list, the jobs it waits for. */
export interface PipelineGraphJob {
  readonly stage: string;
  /** Jobs named by `needs` (absent: the job waits for every job of the earlier stages). */
  readonly needs?: readonly string[];
}

/** The pipeline's stages in their order and its jobs (hidden `.templates` resolved into them). */
export interface PipelineJobGraph {
  readonly stages: readonly string[];
  readonly jobs: ReadonlyMap<string, PipelineGraphJob>;
}

/** GitLab's keys of a pipeline file that are not jobs. */
const GLOBAL_KEYS = new Set(['stages', 'variables', 'workflow', 'default', 'include', 'image', 'services', 'cache', 'before_script', 'after_script']);

/**
 * The job graph of a GitLab pipeline file: each visible job's stage (GitLab's default `test` when none,
 * through `extends` too) and `needs` (job names, from strings or `{ job: ... }` entries).
 * @throws Error naming the job whose `extends` names no job of the file, or that extends itself
 */
export function pipelineJobGraph(yamlText: string): PipelineJobGraph {
  const doc = (parse(yamlText) ?? {}) as Record<string, unknown>;
  const stages = Array.isArray(doc.stages) ? doc.stages.map(String) : ['build', 'test', 'deploy'];
  const definitions = new Map(Object.entries(doc).filter(([k, v]) => !GLOBAL_KEYS.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)) as [string, Record<string, unknown>][]);
  const resolved = new Map<string, Record<string, unknown>>();
  const resolve = (name: string, seen: readonly string[]): Record<string, unknown> => {
    const done = resolved.get(name);
    if (done) return done;
    const own = definitions.get(name);
    if (own === undefined) throw new Error(`${seen[seen.length - 1]}: extends ${name}, which is no job of the pipeline`);
    if (seen.includes(name)) throw new Error(`${name}: extends itself (${[...seen, name].join(' -> ')})`);
    const parents = own.extends === undefined ? [] : Array.isArray(own.extends) ? own.extends.map(String) : [String(own.extends)];
    // Later parents win over earlier ones, the job's own keys over all of them (GitLab's merge, by top-level key).
    const merged = Object.assign({}, ...parents.map((p) => resolve(p, [...seen, name])), own) as Record<string, unknown>;
    resolved.set(name, merged);
    return merged;
  };
  const jobs = new Map<string, PipelineGraphJob>();
  for (const name of [...definitions.keys()].filter((n) => !n.startsWith('.')).sort()) {
    const job = resolve(name, []);
    const needs = Array.isArray(job.needs) ? job.needs.map((n) => (typeof n === 'string' ? n : String((n as { job?: unknown }).job))) : undefined;
    jobs.set(name, { stage: typeof job.stage === 'string' ? job.stage : 'test', ...(needs !== undefined ? { needs } : {}) });
  }
  return { stages, jobs };
}

/** The longest chain of the jobs that ran, and its seconds. */
export interface NeedsChain {
  readonly jobs: readonly string[];
  readonly s: number;
}

/**
 * The critical path of a run: the chain of jobs that ran, each waiting for the ones before it as
 * the graph says, whose durations sum to the most. Jobs that did not run (not in `durations`) are
 * left out of the chain and of the waiting (GitLab does not wait for a job its rules left out).
 */
export function longestNeedsChain(graph: PipelineJobGraph, durations: ReadonlyMap<string, number>): NeedsChain {
  const ran = [...durations.keys()].filter((j) => graph.jobs.has(j));
  const stageOf = (job: string) => graph.stages.indexOf(graph.jobs.get(job)!.stage);
  const predecessors = (job: string): string[] => {
    const needs = graph.jobs.get(job)!.needs;
    return needs !== undefined ? needs.filter((n) => durations.has(n) && graph.jobs.has(n)) : ran.filter((other) => stageOf(other) < stageOf(job));
  };
  const memo = new Map<string, NeedsChain>();
  const chainTo = (job: string, seen: ReadonlySet<string>): NeedsChain => {
    const known = memo.get(job);
    if (known) return known;
    if (seen.has(job)) throw new Error(`${job}: its needs form a cycle`);
    const before = predecessors(job)
      .sort()
      .map((p) => chainTo(p, new Set([...seen, job])))
      .reduce<NeedsChain>((a, b) => (b.s > a.s ? b : a), { jobs: [], s: 0 });
    const chain = { jobs: [...before.jobs, job], s: before.s + durations.get(job)! };
    memo.set(job, chain);
    return chain;
  };
  return [...ran].sort().map((j) => chainTo(j, new Set())).reduce<NeedsChain>((a, b) => (b.s > a.s ? b : a), { jobs: [], s: 0 });
}
