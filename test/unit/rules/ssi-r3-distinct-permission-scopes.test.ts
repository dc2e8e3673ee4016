import { RegistryServiceAccount, SSI_R3 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';

describe('SSI-R3 (spec §2.1): a registry service account exists only for a distinct permission scope', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R3)).toEqual([]);
  });

  it('an account with the scope of an existing one is reported, naming it', () => {
    expect(
      findingsOf(SSI_R3, (p) =>
        new RegistryServiceAccount(p.ciAccess, 'x', { name: 'helm', permissions: ['container-image:read'], usedBy: 'charts' }),
      ),
    ).toEqual([
      '[ci-access/x] SSI-R3 permissions = ["container-image:read"]: same permission scope as svc-deployer (ci-access/svc-deployer): a new account is created only for a distinct scope',
    ]);
  });

  it('an account with a distinct scope is allowed', () => {
    expect(
      findingsOf(SSI_R3, (p) =>
        new RegistryServiceAccount(p.ciAccess, 'x', { name: 'helm', permissions: ['raw:read'], usedBy: 'charts' }),
      ),
    ).toEqual([]);
  });
});
