import { STORE_OBJECT_CATALOGUE } from '../../../lib/catalogue/store-object-catalogue';
import { READER_DERIVED_RULES, READER_OWN_RULES, READER_POLICY, READER_POLICY_RULES } from '../../../lib/reconcile/live-store-reader';

/** The reader's policy as it was written by hand before the catalogue (docs/adoption.md; without sys/auth/<mount> and its tune, sudo-only on both stores): what the store tests proved. */
const HAND_WRITTEN: [string, string[]][] = [
  ['sys/auth', ['read']],
  ['auth/+/config', ['read']],
  ['auth/+/role', ['list']],
  ['auth/+/role/+', ['read']],
  ['sys/policies/acl', ['list']],
  ['sys/policies/acl/*', ['read']],
  ['auth/token/lookup-self', ['read']],
  ['sys/mounts/auth/+', ['read']],
  ['sys/mounts/auth/+/tune', ['read']],
  ['auth/+/role/+/role-id', ['read']],
  ['sys/mounts', ['read']],
];

const asSet = (rules: readonly { path: string; capabilities: readonly string[] }[]) => rules.map((r) => `${r.path} ${[...r.capabilities].sort().join(',')}`).sort();

describe("the live-store reader's policy is derived from the catalogue", () => {
  it('grants exactly what the hand-written policy granted, as a set of rules', () => {
    expect(asSet(READER_DERIVED_RULES)).toEqual(asSet(HAND_WRITTEN.map(([path, capabilities]) => ({ path, capabilities }))));
  });

  it('the text for a store of unknown version is those rules plus the role LIST rule of the newer LIST lookup (auth/+/role/)', () => {
    expect(asSet(READER_POLICY_RULES)).toEqual(asSet([...HAND_WRITTEN.map(([path, capabilities]) => ({ path, capabilities })), { path: 'auth/+/role/', capabilities: ['list'] }]));
  });

  it("is every catalogue entry's reader rules plus the reader's own reads, nothing else", () => {
    const fromCatalogue = [...STORE_OBJECT_CATALOGUE.values()].flatMap((k) => k.readerRules.map((r) => r.path));
    for (const path of fromCatalogue) expect(READER_DERIVED_RULES.map((r) => r.path)).toContain(path);
    const own = READER_OWN_RULES.map((r) => r.path);
    expect(READER_DERIVED_RULES.map((r) => r.path).filter((p) => !fromCatalogue.includes(p)).sort()).toEqual([...own].sort());
  });

  it('reads and lists only, sorted by path, one rule per path', () => {
    const paths = READER_DERIVED_RULES.map((r) => r.path);
    expect(paths).toEqual([...paths].sort());
    expect(new Set(paths).size).toBe(paths.length);
    for (const r of READER_DERIVED_RULES) for (const c of r.capabilities) expect(['read', 'list']).toContain(c);
  });

  it("the text holds every rule in the store's form, and says why for each of the reader's own reads", () => {
    for (const r of READER_DERIVED_RULES) expect(READER_POLICY).toContain(`path "${r.path}" {\n  capabilities = [${r.capabilities.map((c) => `"${c}"`).join(', ')}]\n}\n`);
    for (const r of READER_OWN_RULES) expect(READER_POLICY).toContain(`# ${r.why}.\npath "${r.path}" {`);
  });
});
