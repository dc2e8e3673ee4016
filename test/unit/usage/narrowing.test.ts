/**
 * The narrowing (issue 47, "the narrowing as a change"): a usage report turned into the
 * PlatformConfig change that removes the grants unused in the window, the edit of the configuration
 * source, and the property that applying it and synthesizing again removes exactly those grants.
 */
import { narrowingOf } from '../../../lib/usage/narrowing';
import { editPlatformConfig } from '../../../lib/usage/platform-config-edit';
import { evaluateConfigSource, NARROWING_RETIRE_SOURCE, NARROWING_SOURCE as SOURCE, NARROWING_USED as USED, narrowingSourceOn, reportWithUse, retireReport, synthesizedRules } from '../../support/narrowing-config';
import { generateSigningKey } from '../../support/store/jwt-signer';

describe('the narrowing names, per unused declaration, the PlatformConfig field and its new value, with its evidence', () => {
  it('accounts.mirror.readByCi, the unused reads of people.groups.ops; the spec\'s own declarations as no field; used ones not at all', async () => {
    const { outdir } = synthesizedRules(evaluateConfigSource(SOURCE));
    const { narrowing, unmatchedKeeps } = narrowingOf(await reportWithUse(outdir, USED));
    expect(unmatchedKeeps).toEqual([]);
    const fields = narrowing.items.filter((i) => i.field !== undefined).map((i) => [i.field, i.change]);
    expect(fields).toEqual([
      ['accounts.mirror.readByCi', 'accounts.mirror.readByCi: true -> false (accounts.mirror.consumers dropped, if any: SSI-R8)'],
      ['people.groups.ops.reads[0]', 'people.groups.ops.reads[0] removed'],
      ['people.groups.ops.reads[2]', 'people.groups.ops.reads[2] removed'],
    ]);
    const spec = narrowing.items.filter((i) => i.field === undefined);
    expect(spec.map((i) => i.declaration)).toEqual(expect.arrayContaining(['ci-access/codequality', 'ci-access/svc-executor']));
    for (const i of spec) expect(i.change).toMatch(/^no PlatformConfig field: the spec's .* no PlatformConfig field removes it$/);
    const mirror = narrowing.items[0];
    expect(mirror.evidence).toEqual([{ identity: 'jwt/registry-ci', logins: 1, requests: 3, lastSeen: '2026-11-28T04:07:02.000Z', rules: [{ rule: 'secret/data/registry/svc-mirror', capabilities: ['read'] }] }]);
  });

  it('roles that never logged in are listed with no edit; the order is deterministic', async () => {
    const { outdir } = synthesizedRules(evaluateConfigSource(SOURCE));
    const report = await reportWithUse(outdir, USED);
    const a = narrowingOf(report).narrowing;
    const b = narrowingOf({ ...report, identities: [...report.identities].reverse() }).narrowing;
    expect(b).toEqual(a);
    expect(a.idleRoles.map((i) => i.evidence[0].identity)).toContain('approle/orchestrator-dev');
    expect(a.idleRoles.map((i) => i.evidence[0].identity)).not.toContain('oidc/ops');
    expect(a.idleRoles.every((i) => i.edit === undefined)).toBe(true);
  });
});

describe('--keep keeps a grant regardless and says so', () => {
  it('a field, a field above it, or an identity; a --keep that names nothing is returned', async () => {
    const { outdir } = synthesizedRules(evaluateConfigSource(SOURCE));
    const report = await reportWithUse(outdir, USED);
    const { narrowing, unmatchedKeeps } = narrowingOf(report, ['accounts.mirror', 'people.groups.ops.reads[2]', 'approle/orchestrator-dev', 'accounts.nope']);
    const kept = [...narrowing.items, ...narrowing.idleRoles].filter((i) => i.keptBy !== undefined).map((i) => [i.field ?? i.evidence[0].identity, i.keptBy]);
    expect(kept).toEqual([
      ['accounts.mirror.readByCi', 'accounts.mirror'],
      ['people.groups.ops.reads[2]', 'people.groups.ops.reads[2]'],
      // The identity's rule (the spec's application: no field) and its role, never logged in.
      ['approle/orchestrator-dev', 'approle/orchestrator-dev'],
      ['approle/orchestrator-dev', 'approle/orchestrator-dev'],
    ]);
    expect(unmatchedKeeps).toEqual(['accounts.nope']);
  });
});

describe('the edit of the configuration source: formatting kept', () => {
  it('readByCi true set to false, readByCi added, consumers dropped, reads removed highest first; nothing else changes', () => {
    const { text, applied, unsupported } = editPlatformConfig(
      SOURCE,
      [
        { kind: 'remove-group-read', group: 'ops', index: 0 },
        { kind: 'account-not-read-by-ci', account: 'mirror' },
        { kind: 'account-not-read-by-ci', account: 'helm' },
        { kind: 'remove-group-read', group: 'ops', index: 2 },
      ],
      'platform.config.ts',
    );
    expect(unsupported).toEqual([]);
    expect(applied).toHaveLength(4);
    const expected = SOURCE.replace(
      `    mirror: {
      permissions: ['raw:read'],
      usedBy: 'the mirror job',
      consumers: ['mirror-sync'],
    },`,
      `    mirror: {
      readByCi: false,
      permissions: ['raw:read'],
      usedBy: 'the mirror job',
    },`,
    )
      .replace("usedBy: 'helm charts', readByCi: true }", "usedBy: 'helm charts', readByCi: false }")
      .replace("reads: [{ path: 'team/a' }, { path: 'team/b' }, { path: 'team/c', subtree: true }],", "reads: [{ path: 'team/b' }],");
    expect(text).toBe(expected);
  });
});

describe('property: applying the narrowing and synthesizing again removes exactly the unused grants and nothing else', () => {
  it.each([
    ['nothing kept', [] as string[]],
    ['the mirror account kept', ['accounts.mirror']],
    ['a read kept', ['people.groups.ops.reads[0]']],
  ])('%s', async (_, keep) => {
    const before = synthesizedRules(evaluateConfigSource(SOURCE));
    const { narrowing } = narrowingOf(await reportWithUse(before.outdir, USED), keep);
    const edits = narrowing.items.filter((i) => i.keptBy === undefined && i.edit !== undefined);
    const { text, unsupported } = editPlatformConfig(SOURCE, edits.map((i) => i.edit!), 'platform.config.ts');
    expect(unsupported).toEqual([]);
    const after = synthesizedRules(evaluateConfigSource(text));
    const removed = [...before.rules].filter((r) => !after.rules.has(r)).sort();
    const added = [...after.rules].filter((r) => !before.rules.has(r));
    // What was removed: each edited declaration's unused rules, as the narrowing listed them.
    const expected = edits
      .flatMap((i) => i.evidence.flatMap((e) => e.rules.map((r) => `${e.identity === 'jwt/registry-ci' ? 'registry-ci' : 'ops'} ${r.rule}`)));
    expect(added).toEqual([]);
    expect(removed).toEqual(expected.sort());
    expect(edits).toHaveLength(3 - keep.length);
    // The used grants stay.
    expect([...after.rules].some((r) => r === 'registry-ci secret/data/registry/svc-helm')).toBe(true);
    expect([...after.rules].some((r) => r === 'ops secret/data/team/b')).toBe(true);
  });
});

describe('--retire-idle: a role that never logged in is retired by removing the application or people group that declares it', () => {
  async function narrowed(retireIdle: boolean, keep: string[] = []) {
    const { outdir } = synthesizedRules(evaluateConfigSource(NARROWING_RETIRE_SOURCE));
    return narrowingOf(await retireReport(outdir), keep, { retireIdle });
  }

  it('without it: listed, each naming the field to remove and the option, no edit; the platform\'s own roles name no field', async () => {
    const idle = (await narrowed(false)).narrowing.idleRoles;
    const search = idle.find((i) => i.evidence[0].identity === 'approle/search-dev')!;
    expect(search).toMatchObject({ declaration: 'app-roles/search-dev/role', field: 'applications.search-dev' });
    expect(search.edit).toBeUndefined();
    expect(search.change).toBe('role approle/search-dev (stack app-roles) never logged in in the window: retire it by removing applications.search-dev from the PlatformConfig (narrow --retire-idle does), or keep it (--keep approle/search-dev)');
    expect(idle.find((i) => i.evidence[0].identity === 'oidc/audit')).toMatchObject({ field: 'people.groups.audit' });
    const spec = idle.find((i) => i.evidence[0].identity === 'approle/orchestrator-dev')!;
    expect([spec.field, spec.edit, spec.change]).toEqual([undefined, undefined, expect.stringContaining('no PlatformConfig field declares it')]);
    expect(idle.map((i) => i.evidence[0].identity)).not.toEqual(expect.arrayContaining(['approle/billing-dev']));
  });

  it('with it: the edits remove exactly search-dev and audit from the source; synthesized again, their roles and policies are gone and every other rule stays', async () => {
    const { narrowing } = await narrowed(true);
    const retired = narrowing.idleRoles.filter((i) => i.edit !== undefined);
    expect(retired.map((i) => [i.field, i.edit, i.change])).toEqual([
      ['applications.search-dev', { kind: 'retire-application', application: 'search-dev' }, 'applications.search-dev removed (role approle/search-dev (stack app-roles) never logged in in the window)'],
      ['people.groups.audit', { kind: 'retire-group', group: 'audit' }, 'people.groups.audit removed (role oidc/audit (stack people) never logged in in the window)'],
    ]);
    // audit's reads are unused too: removed before the group (the same text either way).
    const edits = [...narrowing.items, ...retired].filter((i) => i.edit !== undefined).map((i) => i.edit!);
    const { text, unsupported } = editPlatformConfig(NARROWING_RETIRE_SOURCE, edits, 'platform.config.ts');
    expect(unsupported).toEqual([]);
    const withoutRetired = editPlatformConfig(NARROWING_RETIRE_SOURCE, narrowing.items.filter((i) => i.edit !== undefined).map((i) => i.edit!), 'platform.config.ts').text;
    expect(text).toBe(
      withoutRetired
        .replace("    'search-dev': { name: 'search', environment: 'dev' },\n", '')
        .replace(/ {6}audit: \{ groups: \['audit'\], reads: \[[^\n]*\] \},\n/, ''),
    );
    const before = evaluateConfigSource(withoutRetired);
    const after = evaluateConfigSource(text);
    expect(Object.keys(after.applications ?? {})).toEqual(['billing-dev']);
    expect(Object.keys(after.people!.groups)).toEqual(['ops']);
    // Synthesized again: the rules lost are exactly the retired roles' policies' (every other policy's rules kept).
    const b = synthesizedRules(before).rules;
    const a = synthesizedRules(after).rules;
    expect([...a].filter((r) => !b.has(r))).toEqual([]);
    const lost = [...b].filter((r) => !a.has(r));
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((r) => /^(search-dev|people-audit|audit) /.test(r))).toBe(true);
  });

  it('--keep keeps an idle role by its identity or its field', async () => {
    for (const keep of ['approle/search-dev', 'applications.search-dev']) {
      const { narrowing, unmatchedKeeps } = await narrowed(true, [keep]);
      expect(unmatchedKeeps).toEqual([]);
      expect(narrowing.idleRoles.find((i) => i.evidence[0].identity === 'approle/search-dev')).toMatchObject({ keptBy: keep });
    }
  });

  it('an application or group the source holds behind a spread or not at all is listed to remove by hand', () => {
    const spread = NARROWING_RETIRE_SOURCE.replace('  applications: {\n', '  applications: {\n    ...moreApplications,\n');
    expect(editPlatformConfig(spread, [{ kind: 'retire-application', application: 'search-dev' }], 'f.ts').unsupported).toEqual([
      { edit: { kind: 'retire-application', application: 'search-dev' }, change: 'remove applications.search-dev', reason: 'the spread ...moreApplications in applications' },
    ]);
    expect(editPlatformConfig(NARROWING_RETIRE_SOURCE, [{ kind: 'retire-group', group: 'nope' }], 'f.ts').unsupported[0].reason).toBe('no property people.groups.nope in the object literal');
    // A retired group takes its reads with it: their edits are not made apart, so reads behind a spread are no hand change.
    const spreadReads = NARROWING_RETIRE_SOURCE.replace("audit: { groups: ['audit'], reads: [", "audit: { groups: ['audit'], reads: [...auditReads, ");
    const retired = editPlatformConfig(spreadReads, [{ kind: 'remove-group-read', group: 'audit', index: 1 }, { kind: 'retire-group', group: 'audit' }], 'f.ts');
    expect([retired.unsupported, retired.applied]).toEqual([[], [{ kind: 'retire-group', group: 'audit' }]]);
    expect(retired.text).not.toContain('audit:');
  });
});

describe('forms the edit cannot make are listed, never half-edited', () => {
  const edits = [
    { kind: 'account-not-read-by-ci', account: 'mirror' },
    { kind: 'remove-group-read', group: 'ops', index: 1 },
  ] as const;

  it.each([
    ['a variable', SOURCE.replace(/accounts: \{[\s\S]*?\n {2}\},\n/, 'accounts: sharedAccounts,\n'), 'accounts is sharedAccounts, not an object literal'],
    ['a spread', SOURCE.replace('  accounts: {\n', '  accounts: {\n    ...sharedAccounts,\n'), 'the spread ...sharedAccounts in accounts'],
    ['a computed value', SOURCE.replace("consumers: ['mirror-sync'],", "consumers: ['mirror-sync'],\n      readByCi: process.env.CI_READS === 'yes',"), "accounts.mirror.readByCi is process.env.CI_READS === 'yes', not the literal true"],
  ])('%s: the account edit is listed with the construct, the rest made', (_, source, reason) => {
    const { text, applied, unsupported } = editPlatformConfig(source, edits, 'platform.config.ts');
    expect(unsupported).toEqual([{ edit: edits[0], change: 'set accounts.mirror.readByCi to false and drop accounts.mirror.consumers', reason }]);
    expect(applied).toEqual([edits[1]]);
    // The account's text is as it was: its consumers not dropped without its readByCi.
    expect(text).toBe(source.replace("{ path: 'team/a' }, { path: 'team/b' }, ", "{ path: 'team/a' }, "));
  });

  it('reads behind a spread or a variable: listed', () => {
    const spread = SOURCE.replace("reads: [{ path: 'team/a' },", "reads: [...baseReads, { path: 'team/a' },");
    expect(editPlatformConfig(spread, [edits[1]], 'f.ts').unsupported[0].reason).toBe('the spread ...baseReads in people.groups.ops.reads (the index of reads[1] is not in the source)');
    const variable = SOURCE.replace(/reads: \[.*\],/, 'reads: opsReads,');
    expect(editPlatformConfig(variable, [edits[1]], 'f.ts').unsupported[0].reason).toBe('people.groups.ops.reads is opsReads, not an array literal');
  });

  it('a source with no PlatformConfig literal is an error saying so', () => {
    expect(() => editPlatformConfig('export const x = 1;\n', [], 'stacks/platform.config.ts')).toThrow(
      'stacks/platform.config.ts: no object literal typed PlatformConfig',
    );
  });
});

describe('the source of the store test (narrowingSourceOn): the same accounts and group on an installation', () => {
  it('evaluates to the settings, key and URLs given, the accounts and people groups of NARROWING_SOURCE; it synthesizes', () => {
    const { publicKeyPem } = generateSigningKey();
    const settings = { organisation: 'acme', ciUrl: 'https://gitlab.test.example', registryHost: 'registry.test.example', registryPorts: { push: 8443, pull: 8444 }, store: { kind: 'vault' } };
    const source = narrowingSourceOn({ settings, publicKeyPem, jobTimeoutMinutes: 15, discoveryUrl: 'http://127.0.0.1:4000', storeUrl: 'http://127.0.0.1:8200' });
    const config = evaluateConfigSource(source);
    const example = evaluateConfigSource(SOURCE);
    expect(config.settings).toEqual(settings);
    expect(config.ciJobTimeout?.toSeconds()).toBe(900);
    expect(JSON.stringify(config.ciKeySource)).toContain(JSON.stringify(publicKeyPem.trim()).slice(1, 40));
    expect(config.accounts).toEqual(example.accounts);
    expect(config.people).toEqual({ ...example.people, discoveryUrl: 'http://127.0.0.1:4000', storeUrl: 'http://127.0.0.1:8200' });
    // The text the narrowing edits is the example's, word for word.
    const from = (text: string) => text.slice(text.indexOf('  accounts: {'));
    expect(from(source).replace(/discoveryUrl: .*\n/, '').replace(/storeUrl: .*\n/, '')).toBe(from(SOURCE).replace(/discoveryUrl: .*\n/, '').replace(/storeUrl: .*\n/, ''));
    expect(synthesizedRules(config).rules).toContain('registry-ci secret/data/registry/svc-mirror');
  });
});
