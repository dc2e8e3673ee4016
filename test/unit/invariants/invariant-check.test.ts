import { Acl } from '../../../lib/acl/acl';
import { RulePath } from '../../../lib/acl/rule-path';
import { StoreCapability, capabilityMask } from '../../../lib/acl/store-capability';
import { AccessInvariant } from '../../../lib/invariants/access-invariant';
import { invariantViolations } from '../../../lib/invariants/invariant-check';
import { InvariantSubject } from '../../../lib/invariants/invariant-subject';
import { IdentityKind } from '../../../lib/invariants/identity-kind';
import { violationText } from '../../../lib/invariants/invariant-violation';

/** A subject whose one policy holds `rules` (path → capabilities). */
function subject(name: string, kind: IdentityKind, rules: Record<string, StoreCapability[]>, store: 'openbao' | 'vault' = 'openbao'): InvariantSubject {
  const policy = {
    name: name.split('/')[1],
    syntax: 'library' as const,
    rules: Object.entries(rules).map(([path, caps]) => ({ path: RulePath.parse(path), mask: capabilityMask(caps), constraints: [] })),
  };
  return { name, kind, acl: Acl.fromPolicies([policy], { store }) };
}

const NO_CI_PROD: AccessInvariant = {
  id: 'no-ci-reads-prod',
  reason: 'CI never reads production secrets',
  who: { kind: 'ci' },
  paths: ['secret/data/+/prod/*'],
  capabilities: ['read'],
};

const ONLY_APPLY_WRITES_POLICIES: AccessInvariant = {
  id: 'only-apply-writes-policies',
  reason: 'policies change through the reviewed pipeline only',
  who: { kind: 'any' },
  except: [{ kind: 'pipeline', name: 'jwt/secretstore-iac-pipeline' }],
  paths: ['sys/policies/acl/*'],
  capabilities: ['write'],
};

const NO_PERSON_SUDO: AccessInvariant = { id: 'no-person-sudo', reason: 'people never get sudo', who: 'person' as never, paths: ['*'], capabilities: ['sudo'] };

describe('invariant check: which identities break which invariant, decided by the store ACL evaluator', () => {
  it('finds a CI role whose wildcard covers production, naming the invariant, identity, rule and a request path', () => {
    const v = invariantViolations([subject('jwt/deploy-ci', 'ci', { 'secret/data/*': ['read', 'list'] })], [NO_CI_PROD]);
    expect(v).toEqual([
      {
        invariant: 'no-ci-reads-prod',
        reason: 'CI never reads production secrets',
        identity: 'jwt/deploy-ci',
        kind: 'ci',
        capabilities: ['read'],
        rule: 'secret/data/*',
        policies: ['deploy-ci'],
        path: 'secret/data/w/prod/w',
        invariantPath: 'secret/data/+/prod/*',
        declaredBy: [],
      },
    ]);
    expect(violationText(v[0])).toBe(
      'jwt/deploy-ci (ci) can read secret/data/w/prod/w (rule "secret/data/*", policy deploy-ci): breaks invariant "no-ci-reads-prod" (CI never reads production secrets)',
    );
  });

  it('finds a rule narrower than the invariant path, and one that only meets it segment by segment', () => {
    const v = invariantViolations(
      [subject('jwt/a-ci', 'ci', { 'secret/data/shop/prod/db': ['read'], 'secret/data/+/prod/api*': ['read'], 'secret/data/shop/dev/*': ['read'] })],
      [NO_CI_PROD],
    );
    expect(v.map((x) => `${x.rule} ${x.path}`)).toEqual(['secret/data/+/prod/api* secret/data/w/prod/api', 'secret/data/shop/prod/db secret/data/shop/prod/db']);
  });

  it('leaves alone a rule outside the invariant, a capability it does not forbid, and another kind', () => {
    expect(
      invariantViolations(
        [
          subject('jwt/a-ci', 'ci', { 'secret/data/shop/dev/*': ['read'], 'secret/metadata/*': ['list'], 'secret/data/x/prod/y': ['create'] }),
          subject('approle/shop-prod', 'application', { 'secret/data/shop/prod/*': ['read'] }),
        ],
        [NO_CI_PROD],
      ),
    ).toEqual([]);
  });

  it('counts a deny as the store does: a deny over the whole invariant path takes the grant away, a narrower one does not', () => {
    const all = subject('jwt/a-ci', 'ci', { 'secret/*': ['read'], 'secret/data/*': ['deny'] });
    expect(invariantViolations([all], [NO_CI_PROD])).toEqual([]);
    // The store's priority: of `secret/data/*` and `secret/data/+/prod/*` (first wildcard at the same
    // place, both ending in `*`) the one with fewer `+` governs, so this deny does not take the read away.
    const segment = subject('jwt/a-ci', 'ci', { 'secret/data/*': ['read'], 'secret/data/+/prod/*': ['deny'] });
    expect(invariantViolations([segment], [NO_CI_PROD]).map((x) => x.rule)).toEqual(['secret/data/*']);
    const one = subject('jwt/a-ci', 'ci', { 'secret/data/*': ['read'], 'secret/data/shop/prod/*': ['deny'] });
    expect(invariantViolations([one], [NO_CI_PROD]).map((x) => x.path)).toEqual(['secret/data/w/prod/w']);
  });

  it('"only X": every identity but the exception, write standing for create, update and patch', () => {
    const subjects = [
      subject('jwt/secretstore-iac-pipeline', 'pipeline', { 'sys/policies/acl/*': ['create', 'update', 'read'] }),
      subject('jwt/secretstore-iac-plan', 'pipeline', { 'sys/policies/acl/*': ['read'] }),
      subject('oidc/admins', 'person', { 'sys/policies/acl/team-*': ['update'] }),
      subject('approle/shop-prod', 'application', { 'sys/policies/acl/shop-prod': ['patch', 'read'] }),
    ];
    expect(invariantViolations(subjects, [ONLY_APPLY_WRITES_POLICIES]).map((x) => `${x.identity} ${x.capabilities.join(',')} ${x.path}`)).toEqual([
      'approle/shop-prod patch sys/policies/acl/shop-prod',
      'oidc/admins update sys/policies/acl/team-',
    ]);
  });

  it('sudo anywhere, with a bare kind; and a name pattern selects by identity name', () => {
    const subjects = [subject('oidc/admins', 'person', { 'sys/auth/*': ['read', 'sudo'] }), subject('oidc/devs', 'person', { 'secret/data/team/*': ['read'] })];
    expect(invariantViolations(subjects, [{ ...NO_PERSON_SUDO, who: { kind: 'person' } }]).map((x) => x.identity)).toEqual(['oidc/admins']);
    expect(invariantViolations(subjects, [{ ...NO_PERSON_SUDO, who: { kind: 'any', name: 'oidc/dev*' } }])).toEqual([]);
    expect(invariantViolations(subjects, [{ ...NO_PERSON_SUDO, who: { kind: 'any', name: 'oidc/adm*' } }]).map((x) => x.identity)).toEqual(['oidc/admins']);
  });

  it('a LIST is checked on the path the store checks (trailing "/"), on the store of the subject', () => {
    const inv: AccessInvariant = { id: 'no-list', reason: 'r', who: { kind: 'ci' }, paths: ['secret/metadata/prod/*'], capabilities: ['list', 'scan', 'subscribe'] };
    expect(invariantViolations([subject('jwt/a', 'ci', { 'secret/metadata/*': ['list'] }, 'vault')], [inv]).map((x) => `${x.capabilities} ${x.path}`)).toEqual([
      'list secret/metadata/prod/',
    ]);
  });
});

describe('@other-applications: no application reads another application\'s own paths', () => {
  const NO_CROSS: AccessInvariant = { id: 'no-cross-app', reason: 'applications read their own paths only', who: { kind: 'application' }, paths: ['@other-applications'], capabilities: ['read'] };
  const app = (name: string, rules: Record<string, StoreCapability[]>) => {
    const s = subject(name, 'application', rules);
    return { ...s, ownPaths: s.acl.rules.filter((r) => r.path.key.startsWith('secret/')).map((r) => r.path.display) };
  };

  it('finds a reader whose wildcard reaches another application\'s own path, naming the owner; its own path is not counted', () => {
    const subjects = [
      app('approle/shop-dev', { 'secret/data/acme/dev/shop/*': ['read'] }),
      app('approle/billing-dev', { 'secret/data/acme/dev/billing/*': ['read'], 'secret/data/acme/dev/*': ['read'] }),
      subject('jwt/a-ci', 'ci', { 'secret/data/acme/*': ['read'] }),
    ];
    const v = invariantViolations(subjects, [NO_CROSS]);
    expect(v.map((x) => [x.identity, x.rule, x.path, x.invariantPath, x.owner])).toEqual([
      ['approle/billing-dev', 'secret/data/acme/dev/*', 'secret/data/acme/dev/shop/w', 'secret/data/acme/dev/shop/*', 'approle/shop-dev'],
    ]);
    expect(violationText(v[0])).toContain('can read secret/data/acme/dev/shop/w, "secret/data/acme/dev/shop/*" (the own path of approle/shop-dev) (rule "secret/data/acme/dev/*"');
    expect(invariantViolations(subjects.slice(0, 1), [NO_CROSS])).toEqual([]);
  });

  it('two applications whose own paths are the same pattern own it together (SSI-R5 and the shared-read flag speak of that)', () => {
    const twins = [app('approle/a', { 'secret/data/shared/*': ['read'] }), app('approle/b', { 'secret/data/shared/*': ['read'] })];
    expect(invariantViolations(twins, [NO_CROSS])).toEqual([]);
  });
});
