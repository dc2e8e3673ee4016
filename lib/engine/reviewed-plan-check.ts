import * as fs from 'fs';
import { planDigest } from '../sources/saved-plan';
import { GuardRefusal } from './guard-refusal';

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
 * @throws UnreviewedPlanRefused naming the difference
 */
export function checkReviewedPlan(stack: string, planFile: string, reviewed: readonly RecordedReviewedPlan[], reviewFile: string, engineVersionLine?: string): void {
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
  if (want.engineVersion !== undefined && engineVersionLine !== undefined && versionNumber(want.engineVersion) !== versionNumber(engineVersionLine)) {
    throw new UnreviewedPlanRefused(
      stack,
      `the reviewed plan was made by engine version ${want.engineVersion}, and this apply runs ${engineVersionLine.trim()}`,
      'apply it with the engine that made it (--engine, SECRETSTORE_IAC_ENGINE), or make and review the plan again with this one',
    );
  }
}
