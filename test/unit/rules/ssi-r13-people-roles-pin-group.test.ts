import { OidcAuth, SSI_R13 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';
import { PEOPLE, withPeople } from '../../support/people-config';

const groupsOf = (groups: string[]) => withPeople({ ...PEOPLE, groups: { ops: { groups } } });

describe('SSI-R13 (spec §5.6): every people role pins its group claim', () => {
  it('holds for roles bound to exact groups', () => {
    expect(findingsOf(SSI_R13, () => undefined, withPeople())).toEqual([]);
  });

  it('refuses an empty group list', () => {
    expect(findingsOf(SSI_R13, () => undefined, groupsOf([]))).toEqual([
      '[people/group-ops] SSI-R13 groups = []: must name at least one group: without one, everybody the identity provider knows can log in',
    ]);
  });

  it('refuses a match-all or blank value, each one', () => {
    expect(findingsOf(SSI_R13, () => undefined, groupsOf(['*', 'ops-*', '']))).toEqual([
      '[people/group-ops] SSI-R13 groups = "": must be an exact group name: a blank or "*" value does not pin who logs in',
      '[people/group-ops] SSI-R13 groups = "*": must be an exact group name: a blank or "*" value does not pin who logs in',
      '[people/group-ops] SSI-R13 groups = "ops-*": must be an exact group name: a blank or "*" value does not pin who logs in',
    ]);
  });

  it('refuses an OIDC method that no group may use', () => {
    expect(
      findingsOf(SSI_R13, (p) => new OidcAuth(p.people!, 'other', { path: 'sso2', discoveryUrl: PEOPLE.discoveryUrl, clientId: 'x', storeUrl: PEOPLE.storeUrl }), withPeople()),
    ).toEqual(['[people/other] SSI-R13 roles = []: an OIDC method needs at least one group role: declare the groups that may log in']);
  });
});
