/**
 * The default branch's comparison of what it is about to apply with what was approved
 * (lib/pipeline/approval-comparison.ts): equal when each key's change is the approved records'
 * composed in merge order, before and after; otherwise every difference named by its cause.
 */
import { ACCESS_CHANGE_FORMAT, AccessChangeRecord, RecordedIdentityChange } from '../../../lib/access/access-change-record';
import { AppliedConfiguration, compareWithApprovals } from '../../../lib/pipeline/approval-comparison';
import { approvalRecordOf } from '../../../lib/pipeline/approval-record';

const BASE = 'b'.repeat(40);

/** An identity's change of one path pattern. */
const rule = (identity: string, path: string, before: string[], after: string[]): RecordedIdentityChange => ({
  identity,
  method: 'approle',
  change: 'changed',
  rules: [{ path, kind: 'prefix', before, after, gained: after.filter((c) => !before.includes(c)), lost: before.filter((c) => !after.includes(c)) }],
  bindings: [],
});
const change = (identities: RecordedIdentityChange[], objects: AccessChangeRecord['objects'] = []): AccessChangeRecord => ({ format: ACCESS_CHANGE_FORMAT, identities, objects, plans: [], complete: true });
const approved = (iid: number, c: AccessChangeRecord, target = BASE, mergeParent: string | undefined = target) => ({ record: approvalRecordOf(c, iid, `${iid}`.repeat(40).slice(0, 40), target), ...(mergeParent !== undefined ? { mergeParent } : {}) });

/** The configuration applied before: `caps` per identity and path, everything else unset. */
const appliedBefore = (caps: Record<string, string[]>): AppliedConfiguration => ({
  capabilities: (identity, _kind, path) => caps[`${identity} ${path}`] ?? [],
  binding: () => null,
});

describe('equal: applied as approved', () => {
  it('one merge request, its change exactly: equal, no difference', () => {
    const c = change([rule('billing-dev', 'secret/data/billing/*', [], ['read'])], [{ stack: 'app-roles', address: 'vault_policy.billing', action: 'create' }]);
    expect(compareWithApprovals(c, [approved(7, c)])).toEqual({ equal: true, differences: [], stale: [] });
  });

  it('two merge requests on different identities, merged together: their changes composed', () => {
    const a = change([rule('billing-dev', 'secret/data/billing/*', [], ['read'])]);
    const b = change([rule('orchestrator-dev', 'secret/data/orchestrator/*', ['read'], [])]);
    expect(compareWithApprovals(change([...a.identities, ...b.identities]), [approved(7, a), approved(8, b)]).equal).toBe(true);
  });

  it('two merge requests on one path, the second reviewed on top of the first: their changes chain', () => {
    const a = change([rule('x', 'secret/data/x/*', [], ['read'])]);
    const b = change([rule('x', 'secret/data/x/*', ['read'], ['read', 'list'])]);
    expect(compareWithApprovals(change([rule('x', 'secret/data/x/*', [], ['read', 'list'])]), [approved(7, a), approved(8, b)]).equal).toBe(true);
  });
});

describe('different: named by cause', () => {
  it('two merge requests reviewed against one base, both touching one identity, merged together: neither note showed the result', () => {
    const a = change([rule('x', 'secret/data/x/*', [], ['read'])]);
    const b = change([rule('x', 'secret/data/x/*', [], ['list'])]);
    const r = compareWithApprovals(change([rule('x', 'secret/data/x/*', [], ['read', 'list'])]), [approved(7, a), approved(8, b)]);
    expect(r.equal).toBe(false);
    expect(r.differences).toEqual([
      {
        cause: 'other-merge-request',
        where: 'x secret/data/x/*',
        approved: { change: 'none → list', by: [7, 8] },
        applying: 'none → read, list',
        message: 'x secret/data/x/*: changed by !7 and !8, each reviewed against another state: this pipeline applies none → read, list, which no note showed',
      },
    ]);
  });

  it('the second of two merged in turn (the first applied since its review): the store moved under it, by the other merge request\'s change', () => {
    const b = change([rule('x', 'secret/data/x/*', [], ['list'])]);
    const applying = change([rule('x', 'secret/data/x/*', ['read'], ['list'])]);
    const r = compareWithApprovals(applying, [approved(8, b)], appliedBefore({ 'x secret/data/x/*': ['read'] }));
    expect(r.differences.map((d) => [d.cause, d.message])).toEqual([
      ['other-merge-request', 'x secret/data/x/*: the store changed after the review of !8 by a change applied since (the configuration applied before has it: another merge request\'s): the note showed none → list, this pipeline applies read → list'],
    ]);
  });

  it('the second of two merged in turn, whose result neither note showed (the first applied since its review): another merge request\'s change, not a change of the merge', () => {
    const b = change([rule('x', 'secret/data/x/*', [], ['list'])]);
    // The first merge request granted read, applied since; the second's note saw none.
    const applying = change([rule('x', 'secret/data/x/*', ['read'], ['read', 'list'])]);
    const r = compareWithApprovals(applying, [approved(8, b)], appliedBefore({ 'x secret/data/x/*': ['read'] }));
    expect(r.differences.map((d) => [d.cause, d.message])).toEqual([
      ['other-merge-request', 'x secret/data/x/*: the store changed after the review of !8 by a change applied since (the configuration applied before has it: another merge request\'s): the note showed none → list, this pipeline applies read → read, list, a change no note showed'],
    ]);
    // Without the configuration applied before it cannot tell: a change no note showed.
    expect(compareWithApprovals(applying, [approved(8, b)]).differences.map((d) => d.cause)).toEqual(['unapproved']);
    // The store has a state the configuration applied before does not: drift.
    expect(compareWithApprovals(applying, [approved(8, b)], appliedBefore({})).differences.map((d) => d.cause)).toEqual(['drift']);
  });

  it('a grant made by hand after the review: drift, what would be reverted, in the drift job\'s words', () => {
    const c = change([rule('billing-dev', 'secret/data/billing/*', [], ['read'])]);
    const applying = change([...c.identities, rule('orchestrator-dev', 'secret/data/team/*', ['read', 'list'], [])]);
    const r = compareWithApprovals(applying, [approved(7, c)], appliedBefore({}));
    expect(r.differences).toEqual([
      {
        cause: 'drift',
        where: 'orchestrator-dev secret/data/team/*',
        applying: 'read, list → none',
        message: 'orchestrator-dev secret/data/team/*: drift: the store has read, list where the configuration applied before has none; applying reverts it (read, list → none)',
      },
    ]);
  });

  it('a change in the merge commit (or a commit no merge request holds): a change no note showed', () => {
    const c = change([rule('billing-dev', 'secret/data/billing/*', [], ['read'])]);
    const r = compareWithApprovals(change([rule('billing-dev', 'secret/data/billing/*', [], ['read', 'delete'])]), [approved(7, c)], appliedBefore({}));
    expect(r.differences.map((d) => [d.cause, d.message])).toEqual([
      ['unapproved', 'billing-dev secret/data/billing/*: this pipeline applies none → read, delete where !7 approved none → read: a change no note showed (the merge commit, or commits after the review)'],
    ]);
    const direct = compareWithApprovals(change([rule('a', 'p/*', [], ['read'])]), [], appliedBefore({}));
    expect(direct.differences.map((d) => d.cause)).toEqual(['unapproved']);
  });

  it('an object no note showed: drift when the engine refreshed it as drifted and the change only sets back what was applied (revertsDrift), else a change no note showed', () => {
    const update = { stack: 'app-roles', address: 'vault_policy.orchestrator', action: 'update' as const };
    const reverted = compareWithApprovals(change([], [{ ...update, revertsDrift: true }]), [], appliedBefore({}));
    expect(reverted.differences.map((d) => [d.cause, d.message])).toEqual([
      ['drift', "object app-roles: vault_policy.orchestrator: drift: the store changed it since it was last applied (the engine's refresh); applying sets back what was applied (update)"],
    ]);
    const recreated = compareWithApprovals(change([], [{ ...update, action: 'create', revertsDrift: true }]), [], appliedBefore({}));
    expect(recreated.differences.map((d) => [d.cause, d.message])).toEqual([
      ['drift', "object app-roles: vault_policy.orchestrator: drift: the store no longer has it since it was last applied (the engine's refresh); applying creates it again as applied (create)"],
    ]);
    // Whether the base's declaration reads the same is not asked: the engine's refresh decides, whatever the block's text.
    expect(compareWithApprovals(change([], [update]), [], appliedBefore({})).differences.map((d) => d.cause)).toEqual(['unapproved']);
    expect(compareWithApprovals(change([], [update]), []).differences.map((d) => d.cause)).toEqual(['unapproved']);
  });

  it('an approved change this pipeline does not make: not applied', () => {
    const c = change([rule('billing-dev', 'secret/data/billing/*', [], ['read'])]);
    expect(compareWithApprovals(change([]), [approved(7, c)]).differences.map((d) => [d.cause, d.approved?.by])).toEqual([['not-applied', [7]]]);
  });

  it('a note computed against a target commit that is not the merge\'s parent: stale', () => {
    const c = change([]);
    expect(compareWithApprovals(c, [approved(7, c, BASE, 'f'.repeat(40))]).stale).toEqual([{ mergeRequest: 7, targetCommit: BASE, mergeParent: 'f'.repeat(40) }]);
  });

  it('deterministic: the differences sorted, whatever the order of the records', () => {
    const applying = change([rule('b', 'p/*', [], ['read']), rule('a', 'p/*', [], ['read'])]);
    const one = compareWithApprovals(applying, []);
    const other = compareWithApprovals(change([...applying.identities].reverse()), []);
    expect(one).toEqual(other);
    expect(one.differences.map((d) => d.where)).toEqual(['a p/*', 'b p/*']);
  });
});
