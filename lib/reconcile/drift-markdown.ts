import { renderAccessDiffMarkdown } from '../access/access-diff-markdown';
import { mdCode, mdMessage, mdText } from '../render/markdown-text';
import { DriftKind, DriftReport } from './store-drift';

/** Headings of the finding kinds. */
const HEADING: Readonly<Record<DriftKind, string>> = {
  missing: 'Declared but missing on the store',
  changed: 'Changed on the store',
  'builtin-changed': 'Built-in policy changed on the store',
  unmanaged: 'On the store, managed by no stack',
};

/**
 * The drift report as Markdown: findings grouped by kind, each with its store path, the
 * identities it concerns and what differs (declared → store), then the access diff
 * (declarations → store) with its risk flags.
 */
export function renderDriftMarkdown(report: DriftReport, store: string): string {
  const out = [`## Drift: declarations → store ${mdCode(store)}`, ''];
  if (report.findings.length === 0) {
    out.push('**In sync.** Every declared object is on the store as declared, and the store has no unmanaged role or policy.');
    return `${out.join('\n')}\n`;
  }
  out.push(`**${report.findings.length} ${report.findings.length === 1 ? 'difference' : 'differences'}.**`);
  for (const kind of Object.keys(HEADING) as DriftKind[]) {
    const findings = report.findings.filter((f) => f.kind === kind);
    if (findings.length === 0) continue;
    out.push('', `### ${HEADING[kind]}`, '');
    for (const f of findings) {
      const who = f.identities.length > 0 ? ` (identities: ${f.identities.map(mdCode).join(', ')})` : '';
      const where = f.address ? ` [${mdText(f.stack ?? '')}: ${mdCode(f.address)}]` : '';
      // Summaries and details quote live values: one escaped line each.
      out.push(`- ${mdCode(f.storePath)}: ${mdMessage(f.summary)}${who}${where}`);
      for (const d of f.details) out.push(`  - ${mdMessage(d)}`);
    }
  }
  if (report.access.flags.length > 0 || report.access.changed.length > 0) {
    out.push('', renderAccessDiffMarkdown(report.access, { base: 'declarations', head: 'store' }).replace(/^## /, '### ').replace(/\n### /g, '\n#### ').trimEnd());
  }
  return `${out.join('\n')}\n`;
}
