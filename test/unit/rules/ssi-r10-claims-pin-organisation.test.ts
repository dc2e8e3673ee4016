import { CiJwtRole, SSI_R10 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';

const PIN =
  'must pin the organisation: bind namespace_id or project_id to exact IDs, or namespace_path or project_path to "acme", "acme/<path>" or "<exact path>/*" only; a glob such as "*" or "acme*" also matches other groups (acme-evil), whose jobs could then log in';

const role = (boundClaims: Record<string, string | string[]>, boundClaimsType: 'glob' | 'string' = 'glob') => (p: any) =>
  new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'other-ci', boundClaims, boundClaimsType });

describe('SSI-R10: a CI role\'s bound claims pin the organisation', () => {
  it('holds for the platform as declared (acme and acme/*)', () => {
    expect(findingsOf(SSI_R10)).toEqual([]);
  });

  it('namespace_path "*" is reported twice: a value of only "*", and nothing pins the organisation', () => {
    expect(findingsOf(SSI_R10, role({ namespace_path: '*' }))).toEqual([
      '[ci-access/x] SSI-R10 boundClaims.namespace_path = ["*"]: a value of only "*" matches every job of the CI instance: bind an exact value',
      `[ci-access/x] SSI-R10 boundClaims = {"namespace_path":["*"]}: ${PIN}`,
    ]);
  });

  it.each([['acme*'], ['acme-*'], ['acme/*/x*'], ['other'], ['acmex']])('namespace_path %s does not pin acme', (value) => {
    expect(findingsOf(SSI_R10, role({ namespace_path: value }))).toEqual([`[ci-access/x] SSI-R10 boundClaims = ${JSON.stringify({ namespace_path: [value] })}: ${PIN}`]);
  });

  it('one non-pinning value among pinning ones is enough to fail', () => {
    expect(findingsOf(SSI_R10, role({ namespace_path: ['acme', 'acme*'] }))).toHaveLength(1);
  });

  it.each([
    [{ namespace_path: 'acme' }],
    [{ namespace_path: ['acme', 'acme/*'] }],
    [{ project_path: 'acme/registry/app' }],
    [{ namespace_id: '42' }],
    [{ project_id: ['7', '8'], ref_protected: 'true' }],
  ])('%j pins the organisation', (claims) => {
    expect(findingsOf(SSI_R10, role(claims))).toEqual([]);
  });

  it('a claim that names no group (ref_protected) does not pin it alone', () => {
    expect(findingsOf(SSI_R10, role({ ref_protected: 'true' }))).toHaveLength(1);
  });

  it('a non-numeric namespace_id does not pin', () => {
    expect(findingsOf(SSI_R10, role({ namespace_id: '4*' }))).toHaveLength(1);
  });

  it('in string mode "*" is a literal, so acme* is compared exactly (and still outside acme/)', () => {
    expect(findingsOf(SSI_R10, role({ namespace_path: 'acme/*' }, 'string'))).toEqual([]);
    expect(findingsOf(SSI_R10, role({ namespace_path: 'acme*' }, 'string'))).toHaveLength(1);
  });
});
