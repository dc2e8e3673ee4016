import { CiSecret, RegistryServiceAccount, SSI_R8 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';

describe('SSI-R8: a secret declared with CI consumers is readable by some identity', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R8)).toEqual([]);
  });

  it('a CI secret with consumers and no reader is reported, naming the consumers, sorted', () => {
    expect(
      findingsOf(SSI_R8, (p) =>
        new CiSecret(p.ciAccess, 'x', { path: 'sonar/token', keys: ['token'], consumers: ['scan', 'report'], description: 'scan' }),
      ),
    ).toEqual([
      '[ci-access/x] SSI-R8 readers = []: nobody is granted read, yet consumers report, scan need it: add readers (e.g. the registry-ci role) or drop the consumers',
    ]);
  });

  it('a grant made after the declaration satisfies it', () => {
    expect(
      findingsOf(SSI_R8, (p) =>
        new CiSecret(p.ciAccess, 'x', { path: 'sonar/token', keys: ['token'], consumers: ['scan'], description: 'scan' }).grantRead(
          p.ciAccess.registryCi,
        ),
      ),
    ).toEqual([]);
  });

  it('a registry account without consumers needs no reader', () => {
    expect(
      findingsOf(SSI_R8, (p) => new RegistryServiceAccount(p.ciAccess, 'x', { name: 'helm', permissions: ['raw:read'], usedBy: 'charts' })),
    ).toEqual([]);
  });
});
