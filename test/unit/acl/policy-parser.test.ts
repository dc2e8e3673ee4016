import { AclPolicy } from '../../../lib/acl/acl-policy';
import { DEFAULT_POLICY_TEXT } from '../../../lib/acl/default-policy';
import { hcl1PolicyItems } from '../../../lib/acl/hcl1-decoder';
import { readLibraryPolicy } from '../../../lib/acl/library-policy-reader';
import { decodePolicy } from '../../../lib/acl/policy-decoder';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { capabilityNames } from '../../../lib/acl/store-capability';
import { PolicyDocument } from '../../../lib/model/policy-document';
import { renderPolicyHcl } from '../../../lib/render/policy-hcl';

/** Rules as comparable plain data. */
function summary(policy: AclPolicy): Array<[string, string, string[]]> {
  return policy.rules.map((r) => [r.path.kind, r.path.key, capabilityNames(r.mask)]);
}

describe('the HCL 1 reader and the library fast path agree', () => {
  it('the built-in default policy is read as built-in, with the rules of its text', async () => {
    const builtin = await new PolicyParser().parse('default', DEFAULT_POLICY_TEXT);
    expect(builtin.syntax).toBe('builtin');
    expect(summary(builtin)).toEqual(summary(decodePolicy('default', hcl1PolicyItems('default', DEFAULT_POLICY_TEXT, 'openbao'), 'hcl')));
    expect(builtin.rules).toHaveLength(17);
  });

  it("the library's own output is read without the HCL parser, with the same rules", async () => {
    const doc = new PolicyDocument('registry-ci');
    doc.addRule('secret/data/registry/svc-orchestrator', ['read'], 'Platform/ci/RegistryCi');
    doc.addRule('secret/data/registry/svc-orchestrator', ['read'], 'Platform/ci/Build');
    doc.addRule('secret/metadata/+/x*', ['list', 'read'], 'Platform/ci/Other');
    doc.addRule('secret/data/denied', ['deny'], 'Platform/ci/Deny');
    const text = renderPolicyHcl(doc);
    const fast = await new PolicyParser().parse('registry-ci', text);
    expect(fast.syntax).toBe('library');
    const slow = decodePolicy('registry-ci', hcl1PolicyItems('registry-ci', text, 'openbao'), 'hcl');
    expect(summary(fast)).toEqual(summary(slow));
    expect(summary(fast)).toEqual([
      ['exact', 'secret/data/denied', ['deny']],
      ['exact', 'secret/data/registry/svc-orchestrator', ['read']],
      ['segment', 'secret/metadata/+/x*', ['read', 'list']],
    ]);
  });

  it('a hand-edited library policy is no longer the library output and goes to the HCL parser', async () => {
    const doc = new PolicyDocument('app');
    doc.addRule('secret/data/app/*', ['read'], 'App');
    const edited = renderPolicyHcl(doc).replace('["read"]', '["update", "read"]');
    expect(readLibraryPolicy(edited)).toBeUndefined();
    const policy = await new PolicyParser().parse('app', edited);
    expect(policy.syntax).toBe('hcl');
    expect(summary(policy)).toEqual([['prefix', 'secret/data/app/', ['read', 'update']]]);
  });
});

describe('foreign policies', () => {
  it('HCL with comments, the legacy "policy" word and several blocks', async () => {
    const text = `
      // a comment
      /* another */
      path "secret/a" { policy = "read" }
      path "secret/b" {
        policy = "write"
      }
      path "secret/c" {
        capabilities = ["sudo"]
        policy       = "sudo"
      }
      path "secret/d" {
        capabilities = ["read", "update"]
        policy       = "deny"
      }
    `;
    const policy = await new PolicyParser().parse('Legacy', text);
    expect(policy.name).toBe('legacy');
    expect(summary(policy)).toEqual([
      ['exact', 'secret/a', ['read', 'list']],
      ['exact', 'secret/b', ['create', 'read', 'update', 'delete', 'list']],
      ['exact', 'secret/c', ['create', 'read', 'update', 'delete', 'list', 'sudo']],
      ['exact', 'secret/d', ['deny']],
    ]);
  });

  it('JSON, read as the store reads it (HCL 1 turns nested objects into labels)', async () => {
    const parser = new PolicyParser();
    const read = async (value: unknown) => summary(await parser.parse(`j${JSON.stringify(value).length}`, JSON.stringify(value)));
    const object = await parser.parse('j1', JSON.stringify({ path: { 'secret/*': { capabilities: ['read'] } } }));
    expect(object.syntax).toBe('json');
    expect(summary(object)).toEqual([['prefix', 'secret/', ['read']]]);
    // "path" as a list of objects: one rule per entry, identical paths merge later.
    expect(await read({ path: [{ a: { capabilities: ['read'] } }, { a: { capabilities: ['list'] } }] })).toEqual([
      ['exact', 'a', ['read']],
      ['exact', 'a', ['list']],
    ]);
    // An extra level of labels is ignored: the rule is "a".
    expect(await read({ path: { a: { b: { capabilities: ['read'] } } } })).toEqual([['exact', 'a', ['read']]]);
    // An empty body is a rule without capabilities; an empty "path" is a rule on the path "path".
    expect(await read({ path: { a: {} } })).toEqual([['exact', 'a', []]]);
    expect(await read({ path: {} })).toEqual([['exact', 'path', []]]);
    // A body given as a list is not a block to the store.
    await expect(parser.parse('j', JSON.stringify({ path: { a: [{ capabilities: ['read'] }] } }))).rejects.toThrow(
      /path "path": invalid key "a"/,
    );
    // Parameters whose values are all objects are split once too often, as in the store.
    await expect(parser.parse('j', JSON.stringify({ path: { a: { allowed_parameters: { x: ['y'] } } } }))).rejects.toThrow(
      /path "a": invalid key "x"/,
    );
  });

  it('parameter constraints are kept as names; they never add a capability', async () => {
    const policy = await new PolicyParser().parse(
      'p',
      'path "secret/restricted" {\n  capabilities = ["create"]\n  allowed_parameters = {\n    "foo" = []\n  }\n}\n',
    );
    expect(policy.rules[0].constraints).toEqual(['allowed_parameters']);
  });

  it('an expired rule is dropped, as the store drops it', async () => {
    const text = 'path "old" {\n  capabilities = ["read"]\n  expiration = "2001-01-01T00:00:00Z"\n}\n';
    expect((await new PolicyParser(new Date('2024-01-01T00:00:00Z')).parse('p', text)).rules).toEqual([]);
    expect((await new PolicyParser(new Date('2000-01-01T00:00:00Z')).parse('p', text)).rules).toHaveLength(1);
  });
});

describe('what the store refuses is refused, naming the policy', () => {
  const parser = new PolicyParser();
  it.each([
    ['unknown top-level key', 'foo = "bar"\n', /policy "bad": invalid key "foo"/],
    ['unknown block key', 'path "x" {\n  capability = ["read"]\n}\n', /path "x": invalid key "capability"/],
    ['unknown capability', 'path "x" {\n  capabilities = ["reed"]\n}\n', /invalid capability "reed"/],
    ["Vault's subscribe (not an OpenBao capability)", 'path "x" {\n  capabilities = ["subscribe"]\n}\n', /invalid capability "subscribe"/],
    ['unknown word before deny', 'path "x" {\n  capabilities = ["bogus", "deny"]\n}\n', /invalid capability "bogus"/],
    ['unknown legacy policy', 'path "x" {\n  policy = "admin"\n}\n', /invalid policy "admin"/],
    ['+*', 'path "x/+*" {\n  capabilities = ["read"]\n}\n', /'\+\*' is forbidden/],
    ['broken HCL', 'path "x" {\n  capabilities = [\n', /policy "bad": not valid HCL/],
    ['broken JSON', '{"path": {"a": ]}}', /policy "bad": not valid JSON: line 1: Expected object value, got unknown token: RBRACK/],
    ['an escape HCL 1 does not know', 'path "x/\\$a" {\n  capabilities = ["read"]\n}\n', /not valid HCL: line 1: illegal char escape/],
  ])('%s', async (_label, text, message) => {
    await expect(parser.parse('bad', text)).rejects.toThrow(message);
  });

  it('an unknown word after deny is never looked at (the store reads words until deny)', async () => {
    const policy = await parser.parse('p', 'path "x" {\n  capabilities = ["deny", "bogus"]\n}\n');
    expect(summary(policy)).toEqual([['exact', 'x', ['deny']]]);
  });
});
