import { AccessDiff } from '../../../lib/access/access-diff';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { AccessReport, ReportIdentity } from '../../../lib/access/access-report';
import { renderAccessReportMarkdown } from '../../../lib/access/access-report-markdown';
import { renderDriftMarkdown } from '../../../lib/reconcile/drift-markdown';
import { StackMoves } from '../../../lib/reconcile/stack-moves';
import { renderStackMovesMarkdown } from '../../../lib/reconcile/stack-moves-markdown';
import { DriftReport } from '../../../lib/reconcile/store-drift';
import { renderStackSelectionMarkdown } from '../../../lib/sources/stack-selection-markdown';
import { StackSelection } from '../../../lib/sources/stack-selection';

// Issue 36: every text of the configuration or the store that reaches a merge-request note (the
// access diff and its risk flags, the access report, drift, moves, the stack selection) goes
// through the Markdown encoder: a hostile text is shown, never rendered.

const H = '<img src=x onerror=alert(1)> @all [click](https://evil.example) ![i](https://evil.example/i.png) #12 !3 ~l **b** | c\nnext';

/** The text outside inline code spans, with the library's own bold labels and table pipes removed. */
function live(markdown: string): string[] {
  return markdown
    .split('\n')
    .map((line) =>
      line
        .replace(/(`+) .*? \1|(`+)[^`]*?\2/g, '')
        .replace(/\*\*[A-Za-z0-9][A-Za-z ,:.()0-9-]*\*\*/g, '')
        .replace(/\\\|/g, '')
        .replace(/^\|.*/, (row) => row.replace(/\|/g, ''))
        .replace(/^#+ /, '')
        .replace(/^ *- /, ''),
    )
    .filter((line, i) => /[<>[\]!@#~*]|https?:/.test(line) || markdown.split('\n')[i].startsWith('next'));
}

const identity = (name: string): ReportIdentity => ({
  name,
  method: 'oidc',
  mount: 'oidc',
  role: H,
  stack: H,
  declaredAt: H,
  bindings: { bound_claims: { groups: [H] }, groups_claim: 'groups', user_claim: H },
  policies: [H],
  defaultPolicy: false,
  rules: [{ path: H, kind: 'exact', capabilities: ['read'], policies: [H], constraints: [H], builtinDefault: false }],
  omittedDefaultRules: 0,
  problems: [`policy \`${H}\` is missing: ${H}`],
} as unknown as ReportIdentity);

const accessDiff: AccessDiff = {
  added: [identity('oidc/new')],
  removed: [{ ...identity('oidc/gone') }],
  changed: [
    {
      name: 'oidc/x',
      method: 'oidc',
      rules: [{ path: H, kind: 'exact', before: [], after: ['read'], gained: ['read'], lost: [], added: true, removed: false }],
      bindings: [{ field: 'user_claim', before: H, after: `${H}2` }],
    } as unknown as AccessDiff['changed'][number],
  ],
  unchanged: 0,
  flags: [{ kind: 'people-gained', identity: 'oidc/x', identities: ['oidc/x'], message: `gain \`read\` on \`${H}\`: stated reason (machinePathReason): ${JSON.stringify(H)}` }],
  problems: [{ identity: H, problem: `refused: ${H}` }],
};

describe('no text of the configuration or the store is live Markdown in a note', () => {
  it('the access diff: flags, problems, added, removed and changed identities, rules and bindings', () => {
    const md = renderAccessDiffMarkdown(accessDiff, { base: H, head: H });
    expect(md).toMatch(/`[^`\n]*@all[^`\n]*`/);
    expect(live(md)).toEqual([]);
  });

  it('the access report: stacks, identities, problems, bindings, rules, policies', () => {
    const report: AccessReport = { stacks: [H], identities: [identity('oidc/a')], unattachedPolicies: [H] };
    expect(live(renderAccessReportMarkdown(report))).toEqual([]);
  });

  it('drift: summaries, details, stacks and addresses', () => {
    const report = {
      findings: [{ kind: 'changed', storePath: H, identities: [H], stack: H, address: H, summary: `role \`${H}\` differs: ${H}`, details: [`\`token_ttl\`: ${H} → ${H}`] }],
      access: { ...accessDiff, added: [], removed: [], changed: [] },
    } as unknown as DriftReport;
    const md = renderDriftMarkdown(report, H);
    expect(md).toMatch(/`[^`\n]*@all[^`\n]*`/);
    // The library's own ` [stack: address]` at the end of a finding's line, its parts encoded.
    expect(live(md).map((line) => line.replace(/ \[[^[\]]*\]$/, '')).filter((line) => /[<>[\]!@#~*]|https?:/.test(line))).toEqual([]);
  });

  it('moves: store paths, stacks and addresses', () => {
    const moves: StackMoves = {
      moves: [{ kind: 'policy', storePath: H, importId: H, from: { stack: H, address: H }, to: { stack: H, address: H } }],
      renames: [{ kind: 'policy', storePath: H, stack: H, from: H, to: H }],
      removals: [{ kind: 'policy', storePath: H, stack: H, address: H, stackRemains: false }],
      retiredGrants: [{ kind: 'policy', storePath: H, stack: H, address: H, stackRemains: false }],
      reassigned: [{ kind: 'policy', storePath: H, from: { stack: H, address: H, grant: true }, to: { stack: H, address: H, grant: false } }],
      byStack: new Map(),
      ambiguous: [],
      conflicts: [],
    };
    expect(live(renderStackMovesMarkdown(moves, 'Approve it in the manual job.'))).toEqual([]);
  });

  it('the stack selection: stack names and labels', () => {
    const selection = {
      stacks: [{ name: H, change: 'changed', selected: true, via: [H], baseDigest: 'sha256:0', headDigest: 'sha256:1' }],
      selected: [H],
      removed: [H],
    } as unknown as StackSelection;
    expect(live(renderStackSelectionMarkdown(selection, { base: H, head: H }))).toEqual([]);
  });
});
