import { compareStrings } from '../private/compare-strings';
import { shellQuote } from '../private/shell-quote';
import { renderCiLoginScript } from './ci-login-script';
import { commentText, isLiteralBlockSafe, yamlScalar } from './text-encoders';
import { RETIRED_GRANTS_FILE } from '../model/retired-grants-file';

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
 * The default-branch review job's artifact: `access-diff --plans ... --format json` of the pipeline's
 * saved plans, with each plan file's SHA-256. Every apply job applies a saved plan only with
 * `tf --reviewed-plans` of this file: a plan the review did not read is refused (exit 4).
 */
export const REVIEWED_PLANS_FILE = 'reviewed-plans.json';
/** The merge request's review job: the note computed from the saved plans, the risk-flag gate. */
export const REVIEW_JOB = 'secretstore-iac-access-diff';
/** The default branch's review job: it records the saved plans the apply jobs may apply ({@link REVIEWED_PLANS_FILE}). */
export const DEFAULT_BRANCH_REVIEW_JOB = `${REVIEW_JOB}-default-branch`;
/** A shard job's share of its group's selected stacks, one per line (written by its first step). */
export const SHARD_JOB_STACKS_FILE = 'secretstore-iac-job-stacks.txt';
/** The synth job's Markdown of the moves, renames and removals since the base (`moves --markdown-file`), appended to the note. */
export const MOVES_NOTE = 'secretstore-iac-moves.md';
/**
 * The build job's mark in its `dist/` artifact: the commit it compiled. The synth job synthesizes that
 * `dist/` without compiling again only when the mark names its own commit.
 */
export const BUILD_MARK = 'dist/.secretstore-iac-build';

const q = yamlScalar;
/** Comment text: one line whatever the value holds. */
const c = commentText;

/**
 * A list of shell commands as a YAML block sequence of literal blocks, indented by `indent`; a command
 * a literal block cannot hold as it is (a line separator, a leading blank) goes double-quoted.
 */
function script(indent: string, commands: readonly string[]): string {
  return commands
    .map((cmd) =>
      isLiteralBlockSafe(cmd) && !/^[ \t]/.test(cmd)
        ? `${indent}- |\n${cmd.split('\n').map((l) => (l ? `${indent}  ${l}` : '')).join('\n')}`
        : `${indent}- ${yamlScalar(cmd)}`,
    )
    .join('\n');
}

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

/** The line of a job that reads the synth job's selection: without it, the job fails rather than skip its stacks. */
const REQUIRE_SELECTION = `if [ ! -f ${CHANGED_STACKS_FILE} ]; then echo "secretstore-iac: ${CHANGED_STACKS_FILE}, the synth job's selection of the stacks, is missing" >&2; exit 1; fi`;

/**
 * The first step of a shard job: writes {@link SHARD_JOB_STACKS_FILE}, its share of the group's
 * stacks the synth job selected (the n-th of them, in the selection's order, is job
 * `((n - 1) mod jobs) + 1`'s), and ends the job at once, successfully, when the share is empty. A
 * missing selection fails the job instead.
 */
function shardJobShare(group: ShardJobGroup, job: number, what: 'plan' | 'apply'): string {
  const jobs = shardJobNumbers(group).length;
  return [
    REQUIRE_SELECTION,
    `# Job ${job} of ${jobs} of ${group.name}: the n-th of its stacks the synth job selected is job ((n - 1) mod ${jobs}) + 1's.`,
    `: > ${SHARD_JOB_STACKS_FILE}`,
    'n=0',
    `for stack in $(cat ${CHANGED_STACKS_FILE}); do`,
    '  case "$stack" in',
    `    ${group.stacks.join('|')})`,
    '      n=$((n + 1))',
    `      if [ $(((n - 1) % ${jobs})) -eq ${job - 1} ]; then echo "$stack" >> ${SHARD_JOB_STACKS_FILE}; fi`,
    '      ;;',
    '  esac',
    'done',
    `if [ ! -s ${SHARD_JOB_STACKS_FILE} ]; then`,
    `  echo "secretstore-iac: none of the $n selected stacks of ${group.name} is job ${job}'s (of ${jobs}; ${group.stacks.length} stacks in the group, the others unchanged): nothing to ${what}"`,
    '  exit 0',
    'fi',
    `echo "secretstore-iac: job ${job} of ${jobs} of ${group.name} ${what === 'plan' ? 'plans' : 'applies'}, in this order:"`,
    `cat ${SHARD_JOB_STACKS_FILE}`,
  ].join('\n');
}

/**
 * The first step of a stack's plan or apply job: when the synth job did not select the stack, the
 * job ends at once, successfully, saying so. A missing selection fails the job instead of skipping it.
 */
function skipUnchanged(stack: string, what: 'plan' | 'apply'): string {
  return [
    REQUIRE_SELECTION,
    `if ! grep -qxF ${shellQuote(stack)} ${CHANGED_STACKS_FILE}; then`,
    `  echo "secretstore-iac: stack ${stack} is unchanged (same content digest as the base, and no stack it depends on changed): nothing to ${what}"`,
    '  exit 0',
    'fi',
  ].join('\n');
}

/**
 * The first step of a retired-stacks job: it ends at once, successfully, when the synth job found none;
 * a missing list fails the job instead.
 */
function skipNoRetired(what: 'plan' | 'apply'): string {
  return [
    `if [ ! -f ${RETIRED_STACKS_FILE} ]; then echo "secretstore-iac: ${RETIRED_STACKS_FILE}, the synth job's list of retired stacks, is missing" >&2; exit 1; fi`,
    `if [ ! -s ${RETIRED_STACKS_FILE} ]; then`,
    `  echo "secretstore-iac: no retired stack (one the base had and this commit no longer has): nothing to ${what}"`,
    '  exit 0',
    'fi',
  ].join('\n');
}

/**
 * The step that gives a stack's required input variables to the engine (`TF_VAR_<name>` from the
 * CI/CD variable of that name): a merge-request plan (`review`) without one uses
 * {@link INPUT_PLACEHOLDER}; a job of a protected branch without one fails, naming the variable. The
 * value is never printed: only whether it is set is tested. Undefined for a stack without any.
 */
function stackInputs(stack: string, inputs: readonly PipelineInputVariable[] | undefined, review: boolean): string | undefined {
  const required = (inputs ?? []).filter((v) => v.required);
  if (required.length === 0) return undefined;
  const lines = [`# Input variables of stack ${stack}, from CI/CD variables (masked, protected; docs/pipelines.md). Never printed.`];
  for (const v of required) {
    const ci = inputVariableCiName(v.name);
    lines.push(`if [ -z "\${${ci}:-}" ]; then`);
    if (review) {
      lines.push(
        `  echo "secretstore-iac: ${ci} is not set (merge-request pipelines get no protected variable): ${v.name} of stack ${stack} is planned with a placeholder; it is ephemeral, so the plan records no value of it"`,
        `  export ${ci}=${INPUT_PLACEHOLDER}`,
      );
    } else {
      lines.push(
        `  echo "secretstore-iac: stack ${stack} declares the input variable ${v.name}: set the CI/CD variable ${ci} (masked, protected; docs/pipelines.md)" >&2`,
        '  exit 1',
      );
    }
    lines.push('fi');
  }
  return lines.join('\n');
}

/**
 * The steps of {@link DESTROY_REMOVED_JOB} that give the required input variables of each stack it
 * applies (those listed in `removal-stacks.txt`) as the apply jobs do ({@link stackInputs}): without
 * one, the job fails naming it, before anything is applied. One step per stack with such variables.
 */
function removalInputs(stacks: readonly string[], inputs: ConfigurationPipelineYamlOptions['inputs']): string[] {
  return stacks.flatMap((stack) => {
    const step = stackInputs(stack, inputs?.[stack], false);
    if (step === undefined) return [];
    return [[`if grep -qxF ${shellQuote(stack)} removal-stacks.txt; then`, ...step.split('\n').map((l) => `  ${l}`), 'fi'].join('\n')];
  });
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
 * The step of an apply that leaves a saved plan with removals to {@link DESTROY_REMOVED_JOB}: it says
 * so, naming what would be destroyed, and the stack's other changes wait with it (one saved plan).
 * @param stack the stack, or a shell expression of it
 * @param then what to do instead of applying (`exit 0`, `continue`)
 */
function deferRemovals(stack: string, then: string): string {
  const file = `"$CI_PROJECT_DIR/${PLAN_DIR}/${stack}${REMOVALS_SUFFIX}"`;
  return [
    `if [ -f ${file} ]; then`,
    `  echo "secretstore-iac: the plan of ${stack} destroys objects this configuration declares nowhere any more (a revocation):"`,
    `  sed 's/^/  /' ${file}`,
    `  echo "secretstore-iac: not applied here: the manual job ${DESTROY_REMOVED_JOB} applies the plan of ${stack} (with its other changes) once a person starts it"`,
    `  ${then}`,
    'fi',
  ].join('\n');
}

/**
 * The step that ends what the roles kept of retired stacks, once every retired stack's removal is
 * applied: a stack whose roles kept a retired stack's grants (`moves`' {@link RETIRED_GRANTS_FILE},
 * applied by its apply job) is planned and applied again without that file, exactly as this commit
 * declares it (what the access diff reviewed), so that its roles lose the grants the removal
 * destroyed and its drift job is clean at once, not after some later change to it. That plan is no
 * plan the review read: `--released-grants` applies it only when all it does is take away what the
 * override (sealed by `moves`) kept, in place (lib/engine/released-grants-check.ts).
 */
function releaseRetiredGrants(): string {
  const plan = `"$CI_PROJECT_DIR/${PLAN_DIR}/$stack.released.tfplan"`;
  const released = `"$CI_PROJECT_DIR/${PLAN_DIR}/$stack.released-grants.json"`;
  return [
    `# The retired stacks' removal is applied: the roles that kept their grants until now (${RETIRED_GRANTS_FILE})`,
    '# are applied again as this commit declares them, so that they lose the destroyed grants and drift is clean.',
    '# The override is taken out of the stack; --released-grants applies a plan that only takes those grants away.',
    `for kept in cdktf.out/stacks/*/${RETIRED_GRANTS_FILE}; do`,
    '  if [ ! -f "$kept" ]; then continue; fi',
    '  stack=$(basename "$(dirname "$kept")")',
    '  echo "secretstore-iac: $stack kept grants of the retired stacks until their removal: applied again without them"',
    `  mkdir -p "$CI_PROJECT_DIR/${PLAN_DIR}"`,
    `  mv "$kept" ${released}`,
    '  npx secretstore-iac tf "$stack" -- init -input=false',
    `  npx secretstore-iac tf "$stack" --refuse-replace -- plan -input=false -lock-timeout=10m -out=${plan}`,
    `  npx secretstore-iac tf "$stack" --refuse-replace --released-grants ${released} -- apply -input=false -lock-timeout=10m ${plan}`,
    'done',
  ].join('\n');
}

/**
 * The install step of every job: the dependencies come from the pipeline's cache (`node_modules`,
 * keyed on package-lock.json, filled by the build job); `SECRETSTORE_IAC_INSTALL` runs only when the
 * cache had none (its first pipeline, a new lock file, a runner without that cache).
 */
const INSTALL = [
  '# Dependencies from the pipeline\'s cache (node_modules, keyed on package-lock.json); installed only without it.',
  'if [ -d node_modules ]; then echo "secretstore-iac: node_modules from the pipeline\'s cache"; else eval "$SECRETSTORE_IAC_INSTALL"; fi',
].join('\n');

/**
 * The `cache:` of a job: the dependencies (filled by the build job, `pull-push`; only read elsewhere),
 * and the synth job's synthesis cache. The synthesis cache comes first: gitlab-ci-local (4.69) stops
 * at the first entry whose policy does not push (or pull), so an entry after a `pull` one is never saved.
 */
function jobCache(dependencies: 'pull' | 'pull-push', synthesis = false): string {
  return [
    '  cache:',
    ...(synthesis ? ['    - key: secretstore-iac-synth', `      paths: [${SYNTH_CACHE_DIR}]`] : []),
    '    - key:',
    '        files: [package-lock.json]',
    '        prefix: secretstore-iac-deps',
    '      paths: [node_modules]',
    `      policy: ${dependencies}`,
  ].join('\n');
}

const MR = '$CI_PIPELINE_SOURCE == "merge_request_event"';
const DEFAULT_BRANCH = '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE != "schedule" && $CI_PIPELINE_SOURCE != "merge_request_event"';
const SCHEDULE = '$CI_PIPELINE_SOURCE == "schedule"';

/**
 * The pipeline of the repository that holds the platform configuration
 * (`cdktf.out/ci/secretstore-iac.gitlab-ci.yml`, to include):
 * - merge request: build, synth (every validation), a saved plan per stack (read-only role), the
 *   access diff of those saved plans (`access-diff --plans`: what the engine will apply), posted as
 *   the MR's note, failing on risk flags unless acknowledged;
 * - default branch: build, synth, plan, a review of the saved plans recording each one's SHA-256
 *   ({@link REVIEWED_PLANS_FILE}), then apply of the reviewed saved plan per stack (`tf
 *   --reviewed-plans`: another plan is refused), one at a time (`resource_group`, and the state
 *   backend's lock);
 * - schedule: `plan -detailed-exitcode` per stack, failing on drift.
 *
 * The store token of every job comes from a JWT login with the job's ID token; none is a CI variable.
 */
export function renderConfigurationPipelineYaml(options: ConfigurationPipelineYamlOptions): string {
  checkNames(options);
  const stacks = [...options.stacks].sort();
  const login = (role: string) =>
    renderCiLoginScript({
      roleName: role,
      authPath: options.authPath,
      audience: options.audience,
      baseJobName: role === options.applyRoleName ? '.secretstore-iac-apply-login' : '.secretstore-iac-plan-login',
      exportVaultToken: true,
      namespace: options.namespace,
    });
  const image = options.image ? `  image: ${q(options.image)}\n` : '';
  const out: string[] = [];
  out.push(
    [
      '# secretstore-iac.gitlab-ci.yml: generated by secretstore-iac from the platform declarations. Do not edit.',
      '#',
      '# The pipeline of the repository that holds the platform configuration. Commit a copy as',
      `# ${c(options.committedCopy)} (the synth job fails when the copy is stale) and include it from that`,
      '# repository\'s .gitlab-ci.yml (it defines the stages):',
      '#',
      '#   include:',
      `#     - local: ${c(options.committedCopy)}`,
      '#',
      '# Only the changed stacks are planned and applied: those whose synthesized content (a digest per',
      '# stack) differs from the target branch\'s (merge request) or the previous commit\'s (default branch),',
      '# and the stacks that depend on them (secretstore-iac changed-stacks, in the synth job); the jobs of',
      '# the other stacks finish at once, saying so. Without a previous commit, every stack is planned.',
      '# Merge request: build, synth, a saved plan per changed stack, and the access diff of those saved plans',
      `# (what the engine will apply) with the stacks' digests as the MR's note (needs ${c(options.noteTokenVariable)}, a project access`,
      '# token with scope api; unset: an artifact and the job log). Risk flags fail the access diff unless the',
      `# MR has the label "${c(options.acknowledgeLabel)}" or ${ACCEPT_RISK_VARIABLE} is "true".`,
      `# Default branch: build, synth, plan, a review of the saved plans (${REVIEWED_PLANS_FILE}: each plan's SHA-256),`,
      '# apply of the reviewed saved plan per changed stack (any other plan is refused), one apply at a time,',
      '# a stack after the stacks it depends on. A retired stack (one the base had and this commit no longer',
      '# has: fewer shards) is planned with the others and applied after all of them; its state only forgets.',
      '# A plan that destroys an object the configuration declares nowhere any more (a removed application,',
      `# group of people or stack) is planned and shown in the note, and applied only by the manual job`,
      `# ${DESTROY_REMOVED_JOB} on the default branch, which a person starts.`,
      '# Schedule: plan -detailed-exitcode per stack; a drift fails the job.',
      `# Store tokens: JWT login as "${c(options.planRoleName)}" (merge requests, read only) or`,
      `# "${c(options.applyRoleName)}" (protected branches). SECRETSTORE_ADDR and PG_CONN_STR (the state) are`,
      '# CI/CD variables; no store token is. See README, "The configuration repository\'s pipeline".',
      ...inputsHeader(options.inputs),
      '',
      'stages: [build, synth, plan, review, apply, retire, remove]',
      '',
      'variables:',
      `  SECRETSTORE_IAC_INSTALL: ${q(options.installCommand)}`,
      `  SECRETSTORE_IAC_PIPELINE_COPY: ${q(options.committedCopy)}`,
      '  TF_IN_AUTOMATION: "1"',
      '  TF_INPUT: "0"',
      '',
    ].join('\n'),
  );
  for (const [job, role] of [
    ['.secretstore-iac-plan-login', options.planRoleName],
    ['.secretstore-iac-apply-login', options.applyRoleName],
  ]) {
    out.push(
      [
        `${job}:`,
        '  id_tokens:',
        '    SECRETSTORE_ID_TOKEN:',
        `      aud: ${q(options.audience)}`,
        '  before_script:',
        script('    ', [login(role).trimEnd()]),
        '',
      ].join('\n'),
    );
  }
  const rules = (...conditions: string[]) => ['  rules:', ...conditions.map((c) => `    - if: ${q(c)}`)].join('\n');
  out.push(
    [
      'secretstore-iac-build:',
      '  stage: build',
      image + rules(MR, DEFAULT_BRANCH),
      // The one job that installs the dependencies into the cache; every other job reads them from it.
      jobCache('pull-push'),
      '  script:',
      script('    ', [
        INSTALL,
        'npm run build',
        '# npm makes a package\'s bin executable only when it links it: keep this project\'s own bin runnable by npx.',
        'if [ -f dist/bin/secretstore-iac.js ]; then chmod +x dist/bin/secretstore-iac.js; fi',
        '# The commit this dist/ was compiled from: the synth job synthesizes it without compiling again.',
        `printf '%s\\n' "$CI_COMMIT_SHA" > ${BUILD_MARK}`,
      ]),
      '  artifacts:',
      '    paths: [dist/]',
      '    expire_in: 1 week',
      '',
      'secretstore-iac-synth:',
      '  stage: synth',
      image + rules(MR, DEFAULT_BRANCH, SCHEDULE),
      jobCache('pull', true),
      '  variables:',
      '    # The whole history: the base of the stack selection (the previous commit, the target branch) is in it.',
      '    GIT_DEPTH: "0"',
      `    SECRETSTORE_IAC_SYNTH_CACHE: ${q(SYNTH_CACHE_DIR)}`,
      '  script:',
      script('    ', [
        INSTALL,
        '# The library\'s own repository runs its bin from dist/: without the build job\'s (a schedule), compiled first.',
        'if [ ! -e node_modules/.bin/secretstore-iac ] && [ ! -f dist/bin/secretstore-iac.js ]; then npm run build; fi',
        '# npm makes a package\'s bin executable only when it links it: keep this project\'s own bin runnable by npx.',
        'if [ -f dist/bin/secretstore-iac.js ]; then chmod +x dist/bin/secretstore-iac.js; fi',
        '# This commit synthesized once (every later job reads this cdktf.out), stored in the synthesis cache for the',
        '# pipelines whose base it is; the base from that cache (compiled in a worktree only when missing); the moves,',
        '# the stacks to plan and apply and the note (secretstore-iac pipeline synth --help; docs/pipelines.md §7).',
        'npx secretstore-iac pipeline synth',
      ]),
      '  artifacts:',
      `    paths: [cdktf.out/, ${BASE_OUTPUT}/, dist/, ${CHANGED_STACKS_FILE}, ${CHANGED_STACKS_NOTE}, ${RETIRED_STACKS_FILE}]`,
      '    exclude: ["cdktf.out/**/.terraform/**/*"]',
      '    expire_in: 1 week',
      '',
    ].join('\n'),
  );
  // Every job that installs providers (`init`) gets a plugin cache of its own. The plan jobs of the
  // stacks run at the same time, and a plugin cache shared between them (TF_PLUGIN_CACHE_DIR or
  // plugin_cache_dir set for the whole runner) is not safe for concurrent installs: one engine fails
  // with "after installing ... it is still not detected in <cache>" while the other writes. The job's
  // variable overrides a runner-wide one (the environment variable wins over the CLI configuration
  // file), and the engine wants the directory to exist before `init`.
  const OWN_PLUGIN_CACHE = ['  variables:', '    TF_PLUGIN_CACHE_DIR: "$CI_PROJECT_DIR/.secretstore-iac-plugin-cache/$CI_JOB_ID"'].join('\n');
  const MAKE_PLUGIN_CACHE = 'mkdir -p "$TF_PLUGIN_CACHE_DIR"';
  const tf = (stack: string, args: string) => `npx secretstore-iac tf ${shellQuote(stack)} -- ${args}`;
  const planFile = (stack: string) => `"$CI_PROJECT_DIR/${PLAN_DIR}/${stack}.tfplan"`;
  // Every apply of a saved plan: guarded, and only the plan whose SHA-256 this pipeline's review
  // recorded (a plan made again, or from another configuration, environment or engine, is refused).
  const applyReviewedPlan = (stack: string, quoted: string, removals = false) =>
    `npx secretstore-iac tf ${quoted} --refuse-replace${removals ? ' --allow-removals' : ''} --reviewed-plans "$CI_PROJECT_DIR/${REVIEWED_PLANS_FILE}" -- apply -input=false -lock-timeout=10m ${planFile(stack)}`;
  // A plan may destroy what the configuration removed (listed beside it); its apply waits for a person.
  const removalsFile = (stack: string) => `"$CI_PROJECT_DIR/${PLAN_DIR}/${stack}${REMOVALS_SUFFIX}"`;
  const planWithRemovals = (stack: string, quoted: string) =>
    `npx secretstore-iac tf ${quoted} --refuse-replace --allow-removals --removals-file ${removalsFile(stack)} -- plan -input=false -lock-timeout=10m -out=${planFile(stack)}`;
  // The plan jobs: the merge request's with the read-only role, the default branch's with the apply role.
  const PLAN_JOBS = [
    ['', MR, '.secretstore-iac-plan-login'],
    ['-default-branch', DEFAULT_BRANCH, '.secretstore-iac-apply-login'],
  ] as const;
  /** A plan job's lines up to its script. */
  const planJobHead = (name: string, condition: string, loginJob: string) =>
    [`${name}:`, '  stage: plan', `  extends: ${loginJob}`, image + rules(condition), '  needs: [secretstore-iac-synth]', jobCache('pull'), OWN_PLUGIN_CACHE, '  script:'].join('\n');
  const inputs = (stack: string, review: boolean) => {
    const step = stackInputs(stack, options.inputs?.[stack], review);
    return step === undefined ? [] : [step];
  };
  const groups = [...(options.shardGroups ?? [])].sort((a, b) => compareStrings(a.name, b.name));
  const grouped = new Set(groups.flatMap((g) => g.stacks));
  /** Every plan job of a pipeline (`''` merge request, `-default-branch`): the stacks' own, the shard jobs', the retired stacks'. */
  const planJobs = (suffix: string) => [
    ...stacks.filter((s) => !grouped.has(s)).map((s) => `secretstore-iac-plan-${s}${suffix}`),
    ...groups.flatMap((g) => shardJobNumbers(g).map((i) => `secretstore-iac-plan-${g.name}-${i}${suffix}`)),
    `secretstore-iac-plan-retired${suffix}`,
  ];
  for (const stack of stacks) {
    // A stack of a shard job group has its own drift job only: its group's jobs plan and apply it.
    for (const [suffix, condition, loginJob] of grouped.has(stack) ? [] : PLAN_JOBS) {
      out.push(
        [
          planJobHead(`secretstore-iac-plan-${stack}${suffix}`, condition, loginJob),
          script('    ', [
            skipUnchanged(stack, 'plan'),
            ...inputs(stack, suffix === ''),
            INSTALL,
            `mkdir -p "$CI_PROJECT_DIR/${PLAN_DIR}"`,
            MAKE_PLUGIN_CACHE,
            tf(stack, 'init -input=false'),
            // The saved plan stays outside cdktf.out: a synthesis replaces that directory.
            // --refuse-replace: a plan that destroys or replaces an object fails here (exit 4), in review;
            // --allow-removals: but for objects the configuration removed, listed beside the plan.
            planWithRemovals(stack, shellQuote(stack)),
          ]),
          '  artifacts:',
          `    paths: [${PLAN_DIR}/${stack}.*]`,
          '    expire_in: 1 week',
          '',
        ].join('\n'),
      );
    }
    if (!grouped.has(stack)) {
      out.push(
        [
          `secretstore-iac-apply-${stack}:`,
          '  stage: apply',
          '  extends: .secretstore-iac-apply-login',
          image + rules(DEFAULT_BRANCH),
          // One apply per stack at a time across pipelines; the state lock covers everyone else.
          `  resource_group: ${q(`secretstore-iac-${stack}`)}`,
          `  needs: [${['secretstore-iac-synth', `secretstore-iac-plan-${stack}-default-branch`, DEFAULT_BRANCH_REVIEW_JOB, ...applyNeeds(options, stack)].join(', ')}]`,
          jobCache('pull'),
          OWN_PLUGIN_CACHE,
          '  script:',
          script('    ', [
            skipUnchanged(stack, 'apply'),
            deferRemovals(stack, 'exit 0'),
            ...inputs(stack, false),
            INSTALL,
            MAKE_PLUGIN_CACHE,
            tf(stack, 'init -input=false'),
            applyReviewedPlan(stack, shellQuote(stack)),
          ]),
          '',
        ].join('\n'),
      );
    }
    out.push(
      [
        `secretstore-iac-drift-${stack}:`,
        '  stage: plan',
        '  extends: .secretstore-iac-apply-login',
        image + rules(SCHEDULE),
        '  needs: [secretstore-iac-synth]',
        jobCache('pull'),
        OWN_PLUGIN_CACHE,
        '  script:',
        script('    ', [
          ...inputs(stack, false),
          INSTALL,
          MAKE_PLUGIN_CACHE,
          tf(stack, 'init -input=false'),
          '# Exit 2: the store differs from the configuration (drift); the job fails and shows the plan.',
          tf(stack, 'plan -input=false -lock-timeout=10m -detailed-exitcode'),
        ]),
        '',
      ].join('\n'),
    );
  }
  // The jobs that plan or apply a list of stacks (a shard job's share, the retired stacks), one after
  // the other in the list's order: the same commands as a stack's own jobs. An apply leaves a plan
  // with removals to the manual job and goes on with the next stack.
  const planEachListed = (file: string) =>
    [`for stack in $(cat ${file}); do`, '  npx secretstore-iac tf "$stack" -- init -input=false', `  ${planWithRemovals('$stack', '"$stack"')}`, 'done'].join('\n');
  const applyEachListed = (file: string) =>
    [
      `for stack in $(cat ${file}); do`,
      ...deferRemovals('$stack', 'continue').split('\n').map((l) => `  ${l}`),
      '  npx secretstore-iac tf "$stack" -- init -input=false',
      `  ${applyReviewedPlan('$stack', '"$stack"')}`,
      'done',
    ].join('\n');
  /** The artifact of a job that plans a list of stacks: every saved plan it made, with its removals. */
  const PLANS_ARTIFACT = ['  artifacts:', `    paths: [${PLAN_DIR}/]`, '    expire_in: 1 week'].join('\n');
  // Shard job groups: a fixed number of plan and apply jobs share the group's selected stacks, so the
  // pipeline's jobs do not grow with the shards (each job of a real runner downloads the synth job's
  // artifacts and the dependencies before its first step, also to end at once).
  for (const group of groups) {
    for (const job of shardJobNumbers(group)) {
      for (const [suffix, condition, loginJob] of PLAN_JOBS) {
        out.push(
          [
            planJobHead(`secretstore-iac-plan-${group.name}-${job}${suffix}`, condition, loginJob),
            script('    ', [
              shardJobShare(group, job, 'plan'),
              INSTALL,
              `mkdir -p "$CI_PROJECT_DIR/${PLAN_DIR}"`,
              MAKE_PLUGIN_CACHE,
              planEachListed(SHARD_JOB_STACKS_FILE),
            ]),
            PLANS_ARTIFACT,
            '',
          ].join('\n'),
        );
      }
      out.push(
        [
          `secretstore-iac-apply-${group.name}-${job}:`,
          '  stage: apply',
          '  extends: .secretstore-iac-apply-login',
          image + rules(DEFAULT_BRANCH),
          // One apply of this job at a time across pipelines; the state lock serializes a stack two
          // pipelines gave to different jobs (the later saved plan is then stale and refused).
          `  resource_group: ${q(`secretstore-iac-${group.name}-${job}`)}`,
          `  needs: [${['secretstore-iac-synth', `secretstore-iac-plan-${group.name}-${job}-default-branch`, DEFAULT_BRANCH_REVIEW_JOB, ...shardGroupApplyNeeds(options, group)].join(', ')}]`,
          jobCache('pull'),
          OWN_PLUGIN_CACHE,
          '  script:',
          script('    ', [
            shardJobShare(group, job, 'apply'),
            INSTALL,
            MAKE_PLUGIN_CACHE,
            applyEachListed(SHARD_JOB_STACKS_FILE),
          ]),
          '',
        ].join('\n'),
      );
    }
  }
  // Retired stacks (docs/sharding.md): known only once `moves` has compared with the base, so one job
  // of each kind handles all of them, in the order listed. Their apply waits for every other stack's
  // (the stage after apply): the objects are imported where they moved before this state forgets them.
  for (const [suffix, condition, loginJob] of PLAN_JOBS) {
    out.push(
      [
        planJobHead(`secretstore-iac-plan-retired${suffix}`, condition, loginJob),
        script('    ', [
          skipNoRetired('plan'),
          INSTALL,
          `mkdir -p "$CI_PROJECT_DIR/${PLAN_DIR}"`,
          MAKE_PLUGIN_CACHE,
          // --refuse-replace: a retired stack's plan may only forget, and destroy what was removed (listed).
          planEachListed(RETIRED_STACKS_FILE),
        ]),
        PLANS_ARTIFACT,
        '',
      ].join('\n'),
    );
  }
  out.push(
    [
      'secretstore-iac-apply-retired:',
      '  stage: retire',
      '  extends: .secretstore-iac-apply-login',
      image + rules(DEFAULT_BRANCH),
      `  resource_group: ${q('secretstore-iac-retired')}`,
      // No needs: the stage waits for every apply job (a needs list holds at most 50 jobs).
      `  dependencies: [secretstore-iac-synth, secretstore-iac-plan-retired-default-branch, ${DEFAULT_BRANCH_REVIEW_JOB}]`,
      jobCache('pull'),
      OWN_PLUGIN_CACHE,
      '  script:',
      script('    ', [
        skipNoRetired('apply'),
        INSTALL,
        MAKE_PLUGIN_CACHE,
        applyEachListed(RETIRED_STACKS_FILE),
        // Every retired stack applied here (none left to the manual job): their removal is complete.
        [
          `for stack in $(cat ${RETIRED_STACKS_FILE}); do`,
          `  if [ -f "$CI_PROJECT_DIR/${PLAN_DIR}/$stack${REMOVALS_SUFFIX}" ]; then echo "secretstore-iac: the roles keep the retired stacks' grants until ${DESTROY_REMOVED_JOB} applies their removal"; exit 0; fi`,
          'done',
        ].join('\n'),
        releaseRetiredGrants(),
      ]),
      '',
    ].join('\n'),
  );
  // The one path that applies a destroy: a person starts it. It cannot exist only when needed (GitLab
  // creates the jobs before the plans), so it is always there; without removals it says so and ends.
  const withRemovals = `"$CI_PROJECT_DIR/${PLAN_DIR}/$stack${REMOVALS_SUFFIX}"`;
  out.push(
    [
      `${DESTROY_REMOVED_JOB}:`,
      '  stage: remove',
      '  extends: .secretstore-iac-apply-login',
      `${image}  rules:`,
      `    - if: ${q(DEFAULT_BRANCH)}`,
      '      when: manual',
      // Not started is not a failure of the pipeline; the apply jobs' logs and the note name this job.
      '      allow_failure: true',
      `  resource_group: ${q('secretstore-iac-removals')}`,
      `  dependencies: [${['secretstore-iac-synth', ...planJobs('-default-branch'), DEFAULT_BRANCH_REVIEW_JOB].join(', ')}]`,
      jobCache('pull'),
      OWN_PLUGIN_CACHE,
      '  script:',
      script('    ', [
        [
          `for f in ${CHANGED_STACKS_FILE} ${RETIRED_STACKS_FILE}; do`,
          `  if [ ! -f "$f" ]; then echo "secretstore-iac: $f, from the synth job, is missing" >&2; exit 1; fi`,
          'done',
          '# The stacks whose saved plan destroys removed objects: in dependency order, retired stacks last.',
          ': > removal-stacks.txt',
          `for stack in $(cat ${CHANGED_STACKS_FILE} ${RETIRED_STACKS_FILE}); do`,
          `  if [ -f ${withRemovals} ]; then echo "$stack" >> removal-stacks.txt; fi`,
          'done',
          'if [ ! -s removal-stacks.txt ]; then',
          '  echo "secretstore-iac: no plan of this pipeline destroys a removed object: nothing to destroy"',
          '  exit 0',
          'fi',
          'echo "secretstore-iac: started by ${GITLAB_USER_LOGIN:-a person}: destroying what the configuration declares nowhere any more:"',
          `for stack in $(cat removal-stacks.txt); do echo "  $stack:"; sed 's/^/    /' ${withRemovals}; done`,
        ].join('\n'),
        // The input variables of the stacks it applies (an ephemeral variable is not in the saved
        // plan: the apply needs it again), checked for all of them before the first apply.
        ...removalInputs(stacks, options.inputs),
        INSTALL,
        MAKE_PLUGIN_CACHE,
        // --allow-removals: the removals pass; a replacement or any other destroy is still refused.
        [
          'for stack in $(cat removal-stacks.txt); do',
          '  npx secretstore-iac tf "$stack" -- init -input=false',
          `  ${applyReviewedPlan('$stack', '"$stack"', true)}`,
          'done',
        ].join('\n'),
        releaseRetiredGrants(),
      ]),
      '',
    ].join('\n'),
  );
  // The review jobs read the saved plans of their pipeline's plan jobs (artifacts; the stage after
  // them, not `needs`, which holds at most 50 jobs): what the engine will apply, whatever file,
  // variable or expression produced it, not the synthesis alone. The engine shows a plan only in an
  // initialised stack directory (`show -json` reads the providers' schemas), so each is initialised.
  const INIT_PLANNED = [
    `# The saved plans of this pipeline's plan jobs (${PLAN_DIR}/<stack>.tfplan): each planned stack initialised,`,
    '# so that the engine can show its plan to the review.',
    `for plan in ${PLAN_DIR}/*.tfplan; do`,
    '  if [ -f "$plan" ]; then npx secretstore-iac tf "$(basename "$plan" .tfplan)" -- init -input=false; fi',
    'done',
  ].join('\n');
  /** Runs the review of the saved plans into `output` (`rc` its exit code); `none` are the lines run when no stack was planned. */
  const reviewPlans = (args: string, output: string, none: readonly string[]) => [
    `if ls ${PLAN_DIR}/*.tfplan > /dev/null 2>&1; then`,
    `  npx secretstore-iac access-diff --plans ${PLAN_DIR}${args} > ${output}`,
    '  rc=$?',
    'else',
    ...none.map((l) => `  ${l}`),
    '  rc=0',
    'fi',
  ];
  out.push(
    [
      `${DEFAULT_BRANCH_REVIEW_JOB}:`,
      '  stage: review',
      image + rules(DEFAULT_BRANCH),
      `  dependencies: [${['secretstore-iac-synth', ...planJobs('-default-branch')].join(', ')}]`,
      jobCache('pull'),
      OWN_PLUGIN_CACHE,
      '  script:',
      script('    ', [
        INSTALL,
        MAKE_PLUGIN_CACHE,
        INIT_PLANNED,
        // One script item: the runner prints each item before running it, which resets `$?`.
        [
          `# The plans this pipeline's apply jobs may apply, each with its SHA-256: an apply of any other plan is refused.`,
          'set +e',
          ...reviewPlans(' --format json', REVIEWED_PLANS_FILE, [
            '# No stack planned (the synth job selected none): the review records no plan, so no apply applies one.',
            `printf '{"plans":[]}\\n' > ${REVIEWED_PLANS_FILE}`,
          ]),
          'set -e',
          '# 0 no access change, 1 access changed (or a value unknown until apply); anything else is an error of the review.',
          `if [ "$rc" -gt 1 ]; then cat ${REVIEWED_PLANS_FILE}; exit "$rc"; fi`,
          `echo "secretstore-iac: the review of this pipeline's saved plans (artifact ${REVIEWED_PLANS_FILE}; the apply jobs apply only the plans whose SHA-256 it records):"`,
          `cat ${REVIEWED_PLANS_FILE}`,
        ].join('\n'),
      ]),
      '  artifacts:',
      `    paths: [${REVIEWED_PLANS_FILE}]`,
      '    expire_in: 1 week',
      '',
    ].join('\n'),
  );
  out.push(
    [
      `${REVIEW_JOB}:`,
      '  stage: review',
      image + rules(MR),
      // The synth job's artifacts (the stacks' note, the built configuration) and every saved plan.
      `  dependencies: [${['secretstore-iac-synth', ...planJobs('')].join(', ')}]`,
      jobCache('pull'),
      OWN_PLUGIN_CACHE,
      '  script:',
      script('    ', [
        INSTALL,
        MAKE_PLUGIN_CACHE,
        INIT_PLANNED,
        // One script item: the runner prints each item before running it, which resets `$?`.
        [
          '# The access part of the note, its risk flags and this job\'s exit code: from the saved plans.',
          'set +e',
          ...reviewPlans(' --risk-flag-count access-risk-flags.txt', 'access-diff.md', [
            '# No stack planned (the synth job selected none): nothing is applied, no access changes.',
            `printf '## Access changes: none\\n\\nNo stack is planned (no saved plan in this pipeline): applying this merge request changes nothing on the store.\\n' > access-diff.md`,
            'echo 0 > access-risk-flags.txt',
          ]),
          'set -e',
          '# 0 no access change, 1 access changed (or the review is incomplete); anything else is an error of the diff itself.',
          'if [ "$rc" -gt 1 ]; then cat access-diff.md; exit "$rc"; fi',
          `# The note shows which stacks this merge request plans, with their digests (the synth job's ${CHANGED_STACKS_NOTE}).`,
          `if [ -f ${CHANGED_STACKS_NOTE} ]; then printf '\\n' >> access-diff.md; cat ${CHANGED_STACKS_NOTE} >> access-diff.md; fi`,
          'cat access-diff.md',
          `if [ -n "\${${options.noteTokenVariable}:-}" ]; then`,
          '  # The token goes to curl on standard input, never on its command line.',
          '  # A failed post fails the job (the diff stays in the log above and in the artifact): a review',
          '  # must not pass on a note nobody can see.',
          `  if ! printf 'header = "PRIVATE-TOKEN: %s"\\n' "$${options.noteTokenVariable}" |`,
          '    curl --silent --show-error --fail --config - --data-urlencode "body@access-diff.md" \\',
          '      "$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes" > /dev/null; then',
          `    echo "secretstore-iac: posting the access diff as a note of !$CI_MERGE_REQUEST_IID failed (curl's error above; the diff is in the job log above and in the artifact access-diff.md): check ${options.noteTokenVariable} (a project access token with scope api, of a role that may comment)" >&2`,
          '    exit 1',
          '  fi',
          '  echo "secretstore-iac: access diff posted as a note of !$CI_MERGE_REQUEST_IID"',
          'else',
          `  echo "secretstore-iac: ${options.noteTokenVariable} is not set: the access diff is in the job log above and in the artifact access-diff.md"`,
          'fi',
          'flags=$(cat access-risk-flags.txt)',
          'if [ "$flags" -gt 0 ]; then',
          `  case ",\${CI_MERGE_REQUEST_LABELS:-}," in *,${options.acknowledgeLabel},*) ack=label ;; *) ack= ;; esac`,
          `  if [ "\${${ACCEPT_RISK_VARIABLE}:-}" = "true" ]; then ack=variable; fi`,
          '  if [ -z "$ack" ]; then',
          `    echo "secretstore-iac: $flags risk flag(s) in the access diff: review them, then add the label ${options.acknowledgeLabel} to the merge request (or set ${ACCEPT_RISK_VARIABLE}=true) and re-run this job" >&2`,
          '    exit 1',
          '  fi',
          '  echo "secretstore-iac: $flags risk flag(s) acknowledged by $ack"',
          'fi',
        ].join('\n'),
      ]),
      '  artifacts:',
      '    when: always',
      '    paths: [access-diff.md, access-risk-flags.txt]',
      '    expire_in: 2 weeks',
      '',
    ].join('\n'),
  );
  return out.join('\n');
}
