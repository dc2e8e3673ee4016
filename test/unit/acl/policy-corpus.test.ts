/**
 * The parser accepts and refuses each text of the policy text corpus as the store does: the corpus
 * records each store's outcome, and test/store/acl-differential.store.test.ts holds the record to
 * the real OpenBao and Vault (and compares the evaluator's answers for the accepted ones). A known
 * difference must be listed with its reason, and must really be one.
 */
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { POLICY_TEXT_CORPUS } from '../../support/acl/policy-text-corpus';

describe.each(['openbao', 'vault'] as const)('the policy text corpus on %s', (kind) => {
  const parser = new PolicyParser(new Date('2026-01-01T00:00:00Z'), kind);

  it.each(POLICY_TEXT_CORPUS.map((entry, i) => [i, entry.what, entry] as const))('%i %s', async (i, _what, entry) => {
    const parsed = await parser.parse(`corpus-${i}`, entry.text).then(
      () => 'accepted',
      (e: Error) => `refused (${e.message})`,
    );
    const outcome = parsed === 'accepted' ? 'accepted' : 'refused';
    const known = entry.knownDifference?.[kind];
    if (known !== undefined) expect({ outcome, known }).toEqual({ outcome: entry.store[kind] === 'accepted' ? 'refused' : 'accepted', known });
    else expect({ parsed: outcome === 'accepted' ? 'accepted' : parsed, store: entry.store[kind] }).toEqual({ parsed: entry.store[kind] === 'accepted' ? 'accepted' : expect.stringMatching(/^refused \(policy "corpus-\d+": .+\)$/s), store: entry.store[kind] });
  });

  it('holds at least 120 texts, and each store both accepts and refuses some', () => {
    expect(POLICY_TEXT_CORPUS.length).toBeGreaterThanOrEqual(120);
    expect(new Set(POLICY_TEXT_CORPUS.map((e) => e.store[kind]))).toEqual(new Set(['accepted', 'refused']));
  });
});
