import { terminalLine } from '../private/terminal-text';
import { usageSummary } from './usage-markdown';
import { UsageReport } from './usage-report';

/** The usage report for the terminal: one escaped line per fact, grouped by identity. */
export function renderUsageText(report: UsageReport): string {
  const out = usageSummary(report).map(terminalLine);
  for (const u of report.identities) {
    out.push('', `${terminalLine(u.identity)}  (${u.logins} ${u.logins === 1 ? 'login' : 'logins'}, last seen ${u.lastSeen ?? 'never'})`);
    for (const g of u.used) out.push(`  used     ${terminalLine(g.rule)}  ${g.operations.join(',')} x${g.count}, last ${g.lastUse} (policies: ${terminalLine(g.policies.join(', '))})`);
    for (const g of u.unused) {
      const where = g.policies.map((p) => (p.declaredAt !== undefined ? `${p.name} at ${p.declaredAt}` : p.name)).join(', ');
      const by = g.declaredBy.length > 0 ? `declared by ${g.declaredBy.join(', ')}; ` : '';
      out.push(`  unused   ${terminalLine(g.rule)}  ${g.capabilities.join(',')} (${terminalLine(by)}policies: ${terminalLine(where)})`);
    }
    for (const d of u.denied) {
      out.push(`  denied   ${d.operation} ${terminalLine(d.path)} x${d.count}, last ${d.lastTime}: ${d.cause}`);
      out.push(`           fix: ${terminalLine(d.fix)}`);
    }
  }
  out.push('', report.failedLogins.length === 0 ? 'failed logins: none' : 'failed logins:');
  for (const f of report.failedLogins) {
    out.push(`  ${terminalLine(f.mount)}${f.role !== undefined ? `/${terminalLine(f.role)}` : ' (role HMAC-ed in the log)'} x${f.count}, last ${f.lastTime}: ${f.cause}`);
  }
  return out.join('\n');
}
