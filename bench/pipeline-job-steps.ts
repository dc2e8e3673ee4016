/**
 * The steps of a pipeline's jobs, read from gitlab-ci-local's log with `--timestamps` (each line
 * `[HH:MM:SS <elapsed in the job>] <job> <text>`): where each job's time goes, from its start
 * (`starting shell`) to its artifacts exported, split at the lines that begin a step: the artifacts
 * imported, each script command (`$ ...`), the engine's `init`, refresh, plan, `show`, apply, and the
 * decisions of `secretstore-iac pipeline`. Pure: the benchmark prints it, a unit test holds it.
 */

/** One step of a job: what began it, and how long until the next step began. */
export interface JobStep {
  readonly label: string;
  readonly s: number;
}

/** One job's timeline: its steps in order, and its time from start to its artifacts exported. */
export interface JobTimeline {
  readonly job: string;
  /** Wall-clock second the job started (`HH:MM:SS`, from its `starting shell` line). */
  readonly started: string;
  readonly steps: readonly JobStep[];
  /** From `starting shell` to the end of its artifacts' export (or its `finished in`). */
  readonly totalS: number;
}

/** The label (after `<job>: `) of the default branch's comparison with the approved notes: its API calls and compare. */
export const COMPARISON_STEP = 'the comparison with the approved notes (GitLab API, compare)';

/** Seconds of a gitlab-ci-local duration (`540 ms`, `12.3 s`, `1.03 min`). */
export function durationS(text: string): number {
  let s = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|min|m|h)\b/g)) s += Number(m[1]) * { ms: 0.001, s: 1, min: 60, m: 60, h: 3600 }[m[2] as 'ms' | 's' | 'min' | 'm' | 'h'];
  return s;
}

/**
 * The step a job's log line begins, or undefined when the line belongs to the step before. The
 * engine's lines are matched on their English text (OpenTofu and Terraform print the same).
 */
export function stepOf(text: string): string | undefined {
  const pipeline = /^secretstore-iac pipeline (\w[\w-]*): (.*)$/.exec(text);
  if (pipeline) {
    const [, job, message] = pipeline;
    if (/: plan saved as /.test(message)) return `${job}: after the plan (guard, plan saved)`;
    if (/^reviewing the saved plans/.test(message)) return `${job}: review (init of each planned stack, show -json, access-diff)`;
    if (/: applied its reviewed plan/.test(message)) return `${job}: after the apply`;
    // The default branch's comparison with the approved notes (docs/pipelines.md §13): its API calls and compare, then what follows.
    if (/^comparing the plans with what the merge requests merged since /.test(message)) return `${job}: ${COMPARISON_STEP}`;
    if (/: the apply jobs apply them$|: nothing is applied automatically;/.test(message)) return `${job}: after the comparison (its verdict, the outcome written)`;
    return `${job}: ${message.length > 60 ? `${message.slice(0, 57)}...` : message}`;
  }
  if (/^secretstore-iac: synth steps:/.test(text)) return 'synth: after its synthesis steps';
  if (/^Initializing the backend/.test(text)) return 'engine init';
  if (/^(OpenTofu|Terraform) has been successfully initialized/.test(text)) return 'after init: engine start, state read (review: show -json, access-diff)';
  if (/: Refreshing state\.\.\./.test(text)) return 'refresh';
  if (/^(OpenTofu|Terraform) used the selected providers to generate/.test(text) || /^No changes\./.test(text)) return 'plan computed, written, checked';
  if (/: (Creating|Modifying|Destroying)\.\.\./.test(text)) return 'apply';
  if (/^Apply complete!/.test(text)) return 'after the apply';
  if (/^(## )?Access changes/.test(text)) return 'note written';
  if (/^imported artifacts in /.test(text)) return 'after the artifacts import';
  if (/^(exported|copied) artifacts/.test(text)) return undefined;
  if (text.startsWith('$ ')) {
    const command = text.slice(2).replace(/\s+/g, ' ');
    return `$ ${command.length > 80 ? `${command.slice(0, 77)}...` : command}`;
  }
  return undefined;
}

const LINE = /^\[(\d\d:\d\d:\d\d)\s+([^\]]+)\]\s+(\S+)\s+(.*)$/;

/**
 * The timelines of the jobs in a gitlab-ci-local log taken with `--timestamps`, in the order they
 * started. A step that begins the same way as the one before it (the refresh's lines, a second
 * command of one kind) is merged into it.
 */
export function jobTimelines(log: string): JobTimeline[] {
  const jobs = new Map<string, { started: string; marks: { label: string; at: number }[]; end: number }>();
  for (const raw of log.split('\n')) {
    const m = LINE.exec(raw);
    if (!m) continue;
    const [, clock, elapsed, job, rest] = m;
    // The `$ ` of a command is kept, the `> ` of its output taken off.
    const text = rest.startsWith('> ') ? rest.slice(2) : rest;
    const at = durationS(elapsed);
    if (/^starting shell/.test(text)) {
      jobs.set(job, { started: clock, marks: [{ label: 'job start-up (shell, artifacts in)', at: 0 }], end: at });
      continue;
    }
    const j = jobs.get(job);
    if (!j) continue;
    const exported = /^exported artifacts in (.*)$/.exec(text);
    if (exported) {
      j.marks.push({ label: 'artifacts out', at: j.end });
      j.end += durationS(exported[1]);
      continue;
    }
    const finished = /^finished in (.*)$/.exec(text);
    if (finished) {
      j.end = Math.max(j.end, durationS(finished[1]));
      continue;
    }
    j.end = Math.max(j.end, at);
    const label = stepOf(text);
    if (label === undefined || label === j.marks[j.marks.length - 1].label) continue;
    j.marks.push({ label, at });
  }
  return [...jobs].map(([job, j]) => {
    const steps = j.marks.map((mark, i) => ({ label: mark.label, s: Math.max(0, (i + 1 < j.marks.length ? j.marks[i + 1].at : j.end) - mark.at) }));
    return { job, started: j.started, steps, totalS: j.end };
  });
}

/** A timeline in lines: `  label  1.23 s` (steps under 0.05 s left out), the job's total first. */
export function timelineLines(t: JobTimeline, indent = '      '): string[] {
  const width = Math.max(...t.steps.map((s) => s.label.length), 10);
  return [
    `${indent.slice(2)}${t.job} (started ${t.started}): ${t.totalS.toFixed(2)} s`,
    ...t.steps.filter((s) => s.s >= 0.05).map((s) => `${indent}${s.label.padEnd(width)} ${s.s.toFixed(2).padStart(7)} s`),
  ];
}
