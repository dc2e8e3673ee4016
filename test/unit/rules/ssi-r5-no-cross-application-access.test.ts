import { AppRoleApplication, SSI_R5 } from '../../../lib';
import { Platform } from '../../../lib/platform/platform';
import { findingsOf } from '../../support/rule-findings';

const application = (p: Platform, name: string, environment: string, roleName: string) =>
  new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name, environment, roleName });

describe('SSI-R5 (spec §2.4): no cross-application access, application paths never overlap', () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R5)).toEqual([]);
  });

  it('a second application on the same paths is reported, naming the first', () => {
    expect(findingsOf(SSI_R5, (p) => application(p, 'orchestrator', 'dev', 'orch2'))).toEqual([
      '[app-roles/x] SSI-R5 readablePath = "secret/data/acme/dev/orchestrator/*": overlaps secret/data/acme/dev/orchestrator/* of orchestrator-dev (app-roles/orchestrator-dev): cross-application secret access is not permitted',
    ]);
  });

  it('the same application in another environment is allowed', () => {
    expect(findingsOf(SSI_R5, (p) => application(p, 'orchestrator', 'prod', 'orchestrator-prod'))).toEqual([]);
  });
});
