import { mdCell, mdCode, mdTable } from '../render/markdown-text';
import { renderAccessDiffMarkdown } from './access-diff-markdown';
import { PlanReview } from './plan-review';

/** Labels of the two sides of a review of saved plans. */
export const PLAN_REVIEW_SIDES = { base: 'store state (refreshed, as planned)', head: 'after applying the saved plans' } as const;

/**
 * The review of saved plans as Markdown for the merge request: the access diff's note, preceded by
 * what it was computed from (each plan file with its SHA-256, so that an apply can check that it
 * applies a reviewed plan; the stacks read from the synthesis instead) and, when the plans hold
 * values unknown until apply or changes the review cannot read, a line saying the review is incomplete.
 * `afterFlags`: lines shown after the risk flags (the use of what the plans remove, `--usage-log`).
 */
export function renderPlanReviewMarkdown(review: PlanReview, afterFlags?: readonly string[]): string {
  const preface = [
    `Computed from the engine's saved plans (\`show -json\`): every resource change with the values the engine will write, whatever file, input variable or expression produced them.`,
    '',
    mdTable(
      ['stack', 'plan file', 'SHA-256', 'engine'],
      review.plans.map((p) => [mdCode(p.stack), mdCode(p.file), mdCode(p.sha256), mdCell(p.engineVersion ?? 'not recorded')]),
    ),
  ];
  if (review.unplanned.length > 0) {
    preface.push('', `Read from the synthesized output on both sides (no plan given, taken as unchanged): ${review.unplanned.map(mdCode).join(', ')}.`);
  }
  if (!review.complete) {
    preface.push(
      '',
      '**The review is incomplete:** the plans hold values unknown until apply or changes to resources the review does not read (risk flags below); what the apply does there is not in this note.',
    );
  }
  return renderAccessDiffMarkdown(review.diff, { ...PLAN_REVIEW_SIDES, preface, afterFlags });
}
