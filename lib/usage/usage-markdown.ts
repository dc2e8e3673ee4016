import { mdCell, mdCode, mdTable, mdText } from '../render/markdown-text';
import { IdentityUsage, UsageReport } from './usage-report';

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}


/** A table of the rows, or "None." when there is none. */
function tableOrNone(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  return rows.length === 0 ? 'None.' : mdTable(header, rows);
}

/** The summary lines shared by the Markdown and terminal forms: window, counts, malformed lines. */
export function usageSummary(report: UsageReport): string[] {
  const { counts, window, seen } = report;
  const lines = [
    `window: ${window.since ?? 'the start of the log'} to ${window.until ?? 'the end of the log'}; ` +
      `${plural(counts.responses, 'request', 'requests')} from ${plural(counts.lines, 'line', 'lines')}` +
      (seen.first !== undefined ? ` (first ${seen.first}, last ${seen.last})` : ''),
  ];
  if (report.namespace !== undefined) lines.push(`namespace: ${report.namespace} (the identities of this namespace; other namespaces' entries are counted apart)`);
  if (counts.unattributed > 0) {
    lines.push(`${plural(counts.unattributed, 'request', 'requests')} by tokens no declared identity issued (root, hand-made tokens, roles not in the configuration): not counted`);
  }
  if ((counts.loginNotInLog ?? 0) > 0) {
    lines.push(
      `unattributed: login not in the log (${plural(counts.loginNotInLog!, 'request', 'requests')}): tokens logged in before the log's first line (their display name is no proof of their mount); ` +
        'credited to none, so a grant reported never used may be used by them: give the log that holds their logins (--log, the rotated files)',
    );
  }
  if ((counts.otherNamespaces ?? 0) > 0) {
    lines.push(
      `${plural(counts.otherNamespaces!, 'entry', 'entries')} of namespaces other than ${report.namespace === undefined ? 'the root namespace' : report.namespace}: not counted ` +
        '(one report reads one namespace: VAULT_NAMESPACE, or the stacks\' settings.namespace)',
    );
  }
  if ((counts.future ?? 0) > 0) {
    const at = counts.futureAt ?? [];
    lines.push(
      `${plural(counts.future!, 'entry is', 'entries are')} dated after this report was made (${counts.readAt}) and not counted as use (at ${at.join(', ')}${counts.future! > at.length ? ', ...' : ''}): ` +
        "a store whose clock is ahead, or a log that was edited; check the store's clock and where the log came from",
    );
  }
  if (counts.malformed > 0) {
    lines.push(`${plural(counts.malformed, 'line is', 'lines are')} not an audit entry and skipped (at ${counts.malformedAt.join(', ')}${counts.malformed > counts.malformedAt.length ? ', ...' : ''})`);
  }
  return lines;
}

function identitySection(u: IdentityUsage): string[] {
  const out = [`## ${mdCode(u.identity)}`, ''];
  const where = u.declaredAt !== undefined ? `, ${mdCode(u.declaredAt)}` : '';
  out.push(`Stack ${mdCode(u.stack)}${where}. ${plural(u.logins, 'login', 'logins')}; last seen ${u.lastSeen !== undefined ? mdCode(u.lastSeen) : 'never in the window'}.`, '');
  out.push('### Grants used', '');
  out.push(
    tableOrNone(
      ['rule', 'policies', 'operations', 'requests', 'last use'],
      u.used.map((g) => [mdCell(mdCode(g.rule)), mdCell(g.policies.map(mdCode).join(', ')), mdCell(g.operations.join(', ')), String(g.count), mdCell(mdCode(g.lastUse))]),
    ),
    '',
  );
  out.push('### Grants never used in the window (least-privilege candidates)', '');
  out.push(
    tableOrNone(
      ['rule', 'capabilities', 'declared by', 'policies (declared at)', 'change'],
      u.unused.map((g) => [
        mdCell(mdCode(g.rule)),
        mdCell(g.capabilities.join(', ')),
        mdCell(g.declaredBy.length === 0 ? 'a hand-written rule' : g.declaredBy.map(mdCode).join(', ')),
        mdCell(g.policies.map((p) => (p.declaredAt !== undefined ? `${mdCode(p.name)} (${mdCode(p.declaredAt)})` : mdCode(p.name))).join(', ')),
        mdCell(mdText(g.fix)),
      ]),
    ),
    '',
  );
  out.push('### Denied requests', '');
  out.push(
    tableOrNone(
      ['path', 'operation', 'requests', 'last', 'cause (spec §7)', 'change that would grant it'],
      u.denied.map((d) => [mdCell(mdCode(d.path)), mdCell(mdText(d.operation)), String(d.count), mdCell(mdCode(d.lastTime)), mdCell(mdText(d.cause)), mdCell(mdText(d.fix))]),
    ),
  );
  return out;
}

/** The usage report as Markdown: the summary, one section per declared identity, failed logins. */
export function renderUsageMarkdown(report: UsageReport): string {
  const out = ['# Usage report', '', ...usageSummary(report).map((l) => `- ${mdText(l)}`)];
  for (const u of report.identities) out.push('', ...identitySection(u));
  out.push('', '## Failed logins', '');
  out.push(
    tableOrNone(
      ['mount', 'role', 'logins', 'last', 'cause (spec §7)'],
      report.failedLogins.map((f) => [
        mdCell(mdCode(f.mount)),
        f.role !== undefined ? mdCell(mdCode(f.role)) : 'HMAC-ed in the log',
        String(f.count),
        mdCell(mdCode(f.lastTime)),
        mdCell(mdText(f.cause)),
      ]),
    ),
  );
  return `${out.join('\n')}\n`;
}
