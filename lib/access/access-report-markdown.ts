import { AccessReport, ReportIdentity, ReportRule } from './access-report';
import { formatBinding } from './binding-format';
import { mdCell, mdCode, mdMessage, mdTable, mdText, mdValue } from '../render/markdown-text';

/** Name of each auth method as people say it. */
const METHOD_LABEL = { jwt: 'JWT role', approle: 'AppRole role', oidc: 'OIDC role (people, single sign-on)' } as const;

/**
 * What the report says of people and the registry (spec §4.3, §5.6), at its end: the library
 * declares the store's logins, and the registry's own permissions are the registry's.
 */
export const PEOPLE_AND_REGISTRY_NOTE: readonly string[] = [
  '## People and the registry',
  '',
  '- People reach the store only through single sign-on, as the `oidc` identities above (one role per group of the identity provider); a group reads no platform secret path unless its role lists it.',
  '- People reach the registry through the same single sign-on, with browse and download rights only (repositories, artifacts, storage usage, metadata): people never push (spec §4.3, §5.6).',
  '- Pushing is for `svc-orchestrator` and `svc-executor`, within their permission scopes (spec §2.1), from CI jobs that read the accounts through `registry-ci`.',
  '- This library manages the store (its logins, roles and policies), not the registry\'s own permissions: those are set in the registry and its single sign-on, and this report cannot show them.',
];

/** The access report as Markdown: one section per identity, bindings then path patterns. */
export function renderAccessReportMarkdown(report: AccessReport): string {
  const out: string[] = ['# Access report', ''];
  out.push(
    `${report.identities.length} ${plural(report.identities.length, 'identity', 'identities')} ` +
      `in ${report.stacks.length} ${plural(report.stacks.length, 'stack', 'stacks')} (${mdText(report.stacks.join(', '))}).`,
  );
  if (report.identities.some((i) => i.omittedDefaultRules > 0)) {
    out.push('Rules of the built-in `default` policy are left out (`--include-default` lists them).');
  }
  for (const identity of report.identities) out.push('', ...identitySection(identity));
  if (report.unattachedPolicies.length > 0) {
    out.push('', '## Policies attached to no identity', '', report.unattachedPolicies.map((p) => `- ${mdCode(p)}`).join('\n'));
  }
  out.push('', ...PEOPLE_AND_REGISTRY_NOTE);
  return `${out.join('\n')}\n`;
}

/** The Markdown lines of one identity (also used for identities added in a diff). */
export function identitySection(identity: ReportIdentity, heading = '##'): string[] {
  const out: string[] = [`${heading} ${identityHeading(identity)}`, ''];
  const where = identity.declaredAt ? `, ${mdCode(identity.declaredAt)}` : '';
  out.push(`${METHOD_LABEL[identity.method]} ${mdCode(identity.role)} on mount ${mdCode(identity.mount)} (stack ${mdCode(identity.stack)}${where}).`);
  if (identity.method === 'oidc') out.push(peopleLine(identity.bindings));
  const policies = identity.policies.map((p) => mdCode(p)).join(', ');
  out.push(`Token policies: ${policies || '(none)'}.`);
  for (const problem of identity.problems) out.push(`**Problem:** ${mdMessage(problem)}.`);
  out.push('', bindingsTable(identity.bindings), '');
  out.push(rulesTable(identity.rules));
  if (identity.omittedDefaultRules > 0) {
    out.push('', `Plus the ${identity.omittedDefaultRules} rules of the built-in ${mdCode('default')} policy.`);
  }
  return out;
}

/**
 * An identity's name in a heading, in backticks, with its namespace when it is not the root's:
 * `` `approle/app` (namespace `ns1`) ``.
 */
export function identityHeading(identity: { readonly name: string; readonly namespace?: string }): string {
  return identity.namespace === undefined ? mdCode(identity.name) : `${mdCode(identity.name)} (namespace ${mdCode(identity.namespace)})`;
}

/** Who logs in as a people's role: the members of the groups its bound claims name. */
function peopleLine(bindings: Readonly<Record<string, unknown>>): string {
  const claims = (bindings.bound_claims ?? {}) as Readonly<Record<string, readonly string[]>>;
  const claim = typeof bindings.groups_claim === 'string' ? bindings.groups_claim : undefined;
  const groups = claim !== undefined ? claims[claim] : undefined;
  if (!groups || groups.length === 0) return '**Not bound by group:** any person the identity provider knows who passes the other bindings logs in.';
  return `People log in through single sign-on when their ${mdCode(claim!)} claim holds ${groups.map((g) => mdCode(g)).join(' or ')}.`;
}

/** The bindings of an identity as a two-column table. */
export function bindingsTable(bindings: Readonly<Record<string, unknown>>): string {
  const rows = Object.entries(bindings).map(([field, value]) => [
    mdCell(mdText(field)),
    mdCell(mdValue(formatBinding(field, value as Parameters<typeof formatBinding>[1]))),
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
      mdCell(mdText(r.capabilities.join(', ') + (r.constraints.length > 0 ? ` (constrained: ${r.constraints.join(', ')})` : ''))),
      mdCell(mdText(r.policies.join(', '))),
    ]),
  );
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}
