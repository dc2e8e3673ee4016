import { SSI_R6 } from '../../../lib';
import { ciSecretAt, findingsOf } from '../../support/rule-findings';

describe("SSI-R6: CI secrets never lie inside an application's paths", () => {
  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R6)).toEqual([]);
  });

  it('a CI secret below an application prefix is reported, naming the application', () => {
    expect(findingsOf(SSI_R6, (p) => ciSecretAt(p, 'acme/dev/orchestrator/ci-token'))).toEqual([
      '[ci-access/x] SSI-R6 path = "acme/dev/orchestrator/ci-token": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets',
    ]);
  });

  it('a CI secret beside the application prefix is allowed', () => {
    expect(findingsOf(SSI_R6, (p) => ciSecretAt(p, 'acme/dev/orchestrator-ci/token'))).toEqual([]);
  });
});
