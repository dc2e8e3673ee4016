/**
 * The parser refuses what each store refuses and keeps what the store accepts but the evaluator
 * does not model as "not fully evaluated" (OpenBao 2.4 / Vault 1.21 `vault/policy.go`; the shapes
 * are written to both real stores by test/store/acl-differential.store.test.ts).
 */
import { Acl, requestPathOf } from '../../../lib/acl/acl';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { storePolicyName } from '../../../lib/model/store-policy-name';
import { capabilityNames } from '../../../lib/acl/store-capability';
import { parseDurationSeconds, parseExpiration } from '../../../lib/acl/store-value';
import { sudoOnlyPath } from '../../../lib/acl/sudo-path';

const NOW = new Date('2026-01-01T00:00:00Z');
const openbao = new PolicyParser(NOW, 'openbao');
const vault = new PolicyParser(NOW, 'vault');
const block = (body: string, path = 'secret/data/a') => `path "${path}" {\n  capabilities = ["read", "list"]\n${body}\n}\n`;

describe('policy texts both stores refuse are refused', () => {
  it.each([
    ['a "name" block', 'name {\n}\npath "a" {\n  capabilities = ["read"]\n}\n', '"name" must be a string, not a block'],
    ['a "name" list', 'name = ["x"]\npath "a" {\n  capabilities = ["read"]\n}\n', '"name" must be a string, not a list'],
    ['a "name" JSON object', '{"name": {}, "path": {"a": {"capabilities": ["read"]}}}', '"name" must be a string, not a block'],
    ['min_wrapping_ttl above max_wrapping_ttl', block('  min_wrapping_ttl = "2h"\n  max_wrapping_ttl = "1h"'), 'max_wrapping_ttl cannot be less than min_wrapping_ttl (3600 s < 7200 s)'],
    ['a wrapping TTL that is not a duration', block('  max_wrapping_ttl = "soon"'), 'error parsing max_wrapping_ttl'],
  ])('%s', async (_what, text, message) => {
    await expect(openbao.parse('p', text)).rejects.toThrow(message);
    await expect(vault.parse('p', text)).rejects.toThrow(message);
  });

  it('a "name" string or integer is accepted, as the store decodes both into the name', async () => {
    expect((await openbao.parse('p', 'name = "x"\npath "a" {\n  capabilities = ["read"]\n}\n')).rules).toHaveLength(1);
    expect((await vault.parse('p', 'name = 5\npath "a" {\n  capabilities = ["read"]\n}\n')).rules).toHaveLength(1);
  });

  it('a deny rule ends the reading: its wrapping TTLs are not checked, and it is never constrained', async () => {
    const text = 'path "a" {\n  capabilities = ["deny"]\n  min_wrapping_ttl = "2h"\n  max_wrapping_ttl = "1h"\n}\n';
    const policy = await openbao.parse('p', text);
    expect(capabilityNames(policy.rules[0].mask)).toEqual(['deny']);
    expect(policy.rules[0].constraints).toEqual([]);
  });

  it('min equal to max, or one of them 0, is accepted and constrained', async () => {
    const policy = await vault.parse('p', block('  min_wrapping_ttl = 60\n  max_wrapping_ttl = "1m"'));
    expect(policy.rules[0].constraints).toEqual(['max_wrapping_ttl', 'min_wrapping_ttl']);
    expect((await vault.parse('q', block('  min_wrapping_ttl = "2h"\n  max_wrapping_ttl = 0'))).rules).toHaveLength(1);
  });
});

describe('the messages of docs/boundaries.md §7, exactly', () => {
  it.each([
    [openbao, 'p', 'name {\n}\npath "a" {\n  capabilities = ["read"]\n}\n', 'policy "p": "name" must be a string, not a block'],
    [vault, 'p', block('  min_wrapping_ttl = "2h"\n  max_wrapping_ttl = "1h"'), 'policy "p": path "secret/data/a": max_wrapping_ttl cannot be less than min_wrapping_ttl (3600 s < 7200 s)'],
    [openbao, 'p', block('  max_wrapping_ttl = "soon"'), 'policy "p": path "secret/data/a": error parsing max_wrapping_ttl: "soon" is not a duration'],
    [openbao, 'p', block('  control_group {\n    ttl = "1h"\n  }'), 'policy "p": path "secret/data/a": invalid key "control_group"'],
    [vault, 'p', block('  control_group {\n    factor "ops" {\n      identity {\n        group_names = ["ops"]\n      }\n    }\n  }'), 'policy "p": path "secret/data/a": must provide more than one identity group and approvals > 0'],
    [openbao, 'g', block('  expiration = "next year"'), 'policy "g": path "secret/data/a": invalid expiration time "next year"'],
  ])('%#', async (parser, name, text, message) => {
    const error = await parser.parse(name, text).then(() => undefined, (e: Error) => e);
    expect(error?.message).toBe(message);
  });
});

describe('each store has its own keys', () => {
  it("OpenBao refuses Vault's control_group and subscribe_event_types; Vault refuses OpenBao's expiration, pagination_limit and listing filter", async () => {
    for (const key of ['control_group {\n    factor "ops" {\n      identity {\n        group_names = ["ops"]\n        approvals = 1\n      }\n    }\n  }', 'subscribe_event_types = ["*"]']) {
      await expect(openbao.parse('p', block(`  ${key}`))).rejects.toThrow(/invalid key "(control_group|subscribe_event_types)"/);
    }
    for (const key of ['expiration = "2030-01-01T00:00:00Z"', 'pagination_limit = 10', 'list_scan_response_keys_filter_path = "{{ .key }}"']) {
      await expect(vault.parse('p', block(`  ${key}`))).rejects.toThrow(/invalid key "(expiration|pagination_limit|list_scan_response_keys_filter_path)"/);
    }
  });

  it('Vault: a control_group block is a constraint; its factors need approvals and groups, and control only capabilities the rule has', async () => {
    const group = (identity: string, extra = '') => block(`  control_group {\n    factor "ops" {\n      identity {\n${identity}\n      }\n${extra}\n    }\n  }`);
    const ok = await vault.parse('p', group('        group_names = ["ops"]\n        approvals = 1'));
    expect(ok.rules[0].constraints).toEqual(['control_group']);
    expect(ok.unevaluated).toBeUndefined();
    await expect(vault.parse('p', group('        group_names = ["ops"]'))).rejects.toThrow('must provide more than one identity group and approvals > 0');
    await expect(vault.parse('p', group('        approvals = 2'))).rejects.toThrow('must provide more than one identity group and approvals > 0');
    await expect(vault.parse('p', group('        group_names = ["ops"]\n        approvals = 1', '      controlled_capabilities = ["update"]'))).rejects.toThrow(
      "control group factor capabilities must be a subset of the policy's capabilities",
    );
    await expect(vault.parse('p', block('  control_group {\n    ttl = "1h"\n  }'))).rejects.toThrow('no control group factors provided');
  });

  it("OpenBao: a listing filter needs the list capability, as the store demands", async () => {
    await expect(openbao.parse('p', 'path "a/" {\n  capabilities = ["read"]\n  list_scan_response_keys_filter_path = "a/{{ .key }}"\n}\n')).rejects.toThrow(
      'list_scan_response_keys_filter_path needs to be used on a path with the list capability',
    );
    expect((await openbao.parse('p', block('  list_scan_response_keys_filter_path = "a/{{ .key }}"'))).rules[0].constraints).toEqual(['list_scan_response_keys_filter_path']);
  });

  it("Vault's subscribe_event_types is accepted but not modelled: the rule counts, and the policy says it is not fully evaluated", async () => {
    const policy = await vault.parse('events', block('  subscribe_event_types = ["kv*"]'));
    expect(capabilityNames(policy.rules[0].mask)).toEqual(['read', 'list']);
    expect(policy.rules[0].unmodelled).toEqual(['subscribe_event_types']);
    expect(policy.unevaluated).toEqual(['path "secret/data/a": key "subscribe_event_types" is not evaluated']);
  });
});

describe('what the store accepts is read as it reads it', () => {
  it('an expiration in Unix epoch seconds (string or number) drops the rule once passed, keeps it before', async () => {
    for (const at of ['1700000000', '"1700000000"']) expect((await openbao.parse(`e${at}`, block(`  expiration = ${at}`))).rules).toEqual([]);
    expect((await openbao.parse('f', block('  expiration = 1900000000'))).rules).toHaveLength(1);
    await expect(openbao.parse('g', block('  expiration = "next year"'))).rejects.toThrow('invalid expiration time "next year"');
  });

  it('an unlabelled path block is the rule for the literal path "path"', async () => {
    const policy = await openbao.parse('p', 'path {\n  capabilities = ["read"]\n}\n');
    expect(policy.rules.map((r) => [r.path.key, capabilityNames(r.mask)])).toEqual([['path', ['read']]]);
  });

  it('durations and times as the store parses them', () => {
    expect([60, '60', '1m', '1h30m', '2d', '1.5h', '', '-5s', 1.9].map(parseDurationSeconds)).toEqual([60, 60, 60, 5400, 172800, 5400, 0, -5, 1]);
    expect(['soon', '1.5d', '5x', true, '1h-'].map((v) => parseDurationSeconds(v as never))).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(parseExpiration('2030-01-01T00:00:00Z')?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(parseExpiration('2030-01-01T00:00:00.5+01:00')?.toISOString()).toBe('2029-12-31T23:00:00.500Z');
    expect(parseExpiration('1893456000')?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(parseExpiration('')).toBeNull();
    expect(parseExpiration('2030-01-01')).toBeUndefined();
  });
});

describe('a text the store holds (read from a live store) never stops the analysis', () => {
  it('an unknown key, an unknown capability and an unreadable text mark the policy instead, and the readable rules count', async () => {
    const live = { storeAccepted: true } as const;
    const futureKey = await openbao.parse('future', block('  rate_limit = 5'), live);
    expect(futureKey.rules).toHaveLength(1);
    expect(futureKey.unevaluated).toEqual(['path "secret/data/a": key "rate_limit" is not evaluated']);
    const word = await vault.parse('word', 'path "a" {\n  capabilities = ["read", "teleport"]\n}\npath "b" {\n  capabilities = ["list"]\n}\n', live);
    expect(word.rules.map((r) => capabilityNames(r.mask))).toEqual([['read'], ['list']]);
    expect(word.unevaluated).toEqual(['path "a": invalid capability "teleport"']);
    // A text the parser cannot read (as from a newer store version): no rule is known, the policy says why.
    const unreadable = await openbao.parse('unreadable', 'path "a" {\n  capabilities = ["read"]\n', live);
    expect(unreadable.rules).toEqual([]);
    expect(unreadable.unevaluated).toEqual(['not valid HCL: line 3: object expected closing RBRACE got: EOF']);
    // The same texts from a synthesized output (not yet accepted by any store) are refused.
    await expect(openbao.parse('future', block('  rate_limit = 5'))).rejects.toThrow('policy "future": path "secret/data/a": invalid key "rate_limit"');
  });
});

describe('policy names as the store files them (Go strings.ToLower(strings.TrimSpace(name)))', () => {
  it('trims Go white space and lower-cases with the simple case mapping', () => {
    expect(storePolicyName('  Registry-CI\t\n')).toBe('registry-ci');
    expect(storePolicyName('\u0085App\u00a0')).toBe('app');
    expect(storePolicyName('\u3000ÉQUIPE')).toBe('équipe');
    // Go's ToLower maps U+0130 to "i"; JavaScript's toLowerCase adds a combining dot.
    expect(storePolicyName('İNFRA')).toBe('infra');
    expect('İNFRA'.toLowerCase()).not.toBe('infra');
    // U+FEFF is not white space to Go: it stays, where JavaScript's trim() would remove it.
    expect(storePolicyName('\ufeffapp')).toBe('\ufeffapp');
    expect(storePolicyName('ΟΔΟΣ')).toBe('οδοσ');
  });

  it('the parsed policy carries the stored name', async () => {
    expect((await openbao.parse(' Ops-Audit ', block(''))).name).toBe('ops-audit');
  });
});

describe('requests as the store checks them', () => {
  it('LIST and SCAN paths end in "/": the store appends it before the ACL check', () => {
    expect(requestPathOf('list', 'secret/metadata/team')).toBe('secret/metadata/team/');
    expect(requestPathOf('scan', '/secret/metadata/team/')).toBe('secret/metadata/team/');
    expect(requestPathOf('read', 'secret/metadata/team')).toBe('secret/metadata/team');
  });

  it('a list rule on the sub-tree answers a LIST of the path without its "/"', async () => {
    const acl = Acl.fromPolicies([await openbao.parse('team', 'path "secret/metadata/team/*" {\n  capabilities = ["list"]\n}\n')]);
    expect(acl.check('list', 'secret/metadata/team')).toMatchObject({ allowed: true, path: 'secret/metadata/team/' });
    expect(acl.governingRule('secret/metadata/team', 'list')).toBeUndefined();
  });

  it('root-protected paths of the system backend and the token store, per store, matched as the router matches them', () => {
    expect(sudoOnlyPath('openbao', 'sys/auth/jwt')).toBe('sys/auth/*');
    expect(sudoOnlyPath('openbao', 'sys/auth')).toBeUndefined();
    expect(sudoOnlyPath('openbao', 'sys/audit')).toBe('sys/audit');
    expect(sudoOnlyPath('openbao', 'sys/auditx')).toBeUndefined();
    expect(sudoOnlyPath('openbao', 'sys/leases/lookup/')).toBe('sys/leases/lookup/*');
    // The longest entry decides: "leases" is exact, so sys/leases/revoke is not root-protected.
    expect(sudoOnlyPath('vault', 'sys/leases/revoke')).toBeUndefined();
    expect(sudoOnlyPath('vault', 'sys/leases')).toBe('sys/leases');
    expect(sudoOnlyPath('openbao', 'sys/rotate/root')).toBe('sys/rotate/root');
    expect(sudoOnlyPath('vault', 'sys/rotate/root')).toBeUndefined();
    expect(sudoOnlyPath('openbao', 'auth/token/accessors/')).toBe('auth/token/accessors*');
    expect(sudoOnlyPath('vault', 'auth/token/accessors/')).toBe('auth/token/accessors/');
    expect(sudoOnlyPath('openbao', 'auth/token/revoke-orphan/x')).toBe('auth/token/revoke-orphan/*');
    expect(sudoOnlyPath('vault', 'auth/token/revoke-orphan')).toBe('auth/token/revoke-orphan');
    expect(sudoOnlyPath('openbao', '/sys/seal')).toBe('sys/seal');
    expect(sudoOnlyPath('openbao', 'secret/data/sys/auth/x')).toBeUndefined();
  });

  it('a request to a root-protected path passes only when its governing rule also has sudo', async () => {
    const without = Acl.fromPolicies([await openbao.parse('a', 'path "sys/*" {\n  capabilities = ["create", "read", "update", "list"]\n}\n')]);
    expect(without.check('update', 'sys/auth/oidc')).toMatchObject({ allowed: false, sudoPath: 'sys/auth/*' });
    expect(without.check('list', 'sys/leases/lookup')).toMatchObject({ allowed: false, path: 'sys/leases/lookup/', sudoPath: 'sys/leases/lookup/*' });
    expect(without.check('read', 'sys/mounts').allowed).toBe(true);
    const withSudo = Acl.fromPolicies([await openbao.parse('b', 'path "sys/*" {\n  capabilities = ["update", "sudo"]\n}\n')]);
    expect(withSudo.check('update', 'sys/auth/oidc').allowed).toBe(true);
    expect(withSudo.check('sudo', 'sys/auth/oidc').allowed).toBe(true);
    expect(Acl.root().check('update', 'sys/auth/oidc').allowed).toBe(true);
  });
});
