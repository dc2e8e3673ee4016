import { Duration } from '../../../lib';
import {
  authMountTuneProblems,
  HMAC_ONLY_AUDIT_KEYS,
  issuedTokenType,
  mountTokenTypeProblems,
  MOUNT_TOKEN_TYPES,
  TokenIssuingRole,
} from '../../../lib/model/auth-mount-tune';
import { freeTextProblems, visibleLength } from '../../../lib/model/free-text';
import { ValidationProblem } from '../../../lib/model/validation-problem';

// Issue 26: mount settings that break the mission are refused at synthesis; invisible characters
// are not text. The store's side of these claims is proven in test/store/hardening.store.test.ts.

const text = (problems: ValidationProblem[]) => problems.map(String);

describe('audit keys that must stay HMAC-ed are never in the non-HMAC lists', () => {
  it('every credential the AppRole, JWT and OIDC logins and the token endpoints carry is on the list', () => {
    expect(Object.keys(HMAC_ONLY_AUDIT_KEYS).sort()).toEqual(
      ['accessor', 'auth_url', 'client_nonce', 'client_token', 'code', 'id_token', 'jwt', 'oidc_client_secret', 'role_id', 'secret_id', 'secret_id_accessor', 'state', 'token'],
    );
  });

  it.each(Object.keys(HMAC_ONLY_AUDIT_KEYS))('%s is refused in either list, in any case', (key) => {
    for (const list of ['auditNonHmacRequestKeys', 'auditNonHmacResponseKeys'] as const) {
      const problems = authMountTuneProblems('tune', { [list]: ['role', key.toUpperCase()] });
      expect(problems.map((p) => [p.field, p.value])).toEqual([[`tune.${list}[1]`, key.toUpperCase()]]);
      expect(problems[0].rule).toContain(`must stay HMAC-ed in the audit log: it is ${HMAC_ONLY_AUDIT_KEYS[key]}`);
    }
  });

  it('other keys (the role name, the TTL) may be logged in clear; names from Object.prototype are keys like any other', () => {
    expect(authMountTuneProblems('tune', { auditNonHmacRequestKeys: ['role', 'constructor', '__proto__'], auditNonHmacResponseKeys: ['secret_id_ttl', 'lease_duration'] })).toEqual([]);
  });
});

describe('a default lease TTL above the maximum is refused at synthesis', () => {
  const ttls = (def: Duration | undefined, max: Duration | undefined) => text(authMountTuneProblems('tune', { defaultLeaseTtl: def, maxLeaseTtl: max }));

  it('refuses default > max, naming both', () => {
    expect(ttls(Duration.hours(25), Duration.hours(24))).toEqual([
      'tune.defaultLeaseTtl = "1d1h": must not exceed tune.maxLeaseTtl (1d): the store refuses a mount whose default lease TTL is above its maximum, so the apply would fail',
    ]);
  });

  it('accepts default = max, a max of 0 (the system maximum) and either left out', () => {
    expect(ttls(Duration.hours(24), Duration.hours(24))).toEqual([]);
    expect(ttls(Duration.hours(48), Duration.seconds(0))).toEqual([]);
    expect(ttls(Duration.hours(48), undefined)).toEqual([]);
    expect(ttls(undefined, Duration.hours(1))).toEqual([]);
  });
});

describe('a mount token type never overrides what its roles declare', () => {
  const agent: TokenIssuingRole = { constructPath: 'app-roles/billing-dev', roleName: 'billing-dev', tokenType: 'service', renewedEvery: Duration.minutes(45) };
  const batchCi: TokenIssuingRole = { constructPath: 'ci-access/x', roleName: 'batch-ci', tokenType: 'batch' };

  it('models the store: service and batch override every role, the default-* types only roles that declare none', () => {
    expect(MOUNT_TOKEN_TYPES.map((m) => [m, issuedTokenType(m, 'service'), issuedTokenType(m, 'batch'), issuedTokenType(m, 'default')])).toEqual([
      ['default-service', 'service', 'batch', 'service'],
      ['default-batch', 'service', 'batch', 'batch'],
      ['service', 'service', 'service', 'service'],
      ['batch', 'batch', 'batch', 'batch'],
    ]);
    expect(issuedTokenType(undefined, 'default')).toBe('service');
  });

  it('refuses batch on a mount whose roles renew their service tokens, saying why', () => {
    expect(text(mountTokenTypeProblems('tune', { tokenType: 'batch' }, [agent]))).toEqual([
      'tune.tokenType = "batch": overrides the token type the roles of the mount declare: the store would issue batch tokens to billing-dev (app-roles/billing-dev), which declare "service": batch tokens cannot be renewed, and the agents renew theirs every 45m (renew-self), so each application\'s token would end at its first TTL; leave tokenType out, or use "default-batch", which only applies to roles that declare none',
    ]);
  });

  it('refuses service over a role that declares batch', () => {
    expect(text(mountTokenTypeProblems('tune', { tokenType: 'service' }, [agent, batchCi]))).toEqual([
      'tune.tokenType = "service": overrides the token type the roles of the mount declare: the store would issue service tokens to batch-ci (ci-access/x), which declare "batch"; leave tokenType out, or use "default-service", which only applies to roles that declare none',
    ]);
  });

  it('accepts the default-* types, a type every role declares, and no roles', () => {
    for (const tokenType of ['default-service', 'default-batch'] as const) expect(mountTokenTypeProblems('tune', { tokenType }, [agent, batchCi])).toEqual([]);
    expect(mountTokenTypeProblems('tune', { tokenType: 'service' }, [agent])).toEqual([]);
    expect(mountTokenTypeProblems('tune', { tokenType: 'batch' }, [batchCi])).toEqual([]);
    expect(mountTokenTypeProblems('tune', { tokenType: 'batch' }, [])).toEqual([]);
  });

  it('names three roles and counts the rest', () => {
    const roles = ['a', 'b', 'c', 'd', 'e'].map((n) => ({ ...agent, roleName: n, constructPath: `app-roles/${n}` }));
    expect(mountTokenTypeProblems('tune', { tokenType: 'batch' }, roles)[0].rule).toContain('to a (app-roles/a), b (app-roles/b), c (app-roles/c) and 2 more, which');
  });
});

describe('invisible characters are not text (one measure for every minimum-length rule)', () => {
  it.each([
    ['zero-width space, non-joiner, joiner', '\u200b\u200c\u200d', 0],
    ['BOM, soft hyphen, word joiner, LRM, Mongolian vowel separator', '\ufeff\u00ad\u2060\u200e\u180e', 0],
    ['tag characters (outside the BMP)', '\u{E0041}\u{E0042}', 0],
    ['white space of every kind', ' \t\u00a0\u2003\u3000\u205f', 0],
    ['Hangul fillers and the braille blank', '\u3164\uffa0\u115f\u2800', 0],
    ['a combining mark with no base', '\u0301\u0301', 0],
    ['letters between zero-width spaces', '\u200ba\u200bb\u200b', 2],
    ['an accented letter written with a combining mark', 'e\u0301', 1],
    ['a family emoji (ZWJ sequence)', '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}', 1],
    ['ordinary text', 'break glass', 10],
  ])('%s', (_what, value, expected) => {
    expect(visibleLength(value)).toBe(expected);
  });

  it('a maximum still counts every character: 10,000 zero-width spaces are not short text', () => {
    expect(text(freeTextProblems('description', '\u200b'.repeat(201)))[0]).toContain('must be at most 200 characters');
  });

  it('a problem shows invisible characters as escapes, so that the value shown is the value given', () => {
    expect(String(new ValidationProblem('f', 'a\u200bb\ufeff\u{E0041}', 'r'))).toBe('f = "a\\u200bb\\ufeff\\udb40\\udc41": r');
  });
});
