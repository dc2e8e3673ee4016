/**
 * The HCL 1 port (lib/acl/hcl1-syntax.ts, lib/acl/hcl1-decoder.ts) against the behaviour of
 * `hashicorp/hcl` v1 that the stores show (every case here is also a text of
 * test/support/acl/policy-text-corpus.ts, written to both real stores).
 */
import { hcl1PolicyItems } from '../../../lib/acl/hcl1-decoder';
import { goParseInt, isHcl1Json, parseHcl1, unquoteHcl1 } from '../../../lib/acl/hcl1-syntax';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { Acl } from '../../../lib/acl/acl';
import { capabilityNames } from '../../../lib/acl/store-capability';

const openbao = new PolicyParser(undefined, 'openbao');
const vault = new PolicyParser(undefined, 'vault');
const rules = async (parser: PolicyParser, text: string) => (await parser.parse('p', text)).rules.map((r) => [r.path.written, capabilityNames(r.mask)]);

describe('quoted strings as HCL 1 unquotes them', () => {
  it.each([
    ['"a/$${x}/b"', 'a/$${x}/b'],
    ['"a/%%{x}"', 'a/%%{x}'],
    ['"a/${x}"', 'a/${x}'],
    ['"${a"b}"', '${a"b}'],
    ['"${\\t}"', '${\\t}'],
    ['"\\x41\\101\\u00e9\\U0001F600"', 'AAé😀'],
    ['"\\a\\b\\f\\n\\r\\t\\v\\\\\\""', '\x07\b\f\n\r\t\v\\"'],
  ])('%s is %j', (quoted, value) => {
    expect(unquoteHcl1(quoted)).toBe(value);
  });

  it('refuses what the stores refuse: an unknown escape, a short \\u, an unclosed ${', () => {
    expect(['"\\q"', '"\\u12"', '"${a"', '"a\nb"'].map((q) => unquoteHcl1(q))).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('JSON strings are Go strings: escapes read, ${ kept, a surrogate escape refused', () => {
    expect(unquoteHcl1('"a/$${x}\\x41\\u00e9"', true)).toBe('a/$${x}Aé');
    expect(unquoteHcl1('"\\ud83d\\ude00"', true)).toBeUndefined();
    expect(unquoteHcl1('"\\ud83d\\ude00"')).toBe('\ufffd\ufffd');
  });
});

describe('the finding of issue 36: a deny on "$${x}" applies where the store applies it', () => {
  it('the rule is on the literal "$${x}": a request to ".../${x}/..." is not denied by it', async () => {
    const text = 'path "secret/data/*" {\n  capabilities = ["read"]\n}\npath "secret/data/$${x}/*" {\n  capabilities = ["deny"]\n}\n';
    for (const parser of [openbao, vault]) {
      const acl = Acl.fromPolicies([await parser.parse('p', text)]);
      expect(acl.capabilities('secret/data/$${x}/k')).toEqual(['deny']);
      expect(acl.capabilities('secret/data/${x}/k')).toEqual(['read']);
    }
  });
});

describe('keys given twice, decoded into the same field as the stores decode them', () => {
  it('capabilities twice: concatenated by OpenBao, refused by Vault 1.21 (HCL); concatenated by both in JSON', async () => {
    const hcl = 'path "a" {\n  capabilities = ["read"]\n  capabilities = ["list"]\n}\n';
    expect(await rules(openbao, hcl)).toEqual([['a', ['read', 'list']]]);
    await expect(vault.parse('p', hcl)).rejects.toThrow('policy "p": not valid HCL: line 3: The argument "capabilities" was already set. Each argument can only be defined once');
    const json = '{"path": {"a": {"capabilities": ["read"], "capabilities": ["update"]}}}';
    for (const parser of [openbao, vault]) expect(await rules(parser, json)).toEqual([['a', ['read', 'update']]]);
  });

  it('a quoted and an unquoted key are two keys to Vault\'s duplicate check, one field to the decoder', async () => {
    const text = 'path "a" {\n  capabilities = ["read"]\n  "capabilities" = ["list"]\n}\n';
    expect(await rules(vault, text)).toEqual([['a', ['read', 'list']]]);
  });

  it('a string field takes the last value; path twice in JSON is two rules; one path twice in a JSON object is two rules', async () => {
    expect(await rules(openbao, '{"path": {"a": {"policy": "write", "policy": "read"}}}')).toEqual([['a', ['read', 'list']]]);
    expect(await rules(vault, '{"path": {"a": {"capabilities": ["read"]}}, "path": {"b": {"capabilities": ["list"]}}}')).toEqual([['a', ['read']], ['b', ['list']]]);
    expect(await rules(vault, '{"path": {"a": {"capabilities": ["read"]}, "a": {"capabilities": ["update"]}}}')).toEqual([['a', ['read']], ['a', ['update']]]);
  });

  it('a parameter map given twice is merged (OpenBao); the second duration is read', async () => {
    const text = 'path "a" {\n  capabilities = ["update"]\n  allowed_parameters = { "x" = [] }\n  allowed_parameters = { "y" = [] }\n}\n';
    expect(hcl1PolicyItems('p', text, 'openbao')[0].value).toMatchObject({ allowed_parameters: { x: [], y: [] } });
    await expect(openbao.parse('p', 'path "a" {\n  capabilities = ["read"]\n  min_wrapping_ttl = "1h"\n  min_wrapping_ttl = "soon"\n}\n')).rejects.toThrow('error parsing min_wrapping_ttl');
  });
});

describe('lax syntax HCL 1 accepts', () => {
  it('several attributes on a line, blocks with and without labels, identifier labels, an empty object for a list', async () => {
    expect(await rules(vault, 'path "a" { capabilities = ["read"] policy = "read" }')).toEqual([['a', ['read', 'list']]]);
    expect(await rules(openbao, 'path "a" {\n capabilities = ["read"]\n}\npath {\n capabilities = ["list"]\n}\n')).toEqual([['a', ['read']], ['path', ['list']]]);
    expect(await rules(openbao, 'path corpus.a-b {\n  capabilities = ["read"]\n}\n')).toEqual([['corpus.a-b', ['read']]]);
    expect(await rules(openbao, 'path "a" {\n  capabilities = {}\n}\n')).toEqual([['a', []]]);
  });

  it("JSON through HCL 1's own parser: no closing brace, trailing commas, text after it, true dropped from a list", async () => {
    for (const text of ['{"path": {"a": {"capabilities": ["read"]}}', '{"path": {"a": {"capabilities": ["read"],}},}', '{"path": {"a": {"capabilities": ["read"]}}} trailing', '{"path": {"a": {"capabilities": [true, "read"]}}}']) {
      expect(await rules(vault, text)).toEqual([['a', ['read']]]);
    }
    await expect(vault.parse('p', '{"path": {"corpus\\/a": {"capabilities": ["read"]}}}')).rejects.toThrow('not valid JSON: line 1: illegal char escape');
  });

  it('what is JSON is decided on Go white space; the JSON scanner then knows ASCII white space only', () => {
    expect(isHcl1Json('\u00a0{}')).toBe(true);
    expect(isHcl1Json('\ufeff{}')).toBe(false);
    expect(() => parseHcl1('\u00a0{}', false)).toThrow('illegal char');
  });
});

describe('values decoded into the Go types of the fields', () => {
  it('name: a number\'s text or a string; a float or a boolean is refused', async () => {
    expect(hcl1PolicyItems('p', 'name = 0x10\n', 'openbao')).toEqual([{ keys: ['name'], value: '0x10' }]);
    await expect(openbao.parse('p', 'name = 1.5\n')).rejects.toThrow('policy "p": "name" must be a string, not 1.5');
    await expect(openbao.parse('p', '{"name": 5.0}')).rejects.toThrow('"name" must be a string, not 5.0');
  });

  it('integers as Go\'s strconv.ParseInt(s, 0, 64) reads them', () => {
    expect(['10', '0x10', '010', '0o17', '0b11', '0x_1f', '-5'].map(goParseInt)).toEqual([10, 16, 8, 15, 3, 31, -5]);
    expect(['08', '1_0', '1.5', '', '9223372036854775808'].map(goParseInt)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('pagination_limit as a string of an integer (OpenBao), a capability word with an escape, a number in required_parameters', async () => {
    expect((await openbao.parse('p', 'path "a/" {\n  capabilities = ["list"]\n  pagination_limit = "0x10"\n}\n')).rules).toHaveLength(1);
    expect(await rules(openbao, 'path "a" {\n  capabilities = ["re\\x61d"]\n}\n')).toEqual([['a', ['read']]]);
    expect(hcl1PolicyItems('p', 'path "a" {\n  required_parameters = ["x", 5]\n}\n', 'vault')[0].value).toEqual({ required_parameters: ['x', '5'] });
  });

  it('a parameter given a single value, and a control group approvals count as a string (Vault)', async () => {
    await expect(vault.parse('p', 'path "a" {\n  capabilities = ["update"]\n  allowed_parameters = { x = "y" }\n}\n')).rejects.toThrow('unknown slice type');
    const group = 'path "a" {\n  capabilities = ["read"]\n  control_group {\n    factor "ops" {\n      identity {\n        group_names = ["ops"]\n        approvals = "2"\n      }\n    }\n  }\n}\n';
    expect((await vault.parse('p', group)).rules[0].constraints).toEqual(['control_group']);
  });
});

describe('large texts', () => {
  it('a 200,000-character comment heredoc and path are read (no argument-count limit)', async () => {
    const long = 'x'.repeat(200_000);
    const text = `path "a/${long}" {\n  comment = <<EOF\n${long}\nEOF\n  capabilities = ["read"]\n}\n`;
    const policy = await openbao.parse('p', text);
    expect(policy.rules[0].path.written).toHaveLength(200_002);
  });
});

describe('a Vault text with an attribute given twice, held by the store', () => {
  it('is read as Vault reads it when it allows duplicates (joined), and marked not fully evaluated; declared, it is refused', async () => {
    const text = 'path "a" {\n  capabilities = ["read"]\n  capabilities = ["list"]\n}\n';
    const live = await vault.parse('dup', text, { storeAccepted: true });
    expect(live.rules.map((r) => capabilityNames(r.mask))).toEqual([['read', 'list']]);
    expect(live.unevaluated).toEqual([
      'an attribute is given twice: Vault reads the text only with VAULT_ALLOW_PENDING_REMOVAL_DUPLICATE_HCL_ATTRIBUTES set, and it is read as Vault then reads it',
    ]);
    await expect(vault.parse('dup', text)).rejects.toThrow('Each argument can only be defined once');
    expect((await openbao.parse('dup', text, { storeAccepted: true })).unevaluated).toBeUndefined();
  });
});
