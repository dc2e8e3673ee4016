import { Acl, listLookupOf } from '../../../lib/acl/acl';
import { DEFAULT_POLICY_TEXT, VAULT_DEFAULT_POLICY_TEXT, defaultPolicyText } from '../../../lib/acl/default-policy';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { StoreTarget } from '../../../lib/model/store-target';

// Store-specific ACL facts (docs/stores.md); each is also checked against the real stores by
// test/store/acl-differential.store.test.ts and test/store/adoption.store.test.ts.

function rule(path: string, ...capabilities: string[]): string {
  return `path "${path}" {\n  capabilities = [${capabilities.map((c) => `"${c}"`).join(', ')}]\n}\n`;
}

describe('capabilities per store', () => {
  it('Vault refuses a policy naming scan with the store\'s own message; OpenBao accepts it', async () => {
    await expect(new PolicyParser(undefined, 'vault').parse('p', rule('a/*', 'scan'))).rejects.toThrow('policy "p": path "a/*": invalid capability "scan"');
    await expect(new PolicyParser(undefined, 'openbao').parse('p', rule('a/*', 'scan'))).resolves.toMatchObject({ name: 'p' });
  });

  it('OpenBao refuses subscribe and recover; Vault accepts them', async () => {
    for (const word of ['subscribe', 'recover']) {
      await expect(new PolicyParser(undefined, 'openbao').parse('p', rule('a', word))).rejects.toThrow(`invalid capability "${word}"`);
      const acl = Acl.fromPolicies([await new PolicyParser(undefined, 'vault').parse('p', rule('a', word))]);
      expect(acl.capabilities('a')).toEqual([word]);
    }
  });
});

describe('the built-in default policy per store', () => {
  it('Vault\'s is OpenBao\'s plus sys/control-group/request (update), before the OIDC rule', () => {
    expect(defaultPolicyText('openbao')).toBe(DEFAULT_POLICY_TEXT);
    expect(defaultPolicyText('vault')).toBe(VAULT_DEFAULT_POLICY_TEXT);
    expect(VAULT_DEFAULT_POLICY_TEXT).toContain('path "sys/control-group/request" {\n    capabilities = ["update"]\n}\n\n# Allow a token to make requests');
    expect(VAULT_DEFAULT_POLICY_TEXT.replace(DEFAULT_POLICY_TEXT, '')).not.toBe('');
  });

  it('each text is read as built-in, with its rules', async () => {
    const vault = await new PolicyParser(undefined, 'vault').parse('default', VAULT_DEFAULT_POLICY_TEXT);
    const openbao = await new PolicyParser(undefined, 'openbao').parse('default', DEFAULT_POLICY_TEXT);
    expect([vault.syntax, openbao.syntax]).toEqual(['builtin', 'builtin']);
    expect(vault.rules.map((r) => r.path.written)).toContain('sys/control-group/request');
    expect(openbao.rules.map((r) => r.path.written)).not.toContain('sys/control-group/request');
    expect([openbao.rules.length, vault.rules.length]).toEqual([17, 18]);
  });
});

describe('LIST semantics per store version (GHSA-xp3c-3jw3-4vcr)', () => {
  const policy = rule('secret/metadata/*', 'list') + rule('secret/metadata/restricted/*', 'deny');

  it.each([
    ['openbao 2.4.0', new StoreTarget('openbao', '2.4.0'), 'trimmed-first'],
    ['openbao 2.5.4', new StoreTarget('openbao', '2.5.4'), 'trimmed-first'],
    ['openbao 2.6.0', new StoreTarget('openbao', '2.6.0'), 'path-first'],
    ['openbao, version unknown', new StoreTarget('openbao'), 'trimmed-first'],
    ['vault 1.21.1', new StoreTarget('vault', '1.21.1'), 'trimmed-first'],
    ['vault 2.0.3', new StoreTarget('vault', '2.0.3'), 'path-first'],
  ])('%s: %s', (_name, target, lookup) => {
    expect(listLookupOf(target)).toBe(lookup);
  });

  it('before the fix, LIST secret/metadata/restricted/ is governed by the broader list grant (the bypass); after, by the deny', async () => {
    const parsed = await new PolicyParser().parse('p', policy);
    const old = Acl.fromPolicies([parsed], { listLookup: 'trimmed-first' });
    const fixed = Acl.fromPolicies([parsed], { listLookup: 'path-first' });
    expect(old.check('list', 'secret/metadata/restricted/').allowed).toBe(true);
    expect(fixed.check('list', 'secret/metadata/restricted/').allowed).toBe(false);
    expect(fixed.capabilities('secret/metadata/restricted/')).toEqual(['deny']);
    // Below the denied prefix both deny; a sibling both allow.
    for (const acl of [old, fixed]) {
      expect(acl.check('list', 'secret/metadata/restricted/app/').allowed).toBe(false);
      expect(acl.check('list', 'secret/metadata/open/').allowed).toBe(true);
    }
  });

  it('after the fix, SCAN falls back to the path without its "/" too', async () => {
    const parsed = await new PolicyParser().parse('p', rule('a/b', 'scan') + rule('a/+', 'read'));
    expect(Acl.fromPolicies([parsed], { listLookup: 'trimmed-first' }).check('scan', 'a/c/').allowed).toBe(false);
    const scanOnly = await new PolicyParser().parse('q', rule('a/+', 'scan'));
    expect(Acl.fromPolicies([scanOnly], { listLookup: 'trimmed-first' }).check('scan', 'a/c/').allowed).toBe(false);
    expect(Acl.fromPolicies([scanOnly], { listLookup: 'path-first' }).check('scan', 'a/c/').allowed).toBe(true);
  });
});

describe('StoreTarget.fromSealStatus', () => {
  it('reads OpenBao 2.x and Vault 1.x from the version field', () => {
    expect(StoreTarget.fromSealStatus({ version: '2.4.0', build_date: '2025-08-28T20:23:15Z' })).toEqual(new StoreTarget('openbao', '2.4.0'));
    expect(StoreTarget.fromSealStatus({ version: '1.21.1', build_date: '2025-11-18T21:04:32Z' })).toEqual(new StoreTarget('vault', '1.21.1'));
    expect(StoreTarget.fromSealStatus({ sealed: false })).toBeUndefined();
    expect(StoreTarget.fromSealStatus('x')).toBeUndefined();
  });
});
