import { RegistryServiceAccount, SSI_R4 } from '../../../lib';
import { ciSecretAt, findingsOf } from '../../support/rule-findings';

describe('SSI-R4: account names and CI secret paths are unique', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R4)).toEqual([]);
  });

  it('a second account of the same name is reported', () => {
    expect(
      findingsOf(SSI_R4, (p) =>
        new RegistryServiceAccount(p.ciAccess, 'x', { name: 'executor', permissions: ['pypi:read'], usedBy: 'x' }),
      ),
    ).toEqual(['[ci-access/x] SSI-R4 name = "svc-executor": is already declared by ci-access/svc-executor']);
  });

  it('a second CI secret at the same path is reported', () => {
    expect(findingsOf(SSI_R4, (p) => ciSecretAt(p, 'vulnmgmt/svc-orchestrator'))).toEqual([
      '[ci-access/x] SSI-R4 path = "vulnmgmt/svc-orchestrator": is already declared by ci-access/vulnmgmt',
    ]);
  });

  it('a CI secret at an account\'s credentials path is reported', () => {
    expect(findingsOf(SSI_R4, (p) => ciSecretAt(p, 'registry/svc-executor'))).toEqual([
      '[ci-access/x] SSI-R4 path = "registry/svc-executor": is the credentials path of svc-executor',
    ]);
  });

  it('a CI secret at a new path is allowed', () => {
    expect(findingsOf(SSI_R4, (p) => ciSecretAt(p, 'sonar/token'))).toEqual([]);
  });
});
