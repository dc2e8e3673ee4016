import * as path from 'path';
import { terminalJson } from '../private/terminal-text';
import { APPLY_UNBOUND_VARIABLE, APPROVAL_COMPARISON_FILE, CONFIRM_APPLY_JOB, DESTROY_REMOVED_JOB, PLAN_DIR, REVIEWED_PLANS_FILE } from '../render/configuration-pipeline-yaml';
import { runConfirmationJob } from '../pipeline/confirmation-job';
import { jobStacks, PipelineJobTarget } from '../pipeline/job-stacks';
import { readPipelineDescription } from '../pipeline/pipeline-description';
import { PipelineEngineRunner } from '../pipeline/pipeline-engine-steps';
import { PipelineJobContext, PipelineJobResult } from '../pipeline/pipeline-job-context';
import { PipelineJobLog } from '../pipeline/pipeline-job-log';
import { pipelineLogin } from '../pipeline/pipeline-login';
import { runApplyJob, runRetiredApplyJob } from '../pipeline/pipeline-apply-job';
import { runDriftJob } from '../pipeline/pipeline-drift-job';
import { PipelineNarrowRunner, PipelineUsageRunner, runUsageJob } from '../pipeline/pipeline-usage-job';
import { narrowCommand } from './narrow-command';
import { AUDIT_LOG_VARIABLE, USAGE_FILE, USAGE_MATRIX_FILE, USAGE_SINCE_VARIABLE } from '../render/configuration-pipeline-yaml';
import { usageCommand } from './usage-command';
import { runPlanJob } from '../pipeline/pipeline-plan-job';
import { runRemovalsJob } from '../pipeline/pipeline-removals-job';
import { ACCESS_DIFF_NOTE, PipelineReviewRunner, runReviewJob } from '../pipeline/pipeline-review-job';
import { readPipelineSelection } from '../pipeline/pipeline-selection';
import { storeStackTokens } from '../pipeline/stack-token';
import { accessDiffCommand } from './access-diff-command';
import { Command, CommandContext } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { engineCommand } from './engine-command';
import { pipelineSynthCommand } from './pipeline-synth-command';
import { ExitCode } from './exit-code';
import { runCommand } from './run-command';
import { UsageError } from './usage-error';

/** The jobs this command runs itself; `synth` is its own command ({@link pipelineSynthCommand}). */
const JOBS = ['plan', 'apply', 'removals', 'review', 'drift', 'confirm', 'usage'] as const;

/**
 * `secretstore-iac pipeline JOB ...`: what a job of the generated configuration pipeline does, as one
 * command (the pipeline file runs it; a person runs it the same on a laptop from the job's artifacts).
 */
export const pipelineCommand: Command = {
  name: 'pipeline',
  summary: 'run a job of the configuration pipeline: synth, plan, apply, removals, review, confirm, drift or usage (also on a laptop)',
  usage: [
    'Usage: secretstore-iac pipeline synth [...]   (secretstore-iac pipeline synth --help)',
    '       secretstore-iac pipeline plan (--stack STACK | --group GROUP --job N | --retired) [--merge-request]',
    '       secretstore-iac pipeline apply (--stack STACK | --group GROUP --job N | --retired)',
    '       secretstore-iac pipeline removals',
    '       secretstore-iac pipeline review (--merge-request | --default-branch)',
    '       secretstore-iac pipeline drift --stack STACK',
    '       secretstore-iac pipeline confirm',
    '       secretstore-iac pipeline usage',
    '       [--outdir DIR] [--format text|json] on each',
    '',
    'Each job of the generated configuration pipeline (cdktf.out/ci/secretstore-iac.gitlab-ci.yml) is',
    'one of these commands. It reads what the job\'s artifacts hold in the working directory: the',
    'synthesized output (DIR, default cdktf.out, with ci/secretstore-iac.pipeline.json: the stacks,',
    'dependencies, shard job groups and input variables), the synth job\'s changed-stacks.txt and',
    `retired-stacks.txt, the plan jobs' ${PLAN_DIR}/, the review's ${REVIEWED_PLANS_FILE}; and it`,
    'logs each decision in one line saying what was decided and why (docs/pipelines.md §11).',
    '',
    `  synth     ${pipelineSynthCommand.summary}`,
    '  plan      save a plan of each stack the job takes (`tf --refuse-replace --allow-removals',
    `            --removals-file\`) in ${PLAN_DIR}/: a stack's job takes it when selected; shard job N of a`,
    '            group takes the n-th selected stacks of the group with ((n - 1) mod jobs) + 1 = N; the',
    '            retired job takes every retired stack. --merge-request: a required input variable',
    '            that is not set (TF_VAR_<name>) gets a placeholder (it is ephemeral); otherwise the job',
    '            fails naming it. A value is never printed.',
    '  apply     apply the reviewed saved plan of each stack the job takes (`tf --refuse-replace',
    `            --reviewed-plans ${REVIEWED_PLANS_FILE}\`); a plan with removals is left to ${DESTROY_REMOVED_JOB}`,
    '  removals  the manual job: apply, with --allow-removals, only the plans that destroy removed',
    '            objects, in dependency order, retired stacks last',
    `  review    --default-branch: ${REVIEWED_PLANS_FILE} from the saved plans (\`access-diff --plans --format json\`);`,
    `            --merge-request: the note ${ACCESS_DIFF_NOTE} (access diff of the saved plans, then the`,
    '            synth job\'s changed-stacks.md), posted to the merge request when the note token variable',
    '            is set, and the risk-flag gate (the acknowledgement label in CI_MERGE_REQUEST_LABELS, or',
    '            SECRETSTORE_IAC_ACCEPT_RISK=true); the note ends with its approval record (canonical',
    '            access change, head and target commit). --default-branch also compares its plans with',
    '            the approval records of the merge requests merged since CI_COMMIT_BEFORE_SHA (read',
    `            through the GitLab API, author checked): ${APPROVAL_COMPARISON_FILE}; when they differ`,
    `            the apply jobs apply nothing and the difference is posted; without the note token it`,
    '            fails closed: nothing applied unless the plans change nothing or',
    `            ${APPLY_UNBOUND_VARIABLE}=true (docs/pipelines.md §13)`,
    `  confirm   the manual job ${CONFIRM_APPLY_JOB}: when the plans differ from what was approved (or`,
    '            no approval could be read), records GITLAB_USER_LOGIN as the confirmation and applies the',
    '            reviewed plans as they are',
    `  drift     \`plan -detailed-exitcode\` of STACK (a schedule), saved in ${PLAN_DIR}/; on a drift, each`,
    '            difference per identity and path (and object) from the review of that plan, in the',
    '            words of the default branch\'s comparison; nothing is applied',
    `  usage     the usage report of the configuration over the store's audit log ${AUDIT_LOG_VARIABLE} names`,
    `            (paths on the runner or https:// URLs; ${USAGE_SINCE_VARIABLE}: its --since): ${USAGE_FILE}`,
    `            and ${USAGE_MATRIX_FILE}, artifacts; the merge request's review reads ${USAGE_FILE} of the`,
    '            default branch\'s latest pipeline (GitLab API, the note token) into its note (docs/usage.md §9)',
    '',
    '  --outdir DIR          the synthesized output (default cdktf.out)',
    '  --format text|json    text: the decisions and the engine\'s output (default); json: the engine\'s',
    '                        output on standard error, then {job, exitCode, stacks, decisions} on',
    '                        standard output',
    '',
    'Exit codes: 0 done (nothing to do included); 1 review: risk flags not acknowledged, drift: drift',
    'found; 2 usage error; 3 runtime error (a missing artifact, a missing input variable, a note that',
    'cannot be posted); otherwise the exit code of the engine run that failed (4 refused, ...).',
    '',
    'On a laptop: download the job\'s artifacts (the synth job\'s and, for apply and review, the plan',
    'jobs\'), unpack them in a checkout of the commit, set the job\'s variables, and run the job\'s command.',
  ].join('\n'),
  usageFor(args) {
    return args[0] === pipelineSynthCommand.name ? pipelineSynthCommand.usage : this.usage;
  },
  async run(args, context) {
    const [job, ...rest] = args;
    if (job === pipelineSynthCommand.name) return pipelineSynthCommand.run(rest, context);
    if (!(JOBS as readonly string[]).includes(job ?? '')) throw new UsageError(`expects a job: ${[pipelineSynthCommand.name, ...JOBS].join(', ')}${job === undefined ? '' : `, not ${JSON.stringify(job)}`}`);
    const { values } = parseCommandArguments(
      rest,
      {
        stack: { type: 'string' },
        group: { type: 'string' },
        job: { type: 'string' },
        retired: { type: 'boolean' },
        'merge-request': { type: 'boolean' },
        'default-branch': { type: 'boolean' },
        outdir: { type: 'string' },
        format: { type: 'string' },
      },
      { min: 0, max: 0, names: 'no positional argument' },
    );
    const format = formatOption(values.format, ['text', 'json'] as const, 'text');
    const out = format === 'json' ? (l: string) => context.stderr(l) : (l: string) => context.stdout(l);
    const outdirArgument = values.outdir as string | undefined;
    const outdir = path.resolve(context.cwd, outdirArgument ?? 'cdktf.out');
    // Checked before the login: a usage error costs no store call and leaves no token behind.
    const options = checkedJobOptions(job as (typeof JOBS)[number], values);
    const log = new PipelineJobLog(job, out);
    // The job's store login (when its hidden login job names a role): every step below runs with its token.
    const session = await pipelineLogin(context.env, log);
    try {
      return await runLoggedIn(job as (typeof JOBS)[number], options, { ...context, env: session.env }, log, out, format, outdirArgument, outdir);
    } finally {
      await session.end();
    }
  },
};

/** A job's steps, with the store session's environment in `context`. */
async function runLoggedIn(
  job: (typeof JOBS)[number],
  options: JobOptions,
  context: CommandContext,
  log: PipelineJobLog,
  out: (line: string) => void,
  format: 'text' | 'json',
  outdirArgument: string | undefined,
  outdir: string,
): Promise<number> {
  const subContext: CommandContext = { ...context, stdout: out };
  const engine: PipelineEngineRunner = (engineArgs, env) => {
    const [, stack, ...more] = engineArgs;
    const argv = [stack, ...(outdirArgument !== undefined ? ['--outdir', outdir] : []), ...more];
    return runCommand(engineCommand, argv, { ...subContext, env: { ...context.env, ...env } });
  };
  // A command run in this process, its standard output collected (access-diff, usage).
  const collected =
    (command: Command, extra: readonly string[] = []) =>
    async (commandArgs: readonly string[]) => {
      const lines: string[] = [];
      const exitCode = await runCommand(command, [...commandArgs, ...extra], { ...context, isTerminal: false, stdout: (l) => lines.push(l) });
      return { exitCode, stdout: lines.length > 0 ? `${lines.join('\n')}\n` : '' };
    };
  const review: PipelineReviewRunner = collected(accessDiffCommand, outdirArgument !== undefined ? ['--outdir', outdir] : []);
  const usage: PipelineUsageRunner = collected(usageCommand);
  const narrow: PipelineNarrowRunner = collected(narrowCommand);
  const ctx: PipelineJobContext = { dir: context.cwd, outdir, description: readPipelineDescription(outdir), env: context.env, log, engine, tokens: storeStackTokens(context.env) };
  const result = await runJob(job, options, ctx, review, usage, narrow);
  const exitCode = pipelineExitCode(result);
  if (format === 'json') context.stdout(terminalJson({ job, exitCode, stacks: result.stacks, decisions: log.decisions }));
  return exitCode;
}

/** The exit code of a job's outcome: a failed run's own code, else 1 for a result that needs attention, else 0. */
export function pipelineExitCode(result: PipelineJobResult): number {
  if (result.exitCode !== ExitCode.ok) return result.exitCode;
  if (result.attention === 'drift') return ExitCode.drift;
  if (result.attention === 'risk-flags') return ExitCode.accessChanged;
  return ExitCode.ok;
}

/** The job's target from its options: exactly one of --stack, --group with --job, --retired. */
function jobTarget(values: Readonly<Record<string, unknown>>, retiredAllowed: boolean): PipelineJobTarget {
  const given = [values.stack !== undefined, values.group !== undefined || values.job !== undefined, values.retired === true].filter(Boolean).length;
  if (given !== 1) throw new UsageError(`give one of --stack STACK, --group GROUP --job N${retiredAllowed ? ', --retired' : ''}`);
  if (values.stack !== undefined) return { kind: 'stack', stack: String(values.stack) };
  if (values.retired === true) {
    if (!retiredAllowed) throw new UsageError('--retired goes with plan and apply');
    return { kind: 'retired' };
  }
  if (values.group === undefined || values.job === undefined || !/^[1-9][0-9]*$/.test(String(values.job))) throw new UsageError('--group GROUP goes with --job N (a whole number from 1)');
  return { kind: 'shard', group: String(values.group), job: Number(values.job) };
}

/** A job's options, checked: its target (plan, apply), the review's mode, the drift job's stack. */
interface JobOptions {
  readonly target?: PipelineJobTarget;
  readonly mode?: 'merge-request' | 'default-branch';
  readonly stack?: string;
  /** `plan --merge-request`. */
  readonly mergeRequest?: boolean;
}

/** Checks a job's options (a {@link UsageError} names what is wrong), before anything runs. */
function checkedJobOptions(job: (typeof JOBS)[number], values: Readonly<Record<string, unknown>>): JobOptions {
  const only = (allowed: readonly string[]) => {
    const extra = ['stack', 'group', 'job', 'retired', 'merge-request', 'default-branch'].filter((o) => values[o] !== undefined && !allowed.includes(o));
    if (extra.length > 0) throw new UsageError(`pipeline ${job} does not take ${extra.map((o) => `--${o}`).join(', ')}`);
  };
  switch (job) {
    case 'plan':
      only(['stack', 'group', 'job', 'retired', 'merge-request']);
      return { target: jobTarget(values, true), mergeRequest: values['merge-request'] === true };
    case 'apply':
      only(['stack', 'group', 'job', 'retired']);
      return { target: jobTarget(values, true) };
    case 'review':
      only(['merge-request', 'default-branch']);
      if ((values['merge-request'] === true) === (values['default-branch'] === true)) throw new UsageError('give one of --merge-request, --default-branch');
      return { mode: values['merge-request'] === true ? 'merge-request' : 'default-branch' };
    case 'drift':
      only(['stack']);
      if (values.stack === undefined) throw new UsageError('drift expects --stack STACK');
      return { stack: String(values.stack) };
    case 'removals':
    case 'confirm':
    case 'usage':
      only([]);
      return {};
  }
}

/** Runs one job, its options checked ({@link checkedJobOptions}). */
async function runJob(
  job: (typeof JOBS)[number],
  options: JobOptions,
  ctx: PipelineJobContext,
  review: PipelineReviewRunner,
  usage: PipelineUsageRunner,
  narrow: PipelineNarrowRunner,
): Promise<PipelineJobResult> {
  switch (job) {
    case 'plan': {
      const target = options.target!;
      const selection = readPipelineSelection(ctx.dir, { selected: target.kind !== 'retired', retired: target.kind === 'retired' });
      return runPlanJob(jobStacks(target, ctx.description, selection, 'plan'), options.mergeRequest === true, ctx);
    }
    case 'apply': {
      const target = options.target!;
      const selection = readPipelineSelection(ctx.dir, { selected: target.kind !== 'retired', retired: target.kind === 'retired' });
      const stacks = jobStacks(target, ctx.description, selection, 'apply');
      return target.kind === 'retired' ? runRetiredApplyJob(stacks, ctx) : runApplyJob(stacks, ctx);
    }
    case 'removals':
      return runRemovalsJob(readPipelineSelection(ctx.dir, { selected: true, retired: true }), ctx);
    case 'review':
      return runReviewJob(options.mode!, ctx, review);
    case 'confirm':
      return runConfirmationJob(readPipelineSelection(ctx.dir, { selected: true, retired: true }), ctx);
    case 'usage':
      return runUsageJob(ctx, usage, narrow);
    case 'drift':
      return runDriftJob(options.stack!, ctx, review);
  }
}
