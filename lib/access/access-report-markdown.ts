import { AccessReport, ReportIdentity, ReportRule } from './access-report';
import { formatBinding } from './binding-format';
import { terminalLine } from '../private/terminal-text';
import { mdCell, mdCode, mdTable } from './markdown-text';

/** Name of each auth method as people say it. */
const METHOD_LABEL = { jwt: 'JWT role', approle: 'AppRole role' } as const;

/** The access report as Markdown: one section per identity, bindings then path patterns. */
export function renderAccessReportMarkdown(report: AccessReport): string {
  const out: string[] = ['# Access report', ''];
  out.push(
    `${report.identities.length} ${plural(report.identities.length, 'identity', 'identities')} ` +
      `in ${report.stacks.length} ${plural(report.stacks.length, 'stack', 'stacks')} (${terminalLine(report.stacks.join(', '))}).`,
  );
  if (report.identities.some((i) => i.omittedDefaultRules > 0)) {
    out.push('Rules of the built-in `default` policy are left out (`--include-default` lists them).');
  }
  for (const identity of report.identities) out.push('', ...identitySection(identity));
  if (report.unattachedPolicies.length > 0) {
    out.push('', '## Policies attached to no identity', '', report.unattachedPolicies.map((p) => `- ${mdCode(p)}`).join('\n'));
  }
  return `${out.join('\n')}\n`;
}

/** The Markdown lines of one identity (also used for identities added in a diff). */
export function identitySection(identity: ReportIdentity, heading = '##'): string[] {
  const out: string[] = [`${heading} ${mdCode(identity.name)}`, ''];
  const where = identity.declaredAt ? `, ${mdCode(identity.declaredAt)}` : '';
  out.push(`${METHOD_LABEL[identity.method]} ${mdCode(identity.role)} on mount ${mdCode(identity.mount)} (stack ${mdCode(identity.stack)}${where}).`);
  const policies = identity.policies.map((p) => mdCode(p)).join(', ');
  out.push(`Token policies: ${policies || '(none)'}.`);
  for (const problem of identity.problems) out.push(`**Problem:** ${terminalLine(problem)}.`);
  out.push('', bindingsTable(identity.bindings), '');
  out.push(rulesTable(identity.rules));
  if (identity.omittedDefaultRules > 0) {
    out.push('', `Plus the ${identity.omittedDefaultRules} rules of the built-in ${mdCode('default')} policy.`);
  }
  return out;
}

/** The bindings of an identity as a two-column table. */
export function bindingsTable(bindings: Readonly<Record<string, unknown>>): string {
  const rows = Object.entries(bindings).map(([field, value]) => [
    mdCell(field),
    mdCell(formatBinding(field, value as Parameters<typeof formatBinding>[1])),
  ]);
  return mdTable(['binding', 'value'], rows);
}

/** Path patterns with capabilities as a table (or a sentence when there are none). */
export function rulesTable(rules: readonly ReportRule[]): string {
  if (rules.length === 0) return '_No path is granted._';
  return mdTable(
    ['path', 'capabilities', 'policies'],
    rules.map((r) => [
      mdCode(r.path),
      mdCell(r.capabilities.join(', ') + (r.constraints.length > 0 ? ` (constrained: ${r.constraints.join(', ')})` : '')),
      mdCell(r.policies.join(', ')),
    ]),
  );
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}
