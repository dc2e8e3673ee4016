import {
  Duration,
  Grant,
  identifierNameProblems,
  IGrantee,
  isCapability,
  KvMount,
  KvPath,
  normalizeCapabilities,
  PlatformSettings,
  PolicyDocument,
  RegistryPermissionScope,
  SecretDeclaration,
} from '../../../lib';
import { aclPathsOverlap } from '../../../lib/model/acl-path-overlap';
import { renderPolicyHcl } from '../../../lib/render/policy-hcl';

// The domain model on its own: no App, no stack, no cdktf.

describe('KV paths: the model derives the API path, nobody writes data/ by hand (spec §2.3, §9)', () => {
  const v2 = KvMount.DEFAULT;
  const v1 = new KvMount('kv1', 1);

  it('a KV v2 secret is read at secret/data/<logical>', () => {
    expect(KvPath.secret(v2, 'registry/svc-orchestrator').policyPath).toBe('secret/data/registry/svc-orchestrator');
  });

  it('a KV v1 secret is read at <mount>/<logical>', () => {
    expect(KvPath.secret(v1, 'registry/svc-orchestrator').policyPath).toBe('kv1/registry/svc-orchestrator');
  });

  it('the older form of a v2 secret is secret/<logical>', () => {
    expect(KvPath.secret(v2, 'registry/svc-executor').olderFormPolicyPath).toBe('secret/registry/svc-executor');
  });

  it('a subtree is a * prefix rule below the data path', () => {
    expect(KvPath.subtree(v2, 'acme/dev/orchestrator').policyPath).toBe('secret/data/acme/dev/orchestrator/*');
  });

  it('metadata lives under secret/metadata on v2', () => {
    expect(v2.metadataPath('a/b')).toBe('secret/metadata/a/b');
  });

  it.each([
    ['acme/dev/orchestrator', 'acme/dev/orchestrator/database', true],
    ['acme/dev/orchestrator', 'acme/dev/orchestrator-x/database', false],
    ['acme/dev', 'acme/shared', false],
  ])('subtree %s overlaps %s: %s (segment-aware)', (a, b, expected) => {
    expect(KvPath.subtree(v2, a).overlaps(KvPath.secret(v2, b))).toBe(expected);
  });

  it('two subtrees overlap when one contains the other', () => {
    expect(KvPath.subtree(v2, 'acme/dev').overlaps(KvPath.subtree(v2, 'acme/dev/orchestrator'))).toBe(true);
    expect(KvPath.subtree(v2, 'acme/dev/orchestrator').overlaps(KvPath.subtree(v2, 'acme/dev'))).toBe(true);
  });

  it('paths on different mounts never overlap', () => {
    expect(KvPath.secret(v2, 'a/b').overlaps(KvPath.secret(v1, 'a/b'))).toBe(false);
  });

  it.each([
    ['data/registry/x', /must not start with "data\/"/],
    ['metadata/x', /must not start with "metadata\/"/],
    ['registry/../x', /"\.\." segments/],
    ['registry/*', /wildcards/],
    ['/registry/x', /must not start or end with "\/"/],
    ['registry//x', /"\/\/"/],
    ['registry/svc x', /segments may only hold/],
    ['', /must not be empty/],
    ['secret/registry/x', /relative to the mount/],
  ])('logical path %j is rejected', (logical, message) => {
    const problems = KvPath.secret(v2, logical).problems('path');
    expect(problems.map(String).join('\n')).toMatch(message);
  });

  // Issue 19 §3: the store, not the declaration, decides a mount's KV version.
  it.each(['data', 'metadata', 'delete', 'undelete', 'destroy', 'subkeys', 'config'])(
    'on a v1 mount too, a logical path starting with %s/ is refused: it is a v2 API path once the mount is v2',
    (prefix) => {
      expect(KvPath.secret(v1, `${prefix}/x`).problems('path').map(String)).toEqual([
        `path = "${prefix}/x": must not start with "${prefix}/", even on a KV v1 mount: "${prefix}" is a KV v2 API prefix, so if kv1/ is (or becomes) KV v2 on the store, kv1/${prefix}/x addresses ${
          prefix === 'config' ? "the mount's configuration endpoint" : `the ${prefix} of the secret "x"`
        } (the store applies its own KV version, not the declared one)`,
      ]);
    },
  );

  it('a segment that only starts like a v2 API prefix (database/, datasets/) is an ordinary segment', () => {
    expect(KvPath.secret(v1, 'database/x').problems('path')).toEqual([]);
    expect(KvPath.secret(v2, 'datasets/x').problems('path')).toEqual([]);
  });
});

describe('KV paths compared as store API paths, on either KV version (issue 19 §3)', () => {
  const v2 = KvMount.DEFAULT;
  const secretV1 = new KvMount('secret', 1);

  it('apiPaths: the v1 path and every v2 API path of the secret, whatever the declared version', () => {
    const expected = ['secret/a/b', 'secret/data/a/b', 'secret/metadata/a/b', 'secret/delete/a/b', 'secret/undelete/a/b', 'secret/destroy/a/b', 'secret/subkeys/a/b'];
    expect(KvPath.secret(v2, 'a/b').apiPaths).toEqual(expected);
    expect(KvPath.secret(secretV1, 'a/b').apiPaths).toEqual(expected);
    expect(KvPath.subtree(v2, 'a').apiPaths).toEqual(expect.arrayContaining(['secret/data/a/*', 'secret/data/a', 'secret/a/*']));
  });

  it('one mount declared v1 and v2: the same logical path is one secret on the store', () => {
    expect(KvPath.secret(v2, 'a/b').overlaps(KvPath.secret(secretV1, 'a/b'))).toBe(true);
    expect(KvPath.secret(v2, 'a/b').policyPathsOverlap(KvPath.secret(secretV1, 'a/b'))).toBe(false);
  });

  it('a v1 declaration of data/<p> meets the v2 data path of <p> (the attack of issue 19)', () => {
    const ci = KvPath.secret(secretV1, 'data/acme/dev/orchestrator/database');
    const app = KvPath.subtree(secretV1, 'acme/dev/orchestrator');
    expect(ci.policyPathsOverlap(app)).toBe(false);
    expect(ci.sharedApiPath(app)).toBe('secret/data/acme/dev/orchestrator/database');
  });

  it('a mount declared inside another (secret/data) meets the outer mount\'s v2 data paths', () => {
    const nested = KvPath.secret(new KvMount('secret/data', 1), 'acme/x');
    expect(nested.sharedApiPath(KvPath.subtree(v2, 'acme'))).toBe('secret/data/acme/x');
  });

  it.each([
    ['acme/dev/orchestrator', 'acme/dev/orchestrator-x/database', false],
    ['acme/dev/orchestrator', 'acme/dev/orchestrator/database', true],
  ])('still segment-aware across versions: subtree %s vs %s: %s', (a, b, expected) => {
    expect(KvPath.subtree(v2, a).overlaps(KvPath.secret(secretV1, b))).toBe(expected);
  });
});

describe('ACL path overlap: some request path matches both rules, as the store matches them', () => {
  it.each([
    ['secret/data/a', 'secret/data/a', true],
    ['secret/data/a', 'secret/data/b', false],
    ['secret/data/a/*', 'secret/data/a/b', true],
    ['secret/data/a/*', 'secret/data/a', false],
    ['secret/data/app*', 'secret/data/app-x/y', true],
    ['secret/data/a/*', 'secret/data/a/b/*', true],
    ['secret/data/a/*', 'secret/data/b/*', false],
    ['/secret/data/a', 'secret/data/a', true],
  ])('%s and %s: %s', (a, b, expected) => {
    expect(aclPathsOverlap(a, b)).toBe(expected);
    expect(aclPathsOverlap(b, a)).toBe(expected);
  });
});

describe('Capabilities', () => {
  it('knows the stores\' words and rejects others', () => {
    expect(isCapability('read')).toBe(true);
    expect(isCapability('scan')).toBe(true);
    expect(isCapability('write')).toBe(false);
  });

  it('normalises: unique, documentation order, deny alone', () => {
    expect(normalizeCapabilities(['list', 'read', 'read', 'create'])).toEqual(['create', 'read', 'list']);
    expect(normalizeCapabilities(['read', 'deny'])).toEqual(['deny']);
  });
});

describe('Policy documents: de-duplicated, sorted, never empty', () => {
  it('merges rules on the same path and sorts by path', () => {
    const doc = new PolicyDocument('p');
    doc.addRule('secret/data/b', ['read'], 'x/b');
    doc.addRule('secret/data/a', ['list'], 'x/a');
    doc.addRule('secret/data/a', ['read', 'list'], 'x/a2');
    expect(doc.rules).toEqual([
      { path: 'secret/data/a', capabilities: ['read', 'list'], sources: ['x/a', 'x/a2'] },
      { path: 'secret/data/b', capabilities: ['read'], sources: ['x/b'] },
    ]);
  });

  it('an empty policy is never emitted', () => {
    const doc = new PolicyDocument('empty');
    expect(doc.isEmpty).toBe(true);
    expect(() => renderPolicyHcl(doc)).toThrow(/never emitted/);
    expect(doc.problems().map(String)).toEqual([expect.stringMatching(/grants nothing/)]);
  });

  it('deny on a path discards the other capabilities of that path, as the store does', () => {
    const doc = new PolicyDocument('p');
    doc.addRule('secret/data/x', ['read'], 'a');
    doc.addRule('secret/data/x', ['deny'], 'b');
    expect(doc.ruleFor('secret/data/x')!.capabilities).toEqual(['deny']);
  });
});

describe('Grants return what they granted', () => {
  const grantee: IGrantee = { identityName: 'jwt/ci', policy: new PolicyDocument('ci') };

  it('Grant.onPath adds the rule to the grantee policy and describes it', () => {
    const grant = Grant.onPath(grantee, 'secret/data/x', ['read'], 'src');
    expect(grant).toMatchObject({ identity: 'jwt/ci', policyName: 'ci', path: 'secret/data/x', capabilities: ['read'] });
    expect(String(grant)).toBe('jwt/ci: read on secret/data/x (policy ci)');
    expect(grantee.policy.ruleFor('secret/data/x')).toBeDefined();
  });

  it('a secret declaration grants read on its data path, and its older form only when asked', () => {
    const plain = new SecretDeclaration({
      path: KvPath.secret(KvMount.DEFAULT, 'registry/svc-a'),
      keys: ['password', 'username'],
      consumers: ['job'],
    });
    const withOlder = new SecretDeclaration({
      path: KvPath.secret(KvMount.DEFAULT, 'registry/svc-b'),
      keys: ['username'],
      consumers: ['job'],
      olderFormGrant: true,
    });
    const g = { identityName: 'jwt/x', policy: new PolicyDocument('x') };
    expect(plain.grantRead(g, 's').map((x) => x.path)).toEqual(['secret/data/registry/svc-a']);
    expect(withOlder.grantRead(g, 's').map((x) => x.path)).toEqual(['secret/data/registry/svc-b', 'secret/registry/svc-b']);
    expect(plain.keys).toEqual(['password', 'username']);
    expect(plain.grants).toHaveLength(1);
  });

  it('on a v1 mount the older form is the data path, granted once', () => {
    const d = new SecretDeclaration({
      path: KvPath.secret(new KvMount('kv1', 1), 'registry/svc-a'),
      keys: ['username'],
      consumers: ['job'],
      olderFormGrant: true,
    });
    expect(d.readPolicyPaths).toEqual(['kv1/registry/svc-a']);
  });
});

describe('Registry permission scopes (spec §2.1, §2.2)', () => {
  it('equal scopes have equal keys whatever the order', () => {
    expect(new RegistryPermissionScope(['rpm:write', 'raw:read']).key).toBe(
      new RegistryPermissionScope(['raw:read', 'rpm:write', 'raw:read']).key,
    );
  });

  it('container-image write means a push login, read only a pull login, none without images', () => {
    expect(new RegistryPermissionScope(['container-image:read', 'container-image:write']).loginKind).toBe('push');
    expect(new RegistryPermissionScope(['container-image:read']).loginKind).toBe('pull');
    expect(new RegistryPermissionScope(['rpm:read']).loginKind).toBeUndefined();
  });

  it('rejects unknown permissions and an empty scope', () => {
    expect(new RegistryPermissionScope(['helm:read']).problems().map(String)[0]).toMatch(/unknown permission/);
    expect(new RegistryPermissionScope([]).problems().map(String)[0]).toMatch(/at least one permission/);
  });
});

describe('Names', () => {
  it.each([
    ['Orchestrator', /upper case/],
    ['my app', /white space/],
    ['a/b', /a slash/],
    ['a..b', /"\.\."/],
    ['app*', /wildcard/],
    ['-app', /starting and ending/],
    ['', /must not be empty/],
    ['a'.repeat(64), /at most 63/],
  ])('%j is not a valid name', (name, message) => {
    expect(identifierNameProblems('name', name).map(String).join()).toMatch(message);
  });

  it('accepts lower-case names with inner hyphens', () => {
    expect(identifierNameProblems('name', 'orchestrator-dev')).toEqual([]);
  });
});

describe('Durations', () => {
  it.each([
    ['12h', 43200],
    ['45m', 2700],
    ['1h30m', 5400],
    ['0', 0],
    ['90s', 90],
  ])('parses %s as %d seconds', (text, seconds) => {
    expect(Duration.parse(text).toSeconds()).toBe(seconds);
  });

  it('prints compactly', () => {
    expect(Duration.hours(24).toString()).toBe('1d');
    expect(Duration.minutes(90).toString()).toBe('1h30m');
  });

  it('text that is not a duration gives an invalid duration whose problem names the text (no exception)', () => {
    const d = Duration.parse('12 hours');
    expect(d.isValid).toBe(false);
    expect(d.toString()).toBe('12 hours');
    expect(d.problems('tokenTtl').map(String)).toEqual([
      'tokenTtl = "12 hours": is not a duration: use e.g. 45m, 12h, 1h30m or a number of seconds',
    ]);
    expect(Duration.parse('12h').problems('tokenTtl')).toEqual([]);
  });

  it('a bound reports a longer duration with the reason', () => {
    expect(Duration.hours(25).problems('t', { limit: Duration.hours(24), why: 'because' }).map(String)).toEqual([
      't = "1d1h": must be at most 1d: because',
    ]);
  });
});

describe('Platform settings', () => {
  it('defaults the registry ports to 8443 (push) and 8444 (pull) and the mount to secret/ v2', () => {
    const s = new PlatformSettings({ organisation: 'acme', ciUrl: 'https://ci.example', registryHost: 'reg.example' });
    expect(s.registryPorts).toEqual({ push: 8443, pull: 8444 });
    expect(s.kvMount).toMatchObject({ path: 'secret', version: 2 });
    expect(s.problems()).toEqual([]);
  });

  it('reports an empty organisation and CI URL together', () => {
    const s = new PlatformSettings({ organisation: '', ciUrl: '', registryHost: 'reg.example' });
    expect(s.problems().map(String)).toEqual([
      'organisation = "": must not be empty',
      'ciUrl = "": must not be empty: it is the JWT issuer and audience',
    ]);
  });
});

describe('KvPath.overlaps: the fast path agrees with the full comparison of store API paths', () => {
  it('on 3,000 random pairs of mounts, logical paths and subtree flags', () => {
    // A small deterministic generator: mounts that nest, segments that are v2 API prefixes.
    let seed = 19;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const mounts = [new KvMount('secret', 2), new KvMount('secret', 1), new KvMount('secret/data', 1), new KvMount('kv', 2)];
    const segments = ['a', 'b', 'data', 'metadata', 'a-x', 'config'];
    const random = () => {
      const logical = Array.from({ length: 1 + next(3) }, () => segments[next(segments.length)]).join('/');
      const mount = mounts[next(mounts.length)];
      return next(2) === 0 ? KvPath.secret(mount, logical) : KvPath.subtree(mount, logical);
    };
    for (let i = 0; i < 3000; i++) {
      const x = random();
      const y = random();
      expect([String(x), String(y), x.overlaps(y)]).toEqual([String(x), String(y), x.sharedApiPath(y) !== undefined]);
    }
  });
});
