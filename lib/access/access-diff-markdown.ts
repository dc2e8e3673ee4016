import { AccessDiff, hasAccessChange } from './access-diff';
import { BindingChange, IdentityChange } from './identity-change';
import { identityHeading, identitySection } from './access-report-markdown';
import { formatBinding } from './binding-format';
import { mdCell, mdCode, mdMessage, mdTable, mdText, mdValue } from '../render/markdown-text';
import { RISK_LABEL, RiskFlag } from './risk-flag';

/** Labels of the two sides, shown in the heading (`main`, `HEAD`, directory names). */
export interface DiffSides {
  readonly base: string;
  readonly head: string;
  /** Lines shown under the heading, before the summary: what the sides were read from (saved plans). */
  readonly preface?: readonly string[];
  /** Lines shown after the risk flags, when access changed: the use of what the change removes (`--usage-log`). */
  readonly afterFlags?: readonly string[];
}

/**
 * The access diff as Markdown for a merge-request comment: a summary line, risk flags, then
 * identities added, removed and changed.
 */
export function renderAccessDiffMarkdown(diff: AccessDiff, sides: DiffSides): string {
  const out: string[] = [`## Access changes: ${mdCode(sides.base)} → ${mdCode(sides.head)}`, ''];
  if (sides.preface !== undefined && sides.preface.length > 0) out.push(...sides.preface, '');
  if (!hasAccessChange(diff)) {
    out.push(`**No access change.** ${diff.unchanged} ${diff.unchanged === 1 ? 'identity has' : 'identities have'} the same access and bindings.`);
    // A login method mounted with no role yet gives no access, but it is what a reviewer looks at.
    appendFlags(out, diff);
    appendProblems(out, diff);
    return `${out.join('\n')}\n`;
  }
  out.push(
    `**Access changed:** ${diff.added.length} added, ${diff.removed.length} removed, ${diff.changed.length} changed, ` +
      `${diff.unchanged} unchanged. ${diff.flags.length} risk ${diff.flags.length === 1 ? 'flag' : 'flags'}.`,
  );
  appendFlags(out, diff);
  if (sides.afterFlags !== undefined && sides.afterFlags.length > 0) out.push('', ...sides.afterFlags);
  for (const identity of diff.added) out.push('', ...identitySection(identity, '### Added:'));
  for (const identity of diff.removed) {
    out.push('', `### Removed: ${identityHeading(identity)}`, '');
    const paths = identity.rules.map((r) => `${mdCode(r.path)} (${r.capabilities.join(', ')})`);
    out.push(`Loses all access${paths.length > 0 ? `: ${paths.join(', ')}` : ''}.`);
  }
  for (const change of diff.changed) out.push('', ...changeSection(change));
  appendProblems(out, diff);
  return `${out.join('\n')}\n`;
}

function appendFlags(out: string[], diff: AccessDiff): void {
  if (diff.flags.length === 0) return;
  out.push('', '### Risk flags', '');
  for (const flag of diff.flags) out.push(`- **${RISK_LABEL[flag.kind]}**, ${flagSubject(flag)}: ${mdMessage(flag.message)}`);
}

/** Whom a flag concerns: its auth method, or each identity a changed setting affects. */
function flagSubject(flag: RiskFlag): string {
  if (flag.authMethod !== undefined) return `auth method ${mdCode(`${flag.authMethod}/`)}${flag.namespace === undefined ? '' : ` (namespace ${mdCode(flag.namespace)})`}`;
  return (flag.identities.length > 0 ? flag.identities : [flag.identity]).map(mdCode).join(', ');
}

function changeSection(change: IdentityChange): string[] {
  const out = [`### Changed: ${identityHeading(change)}`];
  if (change.rules.length > 0) {
    out.push(
      '',
      mdTable(
        ['path', 'gained', 'lost', 'now'],
        change.rules.map((r) => [
          mdCode(r.path) + (r.added ? ' (new)' : r.removed ? ' (gone)' : ''),
          mdCell(mdText(r.gained.join(', '))),
          mdCell(mdText(r.lost.join(', '))),
          r.removed ? '' : mdCell(mdText(r.after.join(', '))) || '(nothing: shadows broader rules)',
        ]),
      ),
    );
  }
  if (change.bindings.length > 0) out.push('', bindingTable(change.bindings));
  return out;
}

function bindingTable(changes: readonly BindingChange[]): string {
  return mdTable(
    ['binding', 'before', 'after'],
    changes.map((c) => [mdCell(mdText(c.field)), mdCell(mdValue(formatBinding(c.field, c.before))), mdCell(mdValue(formatBinding(c.field, c.after)))]),
  );
}

function appendProblems(out: string[], diff: AccessDiff): void {
  if (diff.problems.length === 0) return;
  out.push('', '### Problems in head', '');
  for (const p of diff.problems) out.push(`- ${mdCode(p.identity)}: ${mdMessage(p.problem)}`);
}
