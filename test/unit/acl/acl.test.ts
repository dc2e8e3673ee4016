import { Acl, LookupMode } from '../../../lib/acl/acl';
import { PolicyParser } from '../../../lib/acl/policy-parser';

/** Builds the ACL of a token holding the given policies (name → HCL or JSON text). */
async function aclOf(policies: Record<string, string>): Promise<Acl> {
  const parser = new PolicyParser();
  const parsed = await Promise.all(Object.entries(policies).map(([name, text]) => parser.parse(name, text)));
  return Acl.fromPolicies(parsed, { templating: 'drop' });
}

function rule(path: string, ...capabilities: string[]): string {
  return `path "${path}" {\n  capabilities = [${capabilities.map((c) => `"${c}"`).join(', ')}]\n}\n`;
}

/** The path of the rule that governs `path`, or undefined. */
function governing(acl: Acl, path: string, mode: LookupMode = 'other'): string | undefined {
  return acl.governingRule(path, mode)?.path.written;
}

// Cases marked "docs" are the examples of OpenBao's policy documentation
// (website/content/docs/concepts/policies.mdx), "code" those of the comments in vault/acl.go.
describe('exact rules', () => {
  it('docs: "secret/foo" permits reading only secret/foo, not secret/food or secret/foo/bar', async () => {
    const acl = await aclOf({ p: rule('secret/foo', 'read') });
    expect(acl.check('read', 'secret/foo').allowed).toBe(true);
    expect(acl.check('read', 'secret/food').allowed).toBe(false);
    expect(acl.check('read', 'secret/foo/bar').allowed).toBe(false);
    expect(acl.check('update', 'secret/foo').allowed).toBe(false);
  });

  it('docs: an exact deny takes precedence over a broader grant ("secret/super-secret")', async () => {
    const acl = await aclOf({
      p: rule('secret/*', 'create', 'read', 'update', 'patch', 'delete', 'list') + rule('secret/super-secret', 'deny'),
    });
    expect(acl.capabilities('secret/super-secret')).toEqual(['deny']);
    expect(acl.capabilities('secret/other')).toEqual(['create', 'delete', 'list', 'patch', 'read', 'update']);
  });

  it('an exact rule wins outright, even over a longer matching segment rule', async () => {
    const acl = await aclOf({ p: rule('a/b/c', 'read') + rule('a/b/+', 'update') });
    expect(governing(acl, 'a/b/c')).toBe('a/b/c');
    expect(governing(acl, 'a/b/d')).toBe('a/b/+');
  });

  it('one leading slash of a rule path is stripped; request paths lose all of theirs', async () => {
    const acl = await aclOf({ p: rule('/secret/x', 'read') + rule('//y', 'read') });
    expect(acl.check('read', 'secret/x').allowed).toBe(true);
    expect(acl.check('read', '///secret/x').allowed).toBe(true);
    // "//y" becomes "/y", which no request path (leading slashes stripped) can equal.
    expect(acl.check('read', 'y').allowed).toBe(false);
    expect(acl.check('read', '/y').allowed).toBe(false);
  });
});

describe('* prefix rules', () => {
  it('docs: "secret/bar/*" matches secret/bar/zip and secret/bar/zip/zap, not secret/bars/zip', async () => {
    const acl = await aclOf({ p: rule('secret/bar/*', 'read') });
    expect(acl.check('read', 'secret/bar/zip').allowed).toBe(true);
    expect(acl.check('read', 'secret/bar/zip/zap').allowed).toBe(true);
    expect(acl.check('read', 'secret/bars/zip').allowed).toBe(false);
  });

  it('docs: "secret/zip-*" matches secret/zip-zap and secret/zip-zap/zong, not secret/zip/zap', async () => {
    const acl = await aclOf({ p: rule('secret/zip-*', 'read') });
    expect(acl.check('read', 'secret/zip-zap').allowed).toBe(true);
    expect(acl.check('read', 'secret/zip-zap/zong').allowed).toBe(true);
    expect(acl.check('read', 'secret/zip/zap').allowed).toBe(false);
  });

  it('docs: "secret/foo*" also matches secret/foobar (a string prefix, not a segment prefix)', async () => {
    const acl = await aclOf({ p: rule('secret/foo*', 'read') });
    expect(acl.check('read', 'secret/foobar').allowed).toBe(true);
  });

  it('the longest matching prefix governs; a broad deny does not override a more specific grant', async () => {
    const acl = await aclOf({ p: rule('secret/*', 'deny') + rule('secret/data/app/*', 'read') });
    expect(governing(acl, 'secret/data/app/x')).toBe('secret/data/app/*');
    expect(acl.check('read', 'secret/data/app/x').allowed).toBe(true);
    expect(acl.check('read', 'secret/data/other').allowed).toBe(false);
  });

  it('a plus inside a segment is literal: "a+b*" is a prefix rule', async () => {
    const acl = await aclOf({ p: rule('a+b*', 'read') });
    expect(acl.check('read', 'a+bc').allowed).toBe(true);
    expect(acl.check('read', 'axb').allowed).toBe(false);
  });
});

describe('+ segment wildcards', () => {
  it('docs: "secret/+/teamb" matches any one segment in the middle', async () => {
    const acl = await aclOf({ p: rule('secret/+/teamb', 'read') });
    expect(acl.check('read', 'secret/foo/teamb').allowed).toBe(true);
    expect(acl.check('read', 'secret/bar/teamb').allowed).toBe(true);
    expect(acl.check('read', 'secret/foo/bar/teamb').allowed).toBe(false);
    expect(acl.check('read', 'secret/teamb').allowed).toBe(false);
  });

  it('docs: "secret/+/+/teamb" matches secret/foo/bar/teamb and secret/bar/foo/teamb', async () => {
    const acl = await aclOf({ p: rule('secret/+/+/teamb', 'read') });
    expect(acl.check('read', 'secret/foo/bar/teamb').allowed).toBe(true);
    expect(acl.check('read', 'secret/bar/foo/teamb').allowed).toBe(true);
    expect(acl.check('read', 'secret/foo/teamb').allowed).toBe(false);
  });

  it('a segment rule ending in * matches its last segment as a prefix, at any depth', async () => {
    const acl = await aclOf({ p: rule('secret/+/team*', 'read') });
    expect(acl.check('read', 'secret/x/teamb').allowed).toBe(true);
    expect(acl.check('read', 'secret/x/teamb/deeper').allowed).toBe(true);
    expect(acl.check('read', 'secret/x/other').allowed).toBe(false);
  });

  it('+ matches an empty segment', async () => {
    const acl = await aclOf({ p: rule('a/+/b', 'read') + rule('a/+', 'list') });
    expect(acl.check('read', 'a//b').allowed).toBe(true);
    expect(governing(acl, 'a/')).toBe('a/+');
  });

  it('"a/+b" is a segment rule whose segment "+b" only matches itself', async () => {
    const acl = await aclOf({ p: rule('a/+b', 'read') });
    expect(acl.check('read', 'a/+b').allowed).toBe(true);
    expect(acl.check('read', 'a/xb').allowed).toBe(false);
  });

  it('"+*" is refused, as the store refuses it', async () => {
    await expect(aclOf({ p: rule('secret/+*', 'read') })).rejects.toThrow(/'\+\*' is forbidden/);
  });
});

describe('priority between matching non-exact rules', () => {
  it('docs: "secret/*" beats "secret/+/+/foo/*" (same first wildcard, both prefixes, fewer +)', async () => {
    const acl = await aclOf({ p: rule('secret/*', 'read') + rule('secret/+/+/foo/*', 'update') });
    expect(governing(acl, 'secret/a/b/foo/c')).toBe('secret/*');
  });

  it('code: the later first wildcard wins ("foo/a*" over "foo/+"; "foo/bar/+/baz" over "foo/+/bar/baz")', async () => {
    const acl = await aclOf({
      p: rule('foo/a*', 'read') + rule('foo/+', 'update') + rule('foo/bar/+/baz', 'read') + rule('foo/+/bar/baz', 'update'),
    });
    expect(governing(acl, 'foo/ab')).toBe('foo/a*');
    expect(governing(acl, 'foo/bar/bar/baz')).toBe('foo/bar/+/baz');
  });

  it('code: a non-prefix rule beats a prefix rule ("foo/+/bar" over "foo/+/ba*"; "foo/+" over "foo/*")', async () => {
    const acl = await aclOf({
      p: rule('foo/+/bar', 'read') + rule('foo/+/ba*', 'update') + rule('foo/+', 'read') + rule('foo/*', 'update'),
    });
    expect(governing(acl, 'foo/x/bar')).toBe('foo/+/bar');
    expect(governing(acl, 'foo/x')).toBe('foo/+');
  });

  it('fewer + segments win ("a/+/b/c" over "a/+/+/c")', async () => {
    const acl = await aclOf({ p: rule('a/+/b/c', 'read') + rule('a/+/+/c', 'update') });
    expect(governing(acl, 'a/x/b/c')).toBe('a/+/b/c');
  });

  it('code: the longer rule wins ("foo/+/bar/ba*" over "foo/+/bar/b*")', async () => {
    const acl = await aclOf({ p: rule('foo/+/bar/ba*', 'read') + rule('foo/+/bar/b*', 'update') });
    expect(governing(acl, 'foo/x/bar/baz')).toBe('foo/+/bar/ba*');
  });

  it('the lexicographically greater rule wins last ("+/a/+" over "+/+/b")', async () => {
    const acl = await aclOf({ p: rule('+/a/+', 'read') + rule('+/+/b', 'update') });
    expect(governing(acl, 'x/a/b')).toBe('+/a/+');
  });

  it('no match is a deny; the governing rule must carry the capability', async () => {
    const acl = await aclOf({ p: rule('secret/*', 'read') + rule('secret/x', 'list') });
    expect(acl.capabilities('other/path')).toEqual(['deny']);
    expect(acl.check('read', 'secret/x').allowed).toBe(false);
  });

  it('an empty capability list still governs, shadowing a broader grant', async () => {
    const acl = await aclOf({ p: rule('secret/*', 'read') + 'path "secret/x" {\n  capabilities = []\n}\n' });
    expect(acl.capabilities('secret/x')).toEqual(['deny']);
  });
});

describe('deny and merging of identical path strings', () => {
  it('docs: the same pattern in several policies takes the union of capabilities', async () => {
    const acl = await aclOf({ a: rule('secret/x', 'read'), b: rule('secret/x', 'update') });
    expect(acl.capabilities('secret/x')).toEqual(['read', 'update']);
    expect(acl.governingRule('secret/x')?.policies).toEqual(['a', 'b']);
  });

  it('deny in any policy for the same path string wins over the others', async () => {
    const acl = await aclOf({ a: rule('secret/x/*', 'read', 'sudo'), b: rule('secret/x/*', 'deny') });
    expect(acl.capabilities('secret/x/y')).toEqual(['deny']);
    expect(acl.check('sudo', 'secret/x/y').allowed).toBe(false);
  });

  it('deny discards every other capability of its block', async () => {
    const acl = await aclOf({ a: rule('secret/x', 'read', 'deny') });
    expect(acl.capabilities('secret/x')).toEqual(['deny']);
  });

  it('"/x" and "x" are the same path string; "x" and "x*" are not', async () => {
    const acl = await aclOf({ a: rule('/x', 'read'), b: rule('x', 'update'), c: rule('x*', 'list') });
    expect(acl.capabilities('x')).toEqual(['read', 'update']);
    expect(acl.capabilities('xy')).toEqual(['list']);
  });

  it('two blocks for the same path in one policy merge too', async () => {
    const acl = await aclOf({ a: rule('secret/x', 'read') + rule('secret/x', 'list') });
    expect(acl.capabilities('secret/x')).toEqual(['list', 'read']);
  });
});

describe('list requests and sys/capabilities', () => {
  it('a list request finds the exact rule without the trailing slash', async () => {
    const acl = await aclOf({ a: rule('secret/metadata/app', 'list') });
    expect(acl.check('list', 'secret/metadata/app/').allowed).toBe(true);
    expect(governing(acl, 'secret/metadata/app/', 'other')).toBeUndefined();
  });

  it('a list request tries non-exact rules without the trailing slash first', async () => {
    const acl = await aclOf({ a: rule('a/*', 'read') + rule('a/b/*', 'list') });
    expect(governing(acl, 'a/b/', 'list')).toBe('a/*');
    expect(governing(acl, 'a/b/', 'other')).toBe('a/b/*');
    // sys/capabilities answers as a list request does.
    expect(acl.capabilities('a/b/')).toEqual(['read']);
  });

  it('sys/capabilities sorts names alphabetically and answers root for a root token', async () => {
    const acl = await aclOf({ a: rule('x', 'update', 'create', 'sudo', 'read') });
    expect(acl.capabilities('x')).toEqual(['create', 'read', 'sudo', 'update']);
    expect(Acl.root().capabilities('anything')).toEqual(['root']);
  });
});

describe('templated paths', () => {
  it('are dropped for a token without an entity, kept literally for a report', async () => {
    const parser = new PolicyParser();
    const policy = await parser.parse('t', rule('secret/data/{{identity.entity.id}}/*', 'read'));
    expect(Acl.fromPolicies([policy], { templating: 'drop' }).rules).toEqual([]);
    const literal = Acl.fromPolicies([policy], { templating: 'literal' });
    expect(literal.rules.map((r) => r.path.display)).toEqual(['secret/data/{{identity.entity.id}}/*']);
  });
});
