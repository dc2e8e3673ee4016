import { mdCell, mdCode, mdTable } from '../render/markdown-text';
import { SelectedStack, StackSelection } from './stack-selection';

/** Digits of a digest shown in Markdown: enough to tell two apart by eye; the JSON form has them all. */
const SHOWN_DIGITS = 16;

const short = (digest: string | undefined): string => (digest === undefined ? '—' : mdCode(digest.slice(0, 'sha256:'.length + SHOWN_DIGITS)));

function planned(stack: SelectedStack): string {
  if (stack.change === 'removed') return 'no: not in HEAD';
  if (!stack.selected) return 'no';
  return stack.via.length > 0 ? `yes: depends on ${stack.via.map(mdCode).join(', ')}` : 'yes';
}

/**
 * The selection as Markdown for a merge request's note: per stack, in the order the pipeline applies
 * them, its change, whether it is planned (and through which changed stack), and its digests.
 * @param labels how BASE and HEAD were given, for the heading
 */
export function renderStackSelectionMarkdown(selection: StackSelection, labels: { readonly base: string; readonly head: string }): string {
  const count = selection.selected.length;
  const lines = [
    `### Stacks planned: ${count} of ${selection.stacks.length - selection.removed.length}`,
    '',
    `${mdCode(labels.base)} → ${mdCode(labels.head)}: a stack is planned when its synthesized content (digest) differs, or a stack it depends on is planned.`,
    '',
    mdTable(
      ['stack', 'change', 'planned', `digest in ${mdCell(mdCode(labels.base))}`, `digest in ${mdCell(mdCode(labels.head))}`],
      selection.stacks.map((s) => [mdCode(s.name), s.change, planned(s), short(s.baseDigest), short(s.headDigest)].map(mdCell)),
    ),
  ];
  if (selection.removed.length > 0) {
    lines.push('', `Removed stacks (${selection.removed.map(mdCode).join(', ')}) are not selected here: \`secretstore-iac moves\` writes their directory, and the retired-stacks jobs plan them; what their state holds that no stack declares any more is destroyed only by an apply a person approves (docs/pipelines.md §8).`);
  }
  return `${lines.join('\n')}\n`;
}
