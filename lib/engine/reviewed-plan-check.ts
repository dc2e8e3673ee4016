import { createHmac, timingSafeEqual } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { compareStrings } from '../private/compare-strings';
import { planConfigurationFiles } from '../sources/plan-archive';
import { planDigest } from '../sources/saved-plan';
import { SYNTHESIZED_STACK_FILE } from './bookkeeping-seal';
import { GuardRefusal } from './guard-refusal';

/**
 * Environment variable holding the secret that keys the review's `reviewed-plans.json` (HMAC-SHA256):
 * the default branch's review job seals it with the secret, and `tf --reviewed-plans` applies only
 * with a seal made with the same secret, of this pipeline and commit. A CI/CD variable, protected
 * and masked, so only protected pipelines hold it (docs/pipelines.md §6); unset, the file is
 * unverified and the plan is bound to the stack's synthesis by its own configuration snapshot.
 */
export const REVIEW_SECRET_VARIABLE = 'SECRETSTORE_IAC_REVIEW_SECRET';

/** One plan a review read, as `access-diff --plans ... --format json` records it. */
export interface RecordedReviewedPlan {
  /** The stack. */
  readonly stack: string;
  /** The plan file as the review named it. */
  readonly file: string;
  /** SHA-256 of the plan file the review read, hex. */
  readonly sha256: string;
  /** The engine version the plan records, when it does. */
  readonly engineVersion?: string;
}

/**
 * Thrown when `tf --reviewed-plans FILE -- apply PLANFILE` is asked to apply a plan the review did
 * not read (another digest), of a stack it did not review, or one the running engine did not make.
 * The CLI exits 4 (refused, nothing applied).
 */
export class UnreviewedPlanRefused extends GuardRefusal {
  constructor(stack: string, why: string, fix: string) {
    super(`${stack}: nothing applied: ${why}. Fix: ${fix}`);
    this.name = 'UnreviewedPlanRefused';
  }
}

/**
 * The plans a review recorded: the `plans` of the JSON `access-diff --plans ... --format json`
 * writes (the note's table of plan files and digests).
 * @throws Error naming the file when it is not such a review
 */
export function readReviewedPlans(reviewFile: string): RecordedReviewedPlan[] {
  let document: unknown;
  try {
    document = JSON.parse(fs.readFileSync(reviewFile, 'utf8'));
  } catch (e) {
    throw new Error(`--reviewed-plans ${reviewFile}: not the JSON of \`access-diff --plans ... --format json\` (${(e as Error).message})`);
  }
  const plans = (document as { plans?: unknown } | null)?.plans;
  const valid =
    Array.isArray(plans) &&
    plans.every((p) => {
      const { stack, file, sha256, engineVersion } = (p ?? {}) as Record<string, unknown>;
      return typeof stack === 'string' && typeof file === 'string' && typeof sha256 === 'string' && /^[0-9a-f]{64}$/.test(sha256) && (engineVersion === undefined || typeof engineVersion === 'string');
    });
  if (!valid) throw new Error(`--reviewed-plans ${reviewFile}: no "plans" list of { stack, file, sha256 } as \`access-diff --plans ... --format json\` writes`);
  return plans as RecordedReviewedPlan[];
}

/** The seal of a review (`seal` of `reviewed-plans.json`): an HMAC over its plans, the pipeline and the commit it reviewed. */
export interface ReviewSeal {
  /** `hmac-sha256:<hex>`. */
  readonly hmac: string;
  /** The pipeline whose review it is (`CI_PIPELINE_ID`), `''` outside CI. */
  readonly pipeline: string;
  /** The commit it reviewed (`CI_COMMIT_SHA`), `''` outside CI. */
  readonly commit: string;
}

/** The HMAC of a review's plans for a pipeline and commit, in a canonical order. */
function reviewHmac(plans: readonly RecordedReviewedPlan[], pipeline: string, commit: string, secret: string): string {
  const text = JSON.stringify([
    'secretstore-iac reviewed-plans 1',
    pipeline,
    commit,
    [...plans].sort((a, b) => compareStrings(a.stack, b.stack) || compareStrings(a.file, b.file)).map((p) => [p.stack, p.file, p.sha256, p.engineVersion ?? null]),
  ]);
  return `hmac-sha256:${createHmac('sha256', secret).update(text).digest('hex')}`;
}

/**
 * The review JSON (`access-diff --plans ... --format json`) with its seal added when the job holds
 * {@link REVIEW_SECRET_VARIABLE}, bound to `CI_PIPELINE_ID` and `CI_COMMIT_SHA`; as it is without.
 */
export function sealReview(reviewJson: string, env: Readonly<Record<string, string | undefined>>): string {
  const secret = env[REVIEW_SECRET_VARIABLE];
  if (secret === undefined || secret === '') return reviewJson;
  const document = JSON.parse(reviewJson) as { plans?: RecordedReviewedPlan[] };
  const pipeline = env.CI_PIPELINE_ID ?? '';
  const commit = env.CI_COMMIT_SHA ?? '';
  const seal: ReviewSeal = { hmac: reviewHmac(document.plans ?? [], pipeline, commit, secret), pipeline, commit };
  return `${JSON.stringify({ ...document, seal }, null, 2)}\n`;
}

/**
 * Checks the seal of a review before its plans are trusted: with {@link REVIEW_SECRET_VARIABLE} set,
 * the file must carry a seal made with that secret over exactly its plans, for this pipeline and
 * commit (when the job says them); without it, the file is unverified, and said to be.
 * @returns the line for the log, saying how the file is trusted
 * @throws UnreviewedPlanRefused when the secret is set and the seal is absent or does not verify
 */
export function checkReviewSeal(stack: string, reviewFile: string, plans: readonly RecordedReviewedPlan[], env: Readonly<Record<string, string | undefined>>): string {
  const secret = env[REVIEW_SECRET_VARIABLE];
  if (secret === undefined || secret === '') {
    return `${reviewFile} is unverified (${REVIEW_SECRET_VARIABLE} is not set: anyone who can edit it can make it name another plan's SHA-256); the plan is bound to this stack's synthesis by the configuration it carries`;
  }
  let seal: Partial<ReviewSeal> | undefined;
  try {
    seal = (JSON.parse(fs.readFileSync(reviewFile, 'utf8')) as { seal?: Partial<ReviewSeal> }).seal;
  } catch {
    seal = undefined;
  }
  const rerun = `run the pipeline's review job again (it seals ${path.basename(reviewFile)} with ${REVIEW_SECRET_VARIABLE}) and apply the plans it read`;
  if (seal === undefined || typeof seal.hmac !== 'string' || typeof seal.pipeline !== 'string' || typeof seal.commit !== 'string') {
    throw new UnreviewedPlanRefused(stack, `${reviewFile} carries no seal, and ${REVIEW_SECRET_VARIABLE} is set: a review this pipeline's review job did not seal`, rerun);
  }
  const expected = reviewHmac(plans, seal.pipeline, seal.commit, secret);
  if (seal.hmac.length !== expected.length || !timingSafeEqual(Buffer.from(seal.hmac), Buffer.from(expected))) {
    throw new UnreviewedPlanRefused(stack, `the seal of ${reviewFile} does not verify with ${REVIEW_SECRET_VARIABLE}: the file was edited after the review (or sealed with another secret)`, rerun);
  }
  for (const [what, variable, value] of [['pipeline', 'CI_PIPELINE_ID', seal.pipeline], ['commit', 'CI_COMMIT_SHA', seal.commit]] as const) {
    const here = env[variable];
    if (here !== undefined && here !== '' && here !== value) throw new UnreviewedPlanRefused(stack, `${reviewFile} is the review of ${what} ${value || '(none)'}, this job's ${variable} is ${here}`, rerun);
  }
  return `${reviewFile}: its seal verifies (HMAC-SHA256 with ${REVIEW_SECRET_VARIABLE}, pipeline ${seal.pipeline || '(none)'}, commit ${seal.commit.slice(0, 12) || '(none)'})`;
}

/** The configuration files a module key `m-` (the root module) holds in a plan's snapshot. */
const ROOT_MODULE = 'm-/';

/**
 * What in a saved plan's configuration snapshot is not the stack directory's configuration: the
 * plan must have been made from the files the stack directory holds, byte for byte (its
 * `cdk.tf.json` among them), and load no module. Derived from the plan file itself, so a review
 * record edited to name another plan's digest does not carry that plan through.
 * @returns one line per difference, empty when the plan was made from this stack directory
 */
export function planConfigurationProblems(planBytes: Buffer, stackDir: string): string[] {
  let files: Map<string, Buffer>;
  try {
    files = planConfigurationFiles(planBytes);
  } catch (e) {
    return [`its configuration snapshot cannot be read (${(e as Error).message})`];
  }
  const problems: string[] = [];
  const modules = files.get('modules.json')?.toString('utf8');
  let onlyRoot = false;
  try {
    const list = JSON.parse(modules ?? 'null') as unknown;
    onlyRoot = Array.isArray(list) && list.length === 1 && (list[0] as { Key?: unknown })?.Key === '';
  } catch {
    onlyRoot = false;
  }
  if (!onlyRoot) problems.push('its configuration loads modules, or records none: the synthesis writes one root module');
  const names = [...files.keys()].filter((n) => n !== 'modules.json').sort(compareStrings);
  // A retired stack's directory has no cdk.tf.json (its moves file removes what it held): then none is expected.
  const synthesized = fs.existsSync(path.join(stackDir, SYNTHESIZED_STACK_FILE));
  if (synthesized && !names.includes(`${ROOT_MODULE}${SYNTHESIZED_STACK_FILE}`)) problems.push('it was not made from a cdk.tf.json');
  for (const name of names) {
    if (!name.startsWith(ROOT_MODULE) || name.slice(ROOT_MODULE.length).includes('/')) {
      problems.push(`it holds ${name}, a file of no root module`);
      continue;
    }
    const file = name.slice(ROOT_MODULE.length);
    let here: Buffer | undefined;
    try {
      here = fs.readFileSync(path.join(stackDir, file));
    } catch {
      here = undefined;
    }
    if (here === undefined) problems.push(`it was made with ${file}, which the stack directory does not hold`);
    else if (!here.equals(files.get(name)!)) problems.push(`its ${file} is not the stack directory's (another configuration)`);
  }
  return problems;
}

/** The version number in an engine's version line (`OpenTofu v1.12.6` → `1.12.6`), or the text itself. */
function versionNumber(line: string): string {
  return /v?(\d+\.\d+\.\d+[^\s]*)/.exec(line)?.[1] ?? line.trim();
}

/**
 * Refuses to apply a saved plan that is not the one the review read: the apply applies the reviewed
 * plan, byte for byte, or nothing. A plan made again after the review (another configuration, an
 * override file, other input variables, another engine) has another digest, whatever it holds.
 * @param stack the stack applied
 * @param planFile the plan file `apply` was given (absolute)
 * @param reviewed the plans the review recorded ({@link readReviewedPlans})
 * @param reviewFile the review's file, for messages
 * @param engineVersionLine the running engine's version line (`OpenTofu v1.12.6`), when known
 * @param stackDir the stack directory the engine applies in: the plan must have been made from its
 *   configuration ({@link planConfigurationProblems}); none: not compared
 * @throws UnreviewedPlanRefused naming the difference
 */
export function checkReviewedPlan(stack: string, planFile: string, reviewed: readonly RecordedReviewedPlan[], reviewFile: string, engineVersionLine?: string, stackDir?: string): void {
  const recorded = reviewed.filter((p) => p.stack === stack);
  const rerun = `make the plan again in the pipeline, review it (\`secretstore-iac access-diff --plans ... --format json > ${reviewFile}\`), and apply the plan that review read`;
  if (recorded.length !== 1) {
    throw new UnreviewedPlanRefused(
      stack,
      recorded.length === 0
        ? `the review ${reviewFile} read no plan of stack ${stack} (it read ${reviewed.map((p) => p.stack).join(', ') || 'none'})`
        : `the review ${reviewFile} names ${recorded.length} plans of stack ${stack}: one plan per stack is reviewed`,
      rerun,
    );
  }
  const want = recorded[0];
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(planFile);
  } catch (e) {
    throw new UnreviewedPlanRefused(stack, `the plan file ${planFile} cannot be read (${(e as Error).message})`, rerun);
  }
  const have = planDigest(bytes);
  if (have !== want.sha256) {
    throw new UnreviewedPlanRefused(
      stack,
      `${planFile} is not the plan the review read: its SHA-256 is ${have}, the review ${reviewFile} read ${want.file} with SHA-256 ${want.sha256}`,
      rerun,
    );
  }
  const configuration = stackDir === undefined ? [] : planConfigurationProblems(bytes, stackDir);
  if (configuration.length > 0) {
    throw new UnreviewedPlanRefused(stack, `${planFile} was not made from this stack's synthesis: ${configuration.join('; ')}`, rerun);
  }
  if (want.engineVersion !== undefined && engineVersionLine !== undefined && versionNumber(want.engineVersion) !== versionNumber(engineVersionLine)) {
    throw new UnreviewedPlanRefused(
      stack,
      `the reviewed plan was made by engine version ${want.engineVersion}, and this apply runs ${engineVersionLine.trim()}`,
      'apply it with the engine that made it (--engine, SECRETSTORE_IAC_ENGINE), or make and review the plan again with this one',
    );
  }
}
