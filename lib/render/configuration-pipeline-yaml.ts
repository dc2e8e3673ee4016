import { Document, isScalar, isSeq, visit } from 'yaml';
import { compareStrings } from '../private/compare-strings';
import { commentText, yamlScalar } from './text-encoders';

/** What {@link renderConfigurationPipelineYaml} needs to know about the platform. */
export interface ConfigurationPipelineYamlOptions {
  /**
   * Store namespace the jobs log in to and apply in (`settings.namespace`).
   * @default none: the root namespace
   */
  readonly namespace?: string;
  /** Synthesized stack names, one plan/apply/drift job each. */
  readonly stacks: readonly string[];
  /**
   * The stack applied before every other one (the one holding the pipeline roles, whose policies the
   * other applies need): the other stacks' apply jobs need its apply job.
   * @default none: the stacks apply independently
   */
  readonly firstStack?: string;
  /**
   * Stacks each stack depends on (cdktf's `addDependency`: an application shard on its mount stack):
   * a stack's apply job needs theirs, so they apply first.
   * @default none
   */
  readonly dependencies?: Readonly<Record<string, readonly string[]>>;
  /** Mount path of the JWT auth method (`jwt`). */
  readonly authPath: string;
  /** The `aud` of the job's ID token (the CI URL). */
  readonly audience: string;
  /** Role of the default branch's jobs (apply, drift): bound to protected branches. */
  readonly applyRoleName: string;
  /** Read-only role of the merge-request jobs (plan, on any branch of the project). */
  readonly planRoleName: string;
  /** Label of a merge request that acknowledges its access-diff risk flags. */
  readonly acknowledgeLabel: string;
  /** CI/CD variable holding a project access token (scope `api`) to post the access-diff note. */
  readonly noteTokenVariable: string;
  /** Shell command that installs the dependencies (a job variable, so it can be replaced). */
  readonly installCommand: string;
  /** Job image; omitted when undefined (the runner's default). */
  readonly image?: string;
  /**
   * Where the repository commits its copy of this file (GitLab reads includes from the repository,
   * and `cdktf.out` is not committed); the synth job fails when the copy is not what synthesis wrote.
   */
  readonly committedCopy: string;
  /**
   * The input variables each stack declares, by stack: the stack's plan, apply and drift jobs give
   * each to the engine from the CI/CD variable `TF_VAR_<name>` ({@link inputVariableCiName}).
   * @default none
   */
  readonly inputs?: Readonly<Record<string, readonly PipelineInputVariable[]>>;
  /**
   * Groups of stacks (the hash shards of an application stack) whose plans and applies a fixed number
   * of jobs share, however many stacks a group holds: the pipeline has as many jobs for 100 shards as
   * for 4, and a merge request that changes one shard runs one job that plans it (the others end at
   * once), not one per shard.
   * @default none: one plan and one apply job per stack
   */
  readonly shardGroups?: readonly ShardJobGroup[];
}

/**
 * Stacks whose plans and applies {@link ShardJobGroup.jobs} jobs share (see
 * {@link ConfigurationPipelineYamlOptions.shardGroups}). The n-th of the group's stacks that the synth
 * job selects (in the selection's dependency order) is planned and applied by job
 * `((n - 1) mod jobs) + 1`, one stack after the other; the plan job and the apply job of a number
 * compute the same share.
 */
export interface ShardJobGroup {
  /** The group's part of its job names: `app-roles-shards` gives `secretstore-iac-plan-app-roles-shards-1`. */
  readonly name: string;
  /** Its stacks, each one of the pipeline's stacks and in no other group; none depends on another of them or declares an input variable. */
  readonly stacks: readonly string[];
  /** How many plan jobs (and apply jobs) share the selected stacks: at most one per stack of the group. */
  readonly jobs: number;
}

/** An input variable of a stack, as the pipeline wires it (see {@link ConfigurationPipelineYamlOptions.inputs}). */
export interface PipelineInputVariable {
  /** The variable's name in the stack (`oidc_client_secret`). */
  readonly name: string;
  /** Whether it has no default (the engine plans nothing without a value). */
  readonly required: boolean;
}

/**
 * The CI/CD variable that holds a stack input variable's value: `TF_VAR_<name>`, the engine's own
 * name for it, so the job passes the value on without handling it (it is never on a command line,
 * never echoed; only its presence is tested).
 */
export function inputVariableCiName(name: string): string {
  return `TF_VAR_${name}`;
}

/**
 * The placeholder a merge-request plan gives a required input variable whose CI/CD variable it does
 * not get (protected variables reach only protected branches). Every input variable the pipeline
 * wires is ephemeral (the configuration pipeline refuses others): the engine records no value of it
 * in the plan, and a write-only attribute it feeds is not compared, so the plan is the one the real
 * value gives; the default branch's plan and apply always use the real value.
 */
export const INPUT_PLACEHOLDER = 'secretstore-iac-merge-request-placeholder';

/** Job variable that, set to `true`, acknowledges risk flags without the label. */
export const ACCEPT_RISK_VARIABLE = 'SECRETSTORE_IAC_ACCEPT_RISK';
/** Directory of the saved plans, relative to the project directory (outside `cdktf.out`, so a synthesis never touches them). */
export const PLAN_DIR = 'secretstore-iac-plans';
/** The synth job's artifact: the stacks to plan and apply, one per line (`secretstore-iac changed-stacks`). */
export const CHANGED_STACKS_FILE = 'changed-stacks.txt';
/** The synth job's artifact: the same selection with the stacks' digests, for the merge request's note. */
export const CHANGED_STACKS_NOTE = 'changed-stacks.md';
/**
 * The synth job's artifact: the retired stacks, one per line: stacks the base had and this commit no
 * longer has (fewer shards), for which `secretstore-iac moves` wrote only `moves.tf.json` (their
 * state forgets the objects that moved; docs/sharding.md).
 */
export const RETIRED_STACKS_FILE = 'retired-stacks.txt';
/**
 * The manual job of the default branch that applies the plans that destroy objects the configuration
 * declares nowhere any more (a removed application, group of people, reader policy or stack): a
 * person starts it, nothing else applies a destroy (docs/pipelines.md §8).
 */
export const DESTROY_REMOVED_JOB = 'secretstore-iac-destroy-removed-objects';
/**
 * Beside a saved plan `<stack>.tfplan`, `<stack>.removals` lists the objects it destroys because the
 * configuration removed them (`tf --removals-file`); absent when it destroys nothing.
 */
export const REMOVALS_SUFFIX = '.removals';
/**
 * The synth job's artifact: the base (the merge request's target branch, the commit before the push)
 * synthesized once (`secretstore-iac synth-ref`), which `moves`, `changed-stacks` and the access diff
 * read; absent when there is no base or it could not be synthesized.
 */
export const BASE_OUTPUT = 'cdktf.base.out';
/**
 * The synthesis cache of the synth job (`SECRETSTORE_IAC_SYNTH_CACHE`), kept in the pipeline's
 * `cache:`: a base synthesized by an earlier pipeline (same tree, same library) is not synthesized again.
 */
export const SYNTH_CACHE_DIR = '.secretstore-iac/synth-cache';
/**
 * The copy of the default branch's synthesis that merge-request pipelines read: the synth job's cache
 * entry of its own, keyed by commit ({@link SHARED_SYNTH_COMMIT_VARIABLE}) and `unprotect: true`. The
 * protected default branch's synth job writes its commit's synthesis there; a merge request's reads
 * the copy of its diff base commit, verified, and never writes it; no protected pipeline reads it
 * (lib/pipeline/pipeline-base.ts `sharedSynthesisUse`; docs/pipelines.md §7).
 */
export const SHARED_SYNTH_DIR = '.secretstore-iac/synth-shared';
/** The synth job's variable naming the commit of its {@link SHARED_SYNTH_DIR} cache entry (set by its rules). */
export const SHARED_SYNTH_COMMIT_VARIABLE = 'SECRETSTORE_IAC_SHARED_SYNTH_COMMIT';
/** The key of the {@link SHARED_SYNTH_DIR} cache entry, before its commit (`unprotect: true`: protected and unprotected pipelines share it). */
export const SHARED_SYNTH_CACHE_KEY_PREFIX = 'secretstore-iac-synth-shared-';
/**
 * The default-branch review job's artifact: `access-diff --plans ... --format json` of the pipeline's
 * saved plans, with each plan file's SHA-256. Every apply job applies a saved plan only with
 * `tf --reviewed-plans` of this file: a plan the review did not read is refused (exit 4).
 */
export const REVIEWED_PLANS_FILE = 'reviewed-plans.json';
/**
 * Each review job's canonical access change of its saved plans (`access-diff --access-change`): the
 * merge request's note embeds it as its approval record; the default branch compares it with the
 * approved records (docs/pipelines.md §13).
 */
export const ACCESS_CHANGE_FILE = 'access-change.json';
/**
 * The default-branch review job's artifact: its access change compared with the approved records of
 * the merge requests merged since the commit before the push; every job that applies reads it first.
 */
export const APPROVAL_COMPARISON_FILE = 'approval-comparison.json';
/**
 * The manual job that applies the default branch's plans when they differ from what was approved,
 * once a person starts it (the confirmation of record, `GITLAB_USER_LOGIN`).
 */
export const CONFIRM_APPLY_JOB = 'secretstore-iac-confirm-apply';
/**
 * The documented opt-out of the fail-closed default (docs/pipelines.md §13): without the note token no
 * approval record can be read on the default branch (the verdict is `unbound`), and the apply jobs
 * apply nothing that changes the store until a person starts {@link CONFIRM_APPLY_JOB}; set to `true`
 * on the default branch, they apply unbound plans as before the binding (and say so in their logs).
 */
export const APPLY_UNBOUND_VARIABLE = 'SECRETSTORE_IAC_APPLY_UNBOUND';

/** The CI/CD variable holding the token that posts the merge requests' notes, unless the pipeline names another (`noteTokenVariable`). */
export const DEFAULT_NOTE_TOKEN_VARIABLE = 'SECRETSTORE_IAC_NOTE_TOKEN';
/** {@link CONFIRM_APPLY_JOB}'s artifact: who confirmed which difference (the confirmation of record). */
export const CONFIRMATION_FILE = 'approval-confirmation.json';
/** The job that writes the usage file from the store's audit log (schedule and default branch, when {@link AUDIT_LOG_VARIABLE} is set). */
export const USAGE_JOB = 'secretstore-iac-usage';

/** Where the store's operators make the audit log available to the usage job: paths on the runner or `https://` URLs, separated by spaces (rotated files each). */
export const AUDIT_LOG_VARIABLE = 'SECRETSTORE_IAC_AUDIT_LOG';

/** The usage window's start (`usage --since`: an ISO time or `90d`); unset: the whole log. */
export const USAGE_SINCE_VARIABLE = 'SECRETSTORE_IAC_USAGE_SINCE';

/** The usage file the job keeps as an artifact (`usage --format json`), which the merge request's review reads. */
export const USAGE_FILE = 'usage.json';

/** The identity × grant picture beside it (`usage --matrix`). */
export const USAGE_MATRIX_FILE = 'usage.svg';

/** The narrowing of the usage file as a patch of `stacks/platform.config.ts` (`narrow --patch`), kept by the usage job for a person to apply in a merge request. */
export const NARROWING_PATCH_FILE = 'narrowing.patch';

/** The narrowing's merge-request description, with its evidence (`narrow --markdown`). */
export const NARROWING_FILE = 'narrowing.md';

/** Grants the usage job's narrowing keeps regardless (`narrow --keep`): fields, construct paths or identities, separated by spaces. */
export const NARROWING_KEEP_VARIABLE = 'SECRETSTORE_IAC_NARROW_KEEP';

/** `true`: the usage job's narrowing also retires the applications and people groups whose role never logged in in the window (`narrow --retire-idle`); unset or `false`: they are listed only. */
export const NARROWING_RETIRE_IDLE_VARIABLE = 'SECRETSTORE_IAC_NARROW_RETIRE_IDLE';

/** The merge request's review job: the note computed from the saved plans, the risk-flag gate. */
export const REVIEW_JOB = 'secretstore-iac-access-diff';
/** The default branch's review job: it records the saved plans the apply jobs may apply ({@link REVIEWED_PLANS_FILE}). */
export const DEFAULT_BRANCH_REVIEW_JOB = `${REVIEW_JOB}-default-branch`;
/** The synth job's Markdown of the moves, renames and removals since the base (`moves --markdown-file`), appended to the note. */
export const MOVES_NOTE = 'secretstore-iac-moves.md';
/**
 * The mark the synth job's compile (`npm run build`) leaves in `dist/`: the commit it compiled.
 * `secretstore-iac pipeline synth` synthesizes that `dist/` without compiling again only when the
 * mark names its own commit.
 */
export const BUILD_MARK = 'dist/.secretstore-iac-build';
/**
 * The pipeline's variable naming the `secretstore-iac` executable every job runs (defined once, in
 * the file's `variables:`; a CI/CD variable of the same name overrides it). Run directly, not by
 * `npx`, which costs 0.2-1.0 s a job for finding what this path names (docs/pipelines.md §12).
 */
export const BIN_VARIABLE = 'SECRETSTORE_IAC_BIN';
/**
 * {@link BIN_VARIABLE}'s default: the bin npm links when it installs the package (from a registry,
 * a tarball or git). The library's own repository runs its `dist/bin/secretstore-iac.js` instead
 * (package.json `bin`), which the synth job compiles.
 */
export const DEFAULT_BIN = 'node_modules/.bin/secretstore-iac';


const q = yamlScalar;
/** Comment text: one line whatever the value holds. */
const c = commentText;

/**
 * The names the pipeline uses as job-name parts, file names, shell variable names and case patterns at
 * once: no encoder fits all of them, so they must be plain (the constructs validate them first).
 */
function checkNames(options: ConfigurationPipelineYamlOptions): void {
  const problems: string[] = [];
  for (const stack of options.stacks) {
    if (!/^[A-Za-z0-9_.-]+$/.test(stack)) problems.push(`stack ${q(stack)}: must be letters, digits, "_", "." or "-"`);
  }
  for (const [stack, dependencies] of Object.entries(options.dependencies ?? {})) {
    for (const d of dependencies) {
      if (d === stack || !options.stacks.includes(d)) problems.push(`stack ${q(stack)}: depends on ${q(d)}, which is ${d === stack ? 'itself' : 'not one of the stacks'}`);
    }
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.noteTokenVariable)) {
    problems.push(`noteTokenVariable ${q(options.noteTokenVariable)}: must be a shell variable name`);
  }
  // A shell case pattern between commas, and a bare word in messages.
  if (!/^[A-Za-z0-9_.:-]+$/.test(options.acknowledgeLabel)) {
    problems.push(`acknowledgeLabel ${q(options.acknowledgeLabel)}: must be letters, digits, "_", ".", ":" or "-"`);
  }
  for (const [stack, inputs] of Object.entries(options.inputs ?? {})) {
    // A shell variable name and a GitLab CI/CD variable key at once.
    for (const v of inputs) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.name)) problems.push(`stack ${q(stack)}: input variable ${q(v.name)}: must be letters, digits and "_" (the CI/CD variable TF_VAR_<name>)`);
  }
  problems.push(...shardGroupProblems(options));
  if (problems.length > 0) throw new Error(`configuration pipeline: ${problems.join('; ')}`);
}

/** What a shard job group breaks: its jobs share stacks one after the other, without their own steps. */
function shardGroupProblems(options: ConfigurationPipelineYamlOptions): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const jobNames = new Set(options.stacks);
  for (const group of options.shardGroups ?? []) {
    const at = `shard job group ${q(group.name)}`;
    if (!/^[A-Za-z0-9_.-]+$/.test(group.name)) problems.push(`${at}: its name must be letters, digits, "_", "." or "-"`);
    if (!Number.isInteger(group.jobs) || group.jobs < 1) problems.push(`${at}: jobs ${group.jobs}: must be a whole number of at least 1`);
    for (let i = 1; i <= Math.max(1, Math.min(group.jobs, group.stacks.length)); i++) {
      if (jobNames.has(`${group.name}-${i}`)) problems.push(`${at}: its job ${i} would have the jobs of stack ${q(`${group.name}-${i}`)}`);
      jobNames.add(`${group.name}-${i}`);
    }
    if (group.stacks.length === 0) problems.push(`${at}: has no stack`);
    for (const stack of group.stacks) {
      if (!options.stacks.includes(stack)) problems.push(`${at}: ${q(stack)} is not one of the stacks`);
      if (seen.has(stack)) problems.push(`${at}: ${q(stack)} is in group ${q(seen.get(stack)!)} too`);
      seen.set(stack, group.name);
      if (stack === options.firstStack) problems.push(`${at}: ${q(stack)} is the first stack, which applies before every other one`);
      const inside = (options.dependencies?.[stack] ?? []).filter((d) => group.stacks.includes(d));
      if (inside.length > 0) problems.push(`${at}: ${q(stack)} depends on ${inside.map(q).join(', ')} of the same group, whose jobs run side by side`);
      if ((options.inputs?.[stack] ?? []).length > 0) problems.push(`${at}: ${q(stack)} declares input variables, which only a stack's own jobs pass on`);
    }
  }
  return problems;
}

/**
 * The stacks whose apply jobs a stack's apply job waits for: the first stack, then the stacks it
 * depends on, sorted. Not the first stack when that one depends on this stack, directly or not: a
 * declared dependency wins over the rule, and the needs form no cycle.
 */
function applyNeedStacks(options: ConfigurationPipelineYamlOptions, stack: string): string[] {
  const dependsOn = (from: string, on: string, seen = new Set<string>()): boolean =>
    (options.dependencies?.[from] ?? []).some((d) => d === on || (!seen.has(d) && (seen.add(d), dependsOn(d, on, seen))));
  const firstApplies = options.firstStack !== undefined && options.firstStack !== stack && options.stacks.includes(options.firstStack) && !dependsOn(options.firstStack, stack);
  const first = firstApplies ? [options.firstStack!] : [];
  const own = [...(options.dependencies?.[stack] ?? [])].filter((d) => options.stacks.includes(d) && !first.includes(d)).sort();
  return [...first, ...own];
}

/** The apply jobs of `stacks`: a stack's own, or every apply job of its shard job group. */
function applyJobs(options: ConfigurationPipelineYamlOptions, stacks: readonly string[]): string[] {
  const jobs = stacks.flatMap((stack) => {
    const group = (options.shardGroups ?? []).find((g) => g.stacks.includes(stack));
    return group === undefined ? [`secretstore-iac-apply-${stack}`] : shardJobNumbers(group).map((i) => `secretstore-iac-apply-${group.name}-${i}`);
  });
  return [...new Set(jobs)];
}

/** The apply jobs a stack's apply job waits for ({@link applyNeedStacks}). */
function applyNeeds(options: ConfigurationPipelineYamlOptions, stack: string): string[] {
  return applyJobs(options, applyNeedStacks(options, stack));
}

/** The apply jobs the apply jobs of a shard job group wait for: those its stacks' would, but theirs. */
function shardGroupApplyNeeds(options: ConfigurationPipelineYamlOptions, group: ShardJobGroup): string[] {
  const stacks = [...new Set(group.stacks.flatMap((s) => applyNeedStacks(options, s)))].filter((s) => !group.stacks.includes(s));
  const first = stacks.filter((s) => s === options.firstStack);
  return applyJobs(options, [...first, ...stacks.filter((s) => s !== options.firstStack).sort()]);
}

/** The numbers of a shard job group's jobs: 1 to `jobs`, no more than it has stacks. */
function shardJobNumbers(group: ShardJobGroup): number[] {
  return Array.from({ length: Math.min(group.jobs, group.stacks.length) }, (_, i) => i + 1);
}


/** The header's lines naming the CI/CD variables the stacks' input variables come from, one per variable. */
function inputsHeader(inputs: ConfigurationPipelineYamlOptions['inputs']): string[] {
  const byVariable = new Map<string, string[]>();
  for (const [stack, vars] of Object.entries(inputs ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const v of vars) byVariable.set(v.name, [...(byVariable.get(v.name) ?? []), `${stack}${v.required ? '' : ' (has a default)'}`]);
  }
  if (byVariable.size === 0) return [];
  return [
    '# Input variables of the stacks: set each as a CI/CD variable (masked, protected). A merge-request plan',
    '# without it uses a placeholder (the variables are ephemeral); a default-branch job without it fails.',
    ...[...byVariable.keys()].sort().map((name) => `#   ${inputVariableCiName(name)}: stack ${c(byVariable.get(name)!.join(', '))}`),
  ];
}

/** The note's sentence on how removals are applied (`moves --approval`, in the synth job). */
export const REMOVALS_APPROVAL = `On the default branch the apply jobs leave a plan that destroys them to the manual job \`${DESTROY_REMOVED_JOB}\`: a person starts it, after reading this list.`;

/**
 * The install step of every job: the dependencies come from the pipeline's cache (`node_modules`,
 * keyed on package-lock.json, filled by the synth job); `SECRETSTORE_IAC_INSTALL` runs only when the
 * cache had none (its first pipeline, a new lock file, a runner without that cache).
 */
const INSTALL = [
  '# Dependencies from the pipeline\'s cache (node_modules, keyed on package-lock.json); installed only without it.',
  'if [ -d node_modules ]; then echo "secretstore-iac: node_modules from the pipeline\'s cache"; else eval "$SECRETSTORE_IAC_INSTALL"; fi',
].join('\n');

/** The prefix of the dependency cache's key (node_modules, keyed on package-lock.json). */
export const DEPENDENCY_CACHE_PREFIX = 'secretstore-iac-deps';

/**
 * The `cache:` of a job: the dependencies (filled by the synth job, `pull-push`; only read elsewhere),
 * and the synth job's synthesis cache. The dependencies come first in every job: gitlab-ci-local
 * (4.69) names an entry keyed on files after its place in the job's list (`0_secretstore-iac-deps-<digest>`),
 * not after its key alone as GitLab does, so only the same place gives every job the synth job's
 * node_modules; and it stops at the first entry whose policy does not push (or pull), so a `pull`
 * entry may only come last (the synth job's are all `pull-push`).
 */
function jobCache(dependencies: 'pull' | 'pull-push', synthesis = false): object[] {
  if (synthesis && dependencies !== 'pull-push') throw new Error('internal error: the synth job pushes its dependencies cache');
  return [
    { key: { files: ['package-lock.json'], prefix: DEPENDENCY_CACHE_PREFIX }, paths: ['node_modules'], policy: dependencies },
    ...(synthesis
      ? [
          { key: 'secretstore-iac-synth', paths: [SYNTH_CACHE_DIR] },
          // The copy merge-request pipelines read, one entry per commit, shared with unprotected pipelines.
          { key: `${SHARED_SYNTH_CACHE_KEY_PREFIX}$${SHARED_SYNTH_COMMIT_VARIABLE}`, paths: [SHARED_SYNTH_DIR], unprotect: true },
        ]
      : []),
  ];
}

const MR = '$CI_PIPELINE_SOURCE == "merge_request_event"';
const DEFAULT_BRANCH = '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE != "schedule" && $CI_PIPELINE_SOURCE != "merge_request_event"';
const SCHEDULE = '$CI_PIPELINE_SOURCE == "schedule"';
/** The hidden job every other job but synth extends: image, dependencies, plugin cache, install. */
const JOB = '.secretstore-iac-job';
/**
 * The hidden job every job that talks to the store extends, once: the job's ID token and where to log
 * in; the role comes from {@link LOGIN_ROLE_VARIABLE}. The login itself is the job's command's
 * (lib/pipeline/pipeline-login.ts), not a shell script.
 */
export const LOGIN_JOB = '.secretstore-iac-login';
/** The job variable holding the job's ID token (GitLab `id_tokens`), with the audience of the platform's JWT method. */
export const ID_TOKEN_VARIABLE = 'SECRETSTORE_ID_TOKEN';
/** The job variable naming the JWT auth method's path the jobs log in at. */
export const LOGIN_MOUNT_VARIABLE = 'SECRETSTORE_IAC_LOGIN_MOUNT';
/** The job variable naming the audience the ID token carries (for the fix of a wrong `aud`). */
export const LOGIN_AUDIENCE_VARIABLE = 'SECRETSTORE_IAC_LOGIN_AUDIENCE';
/** The job variable naming the store namespace the jobs log in to and apply in; absent for the root namespace. */
export const LOGIN_NAMESPACE_VARIABLE = 'SECRETSTORE_IAC_LOGIN_NAMESPACE';
/** The hidden jobs that log in as the plan role (merge requests) and as the apply role (protected branches). */
const PLAN_LOGIN = '.secretstore-iac-plan-login';
const APPLY_LOGIN = '.secretstore-iac-apply-login';
/** The job variable naming the role {@link LOGIN_JOB} logs in as. */
export const LOGIN_ROLE_VARIABLE = 'SECRETSTORE_IAC_LOGIN_ROLE';

/** One `secretstore-iac pipeline` command, the whole script of a job: the bin {@link BIN_VARIABLE} names, run directly. */
const pipelineCommand = (...args: string[]) => `"$${BIN_VARIABLE}" pipeline ${args.join(' ')}`;

/**
 * The pipeline of the repository that holds the platform configuration
 * (`cdktf.out/ci/secretstore-iac.gitlab-ci.yml`, to include), as data: each job's script is one
 * `secretstore-iac pipeline` command (lib/pipeline/; docs/pipelines.md §11), the CI login is one hidden
 * job every job that talks to the store extends.
 * - merge request: synth (compile once, every validation), a saved plan per changed stack (read-only role),
 *   the review of those saved plans (`pipeline review --merge-request`: what the engine will apply)
 *   posted as the MR's note, failing on risk flags unless acknowledged;
 * - default branch: synth, plan, a review of the saved plans recording each one's SHA-256
 *   ({@link REVIEWED_PLANS_FILE}), then apply of the reviewed saved plan per stack (another plan is
 *   refused), one at a time (`resource_group`, and the state backend's lock); removals only by the
 *   manual job {@link DESTROY_REMOVED_JOB};
 * - schedule: `plan -detailed-exitcode` per stack, failing on drift.
 *
 * The store token of every job comes from a JWT login with the job's ID token; none is a CI variable.
 */
export function renderConfigurationPipelineYaml(options: ConfigurationPipelineYamlOptions): string {
  checkNames(options);
  const stacks = [...options.stacks].sort();
  const groups = [...(options.shardGroups ?? [])].sort((a, b) => compareStrings(a.name, b.name));
  const grouped = new Set(groups.flatMap((g) => g.stacks));
  const image = options.image ? { image: options.image } : {};
  const rules = (...conditions: string[]) => conditions.map((condition) => ({ if: condition }));
  const jobs: Record<string, object> = {};
  jobs[JOB] = {
    ...image,
    cache: jobCache('pull'),
    // No plugin cache variable: every engine run gets the CLI configuration the tool writes (its own
    // provider mirror or the registry, no plugin cache, docs/boundaries.md), and a runner-wide
    // TF_PLUGIN_CACHE_DIR is not passed to the engine (named in the job's log).
    before_script: [INSTALL],
  };
  // The login is each job's command's (a JWT login in the process, errors per spec §7): the token is
  // never a shell variable, and no shell login runs in these jobs (the platform's CI template keeps it).
  jobs[LOGIN_JOB] = {
    extends: JOB,
    id_tokens: { [ID_TOKEN_VARIABLE]: { aud: options.audience } },
    variables: {
      [LOGIN_MOUNT_VARIABLE]: options.authPath,
      [LOGIN_AUDIENCE_VARIABLE]: options.audience,
      ...(options.namespace !== undefined && options.namespace !== '' ? { [LOGIN_NAMESPACE_VARIABLE]: options.namespace } : {}),
    },
  };
  jobs[PLAN_LOGIN] = { extends: LOGIN_JOB, variables: { [LOGIN_ROLE_VARIABLE]: options.planRoleName } };
  jobs[APPLY_LOGIN] = { extends: LOGIN_JOB, variables: { [LOGIN_ROLE_VARIABLE]: options.applyRoleName } };
  // No build job: the synth job compiles (once per pipeline) and synthesizes, one job less between a
  // merge and its apply (docs/pipelines.md §12, "The jobs on the critical path").
  jobs['secretstore-iac-synth'] = {
    stage: 'synth',
    ...image,
    // The commit of the shared synthesis's cache entry: the diff base a merge request reads, the commit the default branch writes.
    rules: [
      { if: MR, variables: { [SHARED_SYNTH_COMMIT_VARIABLE]: '$CI_MERGE_REQUEST_DIFF_BASE_SHA' } },
      { if: DEFAULT_BRANCH, variables: { [SHARED_SYNTH_COMMIT_VARIABLE]: '$CI_COMMIT_SHA' } },
      { if: SCHEDULE, variables: { [SHARED_SYNTH_COMMIT_VARIABLE]: 'none' } },
    ],
    // The one job that installs the dependencies into the cache; every other job reads them from it.
    cache: jobCache('pull-push', true),
    variables: { GIT_DEPTH: '0', SECRETSTORE_IAC_SYNTH_CACHE: SYNTH_CACHE_DIR },
    script: [
      INSTALL,
      // Before the bin runs: the library's own repository's bin is in dist/.
      "# The pipeline's one compilation of the configuration (dist/, an artifact: every later job runs what it compiled).\nnpm run build",
      `# npm makes a package's bin executable only when it links it: keep this project's own bin (dist/) runnable as $${BIN_VARIABLE}.\nif [ -f dist/bin/secretstore-iac.js ]; then chmod +x dist/bin/secretstore-iac.js; fi`,
      `# The commit this dist/ was compiled from: the synthesis below runs it without compiling again.\nprintf '%s\\n' "$CI_COMMIT_SHA" > ${BUILD_MARK}`,
      [
        '# This commit synthesized once (every later job reads this cdktf.out), stored in the synthesis cache for the',
        '# pipelines whose base it is; the base from that cache (compiled in a worktree only when missing); the moves,',
        '# the stacks to plan and apply and the note (secretstore-iac pipeline synth --help; docs/pipelines.md §7).',
        pipelineCommand('synth'),
      ].join('\n'),
    ],
    artifacts: {
      paths: ['cdktf.out/', `${BASE_OUTPUT}/`, 'dist/', CHANGED_STACKS_FILE, CHANGED_STACKS_NOTE, RETIRED_STACKS_FILE],
      exclude: ['cdktf.out/**/.terraform/**/*'],
      expire_in: '1 week',
    },
  };
  // The plan jobs: the merge request's with the read-only role, the default branch's with the apply role.
  const PLAN_JOBS = [
    ['', MR, PLAN_LOGIN, ['--merge-request']],
    ['-default-branch', DEFAULT_BRANCH, APPLY_LOGIN, []],
  ] as const;
  /** Every plan job of a pipeline (`''` merge request, `-default-branch`): the stacks' own, the shard jobs', the retired stacks'. */
  const planJobs = (suffix: string) => [
    ...stacks.filter((s) => !grouped.has(s)).map((s) => `secretstore-iac-plan-${s}${suffix}`),
    ...groups.flatMap((g) => shardJobNumbers(g).map((i) => `secretstore-iac-plan-${g.name}-${i}${suffix}`)),
    `secretstore-iac-plan-retired${suffix}`,
  ];
  const planArtifact = (paths: string[]) => ({ artifacts: { paths, expire_in: '1 week' } });
  const planJob = (name: string, target: string[], artifactPaths: string[]) => {
    for (const [suffix, condition, loginJob, flags] of PLAN_JOBS) {
      jobs[`${name}${suffix}`] = {
        stage: 'plan',
        extends: loginJob,
        rules: rules(condition),
        needs: ['secretstore-iac-synth'],
        script: [pipelineCommand('plan', ...target, ...flags)],
        ...planArtifact(artifactPaths),
      };
    }
  };
  const applyJob = (name: string, target: string[], resourceGroup: string, needs: string[]) => {
    jobs[name] = {
      stage: 'apply',
      extends: APPLY_LOGIN,
      rules: rules(DEFAULT_BRANCH),
      // One apply of this job at a time across pipelines; the state lock serializes the rest.
      resource_group: resourceGroup,
      needs,
      script: [pipelineCommand('apply', ...target)],
    };
  };
  for (const stack of stacks) {
    // A stack of a shard job group has its own drift job only: its group's jobs plan and apply it.
    if (!grouped.has(stack)) {
      planJob(`secretstore-iac-plan-${stack}`, ['--stack', stack], [`${PLAN_DIR}/${stack}.*`]);
      applyJob(`secretstore-iac-apply-${stack}`, ['--stack', stack], `secretstore-iac-${stack}`, [
        'secretstore-iac-synth',
        `secretstore-iac-plan-${stack}-default-branch`,
        DEFAULT_BRANCH_REVIEW_JOB,
        ...applyNeeds(options, stack),
      ]);
    }
    jobs[`secretstore-iac-drift-${stack}`] = {
      stage: 'plan',
      extends: APPLY_LOGIN,
      rules: rules(SCHEDULE),
      needs: ['secretstore-iac-synth'],
      script: [pipelineCommand('drift', '--stack', stack)],
    };
  }
  // Shard job groups: a fixed number of plan and apply jobs share the group's selected stacks, so the
  // pipeline's jobs do not grow with the shards.
  for (const group of groups) {
    for (const job of shardJobNumbers(group)) {
      const target = ['--group', group.name, '--job', String(job)];
      planJob(`secretstore-iac-plan-${group.name}-${job}`, target, [`${PLAN_DIR}/`]);
      applyJob(`secretstore-iac-apply-${group.name}-${job}`, target, `secretstore-iac-${group.name}-${job}`, [
        'secretstore-iac-synth',
        `secretstore-iac-plan-${group.name}-${job}-default-branch`,
        DEFAULT_BRANCH_REVIEW_JOB,
        ...shardGroupApplyNeeds(options, group),
      ]);
    }
  }
  // Retired stacks (docs/sharding.md): known only once `moves` has compared with the base, so one job
  // of each kind handles all of them. Their apply waits for every other stack's (the stage after
  // apply; a needs list holds at most 50 jobs): the objects are imported where they moved first.
  planJob('secretstore-iac-plan-retired', ['--retired'], [`${PLAN_DIR}/`]);
  jobs['secretstore-iac-apply-retired'] = {
    stage: 'retire',
    extends: APPLY_LOGIN,
    rules: rules(DEFAULT_BRANCH),
    resource_group: 'secretstore-iac-retired',
    dependencies: ['secretstore-iac-synth', 'secretstore-iac-plan-retired-default-branch', DEFAULT_BRANCH_REVIEW_JOB],
    script: [pipelineCommand('apply', '--retired')],
  };
  // The one path that applies a destroy: a person starts it. It cannot exist only when needed (GitLab
  // creates the jobs before the plans), so it is always there; without removals it says so and ends.
  // Not started is not a failure of the pipeline.
  jobs[DESTROY_REMOVED_JOB] = {
    stage: 'remove',
    extends: APPLY_LOGIN,
    rules: [{ if: DEFAULT_BRANCH, when: 'manual', allow_failure: true }],
    resource_group: 'secretstore-iac-removals',
    dependencies: ['secretstore-iac-synth', ...planJobs('-default-branch'), DEFAULT_BRANCH_REVIEW_JOB],
    script: [pipelineCommand('removals')],
  };
  // When the default branch's plans differ from what was approved, the apply jobs apply nothing and a
  // person starts this one (docs/pipelines.md §13); otherwise it says so and ends. Not started is not a
  // failure of the pipeline.
  jobs[CONFIRM_APPLY_JOB] = {
    stage: 'remove',
    extends: APPLY_LOGIN,
    rules: [{ if: DEFAULT_BRANCH, when: 'manual', allow_failure: true }],
    resource_group: 'secretstore-iac-confirm-apply',
    dependencies: ['secretstore-iac-synth', ...planJobs('-default-branch'), DEFAULT_BRANCH_REVIEW_JOB],
    script: [pipelineCommand('confirm')],
    artifacts: { when: 'always', paths: [CONFIRMATION_FILE], expire_in: '1 year' },
  };
  // The review jobs read the saved plans of their pipeline's plan jobs (artifacts; the stage after
  // them, not `needs`, which holds at most 50 jobs). The default branch's lists the commits since the
  // one before the push (the whole history: GIT_DEPTH 0) to find the merge requests merged.
  jobs[DEFAULT_BRANCH_REVIEW_JOB] = {
    stage: 'review',
    extends: JOB,
    rules: rules(DEFAULT_BRANCH),
    variables: { GIT_DEPTH: '0' },
    dependencies: ['secretstore-iac-synth', ...planJobs('-default-branch')],
    script: [pipelineCommand('review', '--default-branch')],
    artifacts: { paths: [REVIEWED_PLANS_FILE, ACCESS_CHANGE_FILE, APPROVAL_COMPARISON_FILE], expire_in: '1 week' },
  };
  // The usage file (docs/usage.md §9): on schedules and on the default branch (so that the branch's
  // latest successful pipeline, where GitLab's API finds a job's artifact by branch, has one), only
  // when the operators make the store's audit log available to it. It reads no store.
  jobs[USAGE_JOB] = {
    stage: 'plan',
    extends: JOB,
    rules: rules(`${SCHEDULE} && $${AUDIT_LOG_VARIABLE}`, `${DEFAULT_BRANCH} && $${AUDIT_LOG_VARIABLE}`),
    needs: ['secretstore-iac-synth'],
    script: [pipelineCommand('usage')],
    // Kept when the narrowing fails too (a --keep that names nothing): the usage file is already right.
    artifacts: { when: 'always', paths: [USAGE_FILE, USAGE_MATRIX_FILE, NARROWING_PATCH_FILE, NARROWING_FILE], expire_in: '90 days' },
  };
  jobs[REVIEW_JOB] = {
    stage: 'review',
    extends: JOB,
    rules: rules(MR),
    dependencies: ['secretstore-iac-synth', ...planJobs('')],
    script: [pipelineCommand('review', '--merge-request')],
    artifacts: { when: 'always', paths: ['access-diff.md', 'access-risk-flags.txt', ACCESS_CHANGE_FILE], expire_in: '2 weeks' },
  };
  const doc = new Document({
    // 'build' has no job of this file any more (the synth job compiles); kept for the including repository's own jobs.
    stages: ['build', 'synth', 'plan', 'review', 'apply', 'retire', 'remove'],
    variables: {
      [BIN_VARIABLE]: DEFAULT_BIN,
      SECRETSTORE_IAC_INSTALL: options.installCommand,
      SECRETSTORE_IAC_PIPELINE_COPY: options.committedCopy,
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
    },
    ...jobs,
  });
  doc.commentBefore = header(options).join('\n');
  // A blank line between the top-level entries, for the reader.
  for (const item of (doc.contents as unknown as { items: { key: { spaceBefore?: boolean } }[] }).items.slice(1)) item.key.spaceBefore = true;
  // Lists of names (stages, needs, paths) on one line; scripts one command per item.
  visit(doc, {
    Pair(_, pair) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '';
      if (isSeq(pair.value) && !/script$/.test(key) && pair.value.items.every((i) => isScalar(i))) pair.value.flow = true;
    },
  });
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

/** The file's header comment (without the leading `#`s). */
function header(options: ConfigurationPipelineYamlOptions): string[] {
  return [
    ' secretstore-iac.gitlab-ci.yml: generated by secretstore-iac from the platform declarations. Do not edit.',
    '',
    ' The pipeline of the repository that holds the platform configuration. Commit a copy as',
    ` ${c(options.committedCopy)} (the synth job fails when the copy is stale) and include it from that`,
    " repository's .gitlab-ci.yml (it defines the stages):",
    '',
    '   include:',
    `     - local: ${c(options.committedCopy)}`,
    '',
    ' Each job runs one command: `secretstore-iac pipeline synth|plan|apply|review|removals|drift|usage ...`',
    ` (docs/pipelines.md §11), run as the bin ${BIN_VARIABLE} names (in variables: below; a CI/CD`,
    ' variable of that name overrides it); its log says, one line per decision, what it decided and why, and the',
    ' same command reproduces it on a laptop from the job\'s artifacts.',
    ' Only the changed stacks are planned and applied (those whose synthesized content differs from the',
    " base's, and their dependents: the synth job's changed-stacks.txt); the others' jobs end at once.",
    ' Merge request: a saved plan per changed stack, and the review of those plans as the MR\'s note',
    ` (needs ${c(options.noteTokenVariable)}); risk flags fail it unless the MR has the label`,
    ` "${c(options.acknowledgeLabel)}" or ${ACCEPT_RISK_VARIABLE} is "true".`,
    ` Default branch: plan, review (${REVIEWED_PLANS_FILE}), apply of the reviewed plans only, a stack`,
    ' after the stacks it depends on, retired stacks last. A plan that destroys an object the',
    ` configuration declares nowhere any more is applied only by the manual job ${DESTROY_REMOVED_JOB}.`,
    ' Schedule: plan -detailed-exitcode per stack; a drift fails the job.',
    ` With ${AUDIT_LOG_VARIABLE} set (the store's audit log: paths or https:// URLs), ${USAGE_JOB} writes the usage`,
    ` file (${USAGE_FILE}) on schedules and the default branch; each merge request's note reads it. Its narrowing`,
    ` (${NARROWING_PATCH_FILE}, git apply it on a branch; ${NARROWING_FILE}) is kept beside it; ${NARROWING_KEEP_VARIABLE} keeps grants, ${NARROWING_RETIRE_IDLE_VARIABLE}=true retires roles that never logged in.`,
    ` Store tokens: JWT login (${LOGIN_JOB}) as "${c(options.planRoleName)}" (merge requests, read only) or`,
    ` "${c(options.applyRoleName)}" (protected branches). SECRETSTORE_ADDR and PG_CONN_STR (the state) are`,
    ' CI/CD variables; no store token is.',
    ...inputsHeader(options.inputs).map((l) => l.replace(/^#/, '')),
  ];
}
