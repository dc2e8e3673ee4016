/**
 * The approval record (lib/access/access-change-record.ts, lib/pipeline/approval-record.ts): the
 * canonical access change of a review of saved plans, embedded in the merge request's note with its
 * SHA-256, and read back from the notes only as the pipeline's own user wrote it.
 */
import { accessChangeDigest, accessChangeRecord, AccessChangeRecord, canonicalJson, parseAccessChangeRecord } from '../../../lib/access/access-change-record';
import { IdentityChange } from '../../../lib/access/identity-change';
import { PlanReview } from '../../../lib/access/plan-review';
import { approvalRecordDigest, approvalRecordOf, approvedRecordOf, readApprovalSection, renderApprovalSection } from '../../../lib/pipeline/approval-record';
import { GitLabNote } from '../../../lib/pipeline/gitlab-api';
import { SavedPlan } from '../../../lib/sources/saved-plan';

const HEAD = 'a'.repeat(40);
const TARGET = 'b'.repeat(40);
const BOT = { id: 90, username: 'project_42_bot' };

const resources = (byAddress: Record<string, unknown>) => Object.entries(byAddress).map(([address, values]) => ({ address, type: address.split('.')[0], name: address.split('.')[1], topLevel: true, values: values as Record<string, unknown> }));
const plan = (stack: string, before: Record<string, unknown>, after: Record<string, unknown>, forgotten: string[] = [], lastApplied: Record<string, unknown> = {}): SavedPlan => ({
  stack,
  file: `secretstore-iac-plans/${stack}.tfplan`,
  sha256: `${stack.length}`.repeat(64).slice(0, 64),
  before: Object.entries(before).map(([address, values]) => ({ address, type: address.split('.')[0], name: address.split('.')[1], topLevel: true, values: values as Record<string, unknown> })),
  after: Object.entries(after).map(([address, values]) => ({ address, type: address.split('.')[0], name: address.split('.')[1], topLevel: true, values: values as Record<string, unknown> })),
  forgotten,
  lastApplied: resources(lastApplied),
  unknowns: [],
  unreviewed: [],
  partial: false,
  providers: [],
});

/** A review whose lists come in an order of their own (the record sorts them). */
function review(order: 'as-given' | 'reversed'): { review: PlanReview; plans: SavedPlan[] } {
  const changed: IdentityChange[] = [
    {
      name: 'orchestrator-dev',
      method: 'approle',
      rules: [
        { path: 'secret/data/orchestrator/*', kind: 'prefix', before: ['read'], after: ['read', 'list'], gained: ['list'], lost: [], added: false, removed: false },
        { path: 'secret/data/billing/db', kind: 'exact', before: [], after: ['read'], gained: ['read'], lost: [], added: true, removed: false },
      ],
      bindings: [{ field: 'token_ttl', before: 600, after: 1200 }],
    },
    { name: 'billing-dev', method: 'approle', rules: [{ path: 'secret/data/billing/*', kind: 'prefix', before: ['read', 'list'], after: ['read'], gained: [], lost: ['list'], added: false, removed: false }], bindings: [] },
  ];
  const plans = [
    plan('ci-access', { 'vault_policy.a': { policy: 'x' } }, { 'vault_policy.a': { policy: 'y' } }),
    plan('app-roles', { 'vault_policy.gone': { policy: 'x' }, 'vault_policy.kept': { policy: 'k' } }, { 'vault_policy.new': { policy: 'n' }, 'vault_policy.kept': { policy: 'k' } }),
  ];
  const flip = <T>(xs: readonly T[]): T[] => (order === 'reversed' ? [...xs].reverse() : [...xs]);
  return {
    review: {
      diff: { added: [], removed: [], changed: flip(changed.map((c) => ({ ...c, rules: flip(c.rules) }))), unchanged: 3, flags: [], problems: [] },
      plans: [],
      unplanned: [],
      complete: true,
    } as unknown as PlanReview,
    plans: flip(plans),
  };
}

const change = (): AccessChangeRecord => {
  const r = review('as-given');
  return accessChangeRecord(r.review, r.plans);
};

describe('the canonical access change', () => {
  it('per identity and path: capabilities before and after, gained and lost; bindings; objects created, changed, destroyed; the plans\' digests; sorted', () => {
    const c = change();
    expect(c.identities.map((i) => i.identity)).toEqual(['billing-dev', 'orchestrator-dev']);
    expect(c.identities[1].rules.map((r) => [r.path, r.gained, r.lost])).toEqual([
      ['secret/data/billing/db', ['read'], []],
      ['secret/data/orchestrator/*', ['list'], []],
    ]);
    expect(c.identities[1].bindings).toEqual([{ field: 'token_ttl', before: 600, after: 1200 }]);
    expect(c.objects).toEqual([
      { stack: 'app-roles', address: 'vault_policy.gone', action: 'delete' },
      { stack: 'app-roles', address: 'vault_policy.new', action: 'create' },
      { stack: 'ci-access', address: 'vault_policy.a', action: 'update' },
    ]);
    expect(c.plans.map((p) => p.stack)).toEqual(['app-roles', 'ci-access']);
  });

  it('deterministic: the same change in another order is the same text and the same SHA-256; the keys sorted', () => {
    const other = review('reversed');
    const b = accessChangeRecord(other.review, other.plans);
    expect(canonicalJson(b)).toBe(canonicalJson(change()));
    expect(accessChangeDigest(b)).toBe(accessChangeDigest(change()));
    expect(canonicalJson({ b: 1, a: { d: 2, c: [{ f: 1, e: 0 }] } })).toBe('{"a":{"c":[{"e":0,"f":1}],"d":2},"b":1}');
  });

  it('a forgotten object is recorded as forgotten, not as destroyed', () => {
    const c = accessChangeRecord(review('as-given').review, [plan('app-roles-02', { 'vault_policy.p': {} }, { 'vault_policy.p': {} }, ['vault_policy.p'])]);
    expect(c.objects).toEqual([{ stack: 'app-roles-02', address: 'vault_policy.p', action: 'forget' }]);
  });

  describe('an object the engine refreshed as drifted: revertsDrift only where the change sets back exactly what was last applied', () => {
    const role = (policies: string[], ttl = 600) => ({ role_name: 'billing-dev', backend: 'approle', token_policies: policies, token_ttl: ttl });
    const record = (...plans: SavedPlan[]) => accessChangeRecord(review('as-given').review, plans).objects;
    const address = 'vault_approle_auth_backend_role.billing';
    it('a grant by hand reverted: the update sets back the policies last applied', () => {
      expect(record(plan('app-roles', { [address]: role(['billing-dev', 'hand']) }, { [address]: role(['billing-dev']) }, [], { [address]: role(['billing-dev']) }))).toEqual([{ stack: 'app-roles', address, action: 'update', revertsDrift: true }]);
    });
    it('the update also changes what was applied (a new TTL): more than a revert', () => {
      expect(record(plan('app-roles', { [address]: role(['billing-dev', 'hand']) }, { [address]: role(['billing-dev'], 1200) }, [], { [address]: role(['billing-dev']) }))).toEqual([{ stack: 'app-roles', address, action: 'update' }]);
    });
    it('no drift refreshed: the update is the configuration\'s', () => {
      expect(record(plan('app-roles', { [address]: role(['billing-dev']) }, { [address]: role(['billing-dev', 'x']) }))).toEqual([{ stack: 'app-roles', address, action: 'update' }]);
    });
    it('a role moved between stacks: the import\'s update reverts the drift the forgetting plan refreshed (one store object, two addresses)', () => {
      const moved = 'vault_approle_auth_backend_role.billing_moved';
      expect(
        record(
          plan('app-roles', { [address]: role(['billing-dev', 'hand']) }, { [address]: role(['billing-dev', 'hand']) }, [address], { [address]: role(['billing-dev']) }),
          plan('app-roles-02', { [moved]: role(['billing-dev', 'hand']) }, { [moved]: role(['billing-dev']) }),
        ),
      ).toEqual([
        { stack: 'app-roles', address, action: 'forget' },
        { stack: 'app-roles-02', address: moved, action: 'update', revertsDrift: true },
      ]);
    });
    it('a role moved between stacks whose forgetting plan did not refresh it (Terraform: a `removed` block\'s object is its state): its copy is the values last applied, the import read the store', () => {
      const moved = 'vault_approle_auth_backend_role.billing_moved';
      expect(
        record(
          plan('app-roles', { [address]: role(['billing-dev']) }, { [address]: role(['billing-dev']) }, [address]),
          plan('app-roles-02', { [moved]: role(['billing-dev', 'hand']) }, { [moved]: role(['billing-dev']) }),
        ),
      ).toEqual([
        { stack: 'app-roles', address, action: 'forget' },
        { stack: 'app-roles-02', address: moved, action: 'update', revertsDrift: true },
      ]);
      // The same copies, no drift: the import's update is the configuration's (a new TTL), not a revert.
      expect(
        record(
          plan('app-roles', { [address]: role(['billing-dev']) }, { [address]: role(['billing-dev']) }, [address]),
          plan('app-roles-02', { [moved]: role(['billing-dev']) }, { [moved]: role(['billing-dev'], 1200) }),
        ),
      ).toEqual([
        { stack: 'app-roles', address, action: 'forget' },
        { stack: 'app-roles-02', address: moved, action: 'update' },
      ]);
    });
    it('deleted by hand and created again as last applied (its computed Role ID unknown): reverts; created with other values: not', () => {
      const { token_ttl: _unknown, ...known } = role(['billing-dev']);
      expect(record(plan('app-roles', {}, { [address]: known }, [], { [address]: role(['billing-dev']) }))).toEqual([{ stack: 'app-roles', address, action: 'create', revertsDrift: true }]);
      expect(record(plan('app-roles', {}, { [address]: role(['billing-dev', 'x']) }, [], { [address]: role(['billing-dev']) }))).toEqual([{ stack: 'app-roles', address, action: 'create' }]);
    });
    it('an attribute the update leaves unknown (absent after) is not set back', () => {
      const { token_ttl: _unknown, ...known } = role(['billing-dev']);
      expect(record(plan('app-roles', { [address]: role(['billing-dev', 'hand']) }, { [address]: known }, [], { [address]: role(['billing-dev']) }))).toEqual([{ stack: 'app-roles', address, action: 'update' }]);
    });
  });

  it('read back: what is not a record of this format is refused, naming the fields', () => {
    expect(parseAccessChangeRecord(JSON.parse(canonicalJson(change())), 'f')).toEqual(change());
    expect(() => parseAccessChangeRecord({ ...change(), objects: [{ stack: 's', address: 'a.b', action: 'update', revertsDrift: 'yes' }] }, 'f')).toThrow(/objects: must be a list of \{stack, address, action, revertsDrift\?: true\}/);
    expect(() => parseAccessChangeRecord({ format: 'other', identities: 1 }, 'access-change.json')).toThrow(/access-change\.json: not an access-change record: format: .*; identities: .*; objects: .*; plans: .*; complete/);
  });
});

describe('the record in the note', () => {
  const record = () => approvalRecordOf(change(), 7, HEAD, TARGET);
  const note = (id: number, body: string, author = BOT): GitLabNote => ({ id, body, author, created_at: '2026-12-01T12:00:00Z', system: false });
  const mr = { iid: 7, sha: HEAD, state: 'merged', target_branch: 'main' };

  it('round trip: the section shows the record (identity, path, gained, lost) and holds it, canonical, with its SHA-256, in an HTML comment', () => {
    const section = renderApprovalSection(record());
    expect(section).toContain('### Approval record');
    expect(section).toContain('| `orchestrator-dev` | changed | `secret/data/orchestrator/*` | `list` |  |');
    expect(section).toContain(`<!-- secretstore-iac:approval-record sha256=${approvalRecordDigest(record())} `);
    expect(readApprovalSection(`## Access changes\n\n...\n\n${section}`)).toEqual({ record: record() });
  });

  it('the note of the pipeline\'s user, of the merged head, is the approval; the latest of them', () => {
    const older = renderApprovalSection(approvalRecordOf(change(), 7, HEAD, 'c'.repeat(40)));
    const found = approvedRecordOf([note(1, older), note(2, renderApprovalSection(record()))], BOT, mr);
    expect(found).toEqual({ record: record(), noteId: 2, refused: [] });
  });

  it('a look-alike note by another author (the merge request\'s author) is refused, even holding an intact record', () => {
    const forged = approvalRecordOf({ ...change(), identities: [] }, 7, HEAD, TARGET);
    const found = approvedRecordOf([note(1, renderApprovalSection(record())), note(2, renderApprovalSection(forged), { id: 5, username: 'mallory' })], BOT, mr);
    expect(found.noteId).toBe(1);
    expect(found.refused).toEqual(["note 2 by @mallory: not written by the pipeline's user @project_42_bot (id 90), whose token posts the notes"]);
  });

  it('an edited record is refused: its digest, its canonical form, or what the note shows no longer match', () => {
    const section = renderApprovalSection(record());
    const json = canonicalJson(record());
    const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
    const wider = json.replace('"gained":["list"]', '"gained":[]');
    const cases: [string, string][] = [
      // The record changed, the digest kept.
      [section.replace(b64(json), b64(wider)), "its record's SHA-256 is"],
      // Not canonical (spaces), same content.
      [section.replace(b64(json), b64(JSON.stringify(JSON.parse(json), null, 1))), 'not in canonical form'],
      // The visible summary changed (a row removed), the record intact.
      [section.replace('| `orchestrator-dev` | changed | `secret/data/billing/db` | `read` |  |\n', ''), 'does not show the record it holds'],
      // Two records in one note.
      [`${section}\n${section}`, '2 approval records in it'],
    ];
    for (const [body, why] of cases) {
      const found = approvedRecordOf([note(3, body)], BOT, mr);
      expect({ why, record: found.record, refused: found.refused.join('\n') }).toEqual({ why, record: undefined, refused: expect.stringContaining(why) });
    }
  });

  it('a record of another head (a push after the review) or another merge request is refused', () => {
    const found = approvedRecordOf([note(1, renderApprovalSection(approvalRecordOf(change(), 7, 'd'.repeat(40), TARGET))), note(2, renderApprovalSection(approvalRecordOf(change(), 8, HEAD, TARGET)))], BOT, mr);
    expect(found.record).toBeUndefined();
    expect(found.refused).toEqual([
      `note 1 by @project_42_bot: its record is of the head ${'d'.repeat(12)}, not the merged head ${'a'.repeat(12)} (a later push was not reviewed by it)`,
      'note 2 by @project_42_bot: its record is of !8, not !7',
    ]);
  });
});
